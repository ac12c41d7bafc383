import type { Db } from '../db/client'
import { ZERO_ID } from '../git/run'
import { recordEvent, recordEvents, type NewEvent } from './outbox'

export { ZERO_ID }

/** One ref moved by a push: `before`/`after` are 40 zeros when it was created/deleted. */
export interface RefChange {
  ref: string
  before: string
  after: string
}

/** Changes from one recorded ref state to another (created, updated, deleted), by ref name. */
export function diffRefs(from: Record<string, string>, to: Record<string, string>): RefChange[] {
  const changes: RefChange[] = []
  for (const ref of Object.keys({ ...from, ...to }).sort()) {
    const before = from[ref] ?? ZERO_ID
    const after = to[ref] ?? ZERO_ID
    if (before !== after) changes.push({ ref, before, after })
  }
  return changes
}

/**
 * The events of one ref change (inside the transaction that records it), in the order Gitea's
 * pushUpdates announces them: a branch created, `ref.created` (Gitea's create, short name and
 * type) then `push` (the full ref, its old and new ids); a tag created or deleted, `push` then
 * `ref.created` / `ref.deleted`; a branch deleted, `ref.deleted` then `push`, a push no webhook
 * announces (Gitea sends DeleteRef alone: webhooks/events.ts) but the activity feed records as
 * the branch's deletion (Gitea's delete_branch action, convert/activity.ts).
 */
export async function recordRefChange(db: Db, repoId: number, actorId: number | null, change: RefChange): Promise<void> {
  const list = refChangeEvents(repoId, actorId, change)
  await (list.length === 1 ? recordEvent(db, list[0]!) : recordEvents(db, list))
}

/** The events of one ref change, in recordRefChange's order: for a caller recording many changes at once (recordEvents, a batch an insert). */
export function refChangeEvents(repoId: number, actorId: number | null, change: RefChange): NewEvent[] {
  const refType = change.ref.startsWith('refs/tags/') ? 'tag' : 'branch'
  const ref = change.ref.replace(/^refs\/(heads|tags)\//, '')
  const push: NewEvent = { kind: 'push', repoId, actorId, payload: { ref: change.ref, before: change.before, after: change.after } }
  const made = change.before === ZERO_ID
  if (!made && change.after !== ZERO_ID) return [push]
  const refEvent: NewEvent = { kind: made ? 'ref.created' : 'ref.deleted', repoId, actorId, payload: { ref, refType, sha: made ? change.after : change.before } }
  return refType === 'tag' ? [push, refEvent] : [refEvent, push]
}

/** Whether an outbox `push` event is a branch's deletion (announced by `ref.deleted` alone: Gitea sends no push for it). */
export const isBranchDeletion = (payload: Record<string, unknown>): boolean =>
  typeof payload.ref === 'string' && payload.ref.startsWith('refs/heads/') && payload.after === ZERO_ID
