import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import type { RepoContext } from '../../auth/repo-context'
import { pathNumber } from '../../lib/path-number'
import { PageQuery } from '../../lib/pagination'
import { PlainUserSchema, RepoParams } from '../repos/model'
import { PullParams } from '../pulls/model'
import { toApiUser } from '../../convert/user'
import { reviewCommentsToApi, reviewsToApi } from '../../convert/review'
import type { PullItem } from '../../convert/pull'
import type { ReviewRow } from '../../db/schema'
import {
  CreatePullReviewOptions,
  DismissPullReviewOptions,
  PullReviewCommentSchema,
  PullReviewRequestOptions,
  PullReviewSchema,
  ReviewParams,
  SubmitPullReviewOptions,
} from './model'
import { commentsOfReview, createReview, deleteReview, dismissReview, findReview, listReviews, submitReview } from './service'
import { changeReviewRequests, listReviewers } from './requests'

const scopeOf = (ctx: RepoContext, item: PullItem) => ({ repo: ctx.repo, issue: item.issue, pull: item.pull, owner: ctx.owner })
const recordsOf = (deps: AppDeps, ctx: RepoContext, item: PullItem, rows: ReviewRow[]) => reviewsToApi(deps, scopeOf(ctx, item), rows, ctx.caller.user)
const recordOf = async (deps: AppDeps, ctx: RepoContext, found: { item: PullItem; review: ReviewRow }) =>
  (await recordsOf(deps, ctx, found.item, [found.review]))[0]!

const pulls = { scope: 'repository', repo: { unit: 'pulls' } } as const
const signedPulls = { ...pulls, signed: true } as const

