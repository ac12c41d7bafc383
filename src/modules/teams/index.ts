import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { requireUser } from '../../auth/caller'
import { toApiUser } from '../../lib/convert/user'
import { notFound } from '../../lib/errors'
import { PageQuery, pageOf, setPageHeaders } from '../../lib/pagination'
import { UserSchema } from '../users/model'
import { RepositorySchema } from '../repos/model'
import { reposToApi } from '../repos/service'
import { OrgParams } from '../orgs/model'
import { loadOrg, requireOrgMember } from '../orgs/service'
import { getUserByName, getVisibleUserByName } from '../users/service'
import { CreateTeamOption, EditTeamOption, TeamMemberParams, TeamParams, TeamRepoParams, TeamSchema } from './model'
import {
  addTeamMember,
  addTeamRepo,
  createTeam,
  deleteTeam,
  editTeam,
  isTeamMember,
  listOrgTeams,
  listTeamMembers,
  listTeamRepos,
  listUserTeams,
  loadTeam,
  removeTeamMember,
  removeTeamRepo,
  teamsToApi,
  toApiTeam,
} from './service'

const NoContent = { 204: t.Void({ description: 'no content' }) }

/** Teams, team members and team repositories (issue 4). */
export const teamsModule = (deps: AppDeps) => {
  const { config } = deps
  const team = async (request: Request, id: string) => loadTeam(deps, id, (await deps.auth.caller(request)).user)
  /** Adds or removes a team member (owners only). */
  const memberChange =
    (change: typeof addTeamMember) =>
    async ({ request, params, set }: { request: Request; params: { id: string; username: string }; set: { status?: number | string } }) => {
      change(deps, await team(request, params.id), getUserByName(deps, params.username))
      set.status = 204
    }
  /** Gives a repository of the organisation to the team, or takes it back (org member with admin on the repository). */
  const repoChange =
    (change: typeof addTeamRepo) =>
    async ({ request, params, set }: { request: Request; params: { id: string; org: string; repo: string }; set: { status?: number | string } }) => {
      change(deps, await team(request, params.id), params.org, params.repo)
      set.status = 204
    }

  return new Elysia({ name: 'teams', detail: { tags: ['organization'] } })
    .get(
      '/orgs/:org/teams',
      async ({ request, params, query, set }) => {
        const ctx = loadOrg(deps, params.org, requireUser(await deps.auth.caller(request)))
        requireOrgMember(ctx)
        const page = pageOf(query)
        const { rows, total } = listOrgTeams(deps, ctx.org, page)
        setPageHeaders(set, config, request, page, total)
        return rows.map((r) => toApiTeam(config, r, ctx.org, ctx.viewer))
      },
      { params: OrgParams, query: PageQuery, response: { 200: t.Array(TeamSchema) }, detail: { operationId: 'orgListTeams', summary: "List an organization's teams" } },
    )
    .post(
      '/orgs/:org/teams',
      async ({ request, params, body, status }) => {
        const ctx = loadOrg(deps, params.org, requireUser(await deps.auth.caller(request)))
        return status(201, toApiTeam(config, createTeam(deps, ctx, body), ctx.org, ctx.viewer))
      },
      { params: OrgParams, body: CreateTeamOption, response: { 201: TeamSchema }, detail: { operationId: 'orgCreateTeam', summary: 'Create a team' } },
    )
    .get(
      '/user/teams',
      async ({ request, query, set }) => {
        const user = requireUser(await deps.auth.caller(request))
        const page = pageOf(query)
        const { rows, total } = listUserTeams(deps, user, page)
        setPageHeaders(set, config, request, page, total)
        return teamsToApi(deps, rows, user)
      },
      { query: PageQuery, response: { 200: t.Array(TeamSchema) }, detail: { operationId: 'userListTeams', summary: "List the current user's teams", tags: ['user'] } },
    )
    .get(
      '/teams/:id',
      async ({ request, params }) => {
        const ctx = await team(request, params.id)
        return toApiTeam(config, ctx.team, ctx.org, ctx.viewer)
      },
      { params: TeamParams, response: { 200: TeamSchema }, detail: { operationId: 'orgGetTeam', summary: 'Get a team' } },
    )
    .patch(
      '/teams/:id',
      async ({ request, params, body }) => {
        const ctx = await team(request, params.id)
        return toApiTeam(config, editTeam(deps, ctx, body), ctx.org, ctx.viewer)
      },
      { params: TeamParams, body: EditTeamOption, response: { 200: TeamSchema }, detail: { operationId: 'orgEditTeam', summary: 'Edit a team' } },
    )
    .delete(
      '/teams/:id',
      async ({ request, params, set }) => {
        deleteTeam(deps, await team(request, params.id))
        set.status = 204
      },
      { params: TeamParams, response: NoContent, detail: { operationId: 'orgDeleteTeam', summary: 'Delete a team' } },
    )
    .get(
      '/teams/:id/members',
      async ({ request, params, query, set }) => {
        const ctx = await team(request, params.id)
        const page = pageOf(query)
        const { rows, total } = listTeamMembers(deps, ctx.viewer, ctx.team, page)
        setPageHeaders(set, config, request, page, total)
        return rows.map((u) => toApiUser(config, u, ctx.viewer))
      },
      {
        params: TeamParams,
        query: PageQuery,
        response: { 200: t.Array(UserSchema) },
        detail: { operationId: 'orgListTeamMembers', summary: "List a team's members" },
      },
    )
    .get(
      '/teams/:id/members/:username',
      async ({ request, params }) => {
        const ctx = await team(request, params.id)
        const user = getVisibleUserByName(deps, params.username, ctx.viewer)
        if (!isTeamMember(deps, ctx.team, user)) throw notFound(`${user.name} is not a member of team ${ctx.team.name}`)
        return toApiUser(config, user, ctx.viewer)
      },
      { params: TeamMemberParams, response: { 200: UserSchema }, detail: { operationId: 'orgListTeamMember', summary: 'Get a member of a team' } },
    )
    .put('/teams/:id/members/:username', memberChange(addTeamMember), {
      params: TeamMemberParams,
      response: NoContent,
      detail: { operationId: 'orgAddTeamMember', summary: 'Add a team member' },
    })
    .delete('/teams/:id/members/:username', memberChange(removeTeamMember), {
      params: TeamMemberParams,
      response: NoContent,
      detail: { operationId: 'orgRemoveTeamMember', summary: 'Remove a team member' },
    })
    .get(
      '/teams/:id/repos',
      async ({ request, params, query, set }) => {
        const ctx = await team(request, params.id)
        const page = pageOf(query)
        const { rows, total } = listTeamRepos(deps, ctx, page)
        setPageHeaders(set, config, request, page, total)
        return reposToApi(deps, ctx.viewer, rows)
      },
      {
        params: TeamParams,
        query: PageQuery,
        response: { 200: t.Array(RepositorySchema) },
        detail: { operationId: 'orgListTeamRepos', summary: "List a team's repositories" },
      },
    )
    .put('/teams/:id/repos/:org/:repo', repoChange(addTeamRepo), {
      params: TeamRepoParams,
      response: NoContent,
      detail: { operationId: 'orgAddTeamRepository', summary: 'Add a repository to a team' },
    })
    .delete('/teams/:id/repos/:org/:repo', repoChange(removeTeamRepo), {
      params: TeamRepoParams,
      response: NoContent,
      detail: { operationId: 'orgRemoveTeamRepository', summary: 'Remove a repository from a team' },
    })
}
