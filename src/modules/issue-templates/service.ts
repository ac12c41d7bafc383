import type { AppDeps } from '../../deps'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { readBlobText } from '../../git/blob'
import { filesInFolders, folderTree, treeEntries } from '../../git/tree'
import { resolveCommitish } from '../../git/refs'
import { isSafeRefName } from '../../git/ref-name'
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

/** Gitea's single-file templates, in its order: `.md`, `.yaml`, `.yml` of each name at the root, in `.gitea/`, in `.github/`. */
const singleFiles = (upper: string) =>
  ['', '.gitea/', '.github/'].flatMap((dir) => [upper, upper.toLowerCase()].flatMap((name) => ['.md', '.yaml', '.yml'].map((ext) => `${dir}${name}${ext}`)))
/** Where Gitea looks for the issue template of a new issue no chooser's template was picked for (its IssueTemplateCandidates). */
export const ISSUE_TEMPLATE_FILES = singleFiles('ISSUE_TEMPLATE')
/** Where Gitea looks for a new pull request's template (its pullRequestTemplateCandidates). */
export const PULL_TEMPLATE_FILES = singleFiles('PULL_REQUEST_TEMPLATE')

/** Whether `path` may name a template the new issue form reads: a file directly in a template folder, or a single-file one. */
export function isTemplatePath(path: string): boolean {
  if (path.length > 255 || templateKind(path) === null) return false
  if (ISSUE_TEMPLATE_FILES.includes(path)) return true
  const dir = path.slice(0, path.lastIndexOf('/'))
  return (TEMPLATE_FOLDERS as readonly string[]).includes(dir) && !/[\x00-\x1f\x7f]/.test(path)
}

/**
 * The first of `paths` that commit `sha` holds, as a template (the one parser; Gitea's
 * setTemplateIfExists), or null: none there, too large, or invalid. Each folder's tree is read once.
 */
export async function firstTemplate(deps: AppDeps, ctx: RepoContext, sha: string, paths: readonly string[]): Promise<IssueTemplate | null> {
  const git = gitRepoOf(deps, ctx)
  const folders = new Map<string, Set<string> | null>()
  for (const path of paths) {
    const cut = path.lastIndexOf('/')
    const dir = cut < 0 ? '' : path.slice(0, cut)
    if (!folders.has(dir)) {
      const tree = await folderTree(git, sha, dir ? dir.split('/') : [])
      const entries = tree ? await treeEntries(git, tree) : null
      folders.set(dir, entries ? new Set(entries.filter((e) => e.kind === 'file' || e.kind === 'executable').map((e) => e.path)) : null)
    }
    if (!folders.get(dir)?.has(path.slice(cut + 1))) continue
    const source = await readBlobText(git, sha, path, MAX_TEMPLATE_BYTES)
    if (source === null || source === 'too-large') continue
    try {
      return parseTemplate(path, source)
    } catch {
      continue
    }
  }
  return null
}

/**
 * The template a new issue starts from (Gitea's NewIssue): `wanted` (a chooser's file) when the
 * default branch holds it and it is valid, else the first single-file issue template; null for none.
 */
export async function newIssueTemplate(deps: AppDeps, ctx: RepoContext, wanted: string | undefined): Promise<IssueTemplate | null> {
  const sha = await defaultBranchCommit(deps, ctx)
  if (!sha) return null
  const paths = wanted && isTemplatePath(wanted) ? [wanted, ...ISSUE_TEMPLATE_FILES] : ISSUE_TEMPLATE_FILES
  return await firstTemplate(deps, ctx, sha, paths)
}

/** The pull request template of branch `base` (Gitea's locations, in its order), or null. */
export async function pullTemplate(deps: AppDeps, ctx: RepoContext, base: string): Promise<IssueTemplate | null> {
  if (!isSafeRefName(base)) return null
  const sha = await resolveCommitish(gitRepoOf(deps, ctx), base)
  return sha ? await firstTemplate(deps, ctx, sha, PULL_TEMPLATE_FILES) : null
}
