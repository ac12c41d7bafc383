import { Elysia } from 'elysia'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import { activitiesToApi } from '../../convert/activity'
import { RepoParams } from '../repos/model'
import { OrgParams } from '../orgs/model'
import { TeamParams } from '../teams/model'
import { UsernameParams } from '../users/model'
import { getVisibleUserByName } from '../users/service'
import { ActivityList, FeedQuery, UserFeedQuery } from './model'
import { listFeed } from './service'

/** What Gitea's FormBool (Go's strconv.ParseBool) reads as true; anything else is false. */
const GO_TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True'])

/** Activity feeds (Gitea's `…/activities/feeds`): a user's, an organisation's, a team's, a repository's. */
export const activitiesModule = (deps: AppDeps) =>
  new Elysia({ name: 'activities' })
    .use(pipeline(deps))
    .get(
      '/users/:username/activities/feeds',
      async ({ caller, params, query, page, respond }) => {
        const viewer = caller.user
        const user = await getVisibleUserByName(deps, params.username, viewer, 'owner')
        // Gitea: private repositories' actions only for the user themself and site administrators.
        const includePrivate = !!viewer && !viewer.publicOnly && (viewer.isAdmin || viewer.id === user.id)
        const of = { user, onlyPerformedBy: GO_TRUE.has(query['only-performed-by'] ?? '') }
        return respond(await listFeed(deps, viewer, of, { includePrivate, date: query.date }, page), async (rows) => await activitiesToApi(deps, viewer, rows, () => user.id))
      },
      {
        scope: 'user',
        caller: true,
        paged: true,
        params: UsernameParams,
        query: UserFeedQuery,
        response: { 200: ActivityList },
        detail: { operationId: 'userListActivityFeeds', summary: "List a user's activity feeds", tags: ['user'] },
      },
    )
    .get(
      '/orgs/:org/activities/feeds',
      async ({ org, query, page, respond }) => {
        // Gitea: private repositories' actions for the organisation's members and site administrators.
        const includePrivate = !!org.viewer && !org.viewer.publicOnly && (org.viewer.isAdmin || org.member)
        return respond(await listFeed(deps, org.viewer, { user: org.org, onlyPerformedBy: false }, { includePrivate, date: query.date }, page), async (rows) =>
          await activitiesToApi(deps, org.viewer, rows, () => org.org.id))
      },
      {
        scope: 'organization',
        org: 'visible',
        paged: true,
        params: OrgParams,
        query: FeedQuery,
        response: { 200: ActivityList },
        detail: { operationId: 'orgListActivityFeeds', summary: "List an organization's activity feeds", tags: ['organization'] },
      },
    )
    .get(
      '/teams/:id/activities/feeds',
      async ({ team, query, page, respond }) =>
        respond(await listFeed(deps, team.viewer, { team: team.team, org: team.org }, { includePrivate: true, date: query.date }, page), async (rows) =>
          await activitiesToApi(deps, team.viewer, rows, () => team.org.id)),
      {
        scope: 'organization',
        team: 'member',
        paged: true,
        params: TeamParams,
        query: FeedQuery,
        response: { 200: ActivityList },
        detail: { operationId: 'orgListTeamActivityFeeds', summary: "List a team's activity feeds", tags: ['organization'] },
      },
    )
    .get(
      '/repos/:owner/:repo/activities/feeds',
      async ({ repo, query, page, respond }) =>
        respond(await listFeed(deps, repo.caller.user, { repo: repo.repo }, { includePrivate: true, date: query.date }, page), async (rows) =>
          await activitiesToApi(deps, repo.caller.user, rows, (row) => row.event.actorId ?? 0)),
      {
        scope: 'repository',
        repo: { level: 'read' },
        paged: true,
        params: RepoParams,
        query: FeedQuery,
        response: { 200: ActivityList },
        detail: { operationId: 'repoListActivityFeeds', summary: "List a repository's activity feeds", tags: ['repository'] },
      },
    )
