import { inArray } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { AccessMode } from '../../auth/access'
import type { UserRow } from '../../auth/caller'
import { modeIn, type RepoContext } from '../../auth/repo-context'
import { branchRulesOf, idsOf, mayMergeInto, ruleFor, stringsOf, type BranchProtectionRow } from '../../auth/protection'
import { commitStatuses, type PullRow } from '../../db/schema'
import { isAncestor } from '../../git/merge'
import type { GitRepo } from '../../git/run'
import { cachedGlob } from '../../lib/file-patterns'
import { ApiError } from '../../lib/errors'
import { combinedState, latestStatusIds } from '../statuses/service'
import { approvalsOf, hasOfficialReviewRequest, hasRejection, type ReviewGateOptions } from '../reviews/gate'

/**
 * What a merge into a protected branch waits for (Gitea's CheckPullMergeable and
 * CheckPullBranchProtections): a merger the rule allows, the required status checks successful
 * on the head commit, the required approvals, and a head that holds the base when the rule says
 * so. Each unmet rule is a 405 with its reason; a repository admin's `force_merge` passes them
 * unless the rule blocks admin overrides (`mergeGate`: the merge and the web's merge box ask it).
 */

/**
 * Whose reviews count under a rule (Gitea's GetGrantedApprovalsCount): official ones, of the
 * approvals whitelist when the rule has one; stale approvals (made on an older head) count unless
 * the rule ignores or dismisses them.
 */
const reviewGate = (rule: BranchProtectionRow): ReviewGateOptions => ({
  ...(rule.enableApprovalsWhitelist ? { userIds: idsOf(rule.approvalsWhitelistUserIds), teamIds: idsOf(rule.approvalsWhitelistTeamIds) } : {}),
  countStale: !(rule.ignoreStaleApprovals || rule.dismissStaleApprovals),
})

/** The latest state of each status context of a commit (bounded: contexts of one commit are few, capped here). */
async function latestStates(deps: AppDeps, repoId: number, sha: string): Promise<{ context: string; state: string }[]> {
  return await deps.db
    .select({ context: commitStatuses.context, state: commitStatuses.state })
    .from(commitStatuses)
    .where(inArray(commitStatuses.id, latestStatusIds(deps.db, repoId, [sha])))
    .limit(10_000)
}

/** Whether a status context matches a required context pattern of a rule (a glob; one that is no glob, the name itself). */
export function contextMatches(pattern: string, context: string): boolean {
  const glob = cachedGlob(pattern, '')
  return glob ? glob.matches(context) : context === pattern
}

/** The status check contexts (patterns) the protection rule of `baseBranch` requires, none when it checks no statuses. */
export async function requiredContextsOf(deps: AppDeps, repoId: number, baseBranch: string): Promise<string[]> {
  const rule = ruleFor(await branchRulesOf(deps.db, repoId), baseBranch)
  return rule?.enableStatusCheck ? stringsOf(rule.statusCheckContexts) : []
}

/**
 * Gitea's MergeRequiredContextsCommitStatus: with no required contexts, the combined state of
 * every context (none: success); otherwise each required pattern must match a status, and the
 * worst of those matched decides.
 */
export function requiredChecksPass(latest: { context: string; state: string }[], required: string[]): boolean {
  if (!required.length) return (combinedState(latest.map((s) => s.state)) || 'success') === 'success'
  const states: string[] = []
  for (const pattern of required) {
    const matched = latest.filter((s) => contextMatches(pattern, s.context))
    if (!matched.length) return false
    states.push(...matched.map((s) => s.state))
  }
  return combinedState(states) === 'success'
}

/**
 * Why the pull request may not be merged into its protected base yet, or null (Gitea's
 * CheckPullBranchProtections). The reads the rule asks for run together (statuses, reviews and
 * the ancestry check are independent); the first unmet rule, in Gitea's order, is the reason.
 */
