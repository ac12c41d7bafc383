import { chmod, readdir, stat } from 'node:fs/promises'
import { hooksChanged } from '../../webhooks/dispatcher'
import { join } from 'node:path'
import { and, asc, count, eq, inArray, ne, or, sql } from 'drizzle-orm'
import { ownerPath } from '../../git/run'
import type { AppDeps } from '../../deps'
import { EMAIL_PREFERENCES } from '../../notify/mails'
import { writeTransaction } from '../../db/client'
import { containsText } from '../../db/sql'
import { emailAddresses, follows, orgUsers, repositories, stars, users, watches } from '../../db/schema'
import { maySignIn, type UserRow } from '../../auth/caller'
import { checkNewPassword, hashNewPassword } from '../../auth/secrets'
import { ApiError, notFound, unprocessable } from '../../lib/errors'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
import { nowUnix } from '../../lib/time'
import { checkEmail, checkMaxSize, checkOwnerName, checkWebsite } from '../../lib/validate'
import { userOrgBlockers } from '../orgs/service'
import { moveFolderWithRows } from '../repos/folder-move'
import { assertNameFree, checkLoginSource, checkVisibility, markPrimaryEmail } from '../users/service'
import type { EditUserInput } from './model'
import { removeAvatarFileIfUnused } from '../avatars/storage'
import { ownerPackageBlobs } from '../packages/service'

/** Individual users (no organisations), by id. */
export async function listAllUsers(deps: AppDeps, page: Page): Promise<Paged<UserRow>> {
  return await selectPage(deps.db, users, eq(users.type, 0), asc(users.id), page)
}

/** One e-mail address and the user it belongs to (Gitea's SearchEmailResult). */
export interface UserEmail {
  email: string
  isActivated: boolean
  isPrimary: boolean
  userId: number
  username: string
}

/**
 * Every user's e-mail addresses (Gitea's SearchEmails, for `/admin/emails` and its search): with
 * a keyword, those whose address, user's login or full name contains it (any case); by address.
 */
export async function searchEmails(deps: AppDeps, keyword: string, page: Page): Promise<Paged<UserEmail>> {
  const needle = keyword.trim()
  const folded = sql`lower(${needle})`
  const where = and(
    eq(users.type, 0),
    needle
      ? or(containsText(emailAddresses.lowerEmail, folded), containsText(users.lowerName, folded), containsText(sql`lower(${users.fullName})`, folded))
      : undefined,
  )
  const rows = await deps.db
    .select({ email: emailAddresses.email, isActivated: emailAddresses.isActivated, isPrimary: emailAddresses.isPrimary, userId: users.id, username: users.name })
    .from(emailAddresses)
    .innerJoin(users, eq(users.id, emailAddresses.userId))
    .where(where)
    .orderBy(asc(emailAddresses.lowerEmail), asc(emailAddresses.id))
    .limit(page.limit)
    .offset(page.offset)
  const total = (await deps.db.select({ n: count() }).from(emailAddresses).innerJoin(users, eq(users.id, emailAddresses.userId)).where(where))[0]!.n
  return { rows, total }
}

/**
 * Marks one of a user's e-mail addresses activated or not (Gitea's ActivateUserEmail, from the
 * site administrator's e-mail list): the primary address carries the account with it (activated,
 * the account is active; deactivated, it is not and signs in no more), in one transaction. An
 * administrator may not deactivate their own primary address (Warren's rule: no locking oneself
 * out). 404 when the user has no such address.
 */
export async function setEmailActivated(deps: AppDeps, actor: UserRow, userId: number, email: string, activate: boolean): Promise<void> {
  await writeTransaction(deps.db, async () => {
    const where = and(eq(emailAddresses.userId, userId), eq(emailAddresses.lowerEmail, email.trim().toLowerCase()))
    const address = (await deps.db.select().from(emailAddresses).where(where))[0]
    if (!address) throw notFound('The user has no such e-mail address.')
    if (address.isPrimary && !activate && userId === actor.id) throw unprocessable('You cannot deactivate your own primary address: your account would be deactivated with it.')
    await deps.db.update(emailAddresses).set({ isActivated: activate }).where(eq(emailAddresses.id, address.id))
    if (address.isPrimary) await deps.db.update(users).set({ isActive: activate, updatedUnix: nowUnix() }).where(eq(users.id, userId))
  })
}

