import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { repositories } from './repos'
import { users } from './users'

/**
 * Git LFS (Gitea's `lfs_meta_object`, `lfs_lock`). A meta object says a repository has an LFS
 * object: the object is downloadable only through repositories that have one (Gitea's per-repository
 * LFSMetaObject), and goes with its repository (cascade). The bytes live by content in
 * {data}/lfs/{oid[0:2]}/{oid[2:4]}/{oid[4:]} (src/modules/lfs/store.ts), shared by every
 * repository that has the object; files no row names are removed by the sweep (`repairLfsObjects`).
 */
export const lfsMetaObjects = sqliteTable(
  'lfs_meta_objects',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    /** The object's SHA-256, lower-case hex. */
    oid: text('oid').notNull(),
    size: integer('size').notNull(),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [uniqueIndex('lfs_meta_objects_repo_oid_uq').on(t.repoId, t.oid), index('lfs_meta_objects_oid_idx').on(t.oid)],
)
export type LfsMetaObjectRow = typeof lfsMetaObjects.$inferSelect

/** An LFS lock: one path of a repository held by one user (Gitea's LFSLock); goes with the repository or the user. */
export const lfsLocks = sqliteTable(
  'lfs_locks',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    ownerId: integer('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The path as the client sent it, cleaned (no leading slash). */
    path: text('path').notNull(),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [uniqueIndex('lfs_locks_repo_path_uq').on(t.repoId, t.path)],
)
export type LfsLockRow = typeof lfsLocks.$inferSelect
