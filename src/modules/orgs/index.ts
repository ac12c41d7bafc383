import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type Respond, type AreaApp } from '../../auth/pipeline'
import type { UserRow } from '../../auth/caller'
import { toApiOrg, toApiUser } from '../../convert/user'
import { toApiRepo, reposToApi } from '../../convert/repo'
import { PageQuery, type Page } from '../../lib/pagination'
import { apiUrl } from '../../lib/urls'
import { UserSchema, UsernameParams } from '../users/model'
import { CreateRepoOption, RepositorySchema } from '../repos/model'
import { newRepoFromOption } from '../repos/create'
import { getUserByName, getVisibleUserByName } from '../users/service'
import { CreateOrgOption, EditOrgOption, OrganizationPermissionsSchema, OrgMemberParams, OrganizationSchema, OrgParams, UserOrgParams } from './model'
import { orgPermissionsOf } from './permissions'
import {
  checkMembership,
  createOrganization,
  createOrgRepo,
  deleteOrganization,
  editOrganization,
  listMembers,
  listAllOrgs,
  listOrgRepos,
  listOrgsOfUser,
  removeMember,
  requireMayCreateOrg,
  requirePublicMember,
  setMemberVisibility,
} from './service'
import type { OrgContext } from '../../auth/org-context'

const NoContent = { 204: t.Void({ description: 'no content' }) }
const Orgs = t.Array(OrganizationSchema)
const Users = t.Array(UserSchema)

