import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { RepoParams } from '../repos/model'
import { RepoWildcardParams, wildcardOf } from '../files/model'
import { CommitSchema, PullRequestSchema, formSwitch } from '../pulls/model'
import { commitsToApi, filesToApi, type ApiCommit } from '../../convert/commit'
import { pullToApi } from '../../convert/pull'
import { CommitDiffText, CommitListQuery, CommitQuery, CompareQuery, CompareSchema, RefParams, ShaParams } from './model'
import { commitDiff, commitDownloadOf, compare, getCommit, listCommits, pullOfCommit, type CommitParts } from './service'

/** Gitea's switches of a commit record: each on unless switched off. */
const partsOf = (query: { stat?: string; files?: string }): CommitParts => ({ stats: formSwitch(query.stat, true), files: formSwitch(query.files, true) })
/** Gitea's `verification` switch: each commit's signature checked unless switched off. */
const verificationOf = (query: { verification?: string }) => ({ verification: formSwitch(query.verification, true) })

/** A repository's commits: its history, one commit (record, diff, patch, pull request), comparisons. */
export const commitsModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] })
    .get(
      '/repos/:owner/:repo/commits',
      async ({ query, repo: ctx, page, respond, set }) => {
        const found = await listCommits(deps, ctx, query, page, partsOf(query))
        const pages = Math.ceil(found.total / page.limit)
        // Gitea's older paging headers, kept by it for compatibility.
        Object.assign(set.headers, {
          'X-Page': String(page.page),
          'X-PerPage': String(page.limit),
          'X-Total': String(found.total),
          'X-PageCount': String(pages),
          'X-HasMore': String(page.page < pages),
        })
        const records = await respond(found, async (rows) => await commitsToApi(deps, ctx, rows, ctx.caller.user, verificationOf(query)))
        set.headers['Access-Control-Expose-Headers'] = 'Link, X-Total-Count, X-Page, X-PerPage, X-Total, X-PageCount, X-HasMore'
        return records
      },
      {
        scope: 'repository',
        repo: { level: 'read' },
        paged: true,
        params: RepoParams,
        query: CommitListQuery,
        response: { 200: t.Array(CommitSchema) },
        detail: {
          operationId: 'repoGetAllCommits',
          summary: 'Get a list of all commits from a repository, newest first (409 when it is empty); each lists at most WARREN_MAX_COMMIT_FILES files',
        },
      },
    )
    .get(
      '/repos/:owner/:repo/git/commits/:sha',
      // `{sha}.diff` and `{sha}.patch` (Gitea's repoDownloadCommitDiffOrPatch) share the path segment.
      // Two promises, not one of either: the route's answer is a Response or a record.
      ({ params, query, repo: ctx }): Promise<Response> | Promise<ApiCommit> => {
        const { sha, kind } = commitDownloadOf(params.sha)
        if (kind) return commitDiff(deps, ctx, sha, kind)
        const record = async () => (await commitsToApi(deps, ctx, [await getCommit(deps, ctx, sha, partsOf(query))], ctx.caller.user, verificationOf(query)))[0]!
        return record()
      },
      {
        scope: 'repository',
        repo: { level: 'read' },
        params: ShaParams,
        query: CommitQuery,
        response: { 200: t.Union([CommitSchema, CommitDiffText]) },
        detail: {
          operationId: 'repoGetSingleCommit',
          summary:
            'Get a single commit by branch, tag or commit id, with its files and line counts; `{sha}.diff` / `{sha}.patch`: its diff or patch as text, at most WARREN_MAX_DIFF_SIZE bytes (repoDownloadCommitDiffOrPatch)',
        },
      },
    )
    .get(
      '/repos/:owner/:repo/commits/:ref/pull',
      async ({ params, repo: ctx }) => pullToApi(deps, ctx, await pullOfCommit(deps, ctx, params.ref), ctx.caller.user),
      {
        scope: 'repository',
        repo: { level: 'read', unit: 'pulls' },
        params: RefParams,
        response: { 200: PullRequestSchema },
        detail: { operationId: 'repoGetCommitPullRequest', summary: 'Get the pull request that merged a commit (else the newest whose head it is)' },
      },
    )
    .get(
      '/repos/:owner/:repo/compare/*',
      async ({ params, query, repo: ctx }) => {
        const found = await compare(deps, ctx, wildcardOf(params), formSwitch(query.files, true))
        return {
          total_commits: found.total,
          commits: await commitsToApi(deps, ctx, found.commits, ctx.caller.user, { ...verificationOf(query), git: found.git }),
          files: filesToApi(deps, ctx, found.head, found.files),
        }
      },
      {
        scope: 'repository',
        repo: { level: 'read' },
        params: RepoWildcardParams,
        query: CompareQuery,
        response: { 200: CompareSchema },
        detail: {
          operationId: 'repoCompareDiff',
          summary: 'Compare two branches, tags or commits (`base...head` from their merge base, `base..head` from base): the commits on head (at most WARREN_MAX_COMPARE_COMMITS) and the files changed',
        },
      },
    )
