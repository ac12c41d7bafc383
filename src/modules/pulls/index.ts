import { Elysia, t } from 'elysia'
import { checkedJson } from '../../lib/checked-json'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { pathNumber } from '../../lib/path-number'
import { RepoParams } from '../repos/model'
import {
  ChangedFileSchema,
  CommitSchema,
  CreatePullRequestOption,
  EditPullRequestOption,
  ListPullsQuery,
  MergePullRequestOption,
  PullDiffText,
  PullCommitsQuery,
  PullByBranchesParams,
  PullGetQuery,
  PullParams,
  PullRequestSchema,
  UpdatePullQuery,
  formSwitch,
} from './model'
import { pullsToApi, pullToApi } from '../../convert/pull'
import { createPull, editPull, findPull, listPulls, requireMerged } from './service'
import { listPageCache } from '../../convert/list-page-cache'
import { cancelScheduledMerge, mergeOrSchedule } from './auto-merge'
import { updatePull } from './update'
import { findPullByBranches } from './by-branches'
import { commitsToApi, filesToApi } from '../../convert/commit'
import { pullCommits, pullDiff, pullDownloadOf, pullFiles } from './compare'
import { PageQuery } from '../../lib/pagination'
import { wildcardOf } from '../files/model'

/**
 * A page of records as the list's JSON text, held by the page cache so that a list read again
 * skips building, checking and serialising it (checked as Elysia checks an answer: checkedJson).
 */
const pullListJson = checkedJson(t.Array(PullRequestSchema))
/** At most this many pages of pull request lists are kept (about 130 KB of JSON each at 30 per page). */
const PULL_PAGES_KEPT = 32
const respondPullPage = listPageCache('pulls', PULL_PAGES_KEPT)

