import { and, count, desc, eq, isNull, sql, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { perConnection, writeTransaction, type Db } from '../../db/client'
import { issueContentHistory, type IssueContentHistoryRow } from '../../db/schema'
import type { Page, Paged } from '../../lib/pagination'
import { notFound, unprocessable } from '../../lib/errors'

/*
 * The texts an issue's description and its comments had (Gitea's issue content history): each
 * edit that changes a text keeps the new one, by its editor, in the edit's own write transaction;
 * the first edit keeps the text as it was written first. The issue page marks an edited text and
 * links its history (src/web/pages/content-history.tsx).
 */

/** A text of an issue: its description (`commentId` null) or one of its comments. */
export interface ContentOf {
  issueId: number
  commentId: number | null
}

const whereOf = (of: ContentOf): SQL =>
  and(eq(issueContentHistory.issueId, of.issueId), of.commentId === null ? isNull(issueContentHistory.commentId) : eq(issueContentHistory.commentId, of.commentId))!

/**
 * Keeps an edit of a text (call inside the edit's write transaction, only when the text changed):
 * at the first, the text as it was first written (`before`: its poster and creation time), then
 * the new one by `editorId`.
 */
export async function recordContentEdit(
  db: Db,
  of: ContentOf,
  before: { content: string; posterId: number; createdUnix: number },
  after: { content: string; editorId: number; editedUnix: number },
): Promise<void> {
  const [kept] = await db.select({ id: issueContentHistory.id }).from(issueContentHistory).where(whereOf(of)).limit(1)
  const rows = [
    ...(kept ? [] : [{ ...of, posterId: before.posterId, contentText: before.content, isFirstCreated: true, editedUnix: before.createdUnix }]),
    { ...of, posterId: after.editorId, contentText: after.content, isFirstCreated: false, editedUnix: after.editedUnix },
  ]
  await db.insert(issueContentHistory).values(rows)
}

/**
 * A page of a text's history, newest first, with its number of versions and the version before
 * the page's last (`older`: what that one changed; null when it is the first).
 */
export async function contentHistory(deps: AppDeps, of: ContentOf, page: Page): Promise<Paged<IssueContentHistoryRow> & { older: IssueContentHistoryRow | null }> {
  const [rows, [total]] = await Promise.all([
    deps.db
      .select()
      .from(issueContentHistory)
      .where(whereOf(of))
      .orderBy(desc(issueContentHistory.editedUnix), desc(issueContentHistory.id))
      .limit(page.limit + 1)
      .offset(page.offset),
    deps.db.select({ n: count() }).from(issueContentHistory).where(whereOf(of)),
  ])
  return { rows: rows.slice(0, page.limit), total: Number(total?.n ?? 0), older: rows[page.limit] ?? null }
}

/** editCounts' statement, prepared once per connection (every issue page reads it). */
const editCountsOf = perConnection((db: Db) =>
  db
    .select({ commentId: issueContentHistory.commentId, n: count() })
    .from(issueContentHistory)
    .where(eq(issueContentHistory.issueId, sql.placeholder('issue')))
    .groupBy(issueContentHistory.commentId)
    .prepare(),
)

/**
 * How many times each text of an issue was edited (its versions less the first), by comment id,
 * the description under 0: one grouped read for the issue page.
 */
export async function editCounts(deps: AppDeps, issueId: number): Promise<Map<number, number>> {
  const rows = await editCountsOf(deps.db).execute({ issue: issueId })
  return new Map(rows.map((r) => [r.commentId ?? 0, Number(r.n) - 1]))
}

/**
 * Takes version `id` of a text out of its history (Gitea's soft deletion: its text emptied, the
 * version still counted); the caller decided who may (the page's rule). 404 for no such version
 * of this text; 422 for the newest, which is the text itself (edited, not deleted from history).
 */
export async function deleteVersionText(deps: AppDeps, of: ContentOf, id: number): Promise<void> {
  await writeTransaction(deps.db, async () => {
    const [newest] = await deps.db
      .select({ id: issueContentHistory.id })
      .from(issueContentHistory)
      .where(whereOf(of))
      .orderBy(desc(issueContentHistory.editedUnix), desc(issueContentHistory.id))
      .limit(1)
    if (newest?.id === id) throw unprocessable('The newest version is the text itself: edit it instead.')
    const gone = await deps.db
      .update(issueContentHistory)
      .set({ contentText: '', isDeleted: true })
      .where(and(whereOf(of), eq(issueContentHistory.id, id)))
      .returning({ id: issueContentHistory.id })
    if (gone.length === 0) throw notFound('no such version')
  })
}

/** A version of a text, or undefined. */
export async function contentVersion(deps: AppDeps, of: ContentOf, id: number): Promise<IssueContentHistoryRow | undefined> {
  const [row] = await deps.db.select().from(issueContentHistory).where(and(whereOf(of), eq(issueContentHistory.id, id)))
  return row
}