/**
 * What only a user's own settings change (UserSettingsOptions, `PATCH /user/settings`), beside
 * the profile fields an EditUserOption shares with them.
 */
export interface UserPreferences {
  language?: string
  theme?: string
  diff_view_style?: string
  hide_activity?: boolean
  /** Gitea's email_notifications_preference: enabled, onmention, disabled (src/notify/mails.ts). */
  email_notifications_preference?: string
}

/** Checks everything in an EditUserOption (and the user's own preferences) before anything is written. */
function checkEdit(input: EditUserInput & UserPreferences): void {
  if (input.email !== undefined) checkEmail(input.email)
  checkMaxSize(input.full_name, 100, 'FullName')
  checkMaxSize(input.password, 255, 'Password')
  checkWebsite(input.website)
  checkMaxSize(input.location, 50, 'Location')
  checkMaxSize(input.description, 255, 'Description')
  checkMaxSize(input.login_name, 255, 'LoginName')
  checkLoginSource(input.source_id)
  checkVisibility(input.visibility)
  // Gitea's columns: a locale such as "pt-BR", a theme's name.
  checkMaxSize(input.language, 5, 'Language')
  checkMaxSize(input.theme, 30, 'Theme')
  if (input.email_notifications_preference !== undefined && !(EMAIL_PREFERENCES as readonly string[]).includes(input.email_notifications_preference))
    throw unprocessable(`must be one of ${EMAIL_PREFERENCES.join(', ')}`, 'EmailNotificationsPreference')
  if (input.max_repo_creation !== undefined && input.max_repo_creation < -1)
    throw unprocessable('must be -1 (server default) or a number of repositories', 'MaxRepoCreation')
}

/**
 * Makes `email` the user's primary address, keeping `email_addresses` in step: an address the
 * user already has becomes primary (the old one stays as a secondary address); a new address
 * replaces the old primary one. 422 when another account uses it. Runs inside a transaction.
 */
async function setPrimaryEmail(deps: AppDeps, user: UserRow, email: string): Promise<void> {
  const lower = email.toLowerCase()
  const existing = (await deps.db.select().from(emailAddresses).where(eq(emailAddresses.lowerEmail, lower)))[0]
  if (existing && existing.userId !== user.id) throw unprocessable(`e-mail already in use [email: ${email}]`, 'Email')
  if (existing) {
    // The administrator vouches for the address: it becomes verified (one added by the user is not).
    await markPrimaryEmail(deps, user.id, existing.id, email)
    return
  }
  const primary = (await deps.db.select().from(emailAddresses).where(and(eq(emailAddresses.userId, user.id), eq(emailAddresses.isPrimary, true))))[0]
  if (primary) await deps.db.update(emailAddresses).set({ email, lowerEmail: lower }).where(eq(emailAddresses.id, primary.id))
  else await deps.db.insert(emailAddresses).values({ userId: user.id, email, lowerEmail: lower, isPrimary: true, isActivated: true })
}

/**
 * Applies an EditUserOption, or the user's own UserSettingsOptions (absent = unchanged); all
 * checks run before any write.
 */
export async function editUser(deps: AppDeps, user: UserRow, input: EditUserInput & UserPreferences): Promise<UserRow> {
  checkEdit(input)
  const passwordHash = input.password ? await hashNewPassword(deps.config, input.password) : undefined
  const changes: Partial<typeof users.$inferInsert> = {
    fullName: input.full_name,
    passwordHash,
    website: input.website,
    location: input.location,
    description: input.description,
    loginName: input.login_name,
    isActive: input.active,
    isAdmin: input.admin,
    allowGitHook: input.allow_git_hook,
    allowImportLocal: input.allow_import_local,
    allowCreateOrganization: input.allow_create_organization,
    maxRepoCreation: input.max_repo_creation,
    mustChangePassword: input.must_change_password,
    prohibitLogin: input.prohibit_login,
    keepEmailPrivate: input.hide_email,
    keepActivityPrivate: input.hide_activity,
    language: input.language,
    theme: input.theme,
    diffViewStyle: input.diff_view_style,
    emailNotificationsPreference: input.email_notifications_preference,
    visibility: input.visibility,
    email: input.email,
    updatedUnix: nowUnix(),
  }
  return await writeTransaction(deps.db, async () => {
    // The row as stored now: the last-administrator rule reads it inside the transaction that writes.
    const now = (await deps.db.select().from(users).where(eq(users.id, user.id)))[0]
    if (!now) throw notFound(`user does not exist [name: ${user.name}]`)
    await assertAdminRemains(deps, now, input)
    if (input.email !== undefined) await setPrimaryEmail(deps, user, input.email)
    return (await deps.db.update(users).set(changes).where(eq(users.id, user.id)).returning())[0]!
  })
}

