import { inArray } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { teams, type BranchProtectionRow, type TagProtectionRow } from '../db/schema'
import { idsOf, stringsOf } from '../auth/protection'
import { isoTime } from '../lib/time'
import { usersByIds } from './people'

/** Names of the users and teams whitelists hold, in one query each. */
async function namesOf(deps: AppDeps, userIds: number[], teamIds: number[]) {
  const users = await usersByIds(deps, userIds)
  const teamRows = teamIds.length ? await deps.db.select({ id: teams.id, name: teams.name }).from(teams).where(inArray(teams.id, [...new Set(teamIds)])) : []
  const teamNames = new Map(teamRows.map((r) => [r.id, r.name]))
  return {
    users: (json: string) => idsOf(json).flatMap((id) => (users.get(id) ? [users.get(id)!.name] : [])),
    teams: (json: string) => idsOf(json).flatMap((id) => (teamNames.has(id) ? [teamNames.get(id)!] : [])),
  }
}

/** Gitea's BranchProtection records. */
export async function branchProtectionsToApi(deps: AppDeps, rows: BranchProtectionRow[]) {
  const userIds = rows.flatMap((r) => [r.whitelistUserIds, r.forcePushAllowlistUserIds, r.mergeWhitelistUserIds, r.approvalsWhitelistUserIds].flatMap(idsOf))
  const teamIds = rows.flatMap((r) => [r.whitelistTeamIds, r.forcePushAllowlistTeamIds, r.mergeWhitelistTeamIds, r.approvalsWhitelistTeamIds].flatMap(idsOf))
  const names = await namesOf(deps, userIds, teamIds)
  return rows.map((r) => ({
    branch_name: r.ruleName,
    rule_name: r.ruleName,
    priority: r.priority,
    enable_push: r.canPush,
    enable_push_whitelist: r.enableWhitelist,
    push_whitelist_usernames: names.users(r.whitelistUserIds),
    push_whitelist_teams: names.teams(r.whitelistTeamIds),
    push_whitelist_deploy_keys: r.whitelistDeployKeys,
    enable_force_push: r.canForcePush,
    enable_force_push_allowlist: r.enableForcePushAllowlist,
    force_push_allowlist_usernames: names.users(r.forcePushAllowlistUserIds),
    force_push_allowlist_teams: names.teams(r.forcePushAllowlistTeamIds),
    force_push_allowlist_deploy_keys: r.forcePushAllowlistDeployKeys,
    enable_merge_whitelist: r.enableMergeWhitelist,
    merge_whitelist_usernames: names.users(r.mergeWhitelistUserIds),
    merge_whitelist_teams: names.teams(r.mergeWhitelistTeamIds),
    enable_status_check: r.enableStatusCheck,
    status_check_contexts: stringsOf(r.statusCheckContexts),
    required_approvals: r.requiredApprovals,
    enable_approvals_whitelist: r.enableApprovalsWhitelist,
    approvals_whitelist_username: names.users(r.approvalsWhitelistUserIds),
    approvals_whitelist_teams: names.teams(r.approvalsWhitelistTeamIds),
    block_on_rejected_reviews: r.blockOnRejectedReviews,
    block_on_official_review_requests: r.blockOnOfficialReviewRequests,
    block_on_outdated_branch: r.blockOnOutdatedBranch,
    dismiss_stale_approvals: r.dismissStaleApprovals,
    ignore_stale_approvals: r.ignoreStaleApprovals,
    require_signed_commits: r.requireSignedCommits,
    protected_file_patterns: r.protectedFilePatterns,
    unprotected_file_patterns: r.unprotectedFilePatterns,
    block_admin_merge_override: r.blockAdminMergeOverride,
    created_at: isoTime(r.createdUnix),
    updated_at: isoTime(r.updatedUnix),
  }))
}

/** Gitea's TagProtection records. */
export async function tagProtectionsToApi(deps: AppDeps, rows: TagProtectionRow[]) {
  const names = await namesOf(deps, rows.flatMap((r) => idsOf(r.allowlistUserIds)), rows.flatMap((r) => idsOf(r.allowlistTeamIds)))
  return rows.map((r) => ({
    id: r.id,
    name_pattern: r.namePattern,
    whitelist_usernames: names.users(r.allowlistUserIds),
    whitelist_teams: names.teams(r.allowlistTeamIds),
    created_at: isoTime(r.createdUnix),
    updated_at: isoTime(r.updatedUnix),
  }))
}
