import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { repositories } from './repos'

const flag = (name: string) => integer(name, { mode: 'boolean' }).notNull().default(false)
/** A JSON array of ids (users, teams) or of strings (status contexts), as Gitea stores them. */
const list = (name: string) => text(name).notNull().default('[]')

/**
 * Branch protection rules (Gitea's protected_branch): `ruleName` is a branch name or a glob;
 * the first rule matching a branch (plain names first, then by priority) protects it. Who may
 * push, force-push and merge, and what a merge needs, as Gitea's fields; whitelists hold ids
 * (users, teams of the owning organisation), names are resolved when the record is made.
 */
export const branchProtections = sqliteTable(
  'branch_protections',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    ruleName: text('rule_name').notNull(),
    priority: integer('priority').notNull().default(0),
    canPush: flag('can_push'),
    enableWhitelist: flag('enable_whitelist'),
    whitelistUserIds: list('whitelist_user_ids'),
    whitelistTeamIds: list('whitelist_team_ids'),
    whitelistDeployKeys: flag('whitelist_deploy_keys'),
    canForcePush: flag('can_force_push'),
    enableForcePushAllowlist: flag('enable_force_push_allowlist'),
    forcePushAllowlistUserIds: list('force_push_allowlist_user_ids'),
    forcePushAllowlistTeamIds: list('force_push_allowlist_team_ids'),
    forcePushAllowlistDeployKeys: flag('force_push_allowlist_deploy_keys'),
    enableMergeWhitelist: flag('enable_merge_whitelist'),
    mergeWhitelistUserIds: list('merge_whitelist_user_ids'),
    mergeWhitelistTeamIds: list('merge_whitelist_team_ids'),
    enableStatusCheck: flag('enable_status_check'),
    statusCheckContexts: list('status_check_contexts'),
    enableApprovalsWhitelist: flag('enable_approvals_whitelist'),
    approvalsWhitelistUserIds: list('approvals_whitelist_user_ids'),
    approvalsWhitelistTeamIds: list('approvals_whitelist_team_ids'),
    requiredApprovals: integer('required_approvals').notNull().default(0),
    blockOnRejectedReviews: flag('block_on_rejected_reviews'),
    blockOnOfficialReviewRequests: flag('block_on_official_review_requests'),
    blockOnOutdatedBranch: flag('block_on_outdated_branch'),
    dismissStaleApprovals: flag('dismiss_stale_approvals'),
    ignoreStaleApprovals: flag('ignore_stale_approvals'),
    requireSignedCommits: flag('require_signed_commits'),
    /** `;`-separated globs (Gitea's protected_file_patterns / unprotected_file_patterns). */
    protectedFilePatterns: text('protected_file_patterns').notNull().default(''),
    unprotectedFilePatterns: text('unprotected_file_patterns').notNull().default(''),
    blockAdminMergeOverride: flag('block_admin_merge_override'),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [uniqueIndex('branch_protections_repo_rule_uq').on(t.repoId, t.ruleName), index('branch_protections_repo_idx').on(t.repoId, t.priority)],
)
export type BranchProtectionRow = typeof branchProtections.$inferSelect

/**
 * Tag protection rules (Gitea's protected_tag): tags matching `namePattern` (a glob, or
 * `/regex/`) may be created and deleted only by the whitelisted users and team members.
 */
export const tagProtections = sqliteTable(
  'tag_protections',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    namePattern: text('name_pattern').notNull(),
    allowlistUserIds: list('allowlist_user_ids'),
    allowlistTeamIds: list('allowlist_team_ids'),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [index('tag_protections_repo_idx').on(t.repoId)],
)
export type TagProtectionRow = typeof tagProtections.$inferSelect
