import type { AppDeps } from '../deps'
import type { UserRow } from '../auth/caller'
import type { PushCommand } from '../git/push-commands'
import { swapRefs, swapRefsInTurn } from '../git/ref-swap'
import { ApiError } from '../lib/errors'
import { decidePush, recordedPusherId, serverPusher, type PushRefusal, type PushRepo, type Pusher, type RefRefusal } from './decision'
import { recordPush, type ServerWork } from './recorder'
import type { PushHook } from './hook'
import { gitOfRow } from '../auth/repo-context'

/**
 * The one path a ref moves through: the decision (./decision.ts), then the recorder
 * (./recorder.ts) around the work that moves the refs. Git over HTTP and over SSH run
 * receive-pack through withPush; the server's own moves (a pull request's merge, a release's
 * tag, branches made or deleted through the API) go through moveRef.
 */

/** A push's outcome: refused (nothing ran, nothing changed), or what the work answered. */
export type PushOutcome<T> = { refused: PushRefusal } | { refused: null; result: T }

/**
 * A push of `commands` by `pusher` to `repo`: refused as a whole when one ref may not move (then
 * `run` never runs); otherwise the checks left to git's pre-receive hook are handed to `hook` (a
 * client's push: ./hook.ts; its receive-pack runs with `hook.env`), the pending push is written, `run` moves the refs, and whatever
 * it changed is recorded (events, pull requests re-checked) once it is over, whether it succeeded
 * or not. An empty command list (nothing to update) runs without a record. `serverWork` wraps the
 * server's own steps before `run` (a transport's idle watch).
 */
export async function withPush<T>(
  deps: AppDeps,
  repo: PushRepo,
  pusher: Pusher,
  commands: PushCommand[],
  run: () => Promise<T>,
  serverWork: ServerWork = (work) => work,
  hook?: PushHook,
): Promise<PushOutcome<T>> {
  try {
    const { refused, deferred } = await serverWork(decidePush(deps, repo, pusher, commands, !!hook))
    if (refused) return { refused }
    await hook?.arm(deferred)
    if (!commands.length) return { refused: null, result: await run() }
    // A judgement left to the hook that never came is undone before the push is recorded.
    const judged = hook ? async () => {
      try {
        return await run()
      } finally {
        await hook.undoUnjudged()
      }
    } : run
    return { refused: null, result: await recordPush(deps, repo.repo.id, recordedPusherId(pusher, repo.repo), commands, judged, serverWork) }
  } finally {
    await hook?.dispose()
  }
}

/** A ref the server moves: `old`/`new` are 40 zeros for a ref created/deleted. */
export type RefMove = PushCommand

/** The API's answer to a refused server-side move, by the kind of the first refused ref. */
const REFUSAL_STATUS: Record<RefRefusal['kind'], number> = {
  'not-found': 404,
  'sign-in': 401,
  forbidden: 403,
  mirror: 403,
  archived: 423,
  'server-ref': 403,
  'ref-name': 422,
  protected: 403,
}

/** A refused move's ApiError; a merge refused by branch protection is Gitea's 405 (not ready to merge). */
export const refusalError = (refused: PushRefusal, merge = false) =>
  new ApiError(merge && refused.first.kind === 'protected' ? 405 : REFUSAL_STATUS[refused.first.kind], refused.message)

/**
 * Moves one ref for `actor` on the server (create, move or delete to a known commit), through
 * the decision and the recorder: a compare-and-swap `update-ref`, so a push that moved the ref
 * meanwhile makes it answer false and is kept. `settle(moved)` runs once the swap is over
 * (moved or not, also when refused), before the move is recorded, for the caller's own record
 * of it (a merge marks its pull request merged). A refusal throws its ApiError; nothing changed.
 * `accessOf`: whose access decides, when not the actor's (see serverPusher).
 */
export async function moveRef(
  deps: AppDeps,
  repo: PushRepo,
  actor: UserRow,
  move: RefMove,
  settle?: (moved: boolean) => Promise<void>,
  accessOf?: UserRow,
): Promise<boolean> {
  return await moveRefs(deps, repo, actor, [move], settle, { accessOf })
}

/**
 * Moves several refs for `actor` as one push (a branch renamed: the new name created, the old
 * one deleted): decided together (one refused ref refuses them all), swapped in one git
 * transaction (all of them or none), recorded as one push. As moveRef otherwise. `inTurn`: moves
 * git cannot make in one transaction (`a` renamed to `a/b`) are made one after the other, those
 * made undone when a later one fails (swapRefsInTurn). `accessOf` as for moveRef. `serverRefs`:
 * the moves are the server's own refs (a deleted pull request's `refs/pull/N/head`).
 */
export async function moveRefs(
  deps: AppDeps,
  repo: PushRepo,
  actor: UserRow,
  moves: RefMove[],
  settle?: (moved: boolean) => Promise<void>,
  { inTurn = false, accessOf, merge = false, serverRefs = false }: { inTurn?: boolean; accessOf?: UserRow; merge?: boolean; serverRefs?: boolean } = {},
): Promise<boolean> {
  let settled = false
  const settleOnce = async (moved: boolean) => {
    if (settled || !settle) return
    settled = true
    await settle(moved)
  }
  const outcome = await withPush(deps, repo, { ...serverPusher(actor, accessOf, merge), serverRefs }, moves, async () => {
    let moved = false
    try {
      moved = await (inTurn ? swapRefsInTurn : swapRefs)(gitOfRow(deps, repo.repo), moves)
    } finally {
      await settleOnce(moved)
    }
    return moved
  }).catch(async (e) => {
    // Failed before the swap (deciding, writing the pending push): the caller still settles.
    await settleOnce(false)
    throw e
  })
  if (outcome.refused) {
    await settleOnce(false)
    throw refusalError(outcome.refused, merge)
  }
  return outcome.result
}
