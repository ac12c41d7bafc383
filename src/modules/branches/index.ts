import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import { RepoParams } from '../repos/model'
import { PageQuery } from '../../lib/pagination'
import { BranchSchema } from './model'
import { RepoWildcardParams, wildcardOf } from '../files/model'
import { branchHeads, getBranch } from './service'
import { branchesToApi } from '../../convert/branch'

/** Branches of a repository. */
export const branchesModule = (deps: AppDeps) =>
  new Elysia({ name: 'branches', detail: { tags: ['repository'] } })
    .use(pipeline(deps))
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
    .get(
      '/repos/:owner/:repo/branches/*',
      async ({ params, repo }) => (await branchesToApi(deps, repo, [await getBranch(deps, repo, wildcardOf(params))]))[0]!,
      {
        scope: 'repository',
        repo: { level: 'read' },
        params: RepoWildcardParams,
        response: { 200: BranchSchema },
        detail: { operationId: 'repoGetBranch', summary: "Retrieve a specific branch from a repository, including its effective branch protection" },
      },
    )