/** 422 with a message naming what still ties the user to the site (checked in a transaction). */
async function assertDeletable(deps: AppDeps, user: UserRow): Promise<void> {
  const ownsRepo = (await deps.db.select({ id: repositories.id }).from(repositories).where(eq(repositories.ownerId, user.id)))[0]
  if (user.numRepos > 0 || ownsRepo)
    throw unprocessable(`user still owns repositories; delete or transfer them first [name: ${user.name}]`)
  const orgBlocker = await userOrgBlockers(deps, user.id)
  if (orgBlocker) throw unprocessable(orgBlocker)
  const memberOf = (await deps.db
    .select({ org: users.name })
    .from(orgUsers)
    .innerJoin(users, eq(users.id, orgUsers.orgId))
    .where(eq(orgUsers.uid, user.id)))[0]
  if (memberOf) throw unprocessable(`user is still a member of organisation ${memberOf.org}; remove them from it first`)
  await assertNotLastAdmin(deps, user)
}

/** 422 when `user` is the site's last administrator (deleting them would leave none). */
export async function assertNotLastAdmin(deps: AppDeps, user: UserRow): Promise<void> {
  if (user.isAdmin && !(await anotherAdmin(deps, user.id)))
    throw unprocessable(`user is the last site administrator; make another user an administrator first [name: ${user.name}]`)
}

/**
 * Whether a site administrator other than `userId` remains who can administer the site: active
 * and allowed to sign in (Gitea's IsLastAdminUser, asked before deleting, demoting or
 * deactivating one).
 */
async function anotherAdmin(deps: AppDeps, userId: number): Promise<boolean> {
  const other = (await deps.db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.type, 0), eq(users.isAdmin, true), eq(users.isActive, true), eq(users.prohibitLogin, false), ne(users.id, userId)))
    .limit(1))[0]
  return other !== undefined
}

/**
 * 422 when an edit would leave the site without an administrator: the last active one who may
 * sign in demoted, deactivated or prohibited from signing in (`user` as stored now).
 */
async function assertAdminRemains(deps: AppDeps, user: UserRow, input: EditUserInput): Promise<void> {
  const administers = user.isAdmin && maySignIn(user)
  const loses = input.admin === false || input.active === false || input.prohibit_login === true
  if (administers && loses && !(await anotherAdmin(deps, user.id)))
    throw unprocessable(`user is the last site administrator; make another user an administrator before demoting, deactivating or locking them out [name: ${user.name}]`)
}

/**
 * What `editUser` would refuse, asked before anything is written (the site administrator's form
 * renames first): the fields, the password's length, the address free, the last administrator kept.
 */
export async function checkUserEdit(deps: AppDeps, user: UserRow, input: EditUserInput): Promise<void> {
  checkEdit(input)
  if (input.password) checkNewPassword(deps.config, input.password)
  if (input.email !== undefined) {
    const holder = (await deps.db.select({ userId: emailAddresses.userId }).from(emailAddresses).where(eq(emailAddresses.lowerEmail, input.email.toLowerCase())))[0]
    if (holder && holder.userId !== user.id) throw unprocessable(`e-mail already in use [email: ${input.email}]`, 'Email')
  }
  await assertAdminRemains(deps, user, input)
}

/**
 * Deletes a user: refused (422) for the acting admin themself, and while the user owns
 * repositories, is the last owner of an organisation or belongs to one, or is the site's last
 * active administrator. Addresses, tokens,
 * keys, follows, collaborations, stars, watches, tracked times, assignments and packages go with the row
 * (ON DELETE CASCADE); the counters of others are fixed first. Issues and comments the user
 * posted stay (their poster id is no foreign key) and show the Ghost user as author (as Gitea).
 */
export async function deleteUser(deps: AppDeps, user: UserRow, actor: UserRow | null): Promise<void> {
  // As Gitea: an administrator cannot delete their own account through the administration (nor lock
  // the site out that way). `null` is the operator at the command line (`warren admin user delete`).
  if (user.id === actor?.id) throw unprocessable('you cannot delete yourself')
  await removeUser(deps, user)
}

