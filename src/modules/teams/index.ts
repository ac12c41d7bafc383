import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import type { TeamContext } from '../../auth/team-context'
import type { RepoContext } from '../../auth/repo-context'
import { toApiUser } from '../../convert/user'
import { notFound } from '../../lib/errors'
import { PageQuery } from '../../lib/pagination'
import { UserSchema } from '../users/model'
import { RepositorySchema } from '../repos/model'
import { reposToApi } from '../../convert/repo'
import { OrgParams } from '../orgs/model'
import { getUserByName, getVisibleUserByName } from '../users/service'
import { CreateTeamOption, EditTeamOption, RepoTeamParams, TeamMemberParams, TeamParams, TeamRepoParams, TeamSchema, TeamSearchQuery, TeamSearchResult } from './model'
import { RepoParams } from '../repos/model'
import { queryBool } from '../../lib/validate'
import { teamsToApi, teamToApi } from '../../convert/team'
import {
  addTeamMember,
  addTeamRepo,
  changeRepoTeam,
  createTeam,
  deleteTeam,
  editTeam,
  getTeamRepo,
  isTeamMember,
  listOrgTeams,
  listRepoTeams,
  listTeamMembers,
  listTeamRepos,
  listUserTeams,
  removeTeamMember,
  removeTeamRepo,
  repoTeam,
  searchOrgTeams,
} from './service'

const NoContent = { 204: t.Void({ description: 'no content' }) }

