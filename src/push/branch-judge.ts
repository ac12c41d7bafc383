import { firstChangedPath, isRewrite } from '../git/ref-facts'
import type { GitOptions } from '../git/run'
import { filePatternsOf, pathMatches } from '../lib/file-patterns'

/**
 * The verdict on one change of a protected branch, as Gitea's pre-receive hook gives it
 * (routers/private/hook_pre_receive.go, preReceiveBranch): what the rule and the pusher's place
 * in it say (worked out by the push decision, src/push/protection-rules.ts), judged against what
 * only git's objects tell: whether the change rewrites history, which files it touches. The
 * server's own moves are judged in the process; a client's push, whose objects git has not
 * received when the decision is made, is judged by the pre-receive hook (./pre-receive-hook.ts)
 * with this same function, in git's quarantine.
 */
export interface BranchCheck {
  ref: string
  old: string
  new: string
  branch: string
  /** The rule allows force pushes at all (enable_force_push). */
  ruleForce: boolean
  /** The pusher may push (CanUserPush, or the deploy key branch). */
  mayPush: boolean
  /** The pusher may force-push (CanUserForcePush). */
  mayForce: boolean
  /** A pull request's merge: whether its merger may merge, and is a repository admin. */
  merge: { allowed: boolean; admin: boolean } | null
  protectedFiles: string
  unprotectedFiles: string
}

/** A ref that does not exist on one side of a change (40 or 64 zeros). */
export const isZeroId = (id: string) => /^0+$/.test(id)

/** The refusal of the change (the message the client sees), or null when it may happen. */
export async function judgeBranch(c: BranchCheck, where: GitOptions): Promise<string | null> {
  if (isZeroId(c.new)) return `branch ${c.branch} is protected from deletion`
  const creating = isZeroId(c.old)
  const force = !creating && (await isRewrite(where, c.old, c.new))
  if (force && !c.ruleForce) return `branch ${c.branch} is protected from force push`
  const protectedGlobs = filePatternsOf(c.protectedFiles)
  const protectedPath = !creating && protectedGlobs.length ? await firstChangedPath(where, c.old, c.new, (p) => pathMatches(protectedGlobs, p)) : null
  if (!protectedPath && (force ? c.mayForce : c.mayPush)) return null
  const fileRefusal = `branch ${c.branch} is protected from changing file ${protectedPath}`
  if (c.merge) {
    if (!c.merge.allowed) return `Not allowed to push to protected branch ${c.branch}`
    // A repository admin's merge may change protected files, as Gitea's.
    if (c.merge.admin || !protectedPath) return null
    return fileRefusal
  }
  if (protectedPath) return fileRefusal
  // A change touching only unprotected files is allowed to anyone who may write.
  const unprotected = filePatternsOf(c.unprotectedFiles)
  if (unprotected.length && !creating && (await firstChangedPath(where, c.old, c.new, (p) => !pathMatches(unprotected, p))) === null) return null
  return force ? `Not allowed to force-push to protected branch ${c.branch}` : `Not allowed to push to protected branch ${c.branch}`
}