/** Organisations, members, public members, organisation repositories. */
export const orgsModule = (deps: AppDeps, api: AreaApp) => {
  const { config } = deps

  /** Shared by the seed's `/org/{org}/repos` and Gitea's `/orgs/{org}/repos` (signed-in members). */
  const createRepoHandler = async ({ body, status, user, org }: {
    body: typeof CreateRepoOption.static
    status: (code: 201, value: ReturnType<typeof toApiRepo>) => unknown
    user: UserRow
    org: OrgContext
  }) => {
    const { repo, mode } = await createOrgRepo(deps, org, { ...newRepoFromOption(body), creator: user })
    return status(201, toApiRepo(config, repo, org.org, user, mode))
  }
  /** Members (all for members, public ones for others), or only the public ones. */
  const membersHandler =
    (publicOnly: boolean) =>
    async ({ org, page, respond }: { org: OrgContext; page: Page; respond: Respond }) =>
      respond(await listMembers(deps, org.viewer, org.org, publicOnly || !org.member, page), (rows) => rows.map((u) => toApiUser(config, u, org.viewer)))
  const membersSchema = { org: 'visible', paged: true, params: OrgParams, query: PageQuery, response: { 200: Users } } as const
  /** Publicize (`isPublic`) or conceal a membership (the service decides who may: see the route). */
  const visibilityHandler =
    (isPublic: boolean) =>
    async ({ params, set, org }: { params: { username: string }; set: { status?: number | string }; org: OrgContext }) => {
      await setMemberVisibility(deps, org, await getUserByName(deps, params.username), isPublic)
      set.status = 204
    }
  // `org: 'visible'`, not 'member': the service's membership check (403) comes after the unknown
  // user's 404, as it always has.
  const memberSchema = { signed: true, org: 'visible', params: OrgMemberParams, response: NoContent } as const
  const createRepoSchema = { signed: true, org: 'member', params: OrgParams, body: CreateRepoOption, response: { 201: RepositorySchema } } as const

  return area(api, { tags: ['organization'] })
    .post(
      '/orgs',
      async ({ user, body, status }) => {
        requireMayCreateOrg(user)
        return status(201, toApiOrg(config, await createOrganization(deps, user, body), user))
      },
      { scope: 'organization', signed: true, body: CreateOrgOption, response: { 201: OrganizationSchema }, detail: { operationId: 'orgCreate', summary: 'Create an organization' } },
    )
    .get(
      '/orgs',
      async ({ caller, page, respond }) => respond(await listAllOrgs(deps, caller.user, page), (rows) => rows.map((o) => toApiOrg(config, o, caller.user))),
      {
        scope: 'organization',
        caller: true,
        paged: true,
        query: PageQuery,
        response: { 200: Orgs },
        detail: { operationId: 'orgGetAll', summary: 'Get the organizations the caller may see' },
      },
    )
    .get(
      '/user/orgs',
      async ({ user, page, respond }) => respond(await listOrgsOfUser(deps, user, user, page), (rows) => rows.map((o) => toApiOrg(config, o, user))),
      {
        scope: ['user', 'organization'],
        signed: true,
        paged: true,
        query: PageQuery,
        response: { 200: Orgs },
        detail: { operationId: 'orgListCurrentUserOrgs', summary: "List the current user's organizations" },
      },
    )
    .get(
      '/users/:username/orgs/:org/permissions',
      async ({ params, org, user }) => await orgPermissionsOf(deps, org.org, await getVisibleUserByName(deps, params.username, user)),
      {
        scope: ['user', 'organization'],
        org: 'visible',
        signed: true,
        params: UserOrgParams,
        response: { 200: OrganizationPermissionsSchema },
        detail: { operationId: 'orgGetUserPermissions', summary: "Get a person's permissions in an organization" },
      },
    )
    .get(
      '/users/:username/orgs',
      async ({ caller, params, page, respond }) => {
        const viewer = caller.user
        const user = await getVisibleUserByName(deps, params.username, viewer)
        return respond(await listOrgsOfUser(deps, user, viewer, page), (rows) => rows.map((o) => toApiOrg(config, o, viewer)))
      },
      {
        scope: ['user', 'organization'],
        caller: true,
        paged: true,
        params: UsernameParams,
        query: PageQuery,
        response: { 200: Orgs },
        detail: { operationId: 'orgListUserOrgs', summary: "List a user's organizations" },
      },
    )
    .get(
      '/orgs/:org',
      ({ org }) => toApiOrg(config, org.org, org.viewer),
      { scope: 'organization', org: 'visible', params: OrgParams, response: { 200: OrganizationSchema }, detail: { operationId: 'orgGet', summary: 'Get an organization' } },
    )
    .patch(
      '/orgs/:org',
      async ({ body, org, user }) => toApiOrg(config, await editOrganization(deps, org.org, body), user),
      {
        scope: 'organization',
        signed: true,
        org: 'owner',
        params: OrgParams,
        body: EditOrgOption,
        response: { 200: OrganizationSchema },
        detail: { operationId: 'orgEdit', summary: 'Edit an organization' },
      },
    )
    .delete(
      '/orgs/:org',
      async ({ org, set }) => {
        await deleteOrganization(deps, org.org)
        set.status = 204
      },
      { scope: 'organization', signed: true, org: 'owner', params: OrgParams, response: NoContent, detail: { operationId: 'orgDelete', summary: 'Delete an organization' } },
    )
    .get('/orgs/:org/members', membersHandler(false), {
      scope: 'organization',
      ...membersSchema,
      detail: { operationId: 'orgListMembers', summary: "List an organization's members" },
    })
    .get(
      '/orgs/:org/members/:username',
      async ({ params, set, redirect, user: viewer, org }) => {
        const target = await getVisibleUserByName(deps, params.username, viewer)
        if (await checkMembership(deps, org, viewer, target) === 'ask-public')
          return redirect(
            apiUrl(config, `orgs/${encodeURIComponent(org.org.name)}/public_members/${encodeURIComponent(target.name)}`),
            302,
          )
        set.status = 204
      },
      {
        scope: 'organization',
        signed: true,
        org: 'visible',
        params: OrgMemberParams,
        response: { ...NoContent, 302: t.Void({ description: 'redirect to the public-membership check' }) },
        detail: { operationId: 'orgIsMember', summary: 'Check if a user is a member of an organization' },
      },
    )
    .delete(
      '/orgs/:org/members/:username',
      async ({ params, set, org }) => {
        await removeMember(deps, org, await getUserByName(deps, params.username))
        set.status = 204
      },
      {
        scope: 'organization',
        signed: true,
        org: 'owner',
        params: OrgMemberParams,
        response: NoContent,
        detail: { operationId: 'orgDeleteMember', summary: 'Remove a member from an organization' },
      },
    )
    .get('/orgs/:org/public_members', membersHandler(true), {
      scope: 'organization',
      ...membersSchema,
      detail: { operationId: 'orgListPublicMembers', summary: "List an organization's public members" },
    })
    .get(
      '/orgs/:org/public_members/:username',
      async ({ params, set, org }) => {
        await requirePublicMember(deps, org, await getVisibleUserByName(deps, params.username, org.viewer))
        set.status = 204
      },
      {
        scope: 'organization',
        org: 'visible',
        params: OrgMemberParams,
        response: NoContent,
        detail: { operationId: 'orgIsPublicMember', summary: 'Check if a user is a public member of an organization' },
      },
    )
    .put('/orgs/:org/public_members/:username', visibilityHandler(true), {
      scope: 'organization',
      ...memberSchema,
      detail: { operationId: 'orgPublicizeMember', summary: "Publicize a user's membership" },
    })
    .delete('/orgs/:org/public_members/:username', visibilityHandler(false), {
      scope: 'organization',
      ...memberSchema,
      detail: { operationId: 'orgConcealMember', summary: "Conceal a user's membership" },
    })
    .get(
      '/orgs/:org/repos',
      async ({ org, page, respond }) => respond(await listOrgRepos(deps, org.org, org.viewer, page), async (rows) => await reposToApi(deps, org.viewer, rows)),
      {
        scope: 'organization',
        org: 'visible',
        paged: true,
        params: OrgParams,
        query: PageQuery,
        response: { 200: t.Array(RepositorySchema) },
        detail: { operationId: 'orgListRepos', summary: "List an organization's repositories" },
      },
    )
    .post('/org/:org/repos', createRepoHandler, {
      scope: ['organization', 'repository'],
      ...createRepoSchema,
      detail: { operationId: 'createOrgRepo', summary: 'Create a repository in an organization (the seed path)' },
    })
    .post('/orgs/:org/repos', createRepoHandler, {
      scope: 'organization',
      ...createRepoSchema,
      detail: { operationId: 'orgCreateRepo', summary: 'Create a repository in an organization' },
    })
}
