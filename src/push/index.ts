/**
 * The one path a ref moves through (DESIGN.md's layer below the modules): whether it may move
 * (./decision.ts), the record of what moved (./recorder.ts, ./sync.ts), and the entry points
 * every caller uses (./path.ts). Imports auth, git, db, lib and events, never an area module.
 */
export { decidePush, gitPusher, mayMove, pullHeadRef, pushContextOf, REF_RULES, refusalOf, serverPusher, type PushContext, type Pusher, type PushRefusal, type PushRepo, type RefRefusal, type RefRule } from './decision'
export { moveRef, moveRefs, refusalError, withPush, type PushOutcome, type RefMove } from './path'
export { beginPush, finishPush, recordPush, settleAbandonedPushes } from './recorder'
export { reconcilePendingPushes, reconcileRepositories, RECONCILE_PARALLELISM, syncChangedRepositories, syncRepositoryWithGit, type SyncResult } from './sync'
export { checkPushHooks, pushHook, type PushHook } from './hook'
