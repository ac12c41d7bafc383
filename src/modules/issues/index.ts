import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { requireUser } from '../../auth/caller'
import { AccessMode } from '../../auth/access'
import { pageOf, setPageHeaders } from '../../lib/pagination'
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
} from './model'
import { RepoParams } from '../repos/model'
import { toApiIssue } from '../../lib/convert/issue'
import { createIssue, editIssue, findIssue, issuesToApi, issueToApi, listIssues, loadIssueContext, setIssueDeadline } from './service'

/** Issues (issue 5): list, file, read, edit, deadline. */
export const issuesModule = (deps: AppDeps) =>
  new Elysia({ name: 'issues', detail: { tags: ['issue'] } })
    .get(
      '/repos/:owner/:repo/issues',
      async ({ request, params, query, set }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo)
        const page = pageOf(query)
        const { rows, total } = listIssues(deps, ctx.repo, query, page)
        setPageHeaders(set, deps.config, request, page, total)
        return issuesToApi(deps, ctx.repo, rows, ctx.caller.user)
      },
      {
        params: RepoParams,
        query: ListIssuesQuery,
        response: { 200: t.Array(IssueSchema) },
        detail: { operationId: 'issueListIssues', summary: "List a repository's issues" },
      },
    )
    .post(
      '/repos/:owner/:repo/issues',
      async ({ request, params, body, status }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo)
        const user = requireUser(ctx.caller)
        const { row, rel } = createIssue(deps, ctx, user, body)
        return status(201, toApiIssue(deps.config, ctx.repo, row, rel, user))
      },
      {
        params: RepoParams,
        body: CreateIssueOption,
        response: { 201: IssueSchema },
        detail: { operationId: 'issueCreateIssue', summary: 'Create an issue' },
      },
    )
    .get(
      '/repos/:owner/:repo/issues/:index',
      async ({ request, params }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo)
        return issueToApi(deps, ctx.repo, findIssue(deps, ctx.repo.id, pathNumber(params.index)), ctx.caller.user)
      },
      { params: IssueParams, response: { 200: IssueSchema }, detail: { operationId: 'issueGetIssue', summary: 'Get an issue' } },
    )
    .patch(
      '/repos/:owner/:repo/issues/:index',
      async ({ request, params, body, status }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo)
        const user = requireUser(ctx.caller)
        const row = editIssue(deps, ctx, pathNumber(params.index), user, body)
        return status(201, issueToApi(deps, ctx.repo, row, user))
      },
      {
        params: IssueParams,
        body: EditIssueOption,
        response: { 201: IssueSchema },
        detail: { operationId: 'issueEditIssue', summary: 'Edit an issue (answers 201, as Gitea)' },
      },
    )
    .post(
      '/repos/:owner/:repo/issues/:index/deadline',
      async ({ request, params, body, status }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo, AccessMode.Write)
        const deadline = setIssueDeadline(deps, ctx, pathNumber(params.index), body.due_date)
        return status(201, { due_date: isoTimeOrNull(deadline) })
      },
      {
        params: IssueParams,
        body: EditDeadlineOption,
        response: { 201: IssueDeadlineSchema },
        detail: { operationId: 'issueEditIssueDeadline', summary: "Set an issue's deadline (null removes it)" },
      },
    )
