import { sql } from 'drizzle-orm'
import { perConnection, writeBehind, writeTransaction, type Db } from '../db/client'
import { events, issueIndexes, issues, type CommentRow, type IssueRow } from '../db/schema'
import { nowUnix } from '../lib/time'
import { recordEvent, reusableInsert, type EventKind, type NewEvent } from './outbox'

type IssueKind = Extract<EventKind, `issue.${string}`>
type CommentKind = Extract<EventKind, `comment.${string}`>

/**
 * An event about an issue or pull request (inside the change's write transaction). The payload
 * always carries the index and whether it is a pull request, plus `extra`.
 */
export async function recordIssueEvent(db: Db, issue: IssueRow, actorId: number, kind: IssueKind, extra: Record<string, unknown> = {}): Promise<void> {
  await recordEvent(db, issueEvent(issue, actorId, kind, extra))
}

/** The event recordIssueEvent writes, for recordEvents (several issues in one change). */
export function issueEvent(issue: Pick<IssueRow, 'id' | 'repoId' | 'index' | 'isPull'>, actorId: number, kind: IssueKind, extra: Record<string, unknown> = {}): NewEvent {
  return { kind, repoId: issue.repoId, actorId, issueId: issue.id, payload: { index: issue.index, isPull: issue.isPull, ...extra } }
}

/**
 * recordIssueEvent for the issue (not a pull request) the transaction has just filed in `repoId`,
 * before its row is known: the same event row, whose issue id and index the insert reads itself
 * (the repository's newest index, taken by this transaction under the write lock), and whose
 * payload is the text issueEvent's would be. So the filing sends it behind the issue's insert
 * without waiting for the insert's answer (modules/issues createIssue): on PostgreSQL nothing
 * but COMMIT waits for an answer under the write lock.
 */
export async function recordNewIssueEvent(db: Db, repoId: number, actorId: number, kind: 'issue.opened' | 'issue.closed'): Promise<void> {
  await writeTransaction(db, () => writeBehind(db, newIssueEventOf(db)({ kind, repoId, actorId, createdUnix: nowUnix() })))
}

/** issueEvent's payload of an opened or closed issue, as text around its index (one shape, issueEvent's). */
const INDEX_MARK = 987654321
const [payloadBefore, payloadAfter] = JSON.stringify(issueEvent({ id: 0, repoId: 0, index: INDEX_MARK, isPull: false }, 0, 'issue.opened').payload).split(String(INDEX_MARK)) as [string, string]

const newIssueEventOf = perConnection((db) => {
  const p = sql.placeholder
  const newest = sql`(select ${issueIndexes.maxIndex} from ${issueIndexes} where ${issueIndexes.repoId} = ${p('repoId')})`
  return reusableInsert<{ kind: string; repoId: number; actorId: number; createdUnix: number }>(
    db.insert(events).values({
      kind: p('kind'),
      repoId: p('repoId'),
      actorId: p('actorId'),
      issueId: sql`(select ${issues.id} from ${issues} where ${issues.repoId} = ${p('repoId')} and ${issues.index} = ${newest})`,
      commentId: null,
      payload: sql`${payloadBefore} || ${newest} || ${payloadAfter}`,
      createdUnix: p('createdUnix'),
    } as never),
  )
})

/** An event about a comment; `comment` is the row as it is after the change (as it was, for a deletion). */
export async function recordCommentEvent(
  db: Db,
  issue: Pick<IssueRow, 'id' | 'index' | 'isPull'>,
  comment: CommentRow,
  actorId: number,
  kind: CommentKind,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await recordEvent(db, {
    kind,
    repoId: comment.repoId,
    actorId,
    issueId: issue.id,
    commentId: comment.id,
    payload: { index: issue.index, isPull: issue.isPull, ...extra },
  })
}
