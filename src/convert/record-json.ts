import type { TSchema } from '@sinclair/typebox'
import type { AppDeps } from '../deps'
import { checkedJson, JSON_TYPE } from '../lib/checked-json'
import { PageCache, pageCacheOf } from '../db/page-cache'

/** What the JSON texts of one kind of record may hold in all, in bytes. */
const RECORD_TEXTS_KEPT = 2 * 1024 * 1024

/**
 * A point read's answer: the record as JSON text, made by its converter, checked against its
 * schema (as Elysia checks an answer: checkedJson) and kept in the page cache while the database
 * is unchanged (its change mark), as its bytes, so that the same record read again is neither
 * converted, checked, serialised nor encoded (each answer's body shares the bytes). The key names
 * the record and everything of the viewer the record depends on; the route still resolves its
 * needs (the pipeline decides access) before asking. A text made while a write landed is not
 * kept. Bounded by RECORD_TEXTS_KEPT per kind, oldest out first.
 */
export function recordJson<T extends TSchema>(kind: string, schema: T) {
  const serialise = checkedJson(schema)
  return async (deps: AppDeps, key: string, make: () => unknown): Promise<Response> => {
    const cache = pageCacheOf(deps.db, `record:${kind}`, () => new PageCache<Blob>(deps.db, { maxCost: RECORD_TEXTS_KEPT, costOf: (bytes) => bytes.size }))
    const bytes = (await cache.getOrRead(key, async () => new Blob([serialise(await make())])))!
    return new Response(bytes, { headers: { 'content-type': JSON_TYPE } })
  }
}
