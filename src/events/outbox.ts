import { and, asc, eq, fillPlaceholders, gt, lte, sql } from 'drizzle-orm'
import { perConnection, writeBehind, writeTransaction, type BuiltStatement, type Db } from '../db/client'
import { eventConsumers, events } from '../db/schema'
import { batchesOf } from '../lib/batches'
import { nowUnix } from '../lib/time'

/**
 * The outbox. Every change a webhook or a feed would announce writes one row here, in the same
 * SQLite transaction as the change itself (`recordEvent` inside the service's writeTransaction),
 * so a change without its event, or an event without its change, cannot exist. Consumers
 * (webhook delivery, feeds) read the rows in id order with `claimEvents` and acknowledge them
 * with `markDone`; each named consumer has its own position, kept in `event_consumers`.
 */
export type EventKind =
  | 'push'
  | 'ref.created'
  | 'ref.deleted'
  | 'repo.created'
  | 'repo.deleted'
  | 'repo.renamed'
  | 'repo.transferred'
  | 'repo.forked'
  | 'issue.opened'
  | 'issue.edited'
  | 'issue.closed'
  | 'issue.reopened'
  | 'issue.label_updated'
  | 'issue.label_cleared'
  | 'issue.assigned'
  | 'issue.unassigned'
  | 'issue.milestoned'
  | 'issue.demilestoned'
  /** An issue's ref (branch or tag) changed (payload: oldRef, newRef); in its timeline, announced to no hook (as Gitea). */
  | 'issue.ref_changed'
  /**
   * A dependency between two issues or pull requests was added or removed: recorded on each of
   * the two (payload: `dependent`, the other one's { id, repoId, index }), as Gitea comments on
   * both; in their timelines, announced to no hook (as Gitea).
   */
  | 'issue.dependency_added'
  | 'issue.dependency_removed'
  /** An issue or pull request was pinned or unpinned; in its timeline, announced to no hook (as Gitea). */
  | 'issue.pinned'
  | 'issue.unpinned'
  /** A conversation was locked to collaborators (payload: reason, Gitea's lock reason or '') or unlocked; in its timeline, announced to no hook (as Gitea). */
  | 'issue.locked'
  | 'issue.unlocked'
  /**
   * An issue or pull request was put into a project, taken out of one or moved to another (payload:
   * `oldProject`, `project`: { id, title } or null), Gitea's `project` comment; or its card moved to
   * another column of its project (payload: `project` and `column`, { id, title }), Gitea's
   * `project_board` comment. In its timeline, announced to no hook (as Gitea 1.23).
   */
  | 'issue.project_changed'
  | 'issue.project_column_changed'
  /** An issue or pull request was deleted (payload: `issue`, its Issue record as it was: the rows are gone). */
  | 'issue.deleted'
  | 'comment.created'
  | 'comment.edited'
  | 'comment.deleted'
  /** A commit status was posted (Gitea's `status` webhook). */
  | 'status'
  /**
   * Pull requests. A pull request is an issue: its edits, closing, reopening, labels, assignees
   * and milestone are the `issue.*` kinds above with `payload.isPull` true (and its comments the
   * `comment.*` kinds). These are the pull request's own: opened (issueId = its issue), merged
   * (payload: index, mergeCommitSha) and synchronized (its head moved; payload: index, before, after).
   */
  | 'pull.opened'
  | 'pull.merged'
  | 'pull.synchronized'
  /**
   * A merge was scheduled for when the checks succeed (payload: index): the auto-merge consumer
   * looks at it once every event before it (a status that arrived meanwhile) is in.
   */
  | 'pull.merge_scheduled'
  /**
   * Reviews of a pull request (issueId = its issue): submitted (payload: index, reviewId, type:
   * 'approved' | 'rejected' | 'comment', content: its body as submitted); someone asked to review or no longer asked (payload:
   * index, reviewerId: the person; a team's request is one event per member).
   */
  | 'review.submitted'
  | 'review.requested'
  | 'review.request_removed'
  /**
   * Releases (payload: releaseId, tagName; `release.deleted` also carries `release`, the Release
   * record as it was, since the row is gone).
   */
  | 'release.published'
  | 'release.updated'
  | 'release.deleted'
  /**
   * A repository's wiki: a page created, edited (or renamed) or deleted (payload: page, its web
   * path after the change; comment, the commit's message, '' for a deletion), Gitea's `wiki` webhook.
   */
  | 'wiki.created'
  | 'wiki.edited'
  | 'wiki.deleted'
  /**
   * A package version was published (its first file: a new version) or deleted (its version, or
   * its last file), Gitea's `package` webhook. An owner's, not a repository's: `repoId` null;
   * payload: ownerId, and `pkg` and `version`, the rows as they were then (a deleted version's are
   * gone), for the Package record.
   */
  | 'package.created'
  | 'package.deleted'

