import type { AppDeps } from '../deps'
import { AccessMode } from '../auth/access'
import type { RepoContext } from '../auth/repo-context'
import type { BranchHead } from '../git/commits'
import { commitUsernames, toApiPayloadCommit } from './payload-commit'

const NOT_SIGNED = { verified: false, reason: 'gpg.error.not_signed_commit', signature: '', payload: '' }

/** Branch records for heads (e.g. a page of branchHeads), user names resolved in one query. */
export async function branchesToApi(deps: AppDeps, ctx: RepoContext, heads: BranchHead[]) {
  const usernames = await commitUsernames(deps, heads)
  // An archived repository takes no pushes (git over HTTP answers 403).
  const canWrite = ctx.mode >= AccessMode.Write && !ctx.repo.isArchived
  const repo = { ownerName: ctx.owner.name, name: ctx.repo.name }
  return heads.map((h) => ({
    name: h.name,
    commit: toApiPayloadCommit(deps.config, repo, h, usernames, NOT_SIGNED),
    protected: false,
    user_can_push: canWrite,
    user_can_merge: canWrite,
    enable_status_check: false,
    status_check_contexts: [] as string[],
    required_approvals: 0,
    // The rule that protects the branch: none until branch protection exists.
    effective_branch_protection_name: '',
  }))
}
