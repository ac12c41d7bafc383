import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { requireSiteAdmin, requireUser } from '../../auth/caller'
import { toApiOrg, toApiUser } from '../../lib/convert/user'
import { toApiRepo } from '../../lib/convert/repo'
import { PageQuery, pageOf, setPageHeaders } from '../../lib/pagination'
import { apiUrl } from '../../lib/urls'
import { UserSchema, UsernameParams } from '../users/model'
import { CreateRepoOption, RepositorySchema } from '../repos/model'
import { newRepoFromOption, reposToApi } from '../repos/service'
import { getUserByName, getVisibleUserByName } from '../users/service'
import { CreateOrgOption, EditOrgOption, OrgMemberParams, OrganizationSchema, OrgParams } from './model'
import {
  checkMembership,
  createOrganization,
  createOrgRepo,
  deleteOrganization,
  editOrganization,
  listAllOrgs,
  listMembers,
  listOrgRepos,
  listOrgsOfUser,
  loadOrg,
  removeMember,
  requireMayCreateOrg,
  requireOrgOwner,
  requirePublicMember,
  setMemberVisibility,
} from './service'

const NoContent = { 204: t.Void({ description: 'no content' }) }
const Orgs = t.Array(OrganizationSchema)
const Users = t.Array(UserSchema)

