import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { RepoParams } from '../repos/model'
import { AddTimeOption, IssueIdParams, StopwatchSchema, IssueParams, TimesQuery, TrackedTimeSchema } from '../issues/model'
import { pathNumber } from '../../lib/path-number'
import { findIssue } from '../issues/queries'
import { getVisibleUserByName } from '../users/service'
import { timesToApi, toApiStopwatch } from '../../convert/issue'
import { addTime, deleteTimes, listStopwatches, listTimes, requireTimeTracking, startStopwatch, stopStopwatch } from './service'

const TimeList = t.Array(TrackedTimeSchema)

/**
 * The needs of the routes that act on an issue for the signed-in caller (their time, their
 * stopwatch): the issue scope, the repository with its issue tracker readable, signed in, the
 * issue's params. Who may track time there is the service's rule (requireTracker).
 */
const callerOnIssue = { scope: 'issue', repo: { unit: 'issues' }, signed: true, params: IssueParams } as const

/** Tracked time. */
export const timesModule = (deps: AppDeps, api: AreaApp) => {
  // Paged in SQL: one issue's times whole unless a page is asked for; the lists of a repository
  // or a user, which grow without bound, page 1 of 30 when none is.
  const toApi = async (rows: Parameters<typeof timesToApi>[1]) => await timesToApi(deps, rows)
  return area(api, { tags: ['issue'] })
    .post(
      '/repos/:owner/:repo/issues/:index/times',
      async ({ params, body, repo, user }) => (await timesToApi(deps, [await addTime(deps, repo, pathNumber(params.index), user, body)]))[0]!,
      {
        ...callerOnIssue,
        body: AddTimeOption,
        response: { 200: TrackedTimeSchema },
        detail: { operationId: 'issueAddTime', summary: 'Add tracked time to an issue' },
      },
    )
    .post(
      '/repos/:owner/:repo/issues/:index/stopwatch/start',
      async ({ params, status, repo, user }) => {
        await startStopwatch(deps, repo, pathNumber(params.index), user)
        return status(201, '')
      },
      {
        ...callerOnIssue,
        response: { 201: t.String({ description: 'empty' }) },
        detail: { operationId: 'issueStartStopWatch', summary: "Start the caller's stopwatch on an issue (one running elsewhere is stopped)" },
      },
    )
    .post(
      '/repos/:owner/:repo/issues/:index/stopwatch/stop',
      async ({ params, status, repo, user }) => {
        await stopStopwatch(deps, repo, pathNumber(params.index), user, true)
        return status(201, '')
      },
      {
        ...callerOnIssue,
        response: { 201: t.String({ description: 'empty' }) },
        detail: { operationId: 'issueStopStopWatch', summary: "Stop the caller's stopwatch on an issue, recording its time" },
      },
    )
    .delete(
      '/repos/:owner/:repo/issues/:index/stopwatch/delete',
      async ({ params, status, repo, user }) => {
        await stopStopwatch(deps, repo, pathNumber(params.index), user, false)
        return status(204, undefined)
      },
      {
        ...callerOnIssue,
        response: { 204: t.Void() },
        detail: { operationId: 'issueDeleteStopWatch', summary: "Cancel the caller's stopwatch on an issue" },
      },
    )
    .get(
      '/user/stopwatches',
      async ({ user, page, respond }) =>
        respond(await listStopwatches(deps, user, page), async (rows) => rows.map((r) => toApiStopwatch(r.watch, r.issue, r.repo, r.seconds))),
      {
        scope: 'user',
        signed: true,
        paged: true,
        response: { 200: t.Array(StopwatchSchema) },
        detail: { operationId: 'userGetStopWatches', summary: "The signed-in user's running stopwatches" },
      },
    )
    .delete(
      '/repos/:owner/:repo/issues/:index/times',
      async ({ params, status, repo, user }) => {
        await deleteTimes(deps, repo, pathNumber(params.index), user)
        return status(204, undefined)
      },
      {
        ...callerOnIssue,
        response: { 204: t.Void() },
        detail: { operationId: 'issueResetTime', summary: "Delete the caller's tracked time on an issue" },
      },
    )
    .delete(
      '/repos/:owner/:repo/issues/:index/times/:id',
      async ({ params, status, repo, user }) => {
        await deleteTimes(deps, repo, pathNumber(params.index), user, pathNumber(params.id))
        return status(204, undefined)
      },
      {
        ...callerOnIssue,
        params: IssueIdParams,
        response: { 204: t.Void() },
        detail: { operationId: 'issueDeleteTime', summary: 'Delete one tracked time of an issue (its own user, or the site admin)' },
      },
    )
    .get(
      '/repos/:owner/:repo/issues/:index/times',
      async ({ params, query, repo, page, respond }) => {
        // Gitea's ListTrackedTimes answers 404 here when time tracking is off (the repository lists answer 400).
        requireTimeTracking(repo.repo, 404)
        const issue = await findIssue(deps, repo.repo.id, pathNumber(params.index))
        return respond(await listTimes(deps, { issueId: issue.id, since: query.since, before: query.before }, page), toApi)
      },
      {
        scope: 'issue',
        repo: { unit: 'issues' },
        pageIfAsked: true,
        params: IssueParams,
        query: TimesQuery,
        response: { 200: TimeList },
        detail: { operationId: 'issueTrackedTimes', summary: "List an issue's tracked times" },
      },
    )
    // Who may list a repository's times: anyone who can read it, as Gitea 1.3 (the seed's version)
    // and as the issue's rule for the tracker ("anyone who can read"). Gitea 1.11+ narrowed this to
    // signed-in callers seeing only their own times unless repository admin; not followed here,
    // because /times/{username} (1.3) answers any one user's times to readers anyway.
    .get(
      '/repos/:owner/:repo/times',
      async ({ query, repo, page, respond }) => {
        requireTimeTracking(repo.repo)
        return respond(await listTimes(deps, { repoId: repo.repo.id, since: query.since, before: query.before }, page), toApi)
      },
      {
        scope: 'repository',
        repo: { unit: 'issues' },
        paged: true,
        params: RepoParams,
        query: TimesQuery,
        response: { 200: TimeList },
        detail: { operationId: 'repoTrackedTimes', summary: "List a repository's tracked times" },
      },
    )
    .get(
      '/repos/:owner/:repo/times/:username',
      async ({ params, query, repo, page, respond }) => {
        requireTimeTracking(repo.repo)
        const user = await getVisibleUserByName(deps, params.username, repo.caller.user)
        return respond(await listTimes(deps, { repoId: repo.repo.id, userId: user.id, since: query.since, before: query.before }, page), toApi)
      },
      {
        scope: 'repository',
        repo: { unit: 'issues' },
        paged: true,
        params: t.Object({ owner: t.String(), repo: t.String(), username: t.String() }),
        query: TimesQuery,
        response: { 200: TimeList },
        detail: { operationId: 'userTrackedTimes', summary: "List a user's tracked times in a repository" },
      },
    )
    .get(
      '/user/times',
      async ({ query, user, page, respond }) => respond(await listTimes(deps, { userId: user.id, since: query.since, before: query.before }, page), toApi),
      {
        scope: 'user',
        signed: true,
        paged: true,
        query: TimesQuery,
        response: { 200: TimeList },
        detail: { operationId: 'userCurrentTrackedTimes', summary: "List the signed-in user's tracked times" },
      },
    )
}
