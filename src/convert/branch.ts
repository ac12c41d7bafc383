import type { AppDeps } from '../deps'
import { branchProtectionView, branchRulesOf, stringsOf } from '../auth/protection'
import { gitOfRow, type RepoContext } from '../auth/repo-context'
import { commitVerifications } from '../auth/commit-verification'
import type { BranchHead } from '../git/commits'
import { commitUsernames, toApiPayloadCommit } from './payload-commit'

/** Branch records for heads (e.g. a page of branchHeads), user names resolved in one query, each head's signature verified (Gitea's ToBranch). */
export async function branchesToApi(deps: AppDeps, ctx: RepoContext, heads: BranchHead[]) {
  const [usernames, verifications] = await Promise.all([commitUsernames(deps, heads), commitVerifications(deps, gitOfRow(deps, ctx.repo), heads.map((h) => h.id))])
  const rules = await branchRulesOf(deps.db, ctx.repo.id)
  const repo = { ownerName: ctx.owner.name, name: ctx.repo.name }
  const records = []
  for (const h of heads) {
    // An archived repository takes no pushes; a protected branch only from whom its rule allows.
    const { rule, userCanPush, userCanMerge } = await branchProtectionView(deps.db, rules, h.name, ctx.caller.user, ctx.repo, ctx.mode)
    records.push({
      name: h.name,
      commit: toApiPayloadCommit(deps.config, repo, h, usernames, verifications.get(h.id)!),
      protected: !!rule,
      user_can_push: userCanPush,
      user_can_merge: userCanMerge,
      enable_status_check: rule?.enableStatusCheck ?? false,
      status_check_contexts: rule ? stringsOf(rule.statusCheckContexts) : [],
      required_approvals: rule?.requiredApprovals ?? 0,
      effective_branch_protection_name: rule?.ruleName ?? '',
    })
  }
  return records
}
