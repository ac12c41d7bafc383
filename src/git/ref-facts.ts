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

/**
 * Both facts at once when `now` is a commit on top of `old` (a push of one commit, the common
 * case), from one git command: `git log -1` of `now` prints its parents, then the paths it changes
 * against the first, which, `old` being that parent, are the paths from `old` to `now` (and the
 * move rewrites nothing). Answers the first of them for which `pick` answers true (or null);
 * 'not-a-child' when `old` is not `now`'s first parent (git is stopped there: ask isRewrite and
 * firstChangedPath).
 */
export async function childChangedPath(where: GitOptions, old: string, now: string, pick: (path: string) => boolean): Promise<{ path: string | null } | 'not-a-child'> {
  let parents: string | null = null
  let found: string | null = null
  const proc = startGit(['log', '-1', '-z', '--no-show-signature', '--format=%P', '--name-only', '--no-renames', '--diff-merges=first-parent'], { ...where, values: [now] })
  const read = await readTokens(proc, (token) => {
    if (parents === null) {
      parents = token
      return parents.split(' ')[0] === old
    }
    // The paths follow the parents after a newline.
    const path = token.startsWith('\n') ? token.slice(1) : token
    if (path && pick(path)) found = path
    return found === null
  }, 4096)
  if (!read.stopped && read.code !== 0) throw new Error(`git log failed: ${read.stderr.trim().slice(0, 200)}`)
  if (parents === null || (parents as string).split(' ')[0] !== old) return 'not-a-child'
  return { path: found }
}
