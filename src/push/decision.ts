import type { AppDeps } from '../deps'
import type { RepoRow } from '../auth/access'
import type { UserRow } from '../auth/caller'
import { gitAccessRefusal, type GitCaller, type GitRefusal } from '../auth/git-access'
import { pushRefProblem, type PushCommand } from '../git/push-commands'
import { branchRulesOf, tagRulesOf, type BranchProtectionRow, type TagProtectionRow } from '../auth/protection'
import { isZeroId, type BranchCheck } from './branch-judge'
import { branchProtected, tagProtected, type ProtectionContext } from './protection-rules'

/**
 * Whether refs may move: the one decision every ref change goes through, whoever asks (a
 * client's push over git HTTP or SSH, a pull request's merge, a release creating its tag, the
 * API creating or deleting a branch), as Gitea's pre-receive hook is for its pushes. It answers
 * per ref: allowed, or refused with the reason the client sees. Who may push at all (access
 * level, mirror, archived) is the shared git access decision (src/auth/git-access.ts), taken
 * here as one rule among the others; the rules about the refs themselves are REF_RULES.
 */

/** A repository a ref moves in: its row (archived, mirror) and its owner. */
export interface PushRepo {
  repo: RepoRow
  owner: UserRow
}

/**
 * Who moves the refs: the caller as the shared git access decision takes it (a user, anonymous
 * over HTTP, or a deploy key), and how: `git` for a client's push, `server` for a ref the server
 * moves on a user's behalf (a merge, a release's tag, the API).
 */
export interface Pusher {
  caller: GitCaller
  via: 'git' | 'server'
  /** A pull request's merge (Gitea's pre-receive with a PullRequestID): the merge whitelist applies instead of the push whitelist. */
  merge?: boolean
  /** Who the move is recorded as, when not `caller` (a move decided on another user's access). */
  actor?: UserRow
  /** The server keeping its own refs (SERVER_REFS: a deleted pull request's head ref goes with it); never a client's push. */
  serverRefs?: boolean
}

/** A client's push with the caller of a git transport. */
export const gitPusher = (caller: GitCaller): Pusher => ({ caller, via: 'git' })

/**
 * A ref the server moves for `user` (whose access the request pipeline already checked). With
 * `accessOf`, that user's access decides instead while the move stays `user`'s: a maintainer
 * updating a pull request's head branch under the poster's allowance (Gitea's maintainer edits).
 */
export const serverPusher = (user: UserRow, accessOf?: UserRow, merge = false): Pusher =>
  accessOf ? { caller: { user: accessOf }, via: 'server', actor: user, merge } : { caller: { user }, via: 'server', merge }

/** Who a push is recorded as: the user; for a deploy key (no user) the repository's owner, as Gitea. */
export const recordedPusherId = (pusher: Pusher, repo: { ownerId: number }): number => pusher.actor?.id ?? pusher.caller.user?.id ?? repo.ownerId

/** Why one ref may not move: the kind (for the status an API caller gets) and the reason git shows. */
export interface RefRefusal {
  kind: GitRefusal | 'server-ref' | 'ref-name' | 'protected'
  reason: string
}

/** What a rule sees besides the command: the repository, the pusher, and their access. */
export interface PushContext extends PushRepo, ProtectionContext {
  deps: AppDeps
  pusher: Pusher
  /** The shared git access decision for a push by this pusher (null: allowed). */
  access: GitRefusal | null
  /** The repository's branch and tag protection rules (src/auth/protection.ts). */
  branchRules: BranchProtectionRow[]
  tagRules: TagProtectionRow[]
  /**
   * Whether git's pre-receive hook judges what needs the pushed objects (a client's push with a
   * hook, ./hook.ts): such checks are then added to `deferred` instead of being judged here.
   */
  hooked: boolean
  deferred: BranchCheck[]
}

/**
 * One rule about a ref change: the refusal of `command` in `ctx`, or null. Rules run in order;
 * the first refusal of a ref is its reason.
 */
export type RefRule = (command: PushCommand, ctx: PushContext) => RefRefusal | null | Promise<RefRefusal | null>

/** How the refusals of the shared access decision read per ref. */
const ACCESS_REASONS: Record<GitRefusal, string> = {
  'not-found': 'repository not found',
  'sign-in': 'authentication required',
  forbidden: 'permission denied: pushing needs write access',
  mirror: 'mirror repository is read-only',
  archived: 'repo is archived',
}

/**
 * The pusher may push to the repository at all (the shared git access decision). A mirror's
 * refs follow its remote, so no client pushes there; the server's own moves for a user with
 * write access (a release's tag, as Gitea) are not pushes to the mirror's remote and stay allowed.
 */
const mayPushHere: RefRule = (_command, ctx) => {
  if (!ctx.access || (ctx.access === 'mirror' && ctx.pusher.via === 'server')) return null
  return { kind: ctx.access, reason: ACCESS_REASONS[ctx.access] }
}

