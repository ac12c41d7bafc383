import { and, desc, eq, inArray } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { Db } from '../../db/client'
import { reviewComments, type PullRow, type RepoRow } from '../../db/schema'
import { gitOfRow } from '../../auth/repo-context'
import { fileDiff, fileLines, hunkAround, lineFingerprint } from '../../git/review-lines'
import { unprocessable } from '../../lib/errors'

/**
 * Line comments: checked and placed when a review is written (the line must exist on its side:
 * the new file at the reviewed commit, the old one at the merge base), and marked outdated when a
 * push changes the line they were made on.
 */

/** A line comment as asked (CreatePullReviewComment). */
export interface AskedComment {
  body?: string
  path?: string
  new_position?: number
  old_position?: number
}

/** A line comment ready to be written. */
export interface PlacedComment {
  path: string
  line: number
  content: string
  lineSha: string
  patch: string
}

/** One file's diff read for a diff hunk is cut off past this size (the hunk is then left empty). */
const MAX_FILE_DIFF = 1024 * 1024

/** Checks and places the asked comments against `commitId` (refused with 422 before anything is written). */
export async function placeComments(deps: AppDeps, base: RepoRow, pull: PullRow, commitId: string, asked: AskedComment[]): Promise<PlacedComment[]> {
  const git = gitOfRow(deps, base)
  const diffs = new Map<string, string>()
  const files = new Map<string, string[] | null>()
  const placed: PlacedComment[] = []
  for (const c of asked) {
    const path = (c.path ?? '').trim()
    if (!path) throw unprocessable('a review comment needs a path', 'Path')
    const line = (c.old_position ?? 0) > 0 ? -c.old_position! : (c.new_position ?? 0)
    if (line === 0) throw unprocessable(`the comment on ${path} needs new_position or old_position`, 'NewLineNum')
    const side = line > 0 ? commitId : pull.mergeBase
    const key = `${side}:${path}`
    if (!files.has(key)) files.set(key, side ? await fileLines(git, side, path, deps.config.maxBlobSize) : null)
    const lineSha = lineFingerprint(files.get(key)!, Math.abs(line))
    if (!lineSha) throw unprocessable(`${path} has no line ${Math.abs(line)} in the ${line > 0 ? 'new' : 'old'} file`, line > 0 ? 'NewLineNum' : 'OldLineNum')
    if (!diffs.has(path)) diffs.set(path, pull.mergeBase ? ((await fileDiff(git, pull.mergeBase, commitId, path, MAX_FILE_DIFF)) ?? '') : '')
    placed.push({ path, line, content: c.body ?? '', lineSha, patch: hunkAround(diffs.get(path)!, line) })
  }
  return placed
}

/** Comments looked at when a head moves, newest first: older ones past this stay as they are. */
export const MAX_COMMENTS_CHECKED = 500

/**
 * The line comments of a pull request that a new head (and merge base) makes outdated: those
 * whose line no longer reads as it did, at the same place, when they were made (what Gitea's
 * InvalidateCodeComments tells with blame). Git reads only; the caller marks them in its transaction.
 */
export async function outdatedComments(deps: AppDeps, base: RepoRow, pull: Pick<PullRow, 'issueId'>, head: string, mergeBase: string): Promise<number[]> {
  const rows = await deps.db
    .select({ id: reviewComments.id, path: reviewComments.path, line: reviewComments.line, lineSha: reviewComments.lineSha })
    .from(reviewComments)
    .where(and(eq(reviewComments.issueId, pull.issueId), eq(reviewComments.invalidated, false)))
    .orderBy(desc(reviewComments.id))
    .limit(MAX_COMMENTS_CHECKED)
  const git = gitOfRow(deps, base)
  const outdated: number[] = []
  const files = new Map<string, string[] | null>()
  for (const c of rows) {
    const side = c.line > 0 ? head : mergeBase
    const key = `${side}:${c.path}`
    if (!files.has(key)) files.set(key, await fileLines(git, side, c.path, deps.config.maxBlobSize))
    if (lineFingerprint(files.get(key)!, Math.abs(c.line)) !== c.lineSha) outdated.push(c.id)
  }
  return outdated
}

/** Marks comments outdated (inside the caller's transaction). */
export async function markOutdated(db: Db, ids: number[]): Promise<void> {
  if (ids.length) await db.update(reviewComments).set({ invalidated: true }).where(inArray(reviewComments.id, ids))
}