/** Organisations, members, public members, organisation repositories (issue 4). */
export const orgsModule = (deps: AppDeps) => {
  const { config } = deps
  const caller = (request: Request) => deps.auth.caller(request).then((c) => c.user)

  /** Shared by the seed's `/org/{org}/repos` and Gitea's `/orgs/{org}/repos`. */
  const createRepoHandler = async ({ request, params, body, status }: {
    request: Request
    params: { org: string }
    body: typeof CreateRepoOption.static
    status: (code: 201, value: ReturnType<typeof toApiRepo>) => unknown
  }) => {
    const viewer = requireUser(await deps.auth.caller(request))
    const ctx = loadOrg(deps, params.org, viewer)
    const { repo, mode } = await createOrgRepo(deps, ctx, { ...newRepoFromOption(body), creator: viewer })
    return status(201, toApiRepo(config, repo, ctx.org, viewer, mode))
  }
  /** Members (all for members, public ones for others), or only the public ones. */
  const membersHandler =
    (publicOnly: boolean) =>
    async ({ request, params, query, set }: { request: Request; params: { org: string }; query: { page?: number; limit?: number }; set: any }) => {
      const viewer = await caller(request)
      const ctx = loadOrg(deps, params.org, viewer)
      const page = pageOf(query)
      const { rows, total } = listMembers(deps, viewer, ctx.org, publicOnly || !ctx.member, page)
      setPageHeaders(set, config, request, page, total)
      return rows.map((u) => toApiUser(config, u, viewer))
    }
  const membersSchema = { params: OrgParams, query: PageQuery, response: { 200: Users } }
  /** Publicize (`isPublic`) or conceal a membership. */
  const visibilityHandler =
    (isPublic: boolean) =>
    async ({ request, params, set }: { request: Request; params: { org: string; username: string }; set: { status?: number | string } }) => {
      const ctx = loadOrg(deps, params.org, requireUser(await deps.auth.caller(request)))
      setMemberVisibility(deps, ctx, getUserByName(deps, params.username), isPublic)
      set.status = 204
    }
  const memberSchema = { params: OrgMemberParams, response: NoContent }
  const createRepoSchema = { params: OrgParams, body: CreateRepoOption, response: { 201: RepositorySchema } }

  return new Elysia({ name: 'orgs', detail: { tags: ['organization'] } })
    .post(
      '/admin/users/:username/orgs',
      async ({ request, params, body, status }) => {
        const admin = requireSiteAdmin(await deps.auth.caller(request))
        const owner = getUserByName(deps, params.username)
        return status(201, toApiOrg(config, createOrganization(deps, owner, body), admin))
      },
      {
        params: UsernameParams,
        body: CreateOrgOption,
        response: { 201: OrganizationSchema },
        detail: { operationId: 'adminCreateOrg', summary: 'Create an organization owned by a user', tags: ['admin'] },
      },
    )
    .get(
      '/admin/orgs',
      async ({ request, query, set }) => {
        const admin = requireSiteAdmin(await deps.auth.caller(request))
        const page = pageOf(query)
        const { rows, total } = listAllOrgs(deps, page)
        setPageHeaders(set, config, request, page, total)
        return rows.map((o) => toApiOrg(config, o, admin))
      },
      { query: PageQuery, response: { 200: Orgs }, detail: { operationId: 'adminGetAllOrgs', summary: 'List all organizations', tags: ['admin'] } },
    )
    .post(
      '/orgs',
      async ({ request, body, status }) => {
        const user = requireUser(await deps.auth.caller(request))
        requireMayCreateOrg(user)
        return status(201, toApiOrg(config, createOrganization(deps, user, body), user))
      },
      { body: CreateOrgOption, response: { 201: OrganizationSchema }, detail: { operationId: 'orgCreate', summary: 'Create an organization' } },
    )
    .get(
      '/user/orgs',
      async ({ request, query, set }) => {
        const user = requireUser(await deps.auth.caller(request))
        const page = pageOf(query)
        const { rows, total } = listOrgsOfUser(deps, user, user, page)
        setPageHeaders(set, config, request, page, total)
        return rows.map((o) => toApiOrg(config, o, user))
      },
      {
        query: PageQuery,
        response: { 200: Orgs },
        detail: { operationId: 'orgListCurrentUserOrgs', summary: "List the current user's organizations" },
      },
    )
    .get(
      '/users/:username/orgs',
      async ({ request, params, query, set }) => {
        const viewer = await caller(request)
        const user = getVisibleUserByName(deps, params.username, viewer)
        const page = pageOf(query)
        const { rows, total } = listOrgsOfUser(deps, user, viewer, page)
        setPageHeaders(set, config, request, page, total)
        return rows.map((o) => toApiOrg(config, o, viewer))
      },
      {
        params: UsernameParams,
        query: PageQuery,
        response: { 200: Orgs },
        detail: { operationId: 'orgListUserOrgs', summary: "List a user's organizations" },
      },
    )
    .get(
      '/orgs/:org',
      async ({ request, params }) => {
        const viewer = await caller(request)
        return toApiOrg(config, loadOrg(deps, params.org, viewer).org, viewer)
      },
      { params: OrgParams, response: { 200: OrganizationSchema }, detail: { operationId: 'orgGet', summary: 'Get an organization' } },
    )
    .patch(
      '/orgs/:org',
      async ({ request, params, body }) => {
        const ctx = loadOrg(deps, params.org, requireUser(await deps.auth.caller(request)))
        const owner = requireOrgOwner(ctx)
        return toApiOrg(config, editOrganization(deps, ctx.org, body), owner)
      },
      {
        params: OrgParams,
        body: EditOrgOption,
        response: { 200: OrganizationSchema },
        detail: { operationId: 'orgEdit', summary: 'Edit an organization' },
      },
    )
    .delete(
      '/orgs/:org',
      async ({ request, params, set }) => {
        const ctx = loadOrg(deps, params.org, requireUser(await deps.auth.caller(request)))
        requireOrgOwner(ctx)
        deleteOrganization(deps, ctx.org)
        set.status = 204
      },
      { params: OrgParams, response: NoContent, detail: { operationId: 'orgDelete', summary: 'Delete an organization' } },
    )
    .get('/orgs/:org/members', membersHandler(false), {
      ...membersSchema,
      detail: { operationId: 'orgListMembers', summary: "List an organization's members" },
    })
    .get(
      '/orgs/:org/members/:username',
      async ({ request, params, set, redirect }) => {
        const viewer = requireUser(await deps.auth.caller(request))
        const ctx = loadOrg(deps, params.org, viewer)
        const target = getVisibleUserByName(deps, params.username, viewer)
        if (checkMembership(deps, ctx, viewer, target) === 'ask-public')
          return redirect(
            apiUrl(config, `orgs/${encodeURIComponent(ctx.org.name)}/public_members/${encodeURIComponent(target.name)}`),
            302,
          )
        set.status = 204
      },
      {
        params: OrgMemberParams,
        response: { ...NoContent, 302: t.Void({ description: 'redirect to the public-membership check' }) },
        detail: { operationId: 'orgIsMember', summary: 'Check if a user is a member of an organization' },
      },
    )
    .delete(
      '/orgs/:org/members/:username',
      async ({ request, params, set }) => {
        const ctx = loadOrg(deps, params.org, requireUser(await deps.auth.caller(request)))
        requireOrgOwner(ctx)
        removeMember(deps, ctx, getUserByName(deps, params.username))
        set.status = 204
      },
      { params: OrgMemberParams, response: NoContent, detail: { operationId: 'orgDeleteMember', summary: 'Remove a member from an organization' } },
    )
    .get('/orgs/:org/public_members', membersHandler(true), {
      ...membersSchema,
      detail: { operationId: 'orgListPublicMembers', summary: "List an organization's public members" },
    })
    .get(
      '/orgs/:org/public_members/:username',
      async ({ request, params, set }) => {
        const ctx = loadOrg(deps, params.org, await caller(request))
        requirePublicMember(deps, ctx, getVisibleUserByName(deps, params.username, ctx.viewer))
        set.status = 204
      },
      {
        params: OrgMemberParams,
        response: NoContent,
        detail: { operationId: 'orgIsPublicMember', summary: 'Check if a user is a public member of an organization' },
      },
    )
    .put('/orgs/:org/public_members/:username', visibilityHandler(true), {
      ...memberSchema,
      detail: { operationId: 'orgPublicizeMember', summary: "Publicize a user's membership" },
    })
    .delete('/orgs/:org/public_members/:username', visibilityHandler(false), {
      ...memberSchema,
      detail: { operationId: 'orgConcealMember', summary: "Conceal a user's membership" },
    })
    .get(
      '/orgs/:org/repos',
      async ({ request, params, query, set }) => {
        const viewer = await caller(request)
        const ctx = loadOrg(deps, params.org, viewer)
        const page = pageOf(query)
        const { rows, total } = listOrgRepos(deps, ctx.org, viewer, page)
        setPageHeaders(set, config, request, page, total)
        return reposToApi(deps, viewer, rows)
      },
      {
        params: OrgParams,
        query: PageQuery,
        response: { 200: t.Array(RepositorySchema) },
        detail: { operationId: 'orgListRepos', summary: "List an organization's repositories" },
      },
    )
    .post('/org/:org/repos', createRepoHandler, {
      ...createRepoSchema,
      detail: { operationId: 'createOrgRepo', summary: 'Create a repository in an organization (the seed path)' },
    })
    .post('/orgs/:org/repos', createRepoHandler, {
      ...createRepoSchema,
      detail: { operationId: 'orgCreateRepo', summary: 'Create a repository in an organization' },
    })
}
