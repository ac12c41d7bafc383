import { eq, sql } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { perConnection, type Db } from '../db/client'
import { PageCache, pageCacheOf } from '../db/page-cache'
import { rowMapper, valueRows } from '../db/row-mapper'
import { users } from '../db/schema'
import { notFound } from '../lib/errors'
import type { UserRow } from './caller'
import { ownerVisibleTo } from './visibility'

/*
 * A user or organisation named in a path (`/{owner}` pages), beside org-context.ts: loaded as the
 * caller may see it by the one visibility rule, else 404 exactly as for an unknown name.
 */

/** Raw values to a row (Drizzle's generic mapping costs as much as this point read itself). */
const ownerRows = rowMapper<UserRow>(users)
/** The lookup by lower-case name, prepared once per connection: on the hot path of most routes. */
const ownerByLowerName = perConnection((db: Db) => db.select().from(users).where(eq(users.lowerName, sql.placeholder('name'))).prepare())

/** How many owners found by name are kept per database. */
const OWNERS_KEPT = 2048
/**
 * Users and organisations found by name, kept while the users are unchanged (a write of them by
 * any process forgets them; on SQLite any write): `/users/{username}` and every route under it,
 * and every repository route (findRepoByName), start with this lookup.
 */
const ownersFound = (db: Db) => pageCacheOf(db, 'owners by name', () => new PageCache<UserRow>(db, { maxCost: OWNERS_KEPT, tables: [users] }))

/**
 * The kept row of the user or organisation named `lowerName` (in lower case), shared: callers
 * hand out copies (findOwnerByName, findRepoByName).
 */
export function ownerNamed(db: Db, lowerName: string): Promise<UserRow | undefined> {
  if (lowerName.includes('\u0000')) return Promise.resolve(undefined) // no name holds one (and PostgreSQL cannot be asked for one)
  return ownersFound(db).getOrRead(lowerName, async () => {
    const values = (await valueRows(ownerByLowerName(db), { name: lowerName }))[0]
    return values && ownerRows.map(values)
  })
}

/** User (type 0) or organisation (type 1) by name, case-insensitive: the caller's own copy of the row. */
export async function findOwnerByName(deps: AppDeps, name: string): Promise<UserRow | undefined> {
  const found = await ownerNamed(deps.db, name.toLowerCase())
  return found && { ...found }
}

/** The user or organisation named `name` as `viewer` may see it, or 404. */
export async function loadVisibleOwner(deps: AppDeps, name: string, viewer: UserRow | null): Promise<UserRow> {
  const owner = await findOwnerByName(deps, name)
  if (!owner || !(await ownerVisibleTo(deps.db, owner, viewer))) throw notFound(`user does not exist [name: ${name}]`)
  return owner
}
