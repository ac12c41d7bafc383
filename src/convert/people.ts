import { and, eq } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { perConnection, type Db } from '../db/client'
import { rowMapper, valueRows } from '../db/row-mapper'
import { inJsonList } from '../db/sql'
import { emailAddresses, users } from '../db/schema'
import type { UserRow } from '../auth/caller'

/*
 * The accounts records name: by id (authors, owners, assignees) and by e-mail address (the
 * authors and committers of commits). Every converter that shows a person finds them here, in
 * one query per list whatever its length.
 */

/** Users (and organisations) by id, as one statement prepared once per database. */
const prepareUsersByIds = (db: Db) => db.select().from(users).where(inJsonList(users.id, 'ids')).prepare()
const usersByIdsStatements = new WeakMap<Db, ReturnType<typeof prepareUsersByIds>>()
const userRows = rowMapper<UserRow>(users)

/**
 * Users (and organisations) by id, in one query whatever their number: what every list uses to
 * fetch the people and owners its records name. Ids without a row (deleted users) are absent.
 */
export async function usersByIds(deps: AppDeps, ids: Iterable<number>): Promise<Map<number, UserRow>> {
  const list = [...new Set(ids)]
  if (list.length === 0) return new Map()
  let statement = usersByIdsStatements.get(deps.db)
  if (!statement) usersByIdsStatements.set(deps.db, (statement = prepareUsersByIds(deps.db)))
  // Rows read as raw values and mapped by the table's own columns (Drizzle's generic mapping
  // costs more than the query on list pages).
  const rows = (await valueRows(statement, { ids: JSON.stringify(list) })).map((v) => userRows.map(v))
  return new Map(rows.map((u) => [u.id, u]))
}


/**
 * The accounts owning these e-mail addresses, by lower-case address, in one query: only
 * verified (activated) addresses name their owner, as Gitea's GetUsersByEmails, so that nobody
 * can pass for someone else by adding their address unverified. The one lookup every commit
 * record (API and webhook payload alike) uses.
 */
export async function usersByEmails(deps: AppDeps, emails: Iterable<string>): Promise<Map<string, UserRow>> {
  const lower = [...new Set([...emails].map((e) => e.toLowerCase()).filter(Boolean))]
  if (lower.length === 0) return new Map()
  // Each row: the address, then the user's columns.
  const rows = await valueRows(usersByEmailsStatement(deps.db), { emails: JSON.stringify(lower) })
  return new Map(rows.map((v) => [v[0] as string, userRows.map(v, 1)]))
}

/** usersByEmails' statement, prepared once per database (every list of commits and branches asks it). */
const usersByEmailsStatement = perConnection((db: Db) =>
  db
    .select({ email: emailAddresses.lowerEmail, user: users })
    .from(emailAddresses)
    .innerJoin(users, eq(users.id, emailAddresses.userId))
    .where(and(inJsonList(emailAddresses.lowerEmail, 'emails'), eq(emailAddresses.isActivated, true)))
    .prepare(),
)
