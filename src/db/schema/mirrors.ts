import { sqliteTable, integer, text, index } from 'drizzle-orm/sqlite-core'
import { repositories } from './repos'

/**
 * Pull mirrors (Gitea's `mirror` table): one row per mirror repository. The remote address is
 * kept without credentials; a password is kept apart, sealed (lib/secret-box.ts). `interval` in
 * seconds, 0 = no periodic update; `next_update_unix` is when the scheduler next fetches it.
 */
export const mirrors = sqliteTable(
  'mirrors',
  {
    repoId: integer('repo_id')
      .primaryKey()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    remoteAddress: text('remote_address').notNull(),
    authUsername: text('auth_username').notNull().default(''),
    /** Sealed password ('' when none). */
    authPasswordSealed: text('auth_password_sealed').notNull().default(''),
    interval: integer('interval').notNull(),
    nextUpdateUnix: integer('next_update_unix').notNull().default(0),
    /** Last successful update (0: never since the clone). */
    updatedUnix: integer('updated_unix').notNull().default(0),
    /** Git's message of the last failed update ('' after a success). */
    lastError: text('last_error').notNull().default(''),
  },
  (t) => [index('mirrors_next_update_idx').on(t.interval, t.nextUpdateUnix)],
)