/** Gitea's `changes` object of an `edited` payload: the previous values of what changed. */
export type EditChanges = Partial<Record<'title' | 'body', { from: string }>>

/** An event as services record it (the id and time are the outbox's). */
export interface NewEvent {
  kind: EventKind
  repoId: number | null
  /** Who made the change; null only when it cannot be known (see repo_git_states' repair). */
  actorId: number | null
  issueId?: number | null
  commentId?: number | null
  /** What a payload will need and cannot read back later; plain JSON values only. */
  payload?: Record<string, unknown>
}

export interface EventRecord {
  id: number
  kind: EventKind
  repoId: number | null
  actorId: number | null
  issueId: number | null
  commentId: number | null
  payload: Record<string, unknown>
  createdUnix: number
}

/**
 * Writes one event. Call it inside the writeTransaction that makes the change (it opens none of
 * its own), after the checks that may refuse the change, so a refused change leaves no event.
 * Its id is nobody's business but the consumers' (they read the events back), so the insert is
 * written behind (writeBehind): on PostgreSQL it goes with the transaction's next statement or its
 * COMMIT, and costs the write lock no round trip of its own; events of one transaction still get
 * their ids in the order they were recorded.
 */
export async function recordEvent(db: Db, event: NewEvent): Promise<void> {
  // Always in a write transaction (joining the caller's): ids are then committed in id order,
  // which consumers rely on (they read past a position). On PostgreSQL, ids taken by
  // transactions that ran side by side could commit out of order; write transactions do not.
  await writeTransaction(db, () => writeBehind(db, eventInsertOf(db)(eventRow(event))))
}

/**
 * The insert of one event (every change's), its SQL built once per connection: written behind,
 * it is that text and the event's values (no statement built per event); awaited (SQLite, or
 * outside a transaction), the same statement prepared.
 */
const eventInsertOf = perConnection((db) => {
  const p = sql.placeholder
  return reusableInsert<ReturnType<typeof eventRow>>(
    db.insert(events).values({
      kind: p('kind'),
      repoId: p('repoId'),
      actorId: p('actorId'),
      issueId: p('issueId'),
      commentId: p('commentId'),
      payload: p('payload'),
      createdUnix: p('createdUnix'),
    } as never),
  )
})

/**
 * An insert with placeholders, built once: for each set of values, the statement to write behind
 * (its text and those values) or to await (the same statement, prepared).
 */
export function reusableInsert<V extends Record<string, unknown>>(query: { toSQL(): { sql: string; params: unknown[] }; prepare(): { execute(values: V): Promise<unknown> } }): (values: V) => BuiltStatement {
  const built = query.toSQL()
  const prepared = query.prepare()
  return (values) => ({
    toSQL: () => ({ sql: built.sql, params: fillPlaceholders(built.params, values) }),
    then: (ok, failed) => prepared.execute(values).then(ok, failed),
  })
}

/** recordEvent for several events of one change (in the list's order): one insert a batch of them, written behind too. */
export async function recordEvents(db: Db, list: NewEvent[]): Promise<void> {
  if (list.length === 0) return
  await writeTransaction(db, async () => {
    for (const batch of batchesOf(list)) await writeBehind(db, db.insert(events).values(batch.map(eventRow)))
  })
}

