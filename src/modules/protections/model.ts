import { t, type Static } from 'elysia'
import { MAX_BRANCH_FILTER } from '../../lib/glob'
import { integer } from '../../lib/validate'
import { Int } from '../users/model'

/** The records and options of branch_protections and tag_protections, as Gitea 1.23's structs. */

const Names = () => t.Optional(t.Array(t.String({ maxLength: 255 }), { maxItems: 100 }))
const Flag = () => t.Optional(t.Boolean())
const Patterns = () => t.Optional(t.String({ maxLength: 4096, description: '`;`-separated globs' }))

/** The fields CreateBranchProtectionOption and EditBranchProtectionOption share. */
const branchProtectionFields = {
  approvals_whitelist_teams: Names(),
  approvals_whitelist_username: Names(),
  block_admin_merge_override: Flag(),
  block_on_official_review_requests: Flag(),
  block_on_outdated_branch: Flag(),
  block_on_rejected_reviews: Flag(),
  dismiss_stale_approvals: Flag(),
  enable_approvals_whitelist: Flag(),
  enable_force_push: Flag(),
  enable_force_push_allowlist: Flag(),
  enable_merge_whitelist: Flag(),
  enable_push: Flag(),
  enable_push_whitelist: Flag(),
  enable_status_check: Flag(),
  force_push_allowlist_deploy_keys: Flag(),
  force_push_allowlist_teams: Names(),
  force_push_allowlist_usernames: Names(),
  ignore_stale_approvals: Flag(),
  merge_whitelist_teams: Names(),
  merge_whitelist_usernames: Names(),
  priority: t.Optional(integer({ minimum: 0, maximum: 1_000_000 })),
  protected_file_patterns: Patterns(),
  push_whitelist_deploy_keys: Flag(),
  push_whitelist_teams: Names(),
  push_whitelist_usernames: Names(),
  require_signed_commits: Flag(),
  required_approvals: t.Optional(integer({ minimum: -1_000_000, maximum: 1_000_000 })),
  status_check_contexts: t.Optional(t.Array(t.String({ maxLength: 255 }), { maxItems: 100 })),
  unprotected_file_patterns: Patterns(),
}

export const CreateBranchProtectionOption = t.Object(
  {
    ...branchProtectionFields,
    branch_name: t.Optional(t.String({ maxLength: 255, description: 'deprecated: rule_name' })),
    rule_name: t.Optional(t.String({ maxLength: MAX_BRANCH_FILTER })),
  },
  { $id: '#/components/schemas/CreateBranchProtectionOption' },
)
export type CreateBranchProtectionInput = Static<typeof CreateBranchProtectionOption>

export const EditBranchProtectionOption = t.Object(branchProtectionFields, { $id: '#/components/schemas/EditBranchProtectionOption' })
export type EditBranchProtectionInput = Static<typeof EditBranchProtectionOption>

export const UpdateBranchProtectionPriories = t.Object(
  { ids: t.Optional(t.Array(integer({ minimum: 1 }), { maxItems: 1000, description: 'the rules in their new order (at most WARREN_MAX_PROTECTIONS_PER_REPO, itself at most 1000)' })) },
  { $id: '#/components/schemas/UpdateBranchProtectionPriories' },
)

const Strings = () => t.Array(t.String())
export const BranchProtectionSchema = t.Object(
  {
    approvals_whitelist_teams: Strings(),
    approvals_whitelist_username: Strings(),
    block_admin_merge_override: t.Boolean(),
    block_on_official_review_requests: t.Boolean(),
    block_on_outdated_branch: t.Boolean(),
    block_on_rejected_reviews: t.Boolean(),
    branch_name: t.String({ description: 'deprecated: rule_name' }),
    created_at: t.String(),
    dismiss_stale_approvals: t.Boolean(),
    enable_approvals_whitelist: t.Boolean(),
    enable_force_push: t.Boolean(),
    enable_force_push_allowlist: t.Boolean(),
    enable_merge_whitelist: t.Boolean(),
    enable_push: t.Boolean(),
    enable_push_whitelist: t.Boolean(),
    enable_status_check: t.Boolean(),
    force_push_allowlist_deploy_keys: t.Boolean(),
    force_push_allowlist_teams: Strings(),
    force_push_allowlist_usernames: Strings(),
    ignore_stale_approvals: t.Boolean(),
    merge_whitelist_teams: Strings(),
    merge_whitelist_usernames: Strings(),
    priority: Int(),
    protected_file_patterns: t.String(),
    push_whitelist_deploy_keys: t.Boolean(),
    push_whitelist_teams: Strings(),
    push_whitelist_usernames: Strings(),
    require_signed_commits: t.Boolean(),
    required_approvals: Int(),
    rule_name: t.String(),
    status_check_contexts: Strings(),
    unprotected_file_patterns: t.String(),
    updated_at: t.String(),
  },
  { $id: '#/components/schemas/BranchProtection' },
)

const tagFields = {
  name_pattern: t.Optional(t.String({ maxLength: MAX_BRANCH_FILTER })),
  whitelist_teams: Names(),
  whitelist_usernames: Names(),
}
export const CreateTagProtectionOption = t.Object(tagFields, { $id: '#/components/schemas/CreateTagProtectionOption' })
export const EditTagProtectionOption = t.Object(tagFields, { $id: '#/components/schemas/EditTagProtectionOption' })
export type TagProtectionInput = Static<typeof CreateTagProtectionOption>

export const TagProtectionSchema = t.Object(
  {
    created_at: t.String(),
    id: Int(),
    name_pattern: t.String(),
    updated_at: t.String(),
    whitelist_teams: Strings(),
    whitelist_usernames: Strings(),
  },
  { $id: '#/components/schemas/TagProtection' },
)

export const TagProtectionParams = t.Object({ owner: t.String(), repo: t.String(), id: t.String() })
