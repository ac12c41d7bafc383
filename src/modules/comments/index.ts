import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { requireUser } from '../../auth/caller'
import { RepoParams } from '../repos/model'
import { CommentOption, CommentSchema, IdParams, IssueIdParams, IssueParams, SinceQuery } from '../issues/model'
import { pathNumber } from '../../lib/path-number'
import { findIssue, loadIssueContext } from '../issues/service'
import { askedPage, pageOf, setListHeaders } from '../../lib/pagination'
import { commentsToApi, createComment, deleteComment, editComment, listIssueComments, listRepoComments, windowOf } from './service'

const CommentList = t.Array(CommentSchema)
/** The issue index of the long comment path, absent on the short ones. */
const optionalNumber = (value: string | undefined) => (value === undefined ? undefined : pathNumber(value))

/** Comments on issues (issue 5). */
export const commentsModule = (deps: AppDeps) => {
  const app = new Elysia({ name: 'comments', detail: { tags: ['issue'] } })
    .get(
      '/repos/:owner/:repo/issues/comments',
      async ({ request, params, query, set }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo)
        // Paged in SQL, page 1 of 30 when none is asked for: a repository's comments grow without bound.
        const page = pageOf(query)
        const { rows, total } = listRepoComments(deps, ctx.repo.id, windowOf(query), page)
        setListHeaders(set, deps.config, request, page, total)
        return commentsToApi(deps, ctx.repo, rows, ctx.caller.user)
      },
      {
        params: RepoParams,
        query: SinceQuery,
        response: { 200: CommentList },
        detail: { operationId: 'issueGetRepoComments', summary: "List all comments of a repository's issues" },
      },
    )
    .post(
      '/repos/:owner/:repo/issues/:index/comments',
      async ({ request, params, body, status }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo)
        const user = requireUser(ctx.caller)
        const row = createComment(deps, ctx, pathNumber(params.index), user, body.body)
        return status(201, commentsToApi(deps, ctx.repo, [row], user)[0]!)
      },
      {
        params: IssueParams,
        body: CommentOption,
        response: { 201: CommentSchema },
        detail: { operationId: 'issueCreateComment', summary: 'Comment on an issue' },
      },
    )

  // An issue's comments, under Gitea's path and the seed's (`issue`, singular).
  for (const path of ['/repos/:owner/:repo/issues/:index/comments', '/repos/:owner/:repo/issue/:index/comments'])
    app.get(
      path,
      async ({ request, params, query, set }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo)
        const issue = findIssue(deps, ctx.repo.id, pathNumber(params.index))
        // Gitea's ListIssueComments answers an issue's comments whole; a page when one is asked for.
        const page = askedPage(query)
        const { rows, total } = listIssueComments(deps, issue, windowOf(query), page)
        setListHeaders(set, deps.config, request, page, total)
        return commentsToApi(deps, ctx.repo, rows, ctx.caller.user)
      },
      {
        params: IssueParams,
        query: SinceQuery,
        response: { 200: CommentList },
        detail: { operationId: 'issueGetComments', summary: "List an issue's comments, oldest first" },
      },
    )

  // Edit and delete: Gitea's path, the seed's (`/comments/{id}`) and the older long one under the issue.
  const paths = [
    ['/repos/:owner/:repo/issues/comments/:id', ''],
    ['/repos/:owner/:repo/comments/:id', ''],
    ['/repos/:owner/:repo/issues/:index/comments/:id', 'Deprecated'],
  ] as const
  for (const [path, suffix] of paths) {
    const params = path.includes(':index') ? IssueIdParams : IdParams
    app
      .patch(
        path,
        async ({ request, params, body, status }) => {
          const p = params as { owner: string; repo: string; id: string; index?: string }
          const ctx = await loadIssueContext(deps, request, p.owner, p.repo)
          const user = requireUser(ctx.caller)
          const row = editComment(deps, ctx, pathNumber(p.id), optionalNumber(p.index), user, body.body)
          if (!row) return status(204, undefined)
          return commentsToApi(deps, ctx.repo, [row], user)[0]!
        },
        {
          params,
          body: CommentOption,
          response: { 200: CommentSchema, 204: t.Void() },
          detail: { operationId: `issueEditComment${suffix}`, summary: 'Edit a comment (author or repository admin)' },
        },
      )
      .delete(
        path,
        async ({ request, params, status }) => {
          const p = params as { owner: string; repo: string; id: string; index?: string }
          const ctx = await loadIssueContext(deps, request, p.owner, p.repo)
          deleteComment(deps, ctx, pathNumber(p.id), optionalNumber(p.index), requireUser(ctx.caller))
          return status(204, undefined)
        },
        { params, response: { 204: t.Void() }, detail: { operationId: `issueDeleteComment${suffix}`, summary: 'Delete a comment (author or repository admin)' } },
      )
  }
  return app
}
