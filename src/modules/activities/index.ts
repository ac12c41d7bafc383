import type { TSchema } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type ScopeNeed, type AreaApp } from '../../auth/pipeline'
import { activitiesToApi } from '../../convert/activity'
import { RepoParams } from '../repos/model'
import { OrgParams } from '../orgs/model'
import { TeamParams } from '../teams/model'
import { UsernameParams } from '../users/model'
import { getVisibleUserByName } from '../users/service'
import { ActivityList, FeedQuery, UserFeedQuery } from './model'
import { listFeed, orgFeedIncludesPrivate, userFeedIncludesPrivate } from './service'

/** What Gitea's FormBool (Go's strconv.ParseBool) reads as true; anything else is false. */
const GO_TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True'])

/**
 * What a feed's route declares: its scope category (also its tag), the need that loads whose feed
 * it is (`need`: the caller, an organisation, a team, a repository), its params and query, its
 * operation id, and whose feed it is in its summary. A page of Activity records.
 */
const feedOptions = <const S extends ScopeNeed & string, const N extends object, P extends TSchema, Q extends TSchema>(
  scope: S,
  need: N,
  params: P,
  query: Q,
  operationId: string,
  whose: string,
) => ({ scope, ...need, paged: true as const, params, query, response: { 200: ActivityList }, detail: { operationId, summary: `List ${whose} activity feeds`, tags: [scope] } })

/** Activity feeds (Gitea's `…/activities/feeds`): a user's, an organisation's, a team's, a repository's. */
export const activitiesModule = (deps: AppDeps, api: AreaApp) =>
  area(api)
    .get(
      '/users/:username/activities/feeds',
      async ({ caller, params, query, page, respond }) => {
        const viewer = caller.user
        const user = await getVisibleUserByName(deps, params.username, viewer, 'owner')
        const includePrivate = userFeedIncludesPrivate(viewer, user)
        const of = { user, onlyPerformedBy: GO_TRUE.has(query['only-performed-by'] ?? '') }
        return respond(await listFeed(deps, viewer, of, { includePrivate, date: query.date }, page), async (rows) => await activitiesToApi(deps, viewer, rows, () => user.id))
      },
      feedOptions('user', { caller: true }, UsernameParams, UserFeedQuery, 'userListActivityFeeds', "a user's"),
    )
    .get(
      '/orgs/:org/activities/feeds',
      async ({ org, query, page, respond }) => {
        const includePrivate = orgFeedIncludesPrivate(org.viewer, org.member)
        return respond(await listFeed(deps, org.viewer, { user: org.org, onlyPerformedBy: false }, { includePrivate, date: query.date }, page), async (rows) =>
          await activitiesToApi(deps, org.viewer, rows, () => org.org.id))
      },
      feedOptions('organization', { org: 'visible' }, OrgParams, FeedQuery, 'orgListActivityFeeds', "an organization's"),
    )
    .get(
      '/teams/:id/activities/feeds',
      async ({ team, query, page, respond }) =>
        respond(await listFeed(deps, team.viewer, { team: team.team, org: team.org }, { includePrivate: true, date: query.date }, page), async (rows) =>
          await activitiesToApi(deps, team.viewer, rows, () => team.org.id)),
      feedOptions('organization', { team: 'member' }, TeamParams, FeedQuery, 'orgListTeamActivityFeeds', "a team's"),
    )
    .get(
      '/repos/:owner/:repo/activities/feeds',
      async ({ repo, query, page, respond }) =>
        respond(await listFeed(deps, repo.caller.user, { repo: repo.repo }, { includePrivate: true, date: query.date }, page), async (rows) =>
          await activitiesToApi(deps, repo.caller.user, rows, (row) => row.event.actorId ?? 0)),
      feedOptions('repository', { repo: { level: 'read' } }, RepoParams, FeedQuery, 'repoListActivityFeeds', "a repository's"),
    )
