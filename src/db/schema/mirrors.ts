import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
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

/**
 * Push mirrors (Gitea's `push_mirror` table): remotes a repository's branches and tags are pushed
 * to (`git push --prune`, forced), on an interval and, with `sync_on_commit`, after each change of
 * its refs. `remote_name` is Gitea's generated `remote_mirror_<random>`, the mirror's name in the
 * API; no git remote is configured: the address and credentials are handed to git at each push
 * (src/git/remote.ts). The address is kept without credentials, the password sealed
 * (lib/secret-box.ts). `interval` in seconds, 0 = no periodic push; `last_update_unix` 0 = never.
 */
export const pushMirrors = sqliteTable(
  'push_mirrors',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    remoteName: text('remote_name').notNull(),
    remoteAddress: text('remote_address').notNull(),
    authUsername: text('auth_username').notNull().default(''),
    /** Sealed password ('' when none). */
    authPasswordSealed: text('auth_password_sealed').notNull().default(''),
    interval: integer('interval').notNull(),
    syncOnCommit: integer('sync_on_commit', { mode: 'boolean' }).notNull().default(false),
    nextUpdateUnix: integer('next_update_unix').notNull().default(0),
    createdUnix: integer('created_unix').notNull(),
    /** Last push that succeeded (0: never). */
    lastUpdateUnix: integer('last_update_unix').notNull().default(0),
    /** Git's message of the last failed push ('' after a success). */
    lastError: text('last_error').notNull().default(''),
  },
  (t) => [uniqueIndex('push_mirrors_name_idx').on(t.repoId, t.remoteName), index('push_mirrors_next_update_idx').on(t.interval, t.nextUpdateUnix)],
)
export type PushMirrorRow = typeof pushMirrors.$inferSelect
