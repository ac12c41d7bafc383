import type { AppDeps } from '../../deps'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { readBlobText } from '../../git/blob'
import { filesInFolders } from '../../git/tree'
import { isSafeRefName, resolveCommitish } from '../../git/refs'
import { defaultIssueConfig, parseIssueConfig, parseTemplate, templateKind, type IssueConfig, type IssueTemplate } from './parse'

/** Where Gitea looks for issue templates, in its order. */
const TEMPLATE_FOLDERS = [
  'ISSUE_TEMPLATE',
  'issue_template',
  '.gitea/ISSUE_TEMPLATE',
  '.gitea/issue_template',
  '.github/ISSUE_TEMPLATE',
  '.github/issue_template',
  '.gitlab/ISSUE_TEMPLATE',
  '.gitlab/issue_template',
] as const
/** Where Gitea looks for the chooser's config, in its order (each as .yaml, then .yml). */
const CONFIG_FOLDERS = ['.gitea/ISSUE_TEMPLATE', '.gitea/issue_template', '.github/ISSUE_TEMPLATE', '.github/issue_template'] as const

/** Template files read at most, all folders together: the rest are not listed. */
export const MAX_TEMPLATE_FILES = 64
/** Largest template or config file read; a larger one is invalid (Gitea: its MaxDisplayFileSize). */
export const MAX_TEMPLATE_BYTES = 256 * 1024

/** The default branch's commit; null for an empty repository or a missing branch. */
export async function defaultBranchCommit(deps: AppDeps, ctx: RepoContext): Promise<string | null> {
  if (ctx.repo.isEmpty || !isSafeRefName(ctx.repo.defaultBranch)) return null
  return await resolveCommitish(gitRepoOf(deps, ctx), ctx.repo.defaultBranch)
}

/**
 * The valid issue templates of the default branch (Gitea's ParseTemplatesFromDefaultBranch), and
 * how many files were invalid (unreadable, too large, bad front matter or YAML).
 */
export async function issueTemplates(deps: AppDeps, ctx: RepoContext): Promise<{ templates: IssueTemplate[]; invalid: number }> {
  const sha = await defaultBranchCommit(deps, ctx)
  if (!sha) return { templates: [], invalid: 0 }
  const git = gitRepoOf(deps, ctx)
  const folderOf = (path: string) => TEMPLATE_FOLDERS.indexOf(path.slice(0, path.lastIndexOf('/')) as (typeof TEMPLATE_FOLDERS)[number])
  const files = (await filesInFolders(git, sha, TEMPLATE_FOLDERS, MAX_TEMPLATE_FILES))
    .filter((f) => templateKind(f.path) !== null)
    // Folder by folder in Gitea's order; git lists each folder's files by name.
    .sort((a, b) => folderOf(a.path) - folderOf(b.path))
  const templates: IssueTemplate[] = []
  let invalid = 0
  for (const file of files) {
    const source = file.size > MAX_TEMPLATE_BYTES ? null : await readBlobText(git, sha, file.path, MAX_TEMPLATE_BYTES)
    try {
      if (source === null || source === 'too-large') throw new Error('too large')
      templates.push(parseTemplate(file.path, source))
    } catch {
      invalid++
    }
  }
  return { templates, invalid }
}

/**
 * The template chooser's config of the default branch (Gitea's GetTemplateConfigFromDefaultBranch):
 * the first config file found, or the default; an invalid file gives the default and its error.
 */
export async function issueConfig(deps: AppDeps, ctx: RepoContext): Promise<{ config: IssueConfig; error: string | null }> {
  const sha = await defaultBranchCommit(deps, ctx)
  if (!sha) return { config: defaultIssueConfig(), error: null }
  const git = gitRepoOf(deps, ctx)
  const candidates = CONFIG_FOLDERS.flatMap((f) => [`${f}/config.yaml`, `${f}/config.yml`])
  const present = new Set((await filesInFolders(git, sha, CONFIG_FOLDERS, 1024)).map((f) => f.path))
  const path = candidates.find((c) => present.has(c))
  if (!path) return { config: defaultIssueConfig(), error: null }
  const source = await readBlobText(git, sha, path, MAX_TEMPLATE_BYTES)
  try {
    if (source === null || source === 'too-large') throw new Error(`${path} is larger than ${MAX_TEMPLATE_BYTES / 1024} KiB`)
    return { config: parseIssueConfig(source), error: null }
  } catch (e) {
    return { config: defaultIssueConfig(), error: (e as Error).message }
  }
}
