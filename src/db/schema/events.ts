import { sqliteTable, integer, text, index } from 'drizzle-orm/sqlite-core'
import { repositories } from './repos'

/**
 * The outbox: one row per announceable change, written in the same transaction as the change
 * (src/events/outbox.ts). Ids only grow (AUTOINCREMENT: never reused, even after deletes), so
 * a consumer's position is one number. `repo_id` and `actor_id` have no foreign keys on
 * purpose: the event of a deleted repository or by a deleted user stays readable.
 */
export const events = sqliteTable(
  'events',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    /** One of EventKind (src/events/outbox.ts). */
    kind: text('kind').notNull(),
    repoId: integer('repo_id'),
    /** Who made the change; null when unknown (a push found by the startup repair with no record of its pusher). */
    actorId: integer('actor_id'),
    issueId: integer('issue_id'),
    commentId: integer('comment_id'),
    /** JSON: what a webhook payload needs and cannot read back later (previous values, refs, snapshots). */
    payload: text('payload').notNull().default('{}'),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [
    index('events_repo_idx').on(t.repoId, t.id),
    index('events_issue_idx').on(t.issueId, t.id),
    // A user's activity by time (the heatmap of `/users/{username}/heatmap`).
    index('events_actor_idx').on(t.actorId, t.createdUnix),
  ],
)

/**
 * Where each named consumer of the outbox stands: every event with id <= done_id is done;
 * events up to claimed_id are claimed by a worker until lease_until_ms (then they come back).
 */
export const eventConsumers = sqliteTable('event_consumers', {
  name: text('name').primaryKey(),
  doneId: integer('done_id').notNull().default(0),
  claimedId: integer('claimed_id').notNull().default(0),
  leaseUntilMs: integer('lease_until_ms').notNull().default(0),
})

/**
 * The refs of each repository as the database last recorded them (heads and tags, JSON
 * `{ref: sha}`) and a fingerprint of the files git keeps them in: the push sync and the
 * startup reconcile diff git against it to write push events, and skip unchanged repositories.
 */
export const repoGitStates = sqliteTable('repo_git_states', {
  repoId: integer('repo_id')
    .primaryKey()
    .references(() => repositories.id, { onDelete: 'cascade' }),
  refs: text('refs').notNull().default('{}'),
  fingerprint: text('fingerprint').notNull().default(''),
  updatedUnix: integer('updated_unix').notNull(),
})

/**
 * A push git may be running right now: written before `git receive-pack` starts, removed in
 * the transaction that records its ref changes. One left behind by a crash tells the startup
 * reconcile who pushed which refs.
 */
export const pendingPushes = sqliteTable(
  'pending_pushes',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    pusherId: integer('pusher_id').notNull(),
    /** JSON `[{ref, old, new}]` from the request's command list; null when it could not be read. */
    commands: text('commands'),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [index('pending_pushes_repo_idx').on(t.repoId)],
)
