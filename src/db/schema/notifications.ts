import { sqliteTable, integer, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from './users'
import { repositories } from './repos'
import { issues } from './issues'

/**
 * Notification threads (Gitea's `notification`): one per (user, issue or pull request), written
 * by the outbox's notification consumer (src/notify/), never by a request. A later event about
 * the same issue updates the thread (unread again when it was read); `last_event_id` is the
 * outbox event that last touched it, so handling an event a second time changes nothing.
 * Threads go with their user, repository and issue (ON DELETE CASCADE).
 */
export const notifications = sqliteTable(
  'notifications',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    /** Gitea's NotificationStatus: 1 unread, 2 read, 3 pinned. */
    status: integer('status').notNull(),
    /** Gitea's NotificationSource: 1 issue, 2 pull request, 3 commit, 4 repository. */
    source: integer('source').notNull(),
    issueId: integer('issue_id').references(() => issues.id, { onDelete: 'cascade' }),
    /** The comment that caused the thread (0: none); not a foreign key, the comment may go. */
    commentId: integer('comment_id').notNull().default(0),
    /** Who caused the last update (not a foreign key: the thread outlives them). */
    updatedBy: integer('updated_by').notNull(),
    lastEventId: integer('last_event_id').notNull(),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [
    uniqueIndex('notifications_user_issue_uq').on(t.userId, t.issueId),
    index('notifications_user_status_idx').on(t.userId, t.status, t.updatedUnix),
    /** A user's threads in the lists' order (newest update first): a page reads its own rows, whatever the site's count. */
    index('notifications_user_updated_idx').on(t.userId, t.updatedUnix, t.id),
    index('notifications_repo_idx').on(t.repoId),
    index('notifications_issue_idx').on(t.issueId),
  ],
)
export type NotificationRow = typeof notifications.$inferSelect

/**
 * Issue subscriptions (Gitea's issue_watch): a person's explicit choice to be notified of an
 * issue or pull request (`is_watching` true) or not (false: no thread even as a participant or a
 * watcher of the repository). Without a row, participation and repository watching decide.
 */
export const issueWatches = sqliteTable(
  'issue_watches',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    issueId: integer('issue_id')
      .notNull()
      .references(() => issues.id, { onDelete: 'cascade' }),
    isWatching: integer('is_watching', { mode: 'boolean' }).notNull(),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [uniqueIndex('issue_watches_user_issue_uq').on(t.userId, t.issueId), index('issue_watches_issue_idx').on(t.issueId)],
)
export type IssueWatchRow = typeof issueWatches.$inferSelect