/**
 * Refs only the server moves: `refs/pull/<index>/head` holds each pull request's head as the
 * server last brought it in, what reviewers see and CI fetches. A client that could push there
 * would have them test other code than the pull request shows. The pull-checker's updates of
 * these refs (src/modules/pulls) do not go through this path; their removal with a deleted pull
 * request does, as a server move with `serverRefs` (./sync.ts finishes or undoes it after a crash).
 */
export const SERVER_REFS = 'refs/pull/'

/** `refs/pull/<index>/head`: where the base repository keeps each pull request's head (as Gitea). */
export const pullHeadRef = (index: number) => `${SERVER_REFS}${index}/head`

const notAServerRef: RefRule = (command, ctx) =>
  command.ref.startsWith(SERVER_REFS) && !(ctx.pusher.via === 'server' && ctx.pusher.serverRefs) ? { kind: 'server-ref', reason: `${SERVER_REFS} is kept by the server for pull requests: no push may change it` } : null

/** Git may store the name but the API could not serve it (pushRefProblem). */
const servableName: RefRule = (command) => {
  const problem = pushRefProblem(command.ref)
  return problem ? { kind: 'ref-name', reason: `${problem} (the API could not serve it)` } : null
}

/**
 * A client's push does not delete the default branch (Gitea's pre-receive: "the default branch
 * cannot be deleted"): changing which branch is the default is its administrators' (the
 * repository's settings). The server's own moves may (a default branch renamed through the API).
 */
const keepsTheDefaultBranch: RefRule = (command, ctx) =>
  ctx.pusher.via === 'git' && isZeroId(command.new) && command.ref === `refs/heads/${ctx.repo.defaultBranch}`
    ? { kind: 'protected', reason: `branch ${ctx.repo.defaultBranch} is the default branch and cannot be deleted` }
    : null

/**
 * The rules, in order. Branch and tag protection plug in here, after the rules every
 * repository has: each is a RefRule over the command and the context.
 */
export const REF_RULES: readonly RefRule[] = [mayPushHere, notAServerRef, servableName, keepsTheDefaultBranch, branchProtected, tagProtected]

/** The refusal of one ref change, or null when it may happen. */
export async function refusalOf(ctx: PushContext, command: PushCommand): Promise<RefRefusal | null> {
  for (const rule of REF_RULES) {
    const refused = await rule(command, ctx)
    if (refused) return refused
  }
  return null
}

/**
 * A refused push: git applies a push whole or not at all, so one refused ref refuses them all.
 * `message` is what the client is told; `reasons` gives each command's line of receive-pack's report, in order.
 */
export interface PushRefusal {
  message: string
  /** The first refused ref's refusal. */
  first: RefRefusal
  reasons: string[]
}

/** The refusal of a push of `commands` in `ctx`, or null when every ref may move. */
export async function mayMove(ctx: PushContext, commands: PushCommand[]): Promise<PushRefusal | null> {
  const judged: (readonly [PushCommand, RefRefusal | null])[] = []
  for (const c of commands) judged.push([c, await refusalOf(ctx, c)] as const)
  const refused = judged.filter((r): r is readonly [PushCommand, RefRefusal] => r[1] !== null)
  if (!refused.length) return null
  const first = refused[0]![1]
  const bad = new Map(refused.map(([c, r]) => [c, r.reason]))
  return {
    message: `refusing to accept ${refused.map(([c]) => c.ref).join(', ')}: ${first.reason}`,
    first,
    reasons: commands.map((c) => bad.get(c) ?? 'another ref of this push was refused'),
  }
}

/** The context of a push by `pusher` to `repo`: the shared git access decision taken now, the protection rules read now. */
export async function pushContextOf(deps: AppDeps, repo: PushRepo, pusher: Pusher, hooked = false): Promise<PushContext> {
  const [access, branchRules, tagRules] = await Promise.all([
    gitAccessRefusal(deps, pusher.caller, repo, 'receive-pack'),
    branchRulesOf(deps.db, repo.repo.id),
    tagRulesOf(deps.db, repo.repo.id),
  ])
  return { ...repo, deps, pusher, access, branchRules, tagRules, hooked, deferred: [] }
}

/** The decision on a push: refused, or allowed with the checks left to git's pre-receive hook. */
export interface PushDecision {
  refused: PushRefusal | null
  deferred: BranchCheck[]
}

/** The decision for a push of `commands` by `pusher` to `repo`. `hooked`: see PushContext. */
export async function decidePush(deps: AppDeps, repo: PushRepo, pusher: Pusher, commands: PushCommand[], hooked = false): Promise<PushDecision> {
  if (!commands.length) return { refused: null, deferred: [] }
  const ctx = await pushContextOf(deps, repo, pusher, hooked)
  const refused = await mayMove(ctx, commands)
  return { refused, deferred: refused ? [] : ctx.deferred }
}
