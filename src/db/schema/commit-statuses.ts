import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { repositories } from './repos'

/**
 * Commit statuses posted by CI systems. `index` numbers the statuses of one commit of one
 * repository (1, 2, 3 …): it is what the API answers as the Status `id`.
 */
export const commitStatuses = sqliteTable(
  'commit_statuses',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    sha: text('sha').notNull(),
    index: integer('index').notNull(),
    /** pending | success | error | failure | warning */
    state: text('state').notNull(),
    targetUrl: text('target_url').notNull().default(''),
    description: text('description').notNull().default(''),
    context: text('context').notNull().default(''),
    /** Who posted it; no foreign key: a deleted account's statuses stay, shown as the Ghost. */
    creatorId: integer('creator_id').notNull(),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [
    uniqueIndex('commit_statuses_repo_sha_index_idx').on(t.repoId, t.sha, t.index),
    index('commit_statuses_repo_sha_context_idx').on(t.repoId, t.sha, t.context),
  ],
)
export type StatusRow = typeof commitStatuses.$inferSelect
