import { childChangedPath, firstChangedPath, isRewrite } from '../git/ref-facts'
import type { GitOptions } from '../git/run'
import { filePatternsOf, pathMatches } from '../lib/file-patterns'

/**
 * The verdict on one change of a protected branch, as Gitea's pre-receive hook gives it
 * (routers/private/hook_pre_receive.go, preReceiveBranch): what the rule and the pusher's place
 * in it say (worked out by the push decision, src/push/protection-rules.ts), judged against what
 * only git's objects tell: whether the change rewrites history, which files it touches. The
 * server's own moves are judged when decided; a client's push, whose objects git has not
 * received when the decision is made, is judged with this same function once git's pre-receive
 * hook asks (./hook.ts), in git's quarantine.
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
  /** The server wrote `new` on top of `old` (a pull request's merge): not a rewrite, git need not be asked. */
  fastForward: boolean
  /** The rule requires the commits brought to be signed by their committers (require_signed_commits; ./signatures.ts). */
  signed: boolean
}

/** The refusal of the first commit a change brings that is not verified, or null (./signatures.ts unverifiedCommit, with the server's database). */
export type SignatureJudge = (c: BranchCheck, where: GitOptions) => Promise<string | null>

/** A ref that does not exist on one side of a change (40 or 64 zeros). */
export const isZeroId = (id: string) => /^0+$/.test(id)

/**
 * The refusal of the change (the message the client sees), or null when it may happen. What git
 * is asked (whether the change rewrites history, which files it touches) is asked only when the
 * answer can change the verdict: by one git command when the change is a commit on top of the
 * branch, else by two at once, each stopped as soon as it has the answer; one read of the
 * changed files answers both file questions.
 */
export async function judgeBranch(c: BranchCheck, where: GitOptions, signatures?: SignatureJudge): Promise<string | null> {
  const refused = await judgeMove(c, where)
  // The commits' signatures are checked last, for a change everything else allows: one who may
  // not push costs no signature checks (Gitea checks them before the whitelist; the refusal differs only in its reason).
  if (refused || !c.signed) return refused
  return signatures ? await signatures(c, where) : `branch ${c.branch} requires signed commits, which cannot be checked here`
}

/** judgeBranch's verdict on all but the signatures. */
async function judgeMove(c: BranchCheck, where: GitOptions): Promise<string | null> {
  if (isZeroId(c.new)) return `branch ${c.branch} is protected from deletion`
  const creating = isZeroId(c.old)
  const protectedGlobs = filePatternsOf(c.protectedFiles)
  const unprotected = filePatternsOf(c.unprotectedFiles)
  // A repository admin's allowed merge may change protected files (as Gitea's): which it changes cannot matter.
  const adminMerge = !!c.merge?.allowed && c.merge.admin
  // Whether a changed path lies outside the unprotected files, known once the diff was read to its end.
  let outside = false
  const pick = (p: string) => {
    if (unprotected.length && !outside && !pathMatches(unprotected, p)) outside = true
    return pathMatches(protectedGlobs, p)
  }
  const askRewrite = !creating && !c.fastForward
  const askPath = !creating && protectedGlobs.length > 0 && !adminMerge
  // A push of one commit on top of the branch: one git command answers both.
  const child = askRewrite && askPath ? await childChangedPath(where, c.old, c.new, pick) : 'not-a-child'
  const [force, protectedPath] =
    child !== 'not-a-child'
      ? [false, child.path]
      : await Promise.all([askRewrite && isRewrite(where, c.old, c.new), askPath ? firstChangedPath(where, c.old, c.new, pick) : null])
  const readAll = askPath && protectedPath === null
  if (force && !c.ruleForce) return `branch ${c.branch} is protected from force push`
  if (!protectedPath && (force ? c.mayForce : c.mayPush)) return null
  const fileRefusal = `branch ${c.branch} is protected from changing file ${protectedPath}`
  if (c.merge) {
    if (!c.merge.allowed) return `Not allowed to push to protected branch ${c.branch}`
    if (adminMerge || !protectedPath) return null
    return fileRefusal
  }
  if (protectedPath) return fileRefusal
  // A change touching only unprotected files is allowed to anyone who may write.
  if (unprotected.length && !creating) {
    if (!readAll) outside = (await firstChangedPath(where, c.old, c.new, (p) => !pathMatches(unprotected, p))) !== null
    if (!outside) return null
  }
  return force ? `Not allowed to force-push to protected branch ${c.branch}` : `Not allowed to push to protected branch ${c.branch}`
}
