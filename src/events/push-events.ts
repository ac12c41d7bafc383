import type { Db } from '../db/client'
import { ZERO_ID } from '../git/run'
import { recordEvent } from './outbox'

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
 * The events of one ref change (inside the transaction that records it): `ref.created` or
 * `ref.deleted` first for a branch or tag that appeared or went away (Gitea's create/delete,
 * short name and type), then `push` with the full ref and its old and new ids.
 */
export async function recordRefChange(db: Db, repoId: number, actorId: number | null, change: RefChange): Promise<void> {
  const kindOf = change.ref.startsWith('refs/tags/') ? 'tag' : 'branch'
  const short = change.ref.replace(/^refs\/(heads|tags)\//, '')
  if (change.before === ZERO_ID)
    await recordEvent(db, { kind: 'ref.created', repoId, actorId, payload: { ref: short, refType: kindOf, sha: change.after } })
  else if (change.after === ZERO_ID)
    await recordEvent(db, { kind: 'ref.deleted', repoId, actorId, payload: { ref: short, refType: kindOf, sha: change.before } })
  await recordEvent(db, { kind: 'push', repoId, actorId, payload: { ref: change.ref, before: change.before, after: change.after } })
}
