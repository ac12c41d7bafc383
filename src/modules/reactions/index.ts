import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import type { RepoContext } from '../../auth/repo-context'
import { reactionsToApi } from '../../convert/reaction'
import { pathNumber } from '../../lib/path-number'
import { PageQuery } from '../../lib/pagination'
import { IdParams, IssueParams } from '../issues/model'
import { EditReactionOption, ReactionSchema } from './model'
import { addReaction, commentTarget, issueTarget, listReactions, removeReaction, type ReactionTarget } from './service'

const ReactionList = t.Array(ReactionSchema)
/** Reactions belong to the issue tracker; a locked issue takes them from writers only (the service). */
const readIssues = { unit: 'issues' } as const

type Targeted = { params: Record<string, string>; repo: RepoContext }

/** Reactions on issues and on their comments. */
export const reactionsModule = (deps: AppDeps, api: AreaApp) => {
  const app = area(api, { tags: ['issue'] })
    .get(
      '/repos/:owner/:repo/issues/:index/reactions',
      async ({ params, repo, page, respond }) =>
        respond(await listReactions(deps, await issueTarget(deps, repo, pathNumber(params.index)), page), (rows) => reactionsToApi(deps, rows, repo.caller.user)),
      {
        scope: 'issue',
        repo: readIssues,
        paged: true,
        params: IssueParams,
        query: PageQuery,
        response: { 200: ReactionList },
        detail: { operationId: 'issueGetIssueReactions', summary: 'List the reactions of an issue' },
      },
    )
    .get(
      '/repos/:owner/:repo/issues/comments/:id/reactions',
      // Gitea answers a comment's reactions whole; a page when one is asked for.
      async ({ params, repo, page, respond }) =>
        respond(await listReactions(deps, await commentTarget(deps, repo, pathNumber(params.id)), page), (rows) => reactionsToApi(deps, rows, repo.caller.user)),
      {
        scope: 'issue',
        repo: readIssues,
        pageIfAsked: true,
        params: IdParams,
        query: PageQuery,
        response: { 200: ReactionList },
        detail: { operationId: 'issueGetCommentReactions', summary: 'List the reactions of a comment' },
      },
    )
  const kinds = [
    { path: '/repos/:owner/:repo/issues/:index/reactions', params: IssueParams, of: 'Issue', target: (c: Targeted) => issueTarget(deps, c.repo, pathNumber(c.params.index!)) },
    { path: '/repos/:owner/:repo/issues/comments/:id/reactions', params: IdParams, of: 'Comment', target: (c: Targeted) => commentTarget(deps, c.repo, pathNumber(c.params.id!)) },
  ] as const
  for (const kind of kinds) {
    const target = kind.target as (c: Targeted) => Promise<ReactionTarget>
    app
      .post(
        kind.path,
        async ({ repo, user, params, body, status }) => {
          const { row, created } = await addReaction(deps, repo, user, await target({ repo, params } as Targeted), body.content)
          return status(created ? 201 : 200, (await reactionsToApi(deps, [row], user))[0]!)
        },
        {
          scope: 'issue',
          repo: readIssues,
          signed: true,
          params: kind.params,
          body: EditReactionOption,
          response: { 200: ReactionSchema, 201: ReactionSchema },
          detail: { operationId: `issuePost${kind.of}Reaction`, summary: `Add a reaction (201; 200 when the caller had already given it)` },
        },
      )
      .delete(
        kind.path,
        async ({ repo, user, params, body, status }) => {
          await removeReaction(deps, repo, user, await target({ repo, params } as Targeted), body.content)
          // Gitea answers 200 with an empty body here.
          return status(200, '')
        },
        {
          scope: 'issue',
          repo: readIssues,
          signed: true,
          params: kind.params,
          body: EditReactionOption,
          response: { 200: t.String({ description: 'empty' }) },
          detail: { operationId: `issueDelete${kind.of}Reaction`, summary: 'Remove a reaction of the caller (200 whether or not it was there)' },
        },
      )
  }
  return app
}
