import { and, asc, desc, eq, exists, sql, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { AccessMode } from '../../auth/access'
import { isOrgOwner } from '../../auth/org-context'
import { orgUsers, repositories, twoFactors, users } from '../../db/schema'
import { notFound, unprocessable } from '../../lib/errors'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
import { checkOwnerName } from '../../lib/validate'
import { deleteOrganization, ownersCount, removeFromOrg } from '../orgs/service'
import { deleteRepository } from '../repos/edit'
import { removeTwoFactor } from '../users/two-factor'
import { assertNameFree, userTextCondition } from '../users/service'
import type { EditUserInput } from './model'
import { assertNotLastAdmin, checkUserEdit, deleteUser, editUser, renameUser } from './service'

/*
 * The site administrator's user accounts (Gitea 1.23's `/-/admin/users` pages): the list with
 * its filters and orders, an account by id, the edit form's whole change (a rename, the
 * EditUserOption fields through `editUser`, the second factor reset) and a deletion that may
 * purge what the user owns. Every rule is the API's: `editUser`, `renameUser`, `deleteUser`.
 */

/** A user account (not an organisation) by id, or 404. */
export async function accountById(deps: AppDeps, id: number): Promise<UserRow> {
  const user = Number.isSafeInteger(id) && id > 0 ? (await deps.db.select().from(users).where(and(eq(users.id, id), eq(users.type, 0))))[0] : undefined
  if (!user) throw notFound(`user does not exist [id: ${id}]`)
  return user
}

/** Gitea's `status_filter[...]` of the admin user list: each absent (either), true or false. */
export interface AccountFilters {
  isActive?: boolean
  isAdmin?: boolean
  /** Warren has no restricted users: true matches none, false every one. */
  isRestricted?: boolean
  is2faEnabled?: boolean
  isProhibitLogin?: boolean
}

/** The orders of Gitea's admin user list (`sort`), alphabetically by default. */
export const ACCOUNT_SORTS = ['alphabetically', 'reversealphabetically', 'newest', 'oldest', 'recentupdate', 'leastupdate'] as const
export type AccountSort = (typeof ACCOUNT_SORTS)[number]

const ORDERS: Record<AccountSort, SQL[]> = {
  alphabetically: [asc(users.lowerName)],
  reversealphabetically: [desc(users.lowerName)],
  newest: [desc(users.createdUnix), desc(users.id)],
  oldest: [asc(users.createdUnix), asc(users.id)],
  recentupdate: [desc(users.updatedUnix), desc(users.id)],
  leastupdate: [asc(users.updatedUnix), asc(users.id)],
}

const flag = (column: typeof users.isActive | typeof users.isAdmin | typeof users.prohibitLogin, value: boolean | undefined) => (value === undefined ? undefined : eq(column, value))

/**
 * Every user account whose login, full name or e-mail contains `q`, filtered as Gitea's admin
 * list filters (SearchUserOptions' IsActive, IsAdmin, IsRestricted, IsTwoFactorEnabled,
 * IsProhibitLogin), in the order asked.
 */
export async function searchAccounts(deps: AppDeps, q: string, filters: AccountFilters, sort: AccountSort, page: Page): Promise<Paged<UserRow>> {
  const withTotp = exists(deps.db.select({ one: twoFactors.id }).from(twoFactors).where(eq(twoFactors.userId, users.id)))
  const where = and(
    eq(users.type, 0),
    userTextCondition(q, true),
    flag(users.isActive, filters.isActive),
    flag(users.isAdmin, filters.isAdmin),
    flag(users.prohibitLogin, filters.isProhibitLogin),
    filters.isRestricted === true ? sql`1 = 0` : undefined,
    filters.is2faEnabled === undefined ? undefined : filters.is2faEnabled ? withTotp : sql`NOT ${withTotp}`,
  )
  return await selectPage(deps.db, users, where, ORDERS[sort], page)
}

/** The site administrator's edit of an account: EditUserOption, a new login name, and whether to remove its second factor. */
export interface AccountEdit extends EditUserInput {
  username?: string
  reset_2fa?: boolean
}

/**
 * Applies the admin edit form (Gitea's EditUserPost): everything checked first (the new name, the
 * fields, the address, the password's length, the last administrator kept), then the rename
 * (`renameUser`: folders, then rows), the fields (`editUser`, which asks the same rules again in
 * its transaction) and the second factor removed when asked. An administrator editing themself
 * cannot prohibit their own sign-in (Gitea skips it): that field is left as it is.
 */
export async function editAccount(deps: AppDeps, actor: UserRow, user: UserRow, input: AccountEdit): Promise<UserRow> {
  const { username, reset_2fa, ...fields } = input
  if (actor.id === user.id) delete fields.prohibit_login
  const rename = username !== undefined && username !== user.name
  if (rename) {
    checkOwnerName(username, 'UserName')
    if (username.toLowerCase() !== user.lowerName) await assertNameFree(deps, username)
  }
  await checkUserEdit(deps, user, fields)
  if (rename) await renameUser(deps, user, username)
  const row = await editUser(deps, user, fields)
  if (reset_2fa) await removeTwoFactor(deps, user.id)
  return row
}

/**
 * Deletes an account from the site administration (Gitea's DeleteUser). Without `purge`,
 * `deleteUser`'s refusals (owns repositories, belongs to an organisation, oneself, the last
 * administrator). With it, as Gitea's purge: the user's repositories are deleted, they leave
 * every organisation, and those they are the last owner of are deleted with their repositories;
 * then the account. The refusals purge does not lift (oneself, the last administrator) are asked
 * before anything goes.
 */
export async function deleteAccount(deps: AppDeps, actor: UserRow, user: UserRow, purge: boolean): Promise<void> {
  if (!purge) return await deleteUser(deps, user, actor)
  if (user.id === actor.id) throw unprocessable('you cannot delete yourself')
  await assertNotLastAdmin(deps, user)
  await deleteReposOf(deps, actor, user.id)
  const memberships = await deps.db.select({ org: users }).from(orgUsers).innerJoin(users, eq(users.id, orgUsers.orgId)).where(eq(orgUsers.uid, user.id))
  for (const { org } of memberships) {
    if ((await isOrgOwner(deps, org.id, user.id)) && (await ownersCount(deps, org.id)) <= 1) {
      await deleteReposOf(deps, actor, org.id)
      await deleteOrganization(deps, org)
    } else await removeFromOrg(deps, org, user)
  }
  await deleteUser(deps, await accountById(deps, user.id), actor)
}

/** Deletes every repository `ownerId` has, each through the one repository deletion (as its owner would). */
async function deleteReposOf(deps: AppDeps, actor: UserRow, ownerId: number): Promise<void> {
  const owned = await deps.db.select().from(repositories).where(eq(repositories.ownerId, ownerId)).orderBy(asc(repositories.id))
  for (const repo of owned) await deleteRepository(deps, repo, AccessMode.Owner, actor)
}
