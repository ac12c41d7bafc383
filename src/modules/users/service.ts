import { and, asc, count, desc, eq, inArray, or, sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { SQLiteColumn, SQLiteTable } from 'drizzle-orm/sqlite-core'
import type { AppDeps } from '../../deps'
import { perConnectionShape, writeTransaction, type Db } from '../../db/client'
import { refuseBlockedEitherWay } from '../../auth/blocking'
import { containsText } from '../../db/sql'
import { accessTokens, emailAddresses, follows, users, type AccessTokenRow, type EmailRow } from '../../db/schema'
import type { Caller, UserRow } from '../../auth/caller'
import { ownerVisibleTo, viewerKind, viewerStandIn, visibleOwnerCondition } from '../../auth/visibility'
import { findOwnerByName } from '../../auth/owner-context'
import { hashNewPassword, hashToken, newTokenSecret } from '../../auth/secrets'
import { ALL_SCOPE, scopeForNewToken } from '../../auth/scopes'
import { forbidden, notFound, unauthorized, unprocessable } from '../../lib/errors'
import { nowUnix } from '../../lib/time'
import { pathNumber } from '../../lib/path-number'
import { preparedPage, selectPage, type Page, type Paged } from '../../lib/pagination'
import { checkEmail, checkMaxSize, checkOwnerName } from '../../lib/validate'
import { mailEmailActivations } from './mail-codes'

export interface NewUser {
  username: string
  email: string
  password: string
  fullName?: string
  isAdmin?: boolean
  mustChangePassword?: boolean
  loginName?: string
  sourceId?: number
  visibility?: string
  /** False: the account waits for its address's confirmation (WARREN_REGISTER_EMAIL_CONFIRM); true by default. */
  isActive?: boolean
}

const VISIBILITIES = ['public', 'limited', 'private']

/** 422 unless the value is a known visibility (`public`, `limited`, `private`). */
export function checkVisibility(value: string | undefined): void {
  if (value !== undefined && !VISIBILITIES.includes(value)) throw unprocessable(`must be one of ${VISIBILITIES.join(', ')}`, 'Visibility')
}

/** Only local accounts exist (no external login sources): any other source id → 422. */
export function checkLoginSource(sourceId: number | undefined): void {
  if (sourceId) throw unprocessable(`login source does not exist [id: ${sourceId}]`, 'SourceID')
}

/** User (type 0) or organisation (type 1) by name: auth/owner-context.ts's lookup, which the repository lookup shares. */
export { findOwnerByName }

/** A user (not an organisation) by name, or 404. */
export async function getUserByName(deps: AppDeps, name: string): Promise<UserRow> {
  const user = await findOwnerByName(deps, name)
  if (!user || user.type !== 0) throw notFound(`user does not exist [name: ${name}]`)
  return user
}

/** 422 when a user or organisation already holds the name (they share one name space). */
export async function assertNameFree(deps: AppDeps, name: string): Promise<void> {
  if (await findOwnerByName(deps, name)) throw unprocessable(`user already exists [name: ${name}]`, 'UserName')
}

/** 422 when any account already uses the address. */
async function assertEmailFree(deps: AppDeps, email: string): Promise<void> {
  const taken = (await deps.db.select({ id: emailAddresses.id }).from(emailAddresses).where(eq(emailAddresses.lowerEmail, email.toLowerCase())))[0]
  if (taken) throw unprocessable(`e-mail already in use [email: ${email}]`, 'Email')
}

/** Validates and creates a user with its primary e-mail; the password is hashed. */
export async function createUser(deps: AppDeps, input: NewUser, opts: { afterInsert?: (user: UserRow) => Promise<void> } = {}): Promise<UserRow> {
  checkOwnerName(input.username)
  checkEmail(input.email)
  checkMaxSize(input.fullName, 100, 'FullName')
  if (!input.password) throw unprocessable('Required', 'Password')
  checkMaxSize(input.password, 255, 'Password')
  checkVisibility(input.visibility)
  checkLoginSource(input.sourceId)
  const passwordHash = await hashNewPassword(deps.config, input.password)
  return await writeTransaction(deps.db, async () => {
    await assertNameFree(deps, input.username)
    await assertEmailFree(deps, input.email)
    const now = nowUnix()
    const user = (await deps.db
      .insert(users)
      .values({
        name: input.username,
        lowerName: input.username.toLowerCase(),
        fullName: input.fullName ?? '',
        email: input.email,
        passwordHash,
        isAdmin: input.isAdmin ?? false,
        isActive: input.isActive ?? true,
        mustChangePassword: input.mustChangePassword ?? false,
        loginName: input.loginName ?? '',
        sourceId: input.sourceId ?? 0,
        visibility: input.visibility ?? 'public',
        createdUnix: now,
        updatedUnix: now,
      })
      .returning())[0]
    await deps.db
      .insert(emailAddresses)
      .values({ userId: user.id, email: input.email, lowerEmail: input.email.toLowerCase(), isPrimary: true, isActivated: input.isActive ?? true })
    await opts.afterInsert?.(user as UserRow)
    return user
  })
}

/**
 * Creates an access token with the scopes asked for (400 when none or an unknown one, as Gitea
 * 1.22+); the secret is returned once and only its hash is stored. The API always passes the
 * caller's list; `all` is for tokens made in-process (tests, benches).
 */
export async function createAccessToken(deps: AppDeps, userId: number, name: string, scopes: readonly string[] = [ALL_SCOPE]) {
  if (!name.trim()) throw unprocessable('Required', 'Name')
  checkMaxSize(name, 255, 'Name')
  const scope = scopeForNewToken(scopes)
  const secret = newTokenSecret()
  const now = nowUnix()
  const row = (await deps.db
    .insert(accessTokens)
    .values({ userId, name, tokenHash: hashToken(secret), tokenLastEight: secret.slice(-8), scope, createdUnix: now, updatedUnix: now })
    .returning())[0]
  return { row, secret }
}

/** Number of users (individuals); used to decide whether the first-start admin is needed. */
export async function countUsers(deps: AppDeps): Promise<number> {
  return (await deps.db.select({ n: count() }).from(users).where(eq(users.type, 0)))[0]!.n
}

/**
 * The user or organisation named in a path, as `viewer` may see it (the one visibility rule);
 * `kind` 'user' admits people only. One that `viewer` may not see answers exactly like an
 * unknown name: 404 "user does not exist". Every `/users/{username}/…` route finds its user here.
 */
export async function getVisibleUserByName(deps: AppDeps, name: string, viewer: UserRow | null, kind: 'user' | 'owner' = 'user'): Promise<UserRow> {
  const owner = await findOwnerByName(deps, name)
  if (!owner || (kind === 'user' && owner.type !== 0) || !await ownerVisibleTo(deps.db, owner, viewer)) throw notFound(`user does not exist [name: ${name}]`)
  return owner
}

/**
 * The users whose login or full name contains `q` (any case; with `byEmail`, or whose primary
 * address does, as the site administrator's list searches); none asked for an empty `q`.
 */
export function userTextCondition(q: string, byEmail = false): SQL | undefined {
  const needle = q.trim()
  if (!needle) return undefined
  const folded = sql`lower(${needle})`
  return or(containsText(users.lowerName, folded), containsText(sql`lower(${users.fullName})`, folded), byEmail ? containsText(sql`lower(${users.email})`, folded) : undefined)
}

/**
 * Individual users (or, with `type` 1, organisations) whose login or full name contains `q`
 * (case-insensitive) and whom `viewer` may see, by name.
 */
export async function searchUsers(deps: AppDeps, viewer: UserRow | null, q: string, uid: number | undefined, page: Page, type: 0 | 1 = 0): Promise<Paged<UserRow>> {
  // The database folds the case of both sides, so they agree (SQLite's lower() folds ASCII
  // letters only, PostgreSQL's every letter).
  const where = and(
    eq(users.type, type),
    userTextCondition(q),
    uid ? eq(users.id, uid) : undefined,
    visibleOwnerCondition(viewer),
  )
  return await selectPage(deps.db, users, where, asc(users.lowerName), page)
}

/**
 * A list of people (or organisations) linked to one thing (a team, a repository, a person): the
 * `link` rows matching `where` point at them through their column `via` (org_users, team_users,
 * collaborations, follows, ...), by name unless `order` says otherwise. `where` is written with
 * the placeholder standing for the thing's id, so the list's statements are prepared once.
 */
export interface PeopleList {
  /** Unique among the lists: with the kind of viewer, the key of its prepared statements. */
  name: string
  link: SQLiteTable
  via: SQLiteColumn
  where: (of: Placeholder) => SQL
  order?: SQLiteColumn | SQL
}

/** What a people list's condition on its link rows stands for: the thing's id. */
const OF = sql.placeholder('of')

const peopleStatements = perConnectionShape<ReturnType<typeof preparePeople>>()

function preparePeople(db: Db, list: PeopleList, viewer: UserRow | null) {
  const cond = and(list.where(OF), visibleOwnerCondition(viewerStandIn(viewer)))
  return {
    count: db.select({ n: count() }).from(list.link).innerJoin(users, eq(users.id, list.via)).where(cond).prepare(),
    rows: db
      .select({ user: users })
      .from(list.link)
      .innerJoin(users, eq(users.id, list.via))
      .where(cond)
      .orderBy(list.order ?? asc(users.lowerName))
      .limit(sql.placeholder('limit'))
      .offset(sql.placeholder('offset'))
      .prepare(),
  }
}

/**
 * A page of `list` for the thing whose id is `of`: only the people `viewer` may see (the
 * visibility rule, its statements prepared per kind of viewer with the viewer's id bound), counted
 * alike.
 */
export async function usersPage(deps: AppDeps, viewer: UserRow | null, list: PeopleList, of: number, page: Page): Promise<Paged<UserRow>> {
  const statements = peopleStatements(deps.db, `${list.name}:${viewerKind(viewer)}`, () => preparePeople(deps.db, list, viewer))
  const { rows, total } = await preparedPage<{ user: UserRow }>(statements, { of, viewer: viewer?.id ?? 0 }, page)
  return { rows: rows.map((r) => r.user), total }
}

// ---- access tokens -------------------------------------------------------------------------

/**
 * Whose tokens `/users/{username}/tokens` manages: Basic credentials with a password are needed
 * (a token → 401); `{username}` must be the caller, or the caller a site admin (else 403).
 */
export async function tokenOwnerFor(deps: AppDeps, caller: Caller, username: string): Promise<UserRow> {
  if (caller.method !== 'password' || !caller.user) throw unauthorized('Basic authentication with a password is required')
  if (caller.user.lowerName === username.toLowerCase()) return caller.user
  if (!caller.signedInAs?.isAdmin) throw forbidden('you can only manage your own access tokens')
  return await getUserByName(deps, username)
}

export async function listAccessTokens(deps: AppDeps, userId: number, page: Page): Promise<Paged<AccessTokenRow>> {
  return await selectPage(deps.db, accessTokens, eq(accessTokens.userId, userId), asc(accessTokens.id), page)
}

/**
 * Deletes one of the user's tokens named by its id or, as Gitea (1.12+) does when the path is
 * not a number, by its name: 404 when none matches, 422 when several tokens share that name.
 */
export async function deleteAccessToken(deps: AppDeps, userId: number, idOrName: string): Promise<void> {
  let id = pathNumber(idOrName)
  if (!Number.isSafeInteger(id)) {
    const named = await deps.db.select({ id: accessTokens.id }).from(accessTokens).where(and(eq(accessTokens.userId, userId), eq(accessTokens.name, idOrName)))
    if (named.length > 1) throw unprocessable(`multiple matches for token name '${idOrName}'`, 'id')
    id = named[0]?.id ?? NaN
  }
  const gone = Number.isSafeInteger(id)
    ? (await deps.db.delete(accessTokens).where(and(eq(accessTokens.id, id), eq(accessTokens.userId, userId))).returning({ id: accessTokens.id }))[0]
    : undefined
  if (!gone) throw notFound(`access token does not exist [id: ${idOrName}]`)
}

// ---- e-mail addresses ------------------------------------------------------------------------

/** The user's addresses, primary first. */
export async function listEmails(deps: AppDeps, userId: number): Promise<EmailRow[]> {
  return await deps.db.select().from(emailAddresses).where(eq(emailAddresses.userId, userId)).orderBy(desc(emailAddresses.isPrimary), asc(emailAddresses.id))
}

/**
 * Adds addresses (all or none); 422 for an empty list, a bad address, or one already in use.
 * Added addresses are unverified (`verified: false`). Gitea activates them at once when its
 * RegisterEmailConfirm is off, trusting that a mail service would have been configured otherwise;
 * Warren never takes an address on trust: claiming someone else's address must not let it sign in
 * (Basic with an e-mail login only matches verified addresses) nor attribute that person's
 * commits. With the mailer on, each added address is mailed its activation link
 * (`/user/activate_email`, queued in the same transaction); without it, a site administrator
 * activates addresses (admin edit user sets a verified primary one).
 */
export async function addEmails(deps: AppDeps, userId: number, emails: string[]): Promise<EmailRow[]> {
  if (emails.length === 0) throw unprocessable('Required', 'Emails')
  const seen = new Set<string>()
  for (const email of emails) {
    checkEmail(email, 'Emails')
    const lower = email.toLowerCase()
    if (seen.has(lower)) throw unprocessable(`Email address has been used: ${email}`, 'Emails')
    seen.add(lower)
  }
  return await writeTransaction(deps.db, async () => {
    const taken = (await deps.db.select({ email: emailAddresses.email }).from(emailAddresses).where(inArray(emailAddresses.lowerEmail, [...seen])))[0]
    if (taken) throw unprocessable(`Email address has been used: ${taken.email}`, 'Emails')
    const added = await deps.db
      .insert(emailAddresses)
      .values(emails.map((email) => ({ userId, email, lowerEmail: email.toLowerCase(), isPrimary: false, isActivated: false })))
      .returning()
    if (deps.config.mailer) {
      const user = (await deps.db.select().from(users).where(eq(users.id, userId)))[0] as UserRow | undefined
      if (user) await mailEmailActivations(deps, user, emails)
    }
    return added
  })
}

/** Removes addresses (all or none); 404 when one is not the user's, 422 for the primary one. */
export async function deleteEmails(deps: AppDeps, userId: number, emails: string[]): Promise<void> {
  if (emails.length === 0) return
  const lowers = [...new Set(emails.map((e) => e.toLowerCase()))]
  await writeTransaction(deps.db, async () => {
    const own = await deps.db
      .select()
      .from(emailAddresses)
      .where(and(eq(emailAddresses.userId, userId), inArray(emailAddresses.lowerEmail, lowers)))
    const found = new Set(own.map((r) => r.lowerEmail))
    const missing = emails.find((e) => !found.has(e.toLowerCase()))
    if (missing !== undefined) throw notFound(`email address does not exist [email: ${missing}]`)
    const primary = own.find((r) => r.isPrimary)
    if (primary) throw unprocessable(`the primary email address cannot be deleted: ${primary.email}`, 'Emails')
    await deps.db.delete(emailAddresses).where(inArray(emailAddresses.id, own.map((r) => r.id)))
  })
}

/**
 * Makes the user's address `addressId` their only primary one, and activated (inside the caller's
 * transaction); the user row's `email` is the caller's to set with it.
 */
export async function markPrimaryEmail(deps: AppDeps, userId: number, addressId: number, email: string): Promise<void> {
  await deps.db.update(emailAddresses).set({ isPrimary: false }).where(and(eq(emailAddresses.userId, userId), eq(emailAddresses.isPrimary, true)))
  await deps.db.update(emailAddresses).set({ isPrimary: true, isActivated: true, email }).where(eq(emailAddresses.id, addressId))
}

/** One of the user's addresses by id, or 404. */
export async function emailById(deps: AppDeps, userId: number, id: number): Promise<EmailRow> {
  const found = Number.isSafeInteger(id) && id > 0 ? (await deps.db.select().from(emailAddresses).where(and(eq(emailAddresses.id, id), eq(emailAddresses.userId, userId))))[0] : undefined
  if (!found) throw notFound(`email address does not exist [id: ${id}]`)
  return found
}

/**
 * Makes one of the user's own addresses their primary one (Gitea's MakeActiveEmailPrimary, from the
 * account settings): only an activated (verified) address, 404 for one not theirs; the address
 * rows and the user row's `email` change in one transaction.
 */
export async function makeEmailPrimary(deps: AppDeps, user: UserRow, id: number): Promise<void> {
  await writeTransaction(deps.db, async () => {
    const address = await emailById(deps, user.id, id)
    if (!address.isActivated) throw unprocessable(`only an activated address can be the primary one: ${address.email} is not activated`, 'Email')
    if (address.isPrimary) return
    await markPrimaryEmail(deps, user.id, address.id, address.email)
    await deps.db.update(users).set({ email: address.email, updatedUnix: nowUnix() }).where(eq(users.id, user.id))
  })
}

// ---- followers -------------------------------------------------------------------------------

/** The people following someone, and those someone follows, in the order they were followed. */
const FOLLOWS: Record<'followers' | 'following', PeopleList> = {
  followers: { name: 'followers', link: follows, via: follows.userId, where: (of) => eq(follows.followId, of), order: asc(follows.id) },
  following: { name: 'following', link: follows, via: follows.followId, where: (of) => eq(follows.userId, of), order: asc(follows.id) },
}

/** Users following `userId` (direction 'followers') or followed by it ('following') whom `viewer` may see, paged. */
export async function listFollows(deps: AppDeps, viewer: UserRow | null, userId: number, direction: 'followers' | 'following', page: Page): Promise<Paged<UserRow>> {
  return await usersPage(deps, viewer, FOLLOWS[direction], userId, page)
}

export async function isFollowing(deps: AppDeps, userId: number, followId: number): Promise<boolean> {
  return !!(await deps.db.select({ id: follows.id }).from(follows).where(and(eq(follows.userId, userId), eq(follows.followId, followId))))[0]
}

/**
 * The user `follower` names on /user/following/{name}: one it already follows whatever their
 * visibility now (a follow of someone gone private can still be checked and undone, as in Gitea),
 * else one it may see; anyone else answers exactly like an unknown name.
 */
export async function followedOrVisibleUser(deps: AppDeps, follower: UserRow, name: string): Promise<UserRow> {
  const user = await findOwnerByName(deps, name)
  if (user && user.type === 0 && await isFollowing(deps, follower.id, user.id)) return user
  return await getVisibleUserByName(deps, name, follower)
}

/** Follows `target` (idempotent); the counters change in the same transaction. */
export async function followUser(deps: AppDeps, follower: UserRow, target: UserRow): Promise<void> {
  if (follower.id === target.id) throw unprocessable('you cannot follow yourself', 'username')
  await writeTransaction(deps.db, async () => {
    await refuseBlockedEitherWay(deps.db, follower.id, target.id)
    const added = (await deps.db
      .insert(follows)
      .values({ userId: follower.id, followId: target.id, createdUnix: nowUnix() })
      .onConflictDoNothing()
      .returning({ id: follows.id }))[0]
    if (!added) return
    await deps.db.update(users).set({ numFollowing: sql`${users.numFollowing} + 1` }).where(eq(users.id, follower.id))
    await deps.db.update(users).set({ numFollowers: sql`${users.numFollowers} + 1` }).where(eq(users.id, target.id))
  })
}

/** Stops following `target` (idempotent); the counters change in the same transaction. */
export async function unfollowUser(deps: AppDeps, follower: UserRow, target: UserRow): Promise<void> {
  await writeTransaction(deps.db, async () => {
    const gone = (await deps.db
      .delete(follows)
      .where(and(eq(follows.userId, follower.id), eq(follows.followId, target.id)))
      .returning({ id: follows.id }))[0]
    if (!gone) return
    await deps.db.update(users).set({ numFollowing: sql`${users.numFollowing} - 1` }).where(eq(users.id, follower.id))
    await deps.db.update(users).set({ numFollowers: sql`${users.numFollowers} - 1` }).where(eq(users.id, target.id))
  })
}
