import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { repositories } from './repos'
import { users } from './users'

/**
 * Webhooks (Gitea's webhook table): a repository's own (`repo_id`), an owner's (`owner_id`: an
 * organisation's or a user's, fired for every repository the owner has), or the site's (neither):
 * a system hook (`is_system`), fired for every repository's events, or a default hook, copied
 * into every repository made after it (src/modules/hooks/service.ts `copyDefaultHooks`) and
 * fired by none itself. The secret and the authorization header are write-only: never part of an
 * API answer.
 */
export const hooks = sqliteTable(
  'hooks',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    repoId: integer('repo_id').references(() => repositories.id, { onDelete: 'cascade' }),
    ownerId: integer('owner_id').references(() => users.id, { onDelete: 'cascade' }),
    /** gitea, gogs, slack, discord, dingtalk (src/webhooks/events.ts HOOK_TYPES). */
    type: text('type').notNull(),
    url: text('url').notNull(),
    /** json | form */
    contentType: text('content_type').notNull().default('json'),
    secret: text('secret').notNull().default(''),
    authorizationHeader: text('authorization_header').notNull().default(''),
    /** JSON: type-specific settings (slack: channel, username, icon_url, color). */
    meta: text('meta').notNull().default('{}'),
    /** push_only | send_everything | choose_events (Gitea's HookEvent). */
    eventMode: text('event_mode').notNull().default('choose_events'),
    /** JSON array of the chosen event types (fine-grained names), for choose_events. */
    events: text('events').notNull().default('["push"]'),
    branchFilter: text('branch_filter').notNull().default(''),
    /** A site hook (no repository, no owner) that fires for every repository (Gitea's is_system_webhook); false: a default hook. */
    isSystem: integer('is_system', { mode: 'boolean' }).notNull().default(false),
    isActive: integer('is_active', { mode: 'boolean' }).notNull().default(false),
    /** After the last attempt: 0 none, 1 succeeded, 2 failed (Gitea's last_status). */
    lastStatus: integer('last_status').notNull().default(0),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [index('hooks_repo_idx').on(t.repoId), index('hooks_owner_idx').on(t.ownerId)],
)
export type HookRow = typeof hooks.$inferSelect

/**
 * The exact text (and signed) of deliveries: one row per distinct text of an event, shared by the
 * tasks of every hook that is sent that very text (ten gitea hooks on a repository: one row, not
 * ten copies), and by a redelivery's task with its original. Written in the same transaction as
 * its tasks; a row no task refers to any more (its hooks deleted) is removed by the webhook
 * thread's sweep (src/webhooks/payload-sweep.ts).
 */
export const hookPayloads = sqliteTable('hook_payloads', {
  id: integer('id').primaryKey({ autoIncrement: true }),
  text: text('text').notNull(),
})

/**
 * One delivery of one event to one hook (Gitea's hook_task), written in the transaction that
 * acknowledges the event in the outbox. Its text is the `hook_payloads` row `payload_id` names
 * (tasks written before that table hold it in `payload`, which is '' on later ones: one
 * query shape reads either, src/webhooks/task-rows.ts). The exact text sent (and signed); the task
 * stays undelivered until an attempt succeeds or the attempts run out, so a restart resumes it.
 * `repo_id` has no foreign key: an organisation hook's delivery of a deleted repository's event
 * outlives the repository; it is 0 for an owner's event of no repository (a package's, as
 * Gitea's RepoID 0).
 */
export const hookTasks = sqliteTable(
  'hook_tasks',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    hookId: integer('hook_id')
      .notNull()
      .references(() => hooks.id, { onDelete: 'cascade' }),
    repoId: integer('repo_id').notNull(),
    /** The delivery id (X-Gitea-Delivery). */
    uuid: text('uuid').notNull(),
    /** The outbox event it announces (0 for test deliveries and redeliveries' copies of those). */
    eventId: integer('event_id').notNull().default(0),
    /** Fine-grained type (X-Gitea-Event-Type), e.g. issue_label. */
    eventType: text('event_type').notNull(),
    /** The text of tasks written before hook_payloads ('' since). */
    payload: text('payload').notNull(),
    payloadId: integer('payload_id').references(() => hookPayloads.id),
    isDelivered: integer('is_delivered', { mode: 'boolean' }).notNull().default(false),
    isSucceed: integer('is_succeed', { mode: 'boolean' }).notNull().default(false),
    attempts: integer('attempts').notNull().default(0),
    /** Not before this time (ms) is the next attempt made (back-off after a failed one). */
    nextAttemptMs: integer('next_attempt_ms').notNull().default(0),
    /** When the last attempt ended (ms) and how long it took. */
    deliveredMs: integer('delivered_ms').notNull().default(0),
    durationMs: integer('duration_ms').notNull().default(0),
    /** JSON {url, http_method, headers} of the last attempt. */
    requestContent: text('request_content').notNull().default(''),
    /** JSON {status, headers, body} of the last attempt (status 0 and "Delivery: ..." on a network error). */
    responseContent: text('response_content').notNull().default(''),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [
    uniqueIndex('hook_tasks_uuid_uq').on(t.uuid),
    index('hook_tasks_hook_idx').on(t.hookId, t.id),
    index('hook_tasks_pending_idx').on(t.isDelivered, t.repoId, t.hookId, t.id),
    index('hook_tasks_payload_idx').on(t.payloadId),
  ],
)
export type HookTaskRow = typeof hookTasks.$inferSelect
export type HookPayloadRow = typeof hookPayloads.$inferSelect
