import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { loadRepoContext } from '../../auth/repo-context'
import { RepoParams } from '../repos/model'
import { PageQuery, pageOfWholeList } from '../../lib/pagination'
import { BranchSchema } from './model'
import { RepoWildcardParams, wildcardOf } from '../files/model'
import { branchHeads, branchesToApi, getBranch } from './service'

/** Branches of a repository (issue 3). */
export const branchesModule = (deps: AppDeps) =>
  new Elysia({ name: 'branches', detail: { tags: ['repository'] } })
    .get(
      '/repos/:owner/:repo/branches',
      async ({ request, params, query, set }) => {
        const ctx = await loadRepoContext(deps, request, params.owner, params.repo)
        const heads = pageOfWholeList(deps.config, request, set, query, await branchHeads(deps, ctx))
        return branchesToApi(deps, ctx, heads)
      },
      {
        params: RepoParams,
        query: PageQuery,
        response: { 200: t.Array(BranchSchema) },
        detail: { operationId: 'repoListBranches', summary: "List a repository's branches" },
      },
    )
    .get(
      '/repos/:owner/:repo/branches/*',
      async ({ request, params }) => {
        const ctx = await loadRepoContext(deps, request, params.owner, params.repo)
        return getBranch(deps, ctx, wildcardOf(params))
      },
      {
        params: RepoWildcardParams,
        response: { 200: BranchSchema },
        detail: { operationId: 'repoGetBranch', summary: "Retrieve a specific branch from a repository, including its effective branch protection" },
      },
    )
