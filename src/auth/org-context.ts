import { and, eq, sql } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import type { Db } from '../db/client'
import { orgUsers, teams, teamUsers, users } from '../db/schema'
import { forbidden, notFound, unauthorized } from '../lib/errors'
import { AccessMode } from './access-mode'
import type { UserRow } from './caller'
import { ownerVisible } from './visibility'

/*
 * An organisation named in a path, beside repo-context.ts: loading it as the caller may see it
 * (the visibility rule's owner part) and the caller's role in it, member or owner, which the
 * pipeline's `org` need and the services that act for an organisation check.
 */

export type OrgRow = UserRow

/** What the caller is in an organisation; site administrators count as owners. */
export interface OrgRole {
  member: boolean
  owner: boolean
}

/** An organisation the caller may see, with the caller's role in it. */
export interface OrgContext extends OrgRole {
  org: OrgRow
  viewer: UserRow | null
}

const statements = new WeakMap<Db, ReturnType<typeof prepareStatements>>()

function prepareStatements(db: Db) {
  return {
    orgByLowerName: db
      .select()
      .from(users)
      .where(and(eq(users.lowerName, sql.placeholder('name')), eq(users.type, 1)))
      .prepare(),
    membership: db
      .select()
      .from(orgUsers)
      .where(and(eq(orgUsers.orgId, sql.placeholder('org')), eq(orgUsers.uid, sql.placeholder('uid'))))
      .prepare(),
    ownerTeamMembership: db
      .select({ id: teamUsers.id })
      .from(teamUsers)
      .innerJoin(teams, eq(teams.id, teamUsers.teamId))
      .where(
        and(
          eq(teamUsers.orgId, sql.placeholder('org')),
          eq(teamUsers.uid, sql.placeholder('uid')),
          sql`${teams.authorize} >= ${AccessMode.Owner}`,
        ),
      )
      .prepare(),
  }
}

function stmts(db: Db) {
  let s = statements.get(db)
  if (!s) {
    s = prepareStatements(db)
    statements.set(db, s)
  }
  return s
}

/** An organisation by name (case-insensitive), or undefined. */
async function findOrgByName(deps: AppDeps, name: string): Promise<OrgRow | undefined> {
  return (await stmts(deps.db).orgByLowerName.execute({ name: name.toLowerCase() }))[0]
}

/** The org_users row of `uid` in `orgId`, if any. */
export async function membershipOf(deps: AppDeps, orgId: number, uid: number) {
  return (await stmts(deps.db).membership.execute({ org: orgId, uid }))[0]
}

export const isOrgMember = async (deps: AppDeps, orgId: number, uid: number): Promise<boolean> => await membershipOf(deps, orgId, uid) !== undefined

/** Member of the organisation's Owners team. */
export const isOrgOwner = async (deps: AppDeps, orgId: number, uid: number): Promise<boolean> =>
  (await stmts(deps.db).ownerTeamMembership.execute({ org: orgId, uid }))[0] !== undefined

export async function orgRole(deps: AppDeps, org: OrgRow, viewer: UserRow | null): Promise<OrgRole> {
  if (!viewer) return { member: false, owner: false }
  if (viewer.isAdmin) return { member: true, owner: true }
  const member = await isOrgMember(deps, org.id, viewer.id)
  return { member, owner: member && await isOrgOwner(deps, org.id, viewer.id) }
}

/** The organisation named in a path, as the caller may see it; 404 when unknown or hidden. */
export async function loadOrg(deps: AppDeps, name: string, viewer: UserRow | null): Promise<OrgContext> {
  const org = await findOrgByName(deps, name)
  if (!org) throw notFound(`organization does not exist [name: ${name}]`)
  const role = await orgRole(deps, org, viewer)
  if (!ownerVisible(org, viewer, { member: role.member, personal: false })) throw notFound(`organization does not exist [name: ${name}]`)
  return { org, viewer, ...role }
}

/** 401 for anonymous callers, 403 for callers who are not members. */
export function requireOrgMember(ctx: OrgContext): UserRow {
  if (!ctx.viewer) throw unauthorized()
  if (!ctx.member) throw forbidden('You must be a member of this organization')
  return ctx.viewer
}

/** 401 for anonymous callers, 403 for callers who are not owners. */
export function requireOrgOwner(ctx: OrgContext): UserRow {
  if (!ctx.viewer) throw unauthorized()
  if (!ctx.owner) throw forbidden('You must be an owner of this organization')
  return ctx.viewer
}