/**
 * A user deleting their own account (the account settings' "Delete your account", after their
 * password was checked): the same refusals as `deleteUser`, the last-administrator rule included.
 */
export async function deleteOwnAccount(deps: AppDeps, user: UserRow): Promise<void> {
  await removeUser(deps, user)
}

async function removeUser(deps: AppDeps, user: UserRow): Promise<void> {
  let blobs: Awaited<ReturnType<typeof ownerPackageBlobs>>
  try {
    blobs = await writeTransaction(deps.db, async () => {
      await assertDeletable(deps, user)
      const followed = deps.db.select({ id: follows.followId }).from(follows).where(eq(follows.userId, user.id))
      const followers = deps.db.select({ id: follows.userId }).from(follows).where(eq(follows.followId, user.id))
      const starred = deps.db.select({ id: stars.repoId }).from(stars).where(eq(stars.userId, user.id))
      const watched = deps.db.select({ id: watches.repoId }).from(watches).where(eq(watches.userId, user.id))
      await deps.db.update(users).set({ numFollowers: sql`${users.numFollowers} - 1` }).where(inArray(users.id, followed))
      await deps.db.update(users).set({ numFollowing: sql`${users.numFollowing} - 1` }).where(inArray(users.id, followers))
      await deps.db.update(repositories).set({ numStars: sql`${repositories.numStars} - 1` }).where(inArray(repositories.id, starred))
      await deps.db.update(repositories).set({ numWatches: sql`${repositories.numWatches} - 1` }).where(inArray(repositories.id, watched))
      const blobs = await ownerPackageBlobs(deps, user.id)
      await deps.db.delete(users).where(eq(users.id, user.id))
      // Their hooks went with them (cascade): running delivery lanes learn it at the commit.
      hooksChanged(deps)
      return blobs
    })
  } catch (e) {
    // A row of another area still pointing at the user without ON DELETE CASCADE.
    if (!(e instanceof ApiError) && String((e as Error)?.message).includes('FOREIGN KEY'))
      throw unprocessable(`user is still referenced by other records and cannot be deleted [name: ${user.name}]`)
    throw e
  }
  await blobs.removeFiles()
  if (user.avatar) await removeAvatarFileIfUnused(deps, 'user', user.avatar)
}

/**
 * Marks each repository folder of an owner folder just moved as changed now (its inode's change
 * time, by setting its mode to itself): the background sweep leaves folders changed since it
 * started alone, so none is taken for a leftover while the rows still name the old owner.
 */
async function markFoldersChanged(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (!entry.isDirectory()) continue
    const path = join(dir, entry.name)
    await chmod(path, (await stat(path)).mode & 0o7777).catch(() => {})
  }
}

/**
 * Renames a user (site administrators; Gitea's RenameUser): the name rules of a new account, the
 * name free, the owner folder of their repositories moved first (moveFolderWithRows: moved back
 * when the rows cannot change, or at the next start after a crash), then the user's name and
 * their repositories' owner name in one transaction. A change of letter case only moves nothing.
 */
export async function renameUser(deps: AppDeps, user: UserRow, newName: string): Promise<void> {
  checkOwnerName(newName, 'NewName')
  if (newName === user.name) return
  const lower = newName.toLowerCase()
  const oldDir = ownerPath(deps.config.dataDir, user.name)
  const newDir = ownerPath(deps.config.dataDir, newName)
  const moves = lower !== user.lowerName
  if (moves) await assertNameFree(deps, newName)
  await moveFolderWithRows(deps, oldDir, newDir, async () => {
    if (moves) {
      const taken = (await deps.db.select({ id: users.id }).from(users).where(eq(users.lowerName, lower)))[0]
      if (taken) throw unprocessable(`user already exists [name: ${newName}]`, 'NewName')
    }
    await deps.db.update(users).set({ name: newName, lowerName: lower, updatedUnix: nowUnix() }).where(eq(users.id, user.id))
    await deps.db.update(repositories).set({ ownerName: newName }).where(eq(repositories.ownerId, user.id))
  }, { taken: `a repository folder already exists for [name: ${newName}]`, afterMove: () => markFoldersChanged(newDir) })
}
