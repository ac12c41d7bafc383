import { sqliteTable, integer, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from './users'
import { repositories } from './repos'

/*
 * Gitea Actions' settings that need no runner: secrets, variables and runner registration
 * tokens, each held by a repository, a user or organisation, or (tokens only) the whole site.
 * `scope` names the holder in one column (`r{repoId}`, `u{ownerId}`, `global`) so that one
 * unique index serves every kind on both databases; the nullable foreign keys remove a holder's
 * rows with it.
 */

/** The columns every table here starts with: its id and its holder. */
const holderColumns = () => ({
  id: integer('id').primaryKey({ autoIncrement: true }),
  scope: text('scope').notNull(),
  ownerId: integer('owner_id').references(() => users.id, { onDelete: 'cascade' }),
  repoId: integer('repo_id').references(() => repositories.id, { onDelete: 'cascade' }),
})

export const actionSecrets = sqliteTable(
  'action_secrets',
  {
    ...holderColumns(),
    /** Upper case, as Gitea stores it. */
    name: text('name').notNull(),
    /** The value sealed with lib/secret-box.ts; never returned. */
    dataSealed: text('data_sealed').notNull(),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [uniqueIndex('action_secrets_scope_name_idx').on(t.scope, t.name)],
)
export type ActionSecretRow = typeof actionSecrets.$inferSelect

export const actionVariables = sqliteTable(
  'action_variables',
  {
    ...holderColumns(),
    /** Upper case, as Gitea stores it. */
    name: text('name').notNull(),
    data: text('data').notNull(),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [uniqueIndex('action_variables_scope_name_idx').on(t.scope, t.name)],
)
export type ActionVariableRow = typeof actionVariables.$inferSelect

/** The current runner registration token of each holder (one a holder; a reset replaces it). */
export const actionRunnerTokens = sqliteTable(
  'action_runner_tokens',
  {
    ...holderColumns(),
    /** The token sealed with lib/secret-box.ts (it is shown again until reset). */
    tokenSealed: text('token_sealed').notNull(),
    /** SHA-256 of the token, hex: how a runner's registration would find it. */
    tokenHash: text('token_hash').notNull(),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [uniqueIndex('action_runner_tokens_scope_idx').on(t.scope), uniqueIndex('action_runner_tokens_hash_idx').on(t.tokenHash)],
)
export type ActionRunnerTokenRow = typeof actionRunnerTokens.$inferSelect