/** Pull request reviews, their line comments, dismissals, review requests, and who may be asked. */
export const reviewsModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] })
    .get(
      '/repos/:owner/:repo/pulls/:index/reviews',
      async ({ params, repo: ctx, page, respond }) => {
        const { item, found } = await listReviews(deps, ctx, pathNumber(params.index), page)
        return respond(found, (rows) => recordsOf(deps, ctx, item, rows))
      },
      {
        ...pulls,
        paged: true,
        params: PullParams,
        query: PageQuery,
        response: { 200: t.Array(PullReviewSchema) },
        detail: { operationId: 'repoListPullReviews', summary: "List all reviews for a pull request (pending ones: the caller's own)" },
      },
    )
    .post(
      '/repos/:owner/:repo/pulls/:index/reviews',
      async ({ params, body, repo: ctx, user }) => recordOf(deps, ctx, await createReview(deps, ctx, user, pathNumber(params.index), body)),
      {
        ...signedPulls,
        params: PullParams,
        body: CreatePullReviewOptions,
        response: { 200: PullReviewSchema },
        detail: { operationId: 'repoCreatePullReview', summary: 'Create a review to a pull request, with line comments; without an event it stays pending' },
      },
    )
    .get(
      '/repos/:owner/:repo/pulls/:index/reviews/:id',
      async ({ params, repo: ctx }) => recordOf(deps, ctx, await findReview(deps, ctx, pathNumber(params.index), pathNumber(params.id))),
      { ...pulls, params: ReviewParams, response: { 200: PullReviewSchema }, detail: { operationId: 'repoGetPullReview', summary: 'Get a specific review for a pull request' } },
    )
    .post(
      '/repos/:owner/:repo/pulls/:index/reviews/:id',
      async ({ params, body, repo: ctx, user }) => recordOf(deps, ctx, await submitReview(deps, ctx, user, pathNumber(params.index), pathNumber(params.id), body)),
      {
        ...signedPulls,
        params: ReviewParams,
        body: SubmitPullReviewOptions,
        response: { 200: PullReviewSchema },
        detail: { operationId: 'repoSubmitPullReview', summary: "Submit the caller's pending review on the pull request's current head" },
      },
    )
    .delete(
      '/repos/:owner/:repo/pulls/:index/reviews/:id',
      async ({ params, repo: ctx, user, status }) => {
        await deleteReview(deps, ctx, user, pathNumber(params.index), pathNumber(params.id))
        return status(204, undefined)
      },
      {
        ...signedPulls,
        params: ReviewParams,
        response: { 204: t.Void() },
        detail: { operationId: 'repoDeletePullReview', summary: 'Delete a review (its reviewer or a site administrator), with its line comments' },
      },
    )
    .get(
      '/repos/:owner/:repo/pulls/:index/reviews/:id/comments',
      async ({ params, repo: ctx }) => {
        const found = await findReview(deps, ctx, pathNumber(params.index), pathNumber(params.id))
        return reviewCommentsToApi(deps, scopeOf(ctx, found.item), await commentsOfReview(deps, found.review.id), ctx.caller.user)
      },
      {
        ...pulls,
        params: ReviewParams,
        response: { 200: t.Array(PullReviewCommentSchema) },
        detail: { operationId: 'repoGetPullReviewComments', summary: "Get a review's line comments" },
      },
    )
    .post(
      '/repos/:owner/:repo/pulls/:index/reviews/:id/dismissals',
      async ({ params, body, repo: ctx }) => recordOf(deps, ctx, await dismissReview(deps, ctx, pathNumber(params.index), pathNumber(params.id), true, body.priors ?? false)),
      {
        ...signedPulls,
        params: ReviewParams,
        body: DismissPullReviewOptions,
        response: { 200: PullReviewSchema },
        detail: { operationId: 'repoDismissPullReview', summary: 'Dismiss an approval or a rejection (repository administrators)' },
      },
    )
    .post(
      '/repos/:owner/:repo/pulls/:index/reviews/:id/undismissals',
      async ({ params, repo: ctx }) => recordOf(deps, ctx, await dismissReview(deps, ctx, pathNumber(params.index), pathNumber(params.id), false, false)),
      {
        ...signedPulls,
        params: ReviewParams,
        response: { 200: PullReviewSchema },
        detail: { operationId: 'repoUnDismissPullReview', summary: 'Cancel the dismissal of a review (repository administrators)' },
      },
    )
    .post(
      '/repos/:owner/:repo/pulls/:index/requested_reviewers',
      async ({ params, body, repo: ctx, user, status }) => {
        const { item, created } = await changeReviewRequests(deps, ctx, user, pathNumber(params.index), body, true)
        return status(201, await recordsOf(deps, ctx, item, created))
      },
      {
        ...signedPulls,
        params: PullParams,
        body: PullReviewRequestOptions,
        response: { 201: t.Array(PullReviewSchema) },
        detail: { operationId: 'repoCreatePullReviewRequests', summary: 'Ask people (by name or e-mail) and teams of the owning organisation to review a pull request' },
      },
    )
    .delete(
      '/repos/:owner/:repo/pulls/:index/requested_reviewers',
      async ({ params, body, repo: ctx, user, status }) => {
        await changeReviewRequests(deps, ctx, user, pathNumber(params.index), body, false)
        return status(204, undefined)
      },
      {
        ...signedPulls,
        params: PullParams,
        body: PullReviewRequestOptions,
        response: { 204: t.Void() },
        detail: { operationId: 'repoDeletePullReviewRequests', summary: 'Cancel review requests for a pull request' },
      },
    )
    .get(
      '/repos/:owner/:repo/reviewers',
      async ({ repo: ctx, page, respond }) => respond(await listReviewers(deps, ctx, page), (rows) => rows.map((u) => toApiUser(deps.config, u, ctx.caller.user))),
      {
        ...pulls,
        pageIfAsked: true,
        params: RepoParams,
        query: PageQuery,
        response: { 200: t.Array(PlainUserSchema) },
        detail: { operationId: 'repoGetReviewers', summary: 'The people who may be asked to review (readers of the repository by a grant of their own), the caller aside' },
      },
    )
