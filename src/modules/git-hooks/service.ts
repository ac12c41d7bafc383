import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { notFound } from '../../lib/errors'
import type { GitHookFile } from '../../convert/git-hook'

/*
 * A repository's server-side git hooks (Gitea's modules/git/hook.go): programs git runs at a
 * client's push, kept where Gitea keeps them, `{repo.git}/hooks/{name}.d/{name}`, and run by the
 * push's hooks (src/push/hook.ts) after Warren's own checks. Who may edit them is decided by the
 * pipeline's `gitHooks` need (off unless WARREN_DISABLE_GIT_HOOKS=false).
 */

/** The hooks a repository may have, in Gitea's order. */
export const GIT_HOOK_NAMES = ['pre-receive', 'update', 'post-receive'] as const
export type GitHookName = (typeof GIT_HOOK_NAMES)[number]

/** A hook's longest text (characters): a script, not a payload. */
export const MAX_GIT_HOOK_CHARS = 1024 * 1024

/** A hook as read: active when its file exists, with its text (empty otherwise, as Gitea's). */
export interface GitHook extends GitHookFile {
  name: GitHookName
}

const isHookName = (name: string): name is GitHookName => (GIT_HOOK_NAMES as readonly string[]).includes(name)

/** The file of hook `name` of the repository in `gitDir`. */
export const gitHookPath = (gitDir: string, name: GitHookName) => join(gitDir, 'hooks', `${name}.d`, name)

/** Hook `name`, 404 for a name that is none of GIT_HOOK_NAMES (Gitea's ErrNotValidHook). */
export async function getGitHook(gitDir: string, name: string): Promise<GitHook> {
  if (!isHookName(name)) throw notFound()
  try {
    return { name, isActive: true, content: await readFile(gitHookPath(gitDir, name), 'utf8') }
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return { name, isActive: false, content: '' }
    throw e
  }
}

/** Every hook of the repository, in Gitea's order. */
export const listGitHooks = (gitDir: string): Promise<GitHook[]> => Promise.all(GIT_HOOK_NAMES.map((name) => getGitHook(gitDir, name)))

/**
 * Sets hook `name`'s text (Gitea's Hook.Update): blank text removes the hook; otherwise it is
 * written without carriage returns (a script saved on Windows still runs), executable, by a
 * rename, so a push never runs half a script.
 */
export async function setGitHook(gitDir: string, name: string, content: string): Promise<GitHook> {
  if (!isHookName(name)) throw notFound()
  const path = gitHookPath(gitDir, name)
  if (content.trim() === '') {
    await rm(path, { force: true })
    return { name, isActive: false, content: '' }
  }
  const text = content.replace(/\r/g, '')
  await mkdir(join(gitDir, 'hooks', `${name}.d`), { recursive: true })
  const temp = `${path}.${crypto.randomUUID()}.tmp`
  try {
    await writeFile(temp, text, { mode: 0o755 })
    await chmod(temp, 0o755)
    await rename(temp, path)
  } catch (e) {
    await rm(temp, { force: true })
    throw e
  }
  return { name, isActive: true, content: text }
}
