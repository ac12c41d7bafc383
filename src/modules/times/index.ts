import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { requireUser } from '../../auth/caller'
import { RepoParams } from '../repos/model'
import { AddTimeOption, IssueParams, TimesQuery, TrackedTimeSchema } from '../issues/model'
import { pathNumber } from '../../lib/path-number'
import { findIssue, loadIssueContext } from '../issues/service'
import { askedPage, pageOf, setListHeaders, type Page } from '../../lib/pagination'
import { getUserByName } from '../users/service'
import { addTime, listTimes, requireTimeTracking, timesToApi, type TimeFilter } from './service'

const TimeList = t.Array(TrackedTimeSchema)

/** Tracked time (issue 5). */
export const timesModule = (deps: AppDeps) => {
  /**
   * A page of times, paged in SQL: one issue's times whole unless a page is asked for; the lists of
   * a repository or a user, which grow without bound, page 1 of 30 when none is.
   */
  const answer = (request: Request, set: { headers: Record<string, any> }, page: Page | null, f: TimeFilter) => {
    const { rows, total } = listTimes(deps, f, page)
    setListHeaders(set, deps.config, request, page, total)
    return timesToApi(deps, rows)
  }
  /** A readable repository with its issue tracker and time tracking on (404 / 400 otherwise). */
  const trackedRepo = async (request: Request, owner: string, repo: string) => {
    const ctx = await loadIssueContext(deps, request, owner, repo)
    requireTimeTracking(ctx.repo)
    return ctx
  }
  return new Elysia({ name: 'times', detail: { tags: ['issue'] } })
    .post(
      '/repos/:owner/:repo/issues/:index/times',
      async ({ request, params, body }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo)
        const user = requireUser(ctx.caller)
        const row = addTime(deps, ctx, pathNumber(params.index), user, body)
        return timesToApi(deps, [row])[0]!
      },
      {
        params: IssueParams,
        body: AddTimeOption,
        response: { 200: TrackedTimeSchema },
        detail: { operationId: 'issueAddTime', summary: 'Add tracked time to an issue' },
      },
    )
    .get(
      '/repos/:owner/:repo/issues/:index/times',
      async ({ request, params, query, set }) => {
        // Gitea's ListTrackedTimes answers 404 here when time tracking is off (the repository lists answer 400).
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo)
        requireTimeTracking(ctx.repo, 404)
        const issue = findIssue(deps, ctx.repo.id, pathNumber(params.index))
        return answer(request, set, askedPage(query), { issueId: issue.id, since: query.since, before: query.before })
      },
      {
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
      async ({ request, params, query, set }) => {
        const ctx = await trackedRepo(request, params.owner, params.repo)
        return answer(request, set, pageOf(query), { repoId: ctx.repo.id, since: query.since, before: query.before })
      },
      {
        params: RepoParams,
        query: TimesQuery,
        response: { 200: TimeList },
        detail: { operationId: 'repoTrackedTimes', summary: "List a repository's tracked times" },
      },
    )
    .get(
      '/repos/:owner/:repo/times/:username',
      async ({ request, params, query, set }) => {
        const ctx = await trackedRepo(request, params.owner, params.repo)
        const user = getUserByName(deps, params.username)
        return answer(request, set, pageOf(query), { repoId: ctx.repo.id, userId: user.id, since: query.since, before: query.before })
      },
      {
        params: t.Object({ owner: t.String(), repo: t.String(), username: t.String() }),
        query: TimesQuery,
        response: { 200: TimeList },
        detail: { operationId: 'userTrackedTimes', summary: "List a user's tracked times in a repository" },
      },
    )
    .get(
      '/user/times',
      async ({ request, query, set }) => {
        const user = requireUser(await deps.auth.caller(request))
        return answer(request, set, pageOf(query), { userId: user.id, since: query.since, before: query.before })
      },
      {
        query: TimesQuery,
        response: { 200: TimeList },
        detail: { operationId: 'userCurrentTrackedTimes', summary: "List the signed-in user's tracked times" },
      },
    )
}
