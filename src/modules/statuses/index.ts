import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { PageQuery, setListHeaders } from '../../lib/pagination'
import { CombinedStatusSchema, CreateStatusOption, RefParams, ShaParams, StatusListQuery, StatusSchema } from './model'
import { toApiCombinedStatus, toApiStatuses } from '../../convert/status'
import { commitOfRef, commitOfSha, createStatus, latestStatuses, listStatuses } from './service'

const StatusList = t.Array(StatusSchema)

/**
 * Commit statuses: writers post them to a commit id (archived repositories included, as Gitea
 * has no mustNotBeArchived here), readers list them by commit id, branch or tag.
 */
export const statusesModule = (deps: AppDeps, api: AreaApp) => {
  const app = area(api, { tags: ['repository'] })
    .post(
      '/repos/:owner/:repo/statuses/:sha',
      async ({ params, body, status, repo, user }) => {
        const sha = await commitOfSha(deps, repo, params.sha)
        const row = await createStatus(deps, repo.repo.id, user, sha, body)
        return status(201, (await toApiStatuses(deps, repo, [row]))[0]!)
      },
      {
        scope: 'repository',
        repo: { level: 'write', writes: false },
        signed: true,
        params: ShaParams,
        body: CreateStatusOption,
        response: { 201: StatusSchema },
        detail: { operationId: 'repoCreateStatus', summary: 'Create a commit status' },
      },
    )
    .get(
      '/repos/:owner/:repo/commits/:ref/status',
      async ({ params, repo, page, request, set }) => {
        const sha = await commitOfRef(deps, repo, params.ref)
        const latest = await latestStatuses(deps, repo.repo.id, sha, page)
        setListHeaders(set, deps.config, request, page, latest.total)
        return await toApiCombinedStatus(deps, repo, sha, latest)
      },
      {
        scope: 'repository',
        repo: { level: 'read' },
        paged: true,
        params: RefParams,
        query: PageQuery,
        response: { 200: CombinedStatusSchema },
        detail: { operationId: 'repoGetCombinedStatus', summary: "Get a commit's combined status, by branch/tag/commit reference" },
      },
    )

  // A commit's statuses by commit id (Gitea's path) and by branch, tag or commit id (the seed's id
  // for it, as Gitea's swagger of the time named it): one handler.
  const lists = [
    ['/repos/:owner/:repo/statuses/:sha', ShaParams, 'repoListStatuses', "Get a commit's statuses"],
    ['/repos/:owner/:repo/commits/:ref/statuses', RefParams, 'repoGetCombinedStatusByRef', "Get a commit's statuses, by branch/tag/commit reference"],
  ] as const
  for (const [path, params, operationId, summary] of lists)
    app.get(
      path,
      async ({ params, query, repo, page, respond }) => {
        const ref = 'sha' in params ? params.sha : params.ref
        return respond(await listStatuses(deps, repo.repo.id, await commitOfRef(deps, repo, ref), page, query), async (rows) => await toApiStatuses(deps, repo, rows))
      },
      { scope: 'repository', repo: { level: 'read' }, paged: true, params, query: StatusListQuery, response: { 200: StatusList }, detail: { operationId, summary } },
    )
  return app
}
