import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from './users'

/**
 * Web sign-in sessions: one row per signed-in browser, in the database so that several processes
 * share them. The cookie holds a random secret; only its SHA-256 is stored (as access tokens).
 */
export const webSessions = sqliteTable(
  'web_sessions',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    /** SHA-256 (hex) of the cookie's secret. */
    tokenHash: text('token_hash').notNull(),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdUnix: integer('created_unix').notNull(),
    /** Past this the session is no longer accepted (and is deleted when next seen). */
    expiresUnix: integer('expires_unix').notNull(),
  },
  (t) => [uniqueIndex('web_sessions_hash_uq').on(t.tokenHash), index('web_sessions_user_idx').on(t.userId), index('web_sessions_expires_idx').on(t.expiresUnix)],
)
export type WebSessionRow = typeof webSessions.$inferSelect