async function notReady(deps: AppDeps, ctx: RepoContext, pull: PullRow, rule: BranchProtectionRow, git: GitRepo, baseSha: string, headSha: string): Promise<string | null> {
  const gate = reviewGate(rule)
  const [checksPass, approvals, rejected, requested, upToDate] = await Promise.all([
    rule.enableStatusCheck ? latestStates(deps, ctx.repo.id, headSha).then((latest) => requiredChecksPass(latest, stringsOf(rule.statusCheckContexts))) : true,
    rule.requiredApprovals > 0 ? approvalsOf(deps, pull, gate) : 0,
    rule.blockOnRejectedReviews ? hasRejection(deps, pull, gate) : false,
    rule.blockOnOfficialReviewRequests ? hasOfficialReviewRequest(deps, pull) : false,
    rule.blockOnOutdatedBranch ? isAncestor(git, baseSha, headSha) : true,
  ])
  if (!checksPass) return 'Not all required status checks successful'
  if (rule.requiredApprovals > 0 && approvals < rule.requiredApprovals) return 'Does not have enough approvals'
  if (rejected) return 'There are requested changes'
  if (requested) return 'There are official review requests'
  if (!upToDate) return 'The head branch is behind the base branch'
  return null
}

/**
 * Why a merge cannot be made now: `forcible` when an administrator may merge past it,
 * `waitable` when it is the protection's wait (checks, approvals) a scheduled merge waits out.
 */
export interface MergeBlocker {
  message: string
  forcible: boolean
  waitable?: boolean
}

/**
 * What the base branch's protection says of a merge by `doer` now: nothing (no rule, or every
 * rule met), or the refusal (405) a merge would get, and whether `force_merge` would pass it (a
 * repository admin, unless the rule blocks admin overrides). The merge and the web's merge box
 * both ask it.
 */
export async function mergeGate(
  deps: AppDeps,
  ctx: RepoContext,
  pull: PullRow,
  doer: UserRow,
  git: GitRepo,
  shas: { base: string; head: string },
): Promise<MergeBlocker | null> {
  // A merge writes the code: its writers merge (Gitea's IsUserAllowedToMerge), whatever the pull requests' unit lets them do.
  const codeMode = modeIn(ctx, 'repo.code')
  if (codeMode < AccessMode.Write) return { message: 'User not allowed to merge PR', forcible: false }
  const rule = ruleFor(await branchRulesOf(deps.db, ctx.repo.id), pull.baseBranch)
  if (!rule) return null
  // The server signs nothing: a branch whose commits must be signed takes no merge (Gitea's
  // IsSignedIfRequired without a signing key), whatever the merge style (push/signatures.ts).
  if (rule.requireSignedCommits) return { message: `Protected branch ${pull.baseBranch} requires signed commits but this merge would not be signed`, forcible: false }
  // Who may merge and what the rule waits for are read together; the merger's refusal comes first.
  const [mayMerge, reason] = await Promise.all([mayMergeInto(deps.db, rule, doer, codeMode), notReady(deps, ctx, pull, rule, git, shas.base, shas.head)])
  if (!mayMerge) return { message: 'User not allowed to merge PR', forcible: false }
  if (!reason) return null
  return { message: `PR is not ready to be merged: ${reason}`, forcible: codeMode >= AccessMode.Admin && !rule.blockAdminMergeOverride, waitable: true }
}

/** The refusal (405) a merge by `doer` gets now, or null: mergeGate's, unless `force` passes it. */
export async function mergeGateRefusal(
  deps: AppDeps,
  ctx: RepoContext,
  pull: PullRow,
  doer: UserRow,
  git: GitRepo,
  shas: { base: string; head: string },
  force: boolean,
): Promise<ApiError | null> {
  const gate = await mergeGate(deps, ctx, pull, doer, git, shas)
  return gate && !(force && gate.forcible) ? new ApiError(405, gate.message) : null
}

/**
 * Whether the head commit's statuses let a scheduled merge go (Gitea's IsPullCommitStatusPass):
 * the required contexts of the base branch's rule when it checks statuses, else every context
 * (none at all: success).
 */
export async function statusChecksPass(deps: AppDeps, repoId: number, baseBranch: string, headSha: string): Promise<boolean> {
  return requiredChecksPass(await latestStates(deps, repoId, headSha), await requiredContextsOf(deps, repoId, baseBranch))
}
