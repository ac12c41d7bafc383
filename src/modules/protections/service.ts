import { and, count, eq, max, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { RepoContext } from '../../auth/repo-context'
import { gitRepoOf } from '../../auth/repo-context'
import { isPlainRuleName, tagPatternProblem, type BranchProtectionRow, type TagProtectionRow } from '../../auth/protection'
import { perConnection, writeTransaction } from '../../db/client'
import { branchProtections, tagProtections } from '../../db/schema'
import { readRef } from '../../git/merge'
import { ApiError, badRequest, forbidden, notFound, unprocessable } from '../../lib/errors'
import { compileGlob } from '../../lib/glob'
import { nowUnix } from '../../lib/time'
import type { CreateBranchProtectionInput, EditBranchProtectionInput, TagProtectionInput } from './model'
import { teamIdsOf, userIdsOf } from './people'

/**
 * Branch and tag protection rules (Gitea's routers/api/v1/repo/branch.go and tag.go). Repository
 * admins only (the routes). What they protect is enforced by the push decision (src/push).
 */

const json = (v: unknown) => JSON.stringify(v)

/** A repository's branch rules in their order (prepared once per connection: CI tools and Renovate ask it). */
const branchRulesOf = perConnection((db: AppDeps['db']) =>
  db.select().from(branchProtections).where(eq(branchProtections.repoId, sql.placeholder('repo'))).orderBy(branchProtections.priority, branchProtections.id).prepare(),
)

export const listBranchRules = async (deps: AppDeps, repoId: number) => (await branchRulesOf(deps.db).execute({ repo: repoId })) as BranchProtectionRow[]

export async function getBranchRule(deps: AppDeps, repoId: number, name: string | null): Promise<BranchProtectionRow> {
  // No rule's name holds a control character (PostgreSQL cannot even compare one with NUL).
  const row = name === null || /[\u0000-\u001f\u007f]/.test(name) ? undefined : (await deps.db.select().from(branchProtections).where(and(eq(branchProtections.repoId, repoId), eq(branchProtections.ruleName, name))))[0]
  if (!row) throw notFound()
  return row
}

type RuleColumns = Omit<BranchProtectionRow, 'id' | 'repoId' | 'ruleName' | 'createdUnix' | 'updatedUnix'>

/**
 * The columns an option sets, over `base` (a new rule's defaults or the rule edited), normalised
 * as Gitea: whitelists count only when what they refine is on (push, force push).
 */
async function columnsOf(deps: AppDeps, ctx: RepoContext, input: EditBranchProtectionInput, base: RuleColumns): Promise<RuleColumns> {
  const ids = async (users: string[] | undefined, teams: string[] | undefined, oldUsers: string, oldTeams: string) => ({
    users: users ? json(await userIdsOf(deps, ctx, users)) : oldUsers,
    teams: teams ? json(await teamIdsOf(deps, ctx, teams)) : oldTeams,
  })
  const push = await ids(input.push_whitelist_usernames, input.push_whitelist_teams, base.whitelistUserIds, base.whitelistTeamIds)
  const force = await ids(input.force_push_allowlist_usernames, input.force_push_allowlist_teams, base.forcePushAllowlistUserIds, base.forcePushAllowlistTeamIds)
  const merge = await ids(input.merge_whitelist_usernames, input.merge_whitelist_teams, base.mergeWhitelistUserIds, base.mergeWhitelistTeamIds)
  const approvals = await ids(input.approvals_whitelist_username, input.approvals_whitelist_teams, base.approvalsWhitelistUserIds, base.approvalsWhitelistTeamIds)
  for (const pattern of input.status_check_contexts ?? []) {
    try {
      compileGlob(pattern)
    } catch (e) {
      throw unprocessable(`status_check_contexts: "${pattern}": ${(e as Error).message}`)
    }
  }
  const canPush = input.enable_push ?? base.canPush
  const enableWhitelist = canPush && (input.enable_push_whitelist ?? base.enableWhitelist)
  const canForcePush = canPush && (input.enable_force_push ?? base.canForcePush)
  const enableForcePushAllowlist = canForcePush && (input.enable_force_push_allowlist ?? base.enableForcePushAllowlist)
  return {
    priority: input.priority ?? base.priority,
    canPush,
    enableWhitelist,
    whitelistUserIds: push.users,
    whitelistTeamIds: push.teams,
    whitelistDeployKeys: enableWhitelist && (input.push_whitelist_deploy_keys ?? base.whitelistDeployKeys),
    canForcePush,
    enableForcePushAllowlist,
    forcePushAllowlistUserIds: force.users,
    forcePushAllowlistTeamIds: force.teams,
    forcePushAllowlistDeployKeys: enableForcePushAllowlist && (input.force_push_allowlist_deploy_keys ?? base.forcePushAllowlistDeployKeys),
    enableMergeWhitelist: input.enable_merge_whitelist ?? base.enableMergeWhitelist,
    mergeWhitelistUserIds: merge.users,
    mergeWhitelistTeamIds: merge.teams,
    enableStatusCheck: input.enable_status_check ?? base.enableStatusCheck,
    statusCheckContexts: input.status_check_contexts ? json(input.status_check_contexts) : base.statusCheckContexts,
    enableApprovalsWhitelist: input.enable_approvals_whitelist ?? base.enableApprovalsWhitelist,
    approvalsWhitelistUserIds: approvals.users,
    approvalsWhitelistTeamIds: approvals.teams,
    requiredApprovals: Math.max(0, input.required_approvals ?? base.requiredApprovals),
    blockOnRejectedReviews: input.block_on_rejected_reviews ?? base.blockOnRejectedReviews,
    blockOnOfficialReviewRequests: input.block_on_official_review_requests ?? base.blockOnOfficialReviewRequests,
    blockOnOutdatedBranch: input.block_on_outdated_branch ?? base.blockOnOutdatedBranch,
    dismissStaleApprovals: input.dismiss_stale_approvals ?? base.dismissStaleApprovals,
    ignoreStaleApprovals: input.ignore_stale_approvals ?? base.ignoreStaleApprovals,
    requireSignedCommits: input.require_signed_commits ?? base.requireSignedCommits,
    protectedFilePatterns: (input.protected_file_patterns ?? base.protectedFilePatterns).trim(),
    unprotectedFilePatterns: (input.unprotected_file_patterns ?? base.unprotectedFilePatterns).trim(),
    blockAdminMergeOverride: input.block_admin_merge_override ?? base.blockAdminMergeOverride,
  }
}

const NEW_RULE: RuleColumns = {
  priority: 0, canPush: false, enableWhitelist: false, whitelistUserIds: '[]', whitelistTeamIds: '[]', whitelistDeployKeys: false,
  canForcePush: false, enableForcePushAllowlist: false, forcePushAllowlistUserIds: '[]', forcePushAllowlistTeamIds: '[]', forcePushAllowlistDeployKeys: false,
  enableMergeWhitelist: false, mergeWhitelistUserIds: '[]', mergeWhitelistTeamIds: '[]', enableStatusCheck: false, statusCheckContexts: '[]',
  enableApprovalsWhitelist: false, approvalsWhitelistUserIds: '[]', approvalsWhitelistTeamIds: '[]', requiredApprovals: 0,
  blockOnRejectedReviews: false, blockOnOfficialReviewRequests: false, blockOnOutdatedBranch: false, dismissStaleApprovals: false,
  ignoreStaleApprovals: false, requireSignedCommits: false, protectedFilePatterns: '', unprotectedFilePatterns: '', blockAdminMergeOverride: false,
}

/** Creates a rule (POST …/branch_protections): 403 when one of that name exists; a plain name must name a branch (404). */
export async function createBranchRule(deps: AppDeps, ctx: RepoContext, input: CreateBranchProtectionInput): Promise<BranchProtectionRow> {
  const ruleName = (input.rule_name || input.branch_name || '').trim()
  if (!ruleName) throw badRequest('both rule_name and branch_name are empty')
  if (isPlainRuleName(ruleName)) {
    if (!(await readRef(gitRepoOf(deps, ctx), `refs/heads/${ruleName}`))) throw notFound('the branch does not exist')
  } else {
    try {
      compileGlob(ruleName, '/')
    } catch (e) {
      throw unprocessable(`rule_name: ${(e as Error).message}`)
    }
  }
  const columns = await columnsOf(deps, ctx, input, NEW_RULE)
  const now = nowUnix()
  const row = await writeTransaction(deps.db, async () => {
    const where = eq(branchProtections.repoId, ctx.repo.id)
    if ((await deps.db.select({ id: branchProtections.id }).from(branchProtections).where(and(where, eq(branchProtections.ruleName, ruleName)))).length)
      throw forbidden('Branch protection already exist')
    const [{ n }] = await deps.db.select({ n: count() }).from(branchProtections).where(where)
    if (n >= deps.config.maxProtectionsPerRepo) throw unprocessable(`a repository may have at most ${deps.config.maxProtectionsPerRepo} branch protection rules`)
    const [{ top }] = await deps.db.select({ top: max(branchProtections.priority) }).from(branchProtections).where(where)
    const priority = input.priority ?? (top ?? 0) + 1
    return (await deps.db.insert(branchProtections).values({ ...columns, priority, repoId: ctx.repo.id, ruleName, createdUnix: now, updatedUnix: now }).returning())[0]!
  })
  return row
}

/** Edits a rule (PATCH …/branch_protections/{name}): only the fields given change. */
export async function editBranchRule(deps: AppDeps, ctx: RepoContext, name: string | null, input: EditBranchProtectionInput): Promise<BranchProtectionRow> {
  const current = await getBranchRule(deps, ctx.repo.id, name)
  const columns = await columnsOf(deps, ctx, input, current)
  const row = (await writeTransaction(deps.db, async () =>
    await deps.db.update(branchProtections).set({ ...columns, updatedUnix: nowUnix() }).where(eq(branchProtections.id, current.id)).returning()))[0]
  if (!row) throw notFound()
  return row
}

export async function deleteBranchRule(deps: AppDeps, ctx: RepoContext, name: string | null): Promise<void> {
  const current = await getBranchRule(deps, ctx.repo.id, name)
  await writeTransaction(deps.db, async () => await deps.db.delete(branchProtections).where(eq(branchProtections.id, current.id)))
}

/** Orders the rules as `ids` lists them (priority 1, 2, ...): every id must be a rule of the repository (422). */
export async function setBranchRulePriorities(deps: AppDeps, ctx: RepoContext, ids: number[]): Promise<void> {
  const rules = await listBranchRules(deps, ctx.repo.id)
  const unknown = ids.find((id) => !rules.some((r) => r.id === id))
  if (unknown !== undefined) throw unprocessable(`branch protection ${unknown} does not belong to this repository`)
  await writeTransaction(deps.db, async () => {
    for (const [i, id] of ids.entries()) await deps.db.update(branchProtections).set({ priority: i + 1 }).where(eq(branchProtections.id, id))
  })
}

// Tags.

export const listTagRules = async (deps: AppDeps, repoId: number) =>
  await deps.db.select().from(tagProtections).where(eq(tagProtections.repoId, repoId)).orderBy(tagProtections.id)

export async function getTagRule(deps: AppDeps, repoId: number, id: number): Promise<TagProtectionRow> {
  const row = (await deps.db.select().from(tagProtections).where(and(eq(tagProtections.repoId, repoId), eq(tagProtections.id, id))))[0]
  if (!row) throw notFound()
  return row
}

function checkedPattern(pattern: string): string {
  const trimmed = pattern.trim()
  if (!trimmed) throw badRequest('name_pattern are empty')
  const problem = tagPatternProblem(trimmed)
  if (problem) throw unprocessable(`name_pattern: ${problem}`)
  return trimmed
}

/** Creates a tag rule (POST …/tag_protections): 403 when one with that pattern exists. */
export async function createTagRule(deps: AppDeps, ctx: RepoContext, input: TagProtectionInput): Promise<TagProtectionRow> {
  const namePattern = checkedPattern(input.name_pattern ?? '')
  const users = (await userIdsOf(deps, ctx, input.whitelist_usernames ?? [], false))!
  const teams = (await teamIdsOf(deps, ctx, input.whitelist_teams ?? []))!
  const now = nowUnix()
  return await writeTransaction(deps.db, async () => {
    const where = eq(tagProtections.repoId, ctx.repo.id)
    if ((await deps.db.select({ id: tagProtections.id }).from(tagProtections).where(and(where, eq(tagProtections.namePattern, namePattern)))).length)
      throw forbidden('Tag protection already exist')
    const [{ n }] = await deps.db.select({ n: count() }).from(tagProtections).where(where)
    if (n >= deps.config.maxProtectionsPerRepo) throw unprocessable(`a repository may have at most ${deps.config.maxProtectionsPerRepo} tag protection rules`)
    return (await deps.db.insert(tagProtections).values({ repoId: ctx.repo.id, namePattern, allowlistUserIds: json(users), allowlistTeamIds: json(teams), createdUnix: now, updatedUnix: now }).returning())[0]!
  })
}

/** Edits a tag rule (PATCH …/tag_protections/{id}): only the fields given change. */
export async function editTagRule(deps: AppDeps, ctx: RepoContext, id: number, input: TagProtectionInput): Promise<TagProtectionRow> {
  const current = await getTagRule(deps, ctx.repo.id, id)
  const users = await userIdsOf(deps, ctx, input.whitelist_usernames, false)
  const teams = await teamIdsOf(deps, ctx, input.whitelist_teams)
  const set = {
    namePattern: input.name_pattern !== undefined ? checkedPattern(input.name_pattern) : current.namePattern,
    allowlistUserIds: users ? json(users) : current.allowlistUserIds,
    allowlistTeamIds: teams ? json(teams) : current.allowlistTeamIds,
    updatedUnix: nowUnix(),
  }
  const row = (await writeTransaction(deps.db, async () => await deps.db.update(tagProtections).set(set).where(eq(tagProtections.id, current.id)).returning()))[0]
  if (!row) throw new ApiError(404, "The target couldn't be found.")
  return row
}

export async function deleteTagRule(deps: AppDeps, ctx: RepoContext, id: number): Promise<void> {
  const current = await getTagRule(deps, ctx.repo.id, id)
  await writeTransaction(deps.db, async () => await deps.db.delete(tagProtections).where(eq(tagProtections.id, current.id)))
}