function eventRow(event: NewEvent) {
  return {
    kind: event.kind,
    repoId: event.repoId,
    actorId: event.actorId,
    issueId: event.issueId ?? null,
    commentId: event.commentId ?? null,
    payload: JSON.stringify(event.payload ?? {}),
    createdUnix: nowUnix(),
  }
}

/** How long claimed events stay with the worker that claimed them before they come back. */
export const DEFAULT_LEASE_MS = 60_000
/** At most this many events per claim. */
export const MAX_CLAIM = 500

const CONSUMER_NAME = /^[a-z0-9][a-z0-9_.:-]{0,63}$/

function checkConsumer(consumer: string): void {
  if (!CONSUMER_NAME.test(consumer)) throw new Error(`invalid outbox consumer name ${JSON.stringify(consumer)}`)
}

const toRecord = (row: typeof events.$inferSelect): EventRecord => ({ ...row, kind: row.kind as EventKind, payload: JSON.parse(row.payload) })

/**
 * The next events (in id order, at most `limit`) that `consumer` has neither done nor claimed
 * under a live lease; they are claimed for `leaseMs`. Claims of a worker that crashed (or never
 * called markDone) come back once the lease ends, so every event is handed out until it is done
 * (at least once) — provided each consumer has one worker at a time (a background job, see
 * src/jobs/): positions are a single "done up to" mark, so a second worker's markDone could pass
 * over a crashed first worker's claims. Consumers are independent of each other; their positions
 * are rows in SQLite, so they survive restarts.
 */
export async function claimEvents(db: Db, consumer: string, limit: number, leaseMs = DEFAULT_LEASE_MS): Promise<EventRecord[]> {
  checkConsumer(consumer)
  const n = Math.max(1, Math.min(MAX_CLAIM, Math.floor(limit) || 1))
  const now = Date.now()
  // One read awaited under the write lock (on PostgreSQL each awaited statement holds it for a
  // round trip of this process, and every consumer claims at every batch; it was four): the
  // consumer's row made at its first claim and the claim written behind, the events read past the
  // position the row gives (its claims while their lease lives, its done position otherwise).
  return await writeTransaction(db, async () => {
    await writeBehind(db, db.insert(eventConsumers).values({ name: consumer }).onConflictDoNothing())
    const position = db
      .select({
        after: sql<number>`case when ${eventConsumers.leaseUntilMs} > ${now} and ${eventConsumers.claimedId} > ${eventConsumers.doneId} then ${eventConsumers.claimedId} else ${eventConsumers.doneId} end`,
      })
      .from(eventConsumers)
      .where(eq(eventConsumers.name, consumer))
    const rows = await db.select().from(events).where(gt(events.id, position)).orderBy(asc(events.id)).limit(n)
    if (rows.length)
      await writeBehind(
        db,
        db.update(eventConsumers)
          .set({ claimedId: rows[rows.length - 1]!.id, leaseUntilMs: now + leaseMs })
          .where(eq(eventConsumers.name, consumer)),
      )
    return rows.map(toRecord)
  })
}

/**
 * Marks every event up to `upToId` (inclusive) done for `consumer`; they are never handed to it
 * again. Positions only move forward (an older acknowledgement changes nothing).
 */
export async function markDone(db: Db, consumer: string, upToId: number): Promise<void> {
  checkConsumer(consumer)
  if (!Number.isSafeInteger(upToId) || upToId <= 0) return
  // Both written behind: the transaction awaits no answer under the write lock.
  await writeTransaction(db, async () => {
    await writeBehind(db, db.insert(eventConsumers).values({ name: consumer }).onConflictDoNothing())
    await writeBehind(
      db,
      db.update(eventConsumers)
        .set({ doneId: upToId })
        .where(and(eq(eventConsumers.name, consumer), lte(eventConsumers.doneId, upToId))),
    )
  })
}

/**
 * The events past `consumer`'s done position (in id order, at most `limit`) and that position:
 * a read, no write lock. For a consumer that acknowledges them with `advanceDone` in the
 * transaction that writes what it made of them: another worker that read the same events finds
 * the position moved and writes nothing, so each event is still handled once, and at least once
 * (a crash before that transaction leaves the position where it was).
 */
