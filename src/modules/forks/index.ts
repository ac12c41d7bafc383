import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { PageQuery } from '../../lib/pagination'
import { RepoParams, RepositoryList, RepositorySchema } from '../repos/model'
import { reposToApi } from '../../convert/repo'
import { CreateForkOption, MergeUpstreamRequest, MergeUpstreamResponse } from './model'
import { mergeUpstream } from './merge-upstream'
import { forkRepository, listForks } from './service'

/** Forks of a repository: create one, list them. */
export const forksModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] })
    .get(
      '/repos/:owner/:repo/forks',
      async ({ repo: ctx, page, respond }) => respond(await listForks(deps, ctx.caller.user, ctx.repo, page), async (rows) => await reposToApi(deps, ctx.caller.user, rows)),
      {
        scope: 'repository',
        repo: { level: 'read' },
        paged: true,
        params: RepoParams,
        query: PageQuery,
        response: { 200: RepositoryList },
        detail: { operationId: 'listForks', summary: "List a repository's forks" },
      },
    )
    .post(
      '/repos/:owner/:repo/forks',
      async ({ repo: ctx, user, body, status }) => {
        const fork = await forkRepository(deps, user, ctx.repo, ctx.owner, { organization: body?.organization, name: body?.name })
        // 202 is Gitea's answer, though the fork is complete.
        return status(202, (await reposToApi(deps, user, [fork]))[0]!)
      },
      {
        scope: 'repository',
        // Reading is enough, and an archived repository may be forked (Gitea checks neither).
        repo: { level: 'read', writes: false },
        signed: true,
        params: RepoParams,
        body: CreateForkOption,
        response: { 202: RepositorySchema },
        detail: { operationId: 'createFork', summary: 'Fork a repository' },
      },
    )
    .post(
      '/repos/:owner/:repo/merge-upstream',
      async ({ repo: ctx, user, body }) => ({ merge_type: await mergeUpstream(deps, ctx, user, body.branch) }),
      {
        scope: 'repository',
        repo: { level: 'write' },
        signed: true,
        params: RepoParams,
        body: MergeUpstreamRequest,
        response: { 200: MergeUpstreamResponse },
        detail: { operationId: 'repoMergeUpstream', summary: "Merge a branch from the fork's parent" },
      },
    )
