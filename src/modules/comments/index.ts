import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { readableTrackerKind } from '../../auth/repo-context'
import { RepoParams } from '../repos/model'
import { CommentOption, CommentSchema, IdParams, IssueIdParams, IssueParams, SinceQuery, TimelineCommentSchema } from '../issues/model'
import { listIssueTimeline } from '../issues/timeline'
import { timelineToApi } from '../../convert/timeline'
import { pathNumber } from '../../lib/path-number'
import { findIssue } from '../issues/queries'
import { commentsToApi, newCommentToApi } from '../../convert/issue'
import { PLAIN_COMMENT, commentOfRepo, createComment, deleteComment, editComment, listIssueComments, listRepoComments, windowOf } from './service'
import { notFound } from '../../lib/errors'

const CommentList = t.Array(CommentSchema)
/** The issue index of the long comment path, absent on the short ones. */
const optionalNumber = (value: string | undefined) => (value === undefined ? undefined : pathNumber(value))
/** Comments belong to the issue tracker; who may change one is the service's rule (author or admin). */
const readIssues = { unit: 'issues' } as const

/** Comments on issues. */
export const commentsModule = (deps: AppDeps, api: AreaApp) => {
  const app = area(api, { tags: ['issue'] })
    .get(
      '/repos/:owner/:repo/issues/comments',
      async ({ query, repo, page, respond }) =>
        // Paged in SQL, page 1 of 30 when none is asked for: a repository's comments grow without bound.
        respond(await listRepoComments(deps, repo.repo.id, windowOf(query), page, readableTrackerKind(repo)), async (rows) => await commentsToApi(deps, repo.repo, rows, repo.caller.user)),
      {
        scope: 'issue',
        repo: readIssues,
        paged: true,
        params: RepoParams,
        query: SinceQuery,
        response: { 200: CommentList },
        detail: { operationId: 'issueGetRepoComments', summary: "List all comments of a repository's issues" },
      },
    )
    .post(
      '/repos/:owner/:repo/issues/:index/comments',
      async ({ params, body, status, repo, user }) => {
        const { row, issue } = await createComment(deps, repo, pathNumber(params.index), user, body.body)
        return status(201, newCommentToApi(deps, repo.repo, issue, row, user))
      },
      {
        scope: 'issue',
        repo: readIssues,
        signed: true,
        params: IssueParams,
        body: CommentOption,
        response: { 201: CommentSchema },
        detail: { operationId: 'issueCreateComment', summary: 'Comment on an issue' },
      },
    )

  app.get(
    '/repos/:owner/:repo/issues/:index/timeline',
    async ({ params, query, repo, page, respond }) => {
      const issue = await findIssue(deps, repo.repo.id, pathNumber(params.index))
      return respond(await listIssueTimeline(deps, issue, windowOf(query), page), async (rows) => await timelineToApi(deps, repo.repo, issue, rows, repo.caller.user))
    },
    {
      scope: 'issue',
      repo: readIssues,
      paged: true,
      params: IssueParams,
      query: SinceQuery,
      response: { 200: t.Array(TimelineCommentSchema) },
      detail: { operationId: 'issueGetCommentsAndTimeline', summary: "List an issue's comments and its timeline events, oldest first" },
    },
  )

  // An issue's comments, under Gitea's path and the seed's (`issue`, singular), each with its own
  // operation id (the seed's keeps the seed's) so that the document lists both.
  const lists = [
    ['/repos/:owner/:repo/issues/:index/comments', 'issueListIssueComments'],
    ['/repos/:owner/:repo/issue/:index/comments', 'issueGetComments'],
  ] as const
  for (const [path, operationId] of lists)
    app.get(
      path,
      async ({ params, query, repo, page, respond }) => {
        const issue = await findIssue(deps, repo.repo.id, pathNumber(params.index))
        // Gitea's ListIssueComments answers an issue's comments whole; a page when one is asked for.
        return respond(await listIssueComments(deps, issue, windowOf(query), page), async (rows) => await commentsToApi(deps, repo.repo, rows, repo.caller.user))
      },
      {
        scope: 'issue',
        repo: readIssues,
        pageIfAsked: true,
        params: IssueParams,
        query: SinceQuery,
        response: { 200: CommentList },
        detail: { operationId, summary: "List an issue's comments, oldest first" },
      },
    )

  // One comment (Gitea's GetIssueComment): a plain comment's record; another kind of comment (a
  // timeline event) is 204, as Gitea answers it.
  app.get(
    '/repos/:owner/:repo/issues/comments/:id',
    async ({ params, status, repo }) => {
      const id = pathNumber(params.id)
      const row = await commentOfRepo(deps, repo.repo.id, id)
      if (!row) throw notFound(`comment does not exist [id: ${id}]`)
      if (row.type !== PLAIN_COMMENT) return status(204, undefined)
      return (await commentsToApi(deps, repo.repo, [row], repo.caller.user))[0]!
    },
    {
      scope: 'issue',
      repo: readIssues,
      params: IdParams,
      response: { 200: CommentSchema, 204: t.Void() },
      detail: { operationId: 'issueGetComment', summary: 'Get a comment' },
    },
  )

  // Edit and delete: Gitea's path, the seed's (`/comments/{id}`) and the older long one under the issue.
  // Operation ids: the seed's on its path, Gitea's own paths named apart.
  const paths = [
    ['/repos/:owner/:repo/issues/comments/:id', 'IssueComment'],
    ['/repos/:owner/:repo/comments/:id', 'Comment'],
    ['/repos/:owner/:repo/issues/:index/comments/:id', 'CommentDeprecated'],
  ] as const
  for (const [path, suffix] of paths) {
    const params = path.includes(':index') ? IssueIdParams : IdParams
    app
      .patch(
        path,
        async ({ params, body, status, repo, user }) => {
          const p = params as { id: string; index?: string }
          const row = await editComment(deps, repo, pathNumber(p.id), optionalNumber(p.index), user, body.body)
          if (!row) return status(204, undefined)
          return (await commentsToApi(deps, repo.repo, [row], user))[0]!
        },
        {
          scope: 'issue',
          repo: readIssues,
          signed: true,
          params,
          body: CommentOption,
          response: { 200: CommentSchema, 204: t.Void() },
          detail: { operationId: `issueEdit${suffix}`, summary: 'Edit a comment (author or repository admin)' },
        },
      )
      .delete(
        path,
        async ({ params, status, repo, user }) => {
          const p = params as { id: string; index?: string }
          await deleteComment(deps, repo, pathNumber(p.id), optionalNumber(p.index), user)
          return status(204, undefined)
        },
        { scope: 'issue', repo: readIssues, signed: true, params, response: { 204: t.Void() }, detail: { operationId: `issueDelete${suffix}`, summary: 'Delete a comment (author or repository admin)' } },
      )
  }
  return app
}
