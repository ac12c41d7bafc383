import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { readableTrackerKind } from '../../auth/repo-context'
import { notFound } from '../../lib/errors'
import { pathNumber } from '../../lib/path-number'
import { isoTimeOrNull } from '../../lib/time'
import {
  CreateIssueOption,
  EditDeadlineOption,
  EditIssueOption,
  IssueDeadlineSchema,
  IssueParams,
  IssueSchema,
  ListIssuesQuery,
  SearchIssuesQuery,
} from './model'
import { RepoParams } from '../repos/model'
import { toApiIssue, issuesToApi, issueToApi, issuesOfReposToApi } from '../../convert/issue'
import { reposOfIssues, searchIssues } from './search'
import { createIssue, deleteIssue, editIssue, setIssueDeadline } from './service'
import { findIssue, listIssues } from './queries'
import { listPageCache } from '../../convert/list-page-cache'
import { checkedJson } from '../../lib/checked-json'

/** At most this many pages of issue lists are kept (about 60 KB of JSON each at 30 per page). */
const ISSUE_PAGES_KEPT = 32
const respondIssuePage = listPageCache('issues', ISSUE_PAGES_KEPT)
/** A page of Issue records as the list's JSON text, checked as Elysia checks an answer. */
const issueListJson = checkedJson(t.Array(IssueSchema))

/** Issues: list, file, read, edit, deadline. */
export const issuesModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['issue'] })
    .get(
      '/repos/issues/search',
      async ({ query, caller, page, respond }) =>
        respond(await searchIssues(deps, caller.user, query, page), async (rows) => await issuesOfReposToApi(deps, await reposOfIssues(deps, rows), rows, caller.user)),
      {
        scope: 'issue',
        caller: true,
        // Gitea's default is its UI's issue page (20), its most the API's (50).
        paged: { defaultLimit: 20 },
        query: SearchIssuesQuery,
        response: { 200: t.Array(IssueSchema) },
        detail: { operationId: 'issueSearchIssues', summary: 'Search issues and pull requests across the repositories the caller may read' },
      },
    )
    .get(
      '/repos/:owner/:repo/issues',
      // The page's JSON text as made once (and checked against the schema below) while nothing changes.
      ({ repo: ctx, query, page, request }) =>
        respondIssuePage(deps, { repo: ctx, query, page, request }, async () => {
          // Only the kinds the caller reads (a team may give them issues and no pull requests).
          const kind = readableTrackerKind(ctx)
          if (kind !== undefined && query.type && query.type !== 'all' && query.type !== (kind ? 'pulls' : 'issues')) throw notFound()
          const rows = await listIssues(deps, ctx.repo, ctx.caller.user, kind === undefined ? query : { ...query, type: kind ? 'pulls' : 'issues' }, page)
          return { json: issueListJson(await issuesToApi(deps, ctx.repo, rows.rows, ctx.caller.user)), total: rows.total }
        }),
      {
        scope: 'issue',
        repo: { unit: 'issues' },
        paged: true,
        params: RepoParams,
        query: ListIssuesQuery,
        response: { 200: t.Array(IssueSchema) },
        detail: { operationId: 'issueListIssues', summary: "List a repository's issues" },
      },
    )
    .post(
      '/repos/:owner/:repo/issues',
      async ({ body, status, repo, user }) => {
        const { row, rel } = await createIssue(deps, repo, user, body)
        return status(201, toApiIssue(deps.config, repo.repo, row, rel, user))
      },
      {
        scope: 'issue',
        repo: { unit: 'issues' },
        signed: true,
        params: RepoParams,
        body: CreateIssueOption,
        response: { 201: IssueSchema },
        detail: { operationId: 'issueCreateIssue', summary: 'Create an issue' },
      },
    )
    .get(
      '/repos/:owner/:repo/issues/:index',
      async ({ params, repo }) => await issueToApi(deps, repo.repo, await findIssue(deps, repo.repo.id, pathNumber(params.index)), repo.caller.user),
      { scope: 'issue', repo: { unit: 'issues' }, params: IssueParams, response: { 200: IssueSchema }, detail: { operationId: 'issueGetIssue', summary: 'Get an issue' } },
    )
    .patch(
      '/repos/:owner/:repo/issues/:index',
      async ({ params, body, status, repo, user }) => {
        const row = await editIssue(deps, repo, pathNumber(params.index), user, body)
        return status(201, await issueToApi(deps, repo.repo, row, user))
      },
      {
        scope: 'issue',
        repo: { unit: 'issues' },
        signed: true,
        params: IssueParams,
        body: EditIssueOption,
        response: { 201: IssueSchema },
        detail: { operationId: 'issueEditIssue', summary: 'Edit an issue (answers 201, as Gitea)' },
      },
    )
    .delete(
      '/repos/:owner/:repo/issues/:index',
      async ({ params, status, repo, user }) => {
        await deleteIssue(deps, repo, pathNumber(params.index), user)
        return status(204, undefined)
      },
      {
        scope: 'issue',
        // Gitea's reqAdmin: repository admins (the site admin among them).
        repo: { level: 'admin' },
        signed: true,
        params: IssueParams,
        response: { 204: t.Void() },
        detail: { operationId: 'issueDelete', summary: 'Delete an issue or pull request with everything it holds (repository admins)' },
      },
    )
    .post(
      '/repos/:owner/:repo/issues/:index/deadline',
      async ({ params, body, status, repo }) => {
        const deadline = await setIssueDeadline(deps, repo, pathNumber(params.index), body.due_date)
        return status(201, { due_date: isoTimeOrNull(deadline) })
      },
      {
        scope: 'issue',
        repo: { level: 'write', unit: 'issues' },
        params: IssueParams,
        body: EditDeadlineOption,
        response: { 201: IssueDeadlineSchema },
        detail: { operationId: 'issueEditIssueDeadline', summary: "Set an issue's deadline (null removes it)" },
      },
    )
