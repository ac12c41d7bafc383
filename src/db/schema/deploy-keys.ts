import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { repositories } from './repos'

/**
 * SSH keys that open one repository (Gitea's deploy_key with its public_key row folded in): the
 * SSH transport finds by fingerprint exactly which repositories a key opens and whether it may
 * push. One key may open several repositories (one row each), never twice the same one.
 */
export const deployKeys = sqliteTable(
  'deploy_keys',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    title: text('title').notNull(),
    /** `SHA256:<base64>` as ssh-keygen -lf prints it. */
    fingerprint: text('fingerprint').notNull(),
    /** The normalised public key line (`type base64 [comment]`). */
    content: text('content').notNull(),
    /** The algorithm, e.g. `ssh-ed25519`. */
    keyType: text('key_type').notNull(),
    readOnly: integer('read_only', { mode: 'boolean' }).notNull().default(true),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [
    uniqueIndex('deploy_keys_repo_fingerprint_idx').on(t.repoId, t.fingerprint),
    uniqueIndex('deploy_keys_repo_title_idx').on(t.repoId, t.title),
    index('deploy_keys_fingerprint_idx').on(t.fingerprint),
  ],
)
export type DeployKeyRow = typeof deployKeys.$inferSelect