export async function eventsAfterDone(db: Db, consumer: string, limit: number): Promise<{ doneId: number; events: EventRecord[] }> {
  checkConsumer(consumer)
  const n = Math.max(1, Math.min(MAX_CLAIM, Math.floor(limit) || 1))
  const doneId = (await db.select({ doneId: eventConsumers.doneId }).from(eventConsumers).where(eq(eventConsumers.name, consumer)))[0]?.doneId ?? 0
  const rows = await db.select().from(events).where(gt(events.id, doneId)).orderBy(asc(events.id)).limit(n)
  return { doneId, events: rows.map(toRecord) }
}

/**
 * Moves `consumer`'s done position from `fromId` to `upToId`, answering true; false (nothing
 * changed) when the position is no longer `fromId`. Call it inside the writeTransaction that
 * writes what the consumer made of the events read by `eventsAfterDone`, before those writes.
 */
export async function advanceDone(db: Db, consumer: string, fromId: number, upToId: number): Promise<boolean> {
  checkConsumer(consumer)
  return writeTransaction(db, async () => {
    // A position past 0 was read from the consumer's row: it exists.
    if (fromId === 0) await db.insert(eventConsumers).values({ name: consumer }).onConflictDoNothing()
    const moved = await positionMoveOf(db).execute({ consumer, fromId, upToId })
    return (moved as unknown[]).length === 1
  })
}

/** advanceDone's compare-and-set, prepared once per connection (it runs in every round of a consumer, holding the write lock). */
const positionMoveOf = perConnection((db) => {
  const p = sql.placeholder
  return db
    .update(eventConsumers)
    .set({ doneId: p('upToId') } as never)
    .where(and(eq(eventConsumers.name, p('consumer')), eq(eventConsumers.doneId, p('fromId'))))
    .returning({ doneId: eventConsumers.doneId })
    .prepare()
})

/** Events of a repository in id order (for feeds and tests). */
export async function eventsOfRepo(db: Db, repoId: number, afterId = 0, limit = 50): Promise<EventRecord[]> {
  return (await db
    .select()
    .from(events)
    .where(and(eq(events.repoId, repoId), gt(events.id, afterId)))
    .orderBy(asc(events.id))
    .limit(Math.max(1, Math.min(MAX_CLAIM, limit))))
    .map(toRecord)
}

/**
 * Ends `consumer`'s lease now: its claimed events are handed out again by the next claimEvents.
 * For a consumer's worker when it starts, so that what a killed process had claimed (and not
 * marked done) comes back at once rather than being passed over.
 */
export async function releaseClaims(db: Db, consumer: string): Promise<void> {
  checkConsumer(consumer)
  await db.update(eventConsumers).set({ leaseUntilMs: 0, claimedId: 0 }).where(eq(eventConsumers.name, consumer))
}

/**
 * Whether any event lies past `consumer`'s done position (none recorded: any event): a read (no
 * write lock), for idle polling. One statement, prepared once per connection: the consumers of a
 * server at rest ask it several times a second (building the query each time was most of an idle
 * server's CPU).
 */
export async function hasEventsAfterDone(db: Db, consumer: string): Promise<boolean> {
  checkConsumer(consumer)
  return ((await eventsAfterDoneOf(db).execute({ consumer })) as unknown[]).length > 0
}

/**
 * hasEventsAfterDone's statement: the first event past the consumer's done position (0 while it
 * has none, as eventsAfterDone reads it). In id order: the position is a subquery's answer, which
 * PostgreSQL's plan cannot know ahead, so without the order a LIMIT 1 made it expect a match among
 * the first rows and read the table from its start, every event (they are never removed) at each
 * poll of a consumer that is caught up; the order has it search the primary key.
 */
const eventsAfterDoneOf = perConnection((db) =>
  db
    .select({ id: events.id })
    .from(events)
    .where(gt(events.id, sql`coalesce((select ${eventConsumers.doneId} from ${eventConsumers} where ${eventConsumers.name} = ${sql.placeholder('consumer')}), 0)`))
    .orderBy(asc(events.id))
    .limit(1)
    .prepare(),
)
