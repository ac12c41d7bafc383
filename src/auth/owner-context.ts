import { eq, sql } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import type { Db } from '../db/client'
import { users } from '../db/schema'
import { notFound } from '../lib/errors'
import type { UserRow } from './caller'
import { ownerVisibleTo } from './visibility'

/*
 * A user or organisation named in a path (`/{owner}` pages), beside org-context.ts: loaded as the
 * caller may see it by the one visibility rule, else 404 exactly as for an unknown name.
 */

const statements = new WeakMap<Db, ReturnType<typeof prepare>>()
const prepare = (db: Db) => db.select().from(users).where(eq(users.lowerName, sql.placeholder('name'))).prepare()

/** The user or organisation named `name` as `viewer` may see it, or 404. */
export async function loadVisibleOwner(deps: AppDeps, name: string, viewer: UserRow | null): Promise<UserRow> {
  let query = statements.get(deps.db)
  if (!query) statements.set(deps.db, (query = prepare(deps.db)))
  const owner = name.includes('\u0000') ? undefined : (await query.execute({ name: name.toLowerCase() }))[0]
  if (!owner || !(await ownerVisibleTo(deps.db, owner, viewer))) throw notFound(`user does not exist [name: ${name}]`)
  return owner
}