/** Teams, team members and team repositories. */
export const teamsModule = (deps: AppDeps, api: AreaApp) => {
  const { config } = deps
  /** Adds or removes a team member (owners only). */
  const memberChange =
    (change: typeof addTeamMember) =>
    async ({ params, set, team }: { params: { username: string }; set: { status?: number | string }; team: TeamContext }) => {
      await change(deps, team, await getUserByName(deps, params.username))
      set.status = 204
    }
  /** Gives a repository of the organisation to the team, or takes it back (org member with admin on the repository). */
  const repoChange =
    (change: typeof addTeamRepo) =>
    async ({ params, set, team }: { params: { org: string; repo: string }; set: { status?: number | string }; team: TeamContext }) => {
      await change(deps, team, params.org, params.repo)
      set.status = 204
    }

  /** Gives the repository to a team or takes it back (repository admins, as `changeRepoTeam` allows). */
  const repoTeamChange =
    (add: boolean) =>
    async ({ params, set, repo }: { params: { team: string }; set: { status?: number | string }; repo: RepoContext }) => {
      await changeRepoTeam(deps, repo, params.team, add)
      set.status = 204
    }

  return area(api, { tags: ['organization'] })
    .get(
      '/orgs/:org/teams/search',
      async ({ org, query, page, respond }) => {
        const includeDescription = query.include_desc === undefined || query.include_desc === '' || queryBool(query.include_desc, 'include_desc')
        const found = await searchOrgTeams(deps, org.org, query.q ?? '', includeDescription, page)
        return { ok: true, data: await respond(found, (rows) => teamsToApi(deps, rows, org.viewer)) }
      },
      {
        scope: 'organization',
        signed: true,
        org: 'member',
        paged: true,
        params: OrgParams,
        query: TeamSearchQuery,
        response: { 200: TeamSearchResult },
        detail: { operationId: 'teamSearch', summary: "Search an organization's teams" },
      },
    )
    .get(
      '/repos/:owner/:repo/teams',
      async ({ repo }) => await teamsToApi(deps, await listRepoTeams(deps, repo), repo.caller.user),
      {
        scope: 'repository',
        repo: { level: 'read' },
        signed: true,
        params: RepoParams,
        response: { 200: t.Array(TeamSchema) },
        detail: { operationId: 'repoListTeams', summary: 'List the teams with access to a repository', tags: ['repository'] },
      },
    )
    .get(
      '/repos/:owner/:repo/teams/:team',
      async ({ repo, params }) => await teamToApi(deps, await repoTeam(deps, repo, params.team), repo.owner, repo.caller.user),
      {
        scope: 'repository',
        repo: { level: 'read' },
        signed: true,
        params: RepoTeamParams,
        response: { 200: TeamSchema },
        detail: { operationId: 'repoCheckTeam', summary: 'Check whether a team has access to a repository', tags: ['repository'] },
      },
    )
    .put('/repos/:owner/:repo/teams/:team', repoTeamChange(true), {
      scope: 'repository',
      repo: { level: 'admin' },
      signed: true,
      params: RepoTeamParams,
      response: NoContent,
      detail: { operationId: 'repoAddTeam', summary: 'Give a team access to a repository', tags: ['repository'] },
    })
    .delete('/repos/:owner/:repo/teams/:team', repoTeamChange(false), {
      scope: 'repository',
      repo: { level: 'admin' },
      signed: true,
      params: RepoTeamParams,
      response: NoContent,
      detail: { operationId: 'repoDeleteTeam', summary: "Take a team's access to a repository away", tags: ['repository'] },
    })
    .get(
      '/orgs/:org/teams',
      async ({ org, page, respond }) => respond(await listOrgTeams(deps, org.org, page), async (rows) => await teamsToApi(deps, rows, org.viewer, org.org)),
      { scope: 'organization', signed: true, org: 'member', paged: true, params: OrgParams, query: PageQuery, response: { 200: t.Array(TeamSchema) }, detail: { operationId: 'orgListTeams', summary: "List an organization's teams" } },
    )
    .post(
      '/orgs/:org/teams',
      async ({ body, status, org }) => status(201, await teamToApi(deps, await createTeam(deps, org, body), org.org, org.viewer)),
      { scope: 'organization', signed: true, org: 'owner', params: OrgParams, body: CreateTeamOption, response: { 201: TeamSchema }, detail: { operationId: 'orgCreateTeam', summary: 'Create a team' } },
    )
    .get(
      '/user/teams',
      async ({ user, page, respond }) => respond(await listUserTeams(deps, user, page), async (rows) => await teamsToApi(deps, rows, user)),
      { scope: 'user', signed: true, paged: true, query: PageQuery, response: { 200: t.Array(TeamSchema) }, detail: { operationId: 'userListTeams', summary: "List the current user's teams", tags: ['user'] } },
    )
    .get(
      '/teams/:id',
      async ({ team }) => await teamToApi(deps, team.team, team.org, team.viewer),
      { scope: 'organization', team: 'member', params: TeamParams, response: { 200: TeamSchema }, detail: { operationId: 'orgGetTeam', summary: 'Get a team' } },
    )
    .patch(
      '/teams/:id',
      async ({ body, team }) => await teamToApi(deps, await editTeam(deps, team, body), team.org, team.viewer),
      { scope: 'organization', team: 'owner', params: TeamParams, body: EditTeamOption, response: { 200: TeamSchema }, detail: { operationId: 'orgEditTeam', summary: 'Edit a team' } },
    )
    .delete(
      '/teams/:id',
      async ({ set, team }) => {
        await deleteTeam(deps, team)
        set.status = 204
      },
      { scope: 'organization', team: 'owner', params: TeamParams, response: NoContent, detail: { operationId: 'orgDeleteTeam', summary: 'Delete a team' } },
    )
    .get(
      '/teams/:id/members',
      async ({ team, page, respond }) => respond(await listTeamMembers(deps, team.viewer, team.team, page), (rows) => rows.map((u) => toApiUser(config, u, team.viewer))),
      {
        scope: 'organization',
        team: 'member',
        paged: true,
        params: TeamParams,
        query: PageQuery,
        response: { 200: t.Array(UserSchema) },
        detail: { operationId: 'orgListTeamMembers', summary: "List a team's members" },
      },
    )
    .get(
      '/teams/:id/members/:username',
      async ({ params, team }) => {
        const user = await getVisibleUserByName(deps, params.username, team.viewer)
        if (!await isTeamMember(deps, team.team, user)) throw notFound(`${user.name} is not a member of team ${team.team.name}`)
        return toApiUser(config, user, team.viewer)
      },
      { scope: 'organization', team: 'member', params: TeamMemberParams, response: { 200: UserSchema }, detail: { operationId: 'orgListTeamMember', summary: 'Get a member of a team' } },
    )
    .put('/teams/:id/members/:username', memberChange(addTeamMember), {
      scope: 'organization',
      team: 'owner',
      params: TeamMemberParams,
      response: NoContent,
      detail: { operationId: 'orgAddTeamMember', summary: 'Add a team member' },
    })
    .delete('/teams/:id/members/:username', memberChange(removeTeamMember), {
      scope: 'organization',
      team: 'owner',
      params: TeamMemberParams,
      response: NoContent,
      detail: { operationId: 'orgRemoveTeamMember', summary: 'Remove a team member' },
    })
    .get(
      '/teams/:id/repos',
      async ({ team, page, respond }) => respond(await listTeamRepos(deps, team, page), async (rows) => await reposToApi(deps, team.viewer, rows)),
      {
        scope: 'organization',
        team: 'member',
        paged: true,
        params: TeamParams,
        query: PageQuery,
        response: { 200: t.Array(RepositorySchema) },
        detail: { operationId: 'orgListTeamRepos', summary: "List a team's repositories" },
      },
    )
    .get(
      '/teams/:id/repos/:org/:repo',
      async ({ params, team }) => (await reposToApi(deps, team.viewer, [await getTeamRepo(deps, team, params.org, params.repo)]))[0]!,
      {
        scope: 'organization',
        team: 'member',
        params: TeamRepoParams,
        response: { 200: RepositorySchema },
        detail: { operationId: 'orgListTeamRepo', summary: 'List a particular repository of a team (404 unless the team covers it)' },
      },
    )
    .put('/teams/:id/repos/:org/:repo', repoChange(addTeamRepo), {
      scope: 'organization',
      team: 'member',
      params: TeamRepoParams,
      response: NoContent,
      detail: { operationId: 'orgAddTeamRepository', summary: 'Add a repository to a team' },
    })
    .delete('/teams/:id/repos/:org/:repo', repoChange(removeTeamRepo), {
      scope: 'organization',
      team: 'member',
      params: TeamRepoParams,
      response: NoContent,
      detail: { operationId: 'orgRemoveTeamRepository', summary: 'Remove a repository from a team' },
    })
}
