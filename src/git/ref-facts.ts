import { startGit, type GitOptions } from './run'
import { readTokens } from './tokens'

/**
 * What protection rules need to know of a ref change that only git's objects tell (Gitea's
 * pre-receive checks): whether it rewrites history, and which paths it changes. Read as git
 * prints them and stopped as soon as the answer is known. `where` is the repository (or, in
 * the pre-receive hook, the quarantine environment git gave the hook).
 */

/** Whether moving a ref from `old` to `now` drops commits (a non-fast-forward, "force" push). */
export async function isRewrite(where: GitOptions, old: string, now: string): Promise<boolean> {
  let found = false
  const proc = startGit(['rev-list', '--max-count=1', '-z'], { ...where, values: [old, `^${now}`] })
  const read = await readTokens(proc, (token) => {
    if (token) found = true
    return !found
  }, 256)
  if (!read.stopped && read.code !== 0) throw new Error(`git rev-list failed: ${read.stderr.trim().slice(0, 200)}`)
  return found
}

/** The first path the change from `old` to `now` touches for which `pick` answers true, or null. */
export async function firstChangedPath(where: GitOptions, old: string, now: string, pick: (path: string) => boolean): Promise<string | null> {
  let found: string | null = null
  const proc = startGit(['diff', '--name-only', '--no-renames', '-z'], { ...where, values: [old, now] })
  const read = await readTokens(proc, (path) => {
    if (path && pick(path)) found = path
    return found === null
  }, 4096)
  if (!read.stopped && read.code !== 0) throw new Error(`git diff failed: ${read.stderr.trim().slice(0, 200)}`)
  return found
}