/** Pull requests: list, open, read (by index, or by base and head), edit, merge, update. */
export const pullsModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] })
    .get(
      '/repos/:owner/:repo/pulls',
      // The page's JSON text as made once (and checked against the schema below) while nothing changes.
      ({ repo: ctx, query, page, request }) =>
        respondPullPage(deps, { repo: ctx, query, page, request }, async () => {
          const rows = await listPulls(deps, ctx.repo, ctx.caller.user, query, page)
          return { json: pullListJson(await pullsToApi(deps, ctx.repo, ctx.owner, rows.rows, ctx.caller.user)), total: rows.total }
        }),
      {
        scope: 'repository',
        repo: { unit: 'pulls' },
        paged: true,
        params: RepoParams,
        query: ListPullsQuery,
        response: { 200: t.Array(PullRequestSchema) },
        detail: { operationId: 'repoListPullRequests', summary: "List a repository's pull requests" },
      },
    )
    .post(
      '/repos/:owner/:repo/pulls',
      async ({ body, status, repo: ctx, user }) => status(201, await pullToApi(deps, ctx, await createPull(deps, ctx, user, body), user)),
      {
        scope: 'repository',
        repo: { unit: 'pulls' },
        signed: true,
        params: RepoParams,
        body: CreatePullRequestOption,
        response: { 201: PullRequestSchema },
        detail: { operationId: 'repoCreatePullRequest', summary: 'Create a pull request' },
      },
    )
    .get(
      '/repos/:owner/:repo/pulls/:index',
      // `{index}.diff` and `{index}.patch` (Gitea's repoDownloadPullDiffOrPatch) share the path segment: the router cannot tell them apart.
      // Two promises, not one of either: the route's answer is a Response or a record.
      ({ params, query, repo: ctx }): Promise<Response> | ReturnType<typeof pullToApi> => {
        const { index, kind } = pullDownloadOf(params.index)
        if (kind) return pullDiff(deps, ctx, pathNumber(index), kind, formSwitch(query.binary, false))
        const record = async () => pullToApi(deps, ctx, await findPull(deps, ctx.repo.id, pathNumber(index)), ctx.caller.user)
        return record()
      },
      {
        scope: 'repository',
        repo: { unit: 'pulls' },
        params: PullParams,
        query: PullGetQuery,
        response: { 200: t.Union([PullRequestSchema, PullDiffText]) },
        detail: {
          operationId: 'repoGetPullRequest',
          summary: 'Get a pull request; `{index}.diff` / `{index}.patch`: its diff or patch series as text (repoDownloadPullDiffOrPatch)',
        },
      },
    )
    .get(
      // `{base}/{head}`: the router names the first segment as the other routes do; the head may hold slashes.
      '/repos/:owner/:repo/pulls/:index/*',
      async ({ params, repo: ctx }) => pullToApi(deps, ctx, await findPullByBranches(deps, ctx, params.index, wildcardOf(params)), ctx.caller.user),
      {
        scope: 'repository',
        repo: { unit: 'pulls' },
        params: PullByBranchesParams,
        response: { 200: PullRequestSchema },
        detail: {
          operationId: 'repoGetPullRequestByBaseHead',
          summary: 'Get the pull request from `{head}` (`branch`, `owner:branch` or `owner/repo:branch`) into branch `{base}`: the open one, else the latest',
        },
      },
    )
    .post(
      '/repos/:owner/:repo/pulls/:index/update',
      async ({ params, query, repo: ctx, user, set }) => {
        await updatePull(deps, ctx, pathNumber(params.index), user, query.style === 'rebase' ? 'rebase' : 'merge')
        set.status = 200
        return ''
      },
      {
        scope: 'repository',
        repo: { unit: 'pulls' },
        signed: true,
        params: PullParams,
        query: UpdatePullQuery,
        response: { 200: t.String({ description: 'empty' }) },
        detail: {
          operationId: 'repoUpdatePullRequest',
          summary: "Bring the base branch into a pull request's head branch (merge commit, or `style=rebase`); needs push access to the head branch",
        },
      },
    )
    .get(
      '/repos/:owner/:repo/pulls/:index/commits',
      async ({ params, query, repo: ctx, page, respond }) => {
        const found = await pullCommits(deps, ctx, pathNumber(params.index), page, { files: formSwitch(query.files, true) })
        return respond(found, async (rows) => await commitsToApi(deps, ctx, rows, ctx.caller.user, { verification: formSwitch(query.verification, true) }))
      },
      {
        scope: 'repository',
        repo: { unit: 'pulls' },
        paged: true,
        params: PullParams,
        query: PullCommitsQuery,
        response: { 200: t.Array(CommitSchema) },
        detail: {
          operationId: 'repoGetPullRequestCommits',
          summary: "Get a pull request's commits, newest first; each lists at most WARREN_MAX_COMMIT_FILES files (`files_truncated` past it)",
        },
      },
    )
    .get(
      '/repos/:owner/:repo/pulls/:index/files',
      async ({ params, repo: ctx, page, respond, set }) => {
        const found = await pullFiles(deps, ctx, pathNumber(params.index), page)
        // Past the listed files there are more: X-Total-Count counts the listed ones, this says so.
        if (found.truncated) set.headers['X-Warren-Files-Truncated'] = 'true'
        return respond(found, (rows) => filesToApi(deps, ctx, found.head, rows))
      },
      {
        scope: 'repository',
        repo: { unit: 'pulls' },
        paged: true,
        params: PullParams,
        query: PageQuery,
        response: { 200: t.Array(ChangedFileSchema) },
        detail: {
          operationId: 'repoGetPullRequestFiles',
          summary: 'Get the files a pull request changes, with their line counts: the first 3000 (`X-Warren-Files-Truncated: true` when there are more)',
        },
      },
    )
    .patch(
      '/repos/:owner/:repo/pulls/:index',
      async ({ params, body, status, repo: ctx, user }) =>
        status(201, await pullToApi(deps, ctx, await editPull(deps, ctx, pathNumber(params.index), user, body), user)),
      {
        scope: 'repository',
        repo: { unit: 'pulls' },
        signed: true,
        params: PullParams,
        body: EditPullRequestOption,
        response: { 201: PullRequestSchema },
        detail: { operationId: 'repoEditPullRequest', summary: 'Edit a pull request (answers 201, as Gitea)' },
      },
    )
    .get(
      '/repos/:owner/:repo/pulls/:index/merge',
      async ({ params, repo: ctx, status }) => {
        await requireMerged(deps, ctx.repo.id, pathNumber(params.index))
        return status(204, undefined)
      },
      {
        scope: 'repository',
        repo: { unit: 'pulls' },
        params: PullParams,
        response: { 204: t.Void() },
        detail: { operationId: 'repoPullRequestIsMerged', summary: 'Whether a pull request was merged (204 yes, 404 no)' },
      },
    )
    .post(
      '/repos/:owner/:repo/pulls/:index/merge',
      async ({ params, body, repo: ctx, user, set }) => {
        const style = body.Do || body.do || 'merge'
        const outcome = await mergeOrSchedule(deps, ctx, pathNumber(params.index), user, {
          style,
          title: body.MergeTitleField ?? body.merge_title_field,
          message: body.MergeMessageField ?? body.merge_message_field,
          headCommitId: body.head_commit_id,
          force: body.force_merge,
          whenChecksSucceed: body.merge_when_checks_succeed,
          deleteBranchAfterMerge: body.delete_branch_after_merge,
        })
        // Gitea: 201 when the merge was scheduled, 200 when it was made.
        set.status = outcome === 'scheduled' ? 201 : 200
        return ''
      },
      {
        scope: 'repository',
        repo: { level: 'write', unit: 'pulls' },
        signed: true,
        // No body (the 2017 SDK sends none) is a plain merge.
        transform: (ctx) => {
          if (ctx.body === null || ctx.body === undefined || (ctx.body as unknown) === '') ctx.body = {}
        },
        params: PullParams,
        body: MergePullRequestOption,
        response: { 200: t.String({ description: 'empty' }), 201: t.String({ description: 'empty: the merge is scheduled' }) },
        detail: {
          operationId: 'repoMergePullRequest',
          summary: 'Merge a pull request; with `merge_when_checks_succeed`, schedule the merge (201) unless it is ready now',
        },
      },
    )
    .delete(
      '/repos/:owner/:repo/pulls/:index/merge',
      async ({ params, repo: ctx, user, status }) => {
        await cancelScheduledMerge(deps, ctx, pathNumber(params.index), user)
        return status(204, undefined)
      },
      {
        scope: 'repository',
        repo: { unit: 'pulls' },
        signed: true,
        params: PullParams,
        response: { 204: t.Void() },
        detail: { operationId: 'repoCancelScheduledAutoMerge', summary: 'Cancel the scheduled merge of a pull request (its scheduler or a repository admin)' },
      },
    )
