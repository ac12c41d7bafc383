import type { Db } from '../db/client'
import type { CommentRow, IssueRow } from '../db/schema'
import { recordEvent, type EventKind, type NewEvent } from './outbox'

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
