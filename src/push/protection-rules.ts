import type { AppDeps } from '../deps'
import { accessLevel, AccessMode, type RepoRow } from '../auth/access'
import type { UserRow } from '../auth/caller'
import type { GitCaller } from '../auth/git-access'
import { mayControlTag, mayForcePushTo, mayMergeInto, mayPushTo, ruleFor, type BranchProtectionRow, type Mover, type TagProtectionRow } from '../auth/protection'
import { gitOfRow } from '../auth/repo-context'
import type { PushCommand } from '../git/push-commands'
import { isZeroId, judgeBranch, type BranchCheck, type SignatureJudge } from './branch-judge'
import { unverifiedCommit } from './signatures'

/** The signature check of a change (./signatures.ts) with the server's database. */
export const signatureJudge =
  (deps: AppDeps): SignatureJudge =>
  (c, where) =>
    unverifiedCommit(deps, where, c.branch, c.old, c.new)

/**
 * Branch and tag protection as rules of the push decision (./decision.ts, REF_RULES), for every
 * way a ref moves: a client's push over HTTP or SSH (a deploy key included), and the server's
 * own moves (merges, the contents API, branches and tags made or deleted through the API).
 */

/** What the protection rules read of a push's context (./decision.ts's PushContext has it all). */
export interface ProtectionContext {
  deps: AppDeps
  repo: RepoRow
  owner: UserRow
  pusher: { caller: GitCaller; via: 'git' | 'server'; merge?: boolean }
  branchRules: BranchProtectionRow[]
  tagRules: TagProtectionRow[]
  hooked: boolean
  deferred: BranchCheck[]
}

export type ProtectionRefusal = { kind: 'protected'; reason: string } | null

/** The pusher as the protection rules see them: a user with their access, or a deploy key. */
async function moverOf(ctx: ProtectionContext): Promise<Mover> {
  const { caller } = ctx.pusher
  if (caller.deployKeys) return { user: null, deployKey: true, mode: AccessMode.Write }
  return { user: caller.user, deployKey: false, mode: caller.user ? await accessLevel(ctx.deps.db, caller.user, ctx.repo, ctx.owner) : AccessMode.None }
}

/**
 * A change of a branch a rule protects (Gitea's preReceiveBranch): never deleted; a force push
 * only where the rule allows it and by whom it allows; a push only by whom the rule allows (a
 * merge: by whom may merge); protected files only by a repository admin's merge. What needs the
 * pushed objects is judged by the pre-receive hook for a client's push (ctx.hooked).
 */
export async function branchProtected(command: PushCommand, ctx: ProtectionContext): Promise<ProtectionRefusal> {
  if (!command.ref.startsWith('refs/heads/')) return null
  const branch = command.ref.slice('refs/heads/'.length)
  const rule = ruleFor(ctx.branchRules, branch)
  if (!rule) return null
  const mover = await moverOf(ctx)
  const db = ctx.deps.db
  const user = ctx.pusher.caller.user
  // The pusher's places in the rule are independent reads: read together.
  const [mayPush, mayForce, mayMerge] = await Promise.all([
    mayPushTo(db, rule, mover),
    mayForcePushTo(db, rule, mover),
    ctx.pusher.merge && user ? mayMergeInto(db, rule, user, mover.mode) : null,
  ])
  const check: BranchCheck = {
    ref: command.ref,
    old: command.old,
    new: command.new,
    branch,
    ruleForce: rule.canForcePush,
    mayPush,
    mayForce,
    merge: mayMerge === null ? null : { allowed: mayMerge, admin: mover.mode >= AccessMode.Admin },
    protectedFiles: rule.protectedFilePatterns,
    unprotectedFiles: rule.unprotectedFilePatterns,
    fastForward: command.fastForward === true,
    signed: rule.requireSignedCommits,
  }
  // What needs the pushed objects waits for git's pre-receive hook: a change of the branch, or its
  // creation where the commits it brings must be signed.
  if (ctx.hooked && !isZeroId(command.new) && (!isZeroId(command.old) || check.signed)) {
    ctx.deferred.push(check)
    return null
  }
  const reason = await judgeBranch(check, gitOfRow(ctx.deps, ctx.repo), signatureJudge(ctx.deps))
  return reason ? { kind: 'protected', reason } : null
}

/** A tag a rule protects is created or deleted only by whom the rule lists (Gitea's preReceiveTag); a deploy key is no one. */
export async function tagProtected(command: PushCommand, ctx: ProtectionContext): Promise<ProtectionRefusal> {
  if (!command.ref.startsWith('refs/tags/') || !ctx.tagRules.length) return null
  const tag = command.ref.slice('refs/tags/'.length)
  if (await mayControlTag(ctx.deps.db, ctx.tagRules, tag, ctx.pusher.caller.user)) return null
  return { kind: 'protected', reason: `Tag ${tag} is protected` }
}
