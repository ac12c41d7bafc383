import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { RepoParams } from '../repos/model'
import { PageQuery } from '../../lib/pagination'
import { BranchSchema, CreateBranchRepoOption, UpdateBranchRepoOption } from './model'
import { RepoWildcardParams, refNameOf } from '../files/model'
import { branchHeads, getBranch } from './service'
import { createBranch, deleteBranch, renameBranch } from './changes'
import { branchesToApi } from '../../convert/branch'

/** Branches of a repository (`{branch}` may hold slashes: the path's wildcard). */
export const branchesModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] })
    .get(
      '/repos/:owner/:repo/branches',
      async ({ repo, page, respond }) => respond(await branchHeads(deps, repo, page), async (heads) => await branchesToApi(deps, repo, heads)),
      {
        scope: 'repository',
        repo: { level: 'read' },
        // Branches grow without bound: a page always (Gitea's default size when none is asked).
        paged: true,
        params: RepoParams,
        query: PageQuery,
        response: { 200: t.Array(BranchSchema) },
        detail: { operationId: 'repoListBranches', summary: "List a repository's branches" },
      },
    )
    .post(
      '/repos/:owner/:repo/branches',
      async ({ body, repo, user, status }) => status(201, (await branchesToApi(deps, repo, [await createBranch(deps, repo, user, body)]))[0]!),
      {
        scope: 'repository',
        repo: { level: 'write' },
        signed: true,
        params: RepoParams,
        body: CreateBranchRepoOption,
        response: { 201: BranchSchema },
        detail: { operationId: 'repoCreateBranch', summary: 'Create a branch from a branch, tag or commit (the default branch when none)' },
      },
    )
    .get(
      '/repos/:owner/:repo/branches/*',
      async ({ params, repo }) => (await branchesToApi(deps, repo, [await getBranch(deps, repo, refNameOf(params))]))[0]!,
      {
        scope: 'repository',
        repo: { level: 'read' },
        params: RepoWildcardParams,
        response: { 200: BranchSchema },
        detail: { operationId: 'repoGetBranch', summary: "Retrieve a specific branch from a repository, including its effective branch protection" },
      },
    )
    .delete(
      '/repos/:owner/:repo/branches/*',
      async ({ params, repo, user, status }) => {
        await deleteBranch(deps, repo, user, refNameOf(params))
        return status(204, undefined)
      },
      {
        scope: 'repository',
        repo: { level: 'write' },
        signed: true,
        params: RepoWildcardParams,
        response: { 204: t.Void() },
        detail: { operationId: 'repoDeleteBranch', summary: 'Delete a branch (never the default one); its open pull requests are closed' },
      },
    )
    .patch(
      '/repos/:owner/:repo/branches/*',
      async ({ params, body, repo, user, status }) => {
        await renameBranch(deps, repo, user, refNameOf(params), body.name)
        return status(204, undefined)
      },
      {
        scope: 'repository',
        repo: { level: 'write' },
        signed: true,
        params: RepoWildcardParams,
        body: UpdateBranchRepoOption,
        response: { 204: t.Void() },
        detail: { operationId: 'repoUpdateBranch', summary: 'Rename a branch (the default branch: repository admins only); pull requests and the default branch follow' },
      },
    )
