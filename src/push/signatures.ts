import type { AppDeps } from '../deps'
import { commitVerifier } from '../auth/commit-verification'
import { MAX_COMMIT_BYTES, splitSignedCommit } from '../git/commit-signature'
import { runGit, type GitOptions } from '../git/run'
import { isZeroId } from './branch-judge'

/**
 * Whether the commits a change brings to a branch are signed by their committers (a protection
 * rule's `require_signed_commits`, Gitea's verifyCommits of its pre-receive hook): each must be
 * verified by the one rule of auth/commit-verification.ts, as the API's records and the web's
 * badges show it. The server signs nothing, so its own commits (merges, the contents API) cannot
 * go onto such a branch, as Gitea's without a signing key.
 */

/** Most commits one change may bring to a branch that requires signatures (each one a signature check). */
export const MAX_SIGNED_COMMITS = 1000

/** Most bytes of commit objects one change's check reads (its commits' objects in one read). */
const MAX_COMMITS_BYTES = 16 * 1024 * 1024

/**
 * The objects of `ids` (commits), read by one `git cat-file --batch` once one `--batch-check` has
 * bounded their sizes; null when one is missing, not a commit, or they are too large to check.
 */
async function commitObjects(where: GitOptions, ids: string[]): Promise<Buffer[] | null> {
  const input = ids.join('\n') + '\n'
  const checked = await runGit(['cat-file', '--batch-check=%(objecttype) %(objectsize)'], { ...where, input })
  if (checked.code !== 0) return null
  const sizes = checked.stdout.toString('utf8').split('\n').filter(Boolean).map((line) => Number(/^commit (\d+)$/.exec(line)?.[1] ?? NaN))
  if (sizes.length !== ids.length || sizes.some((n) => !(n <= MAX_COMMIT_BYTES))) return null
  if (sizes.reduce((sum, n) => sum + n, 0) > MAX_COMMITS_BYTES) return null
  const read = await runGit(['cat-file', '--batch'], { ...where, input })
  if (read.code !== 0) return null
  // Each object: its header line (`<id> commit <size>`), its bytes, a newline.
  const objects: Buffer[] = []
  let at = 0
  for (const n of sizes) {
    const start = read.stdout.indexOf(10, at) + 1
    if (start === 0 || start + n > read.stdout.length) return null
    objects.push(read.stdout.subarray(start, start + n))
    at = start + n + 1
  }
  return objects
}

/**
 * The refusal of the first commit `old`..`now` brings (for a new branch: those no branch has) that
 * is not verified, or null when all are. `where` is the repository, or git's quarantine in the
 * pre-receive hook. Bounded: at most MAX_SIGNED_COMMITS commits, read by two gits whatever their
 * number, the keys read once per committer address, one signature check a commit.
 */
export async function unverifiedCommit(deps: AppDeps, where: GitOptions, branch: string, old: string, now: string): Promise<string | null> {
  const listed = isZeroId(old)
    ? await runGit(['rev-list', `--max-count=${MAX_SIGNED_COMMITS + 1}`, '--not', '--branches', '--not'], { ...where, values: [now] })
    : await runGit(['rev-list', `--max-count=${MAX_SIGNED_COMMITS + 1}`], { ...where, values: [`^${old}`, now] })
  if (listed.code !== 0) throw new Error(`git rev-list failed: ${listed.stderr.trim().slice(0, 200)}`)
  const ids = listed.stdout.toString('utf8').split('\n').filter(Boolean)
  if (ids.length > MAX_SIGNED_COMMITS) return `branch ${branch} requires signed commits: a push of more than ${MAX_SIGNED_COMMITS} commits cannot be checked`
  if (ids.length === 0) return null
  const objects = await commitObjects(where, ids)
  if (!objects) return `branch ${branch} requires signed commits: the commits pushed could not be read to check them`
  const verify = commitVerifier(deps)
  for (const [i, id] of ids.entries()) if (!(await verify(splitSignedCommit(objects[i]!))).verified) return `branch ${branch} is protected from unverified commit ${id}`
  return null
}
