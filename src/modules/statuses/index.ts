import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import { requireUser } from '../../auth/caller'
import { PageQuery, setPageHeaders, type Page } from '../../lib/pagination'
import type { RepoContext } from '../../auth/repo-context'
import type { Respond } from '../../auth/pipeline'
import { CombinedStatusSchema, CreateStatusOption, RefParams, ShaParams, StatusListQuery, StatusSchema } from './model'
import { commitOfRef, commitOfSha, createStatus, latestStatuses, listStatuses, toApiCombinedStatus, toApiStatuses, type StatusFilter } from './service'

const StatusList = t.Array(StatusSchema)

/**
 * Commit statuses: writers post them to a commit id (archived repositories included, as Gitea
 * has no mustNotBeArchived here), readers list them by commit id, branch or tag.
 */
export const statusesModule = (deps: AppDeps) => {
  /** A page of the statuses of the commit `ref` names (both list routes). */
  const statusesOfRef = async (ref: string, query: StatusFilter, repo: RepoContext, page: Page, respond: Respond) =>
    respond(listStatuses(deps, repo.repo.id, await commitOfRef(deps, repo, ref), page, query), (rows) => toApiStatuses(deps, repo, rows))
  return new Elysia({ name: 'statuses', detail: { tags: ['repository'] } })
    .use(pipeline(deps))
    .post(
      '/repos/:owner/:repo/statuses/:sha',
      async ({ params, body, status, repo }) => {
        const sha = await commitOfSha(deps, repo, params.sha)
        const row = createStatus(deps, repo.repo.id, requireUser(repo.caller), sha, body)
        return status(201, toApiStatuses(deps, repo, [row])[0]!)
      },
      {
        repo: { level: 'write', writes: false },
        params: ShaParams,
        body: CreateStatusOption,
        response: { 201: StatusSchema },
        detail: { operationId: 'repoCreateStatus', summary: 'Create a commit status' },
      },
    )
    .get(
      '/repos/:owner/:repo/statuses/:sha',
      ({ params, query, repo, page, respond }) => statusesOfRef(params.sha, query, repo, page, respond),
      {
        repo: { level: 'read' },
        paged: true,
        params: ShaParams,
        query: StatusListQuery,
        response: { 200: StatusList },
        detail: { operationId: 'repoListStatuses', summary: "Get a commit's statuses" },
      },
    )
    .get(
      '/repos/:owner/:repo/commits/:ref/statuses',
      ({ params, query, repo, page, respond }) => statusesOfRef(params.ref, query, repo, page, respond),
      {
        repo: { level: 'read' },
        paged: true,
        params: RefParams,
        query: StatusListQuery,
        response: { 200: StatusList },
        // The seed's id (Gitea's swagger of the time named this route so; it lists statuses).
        detail: { operationId: 'repoGetCombinedStatusByRef', summary: "Get a commit's statuses, by branch/tag/commit reference" },
      },
    )
    .get(
      '/repos/:owner/:repo/commits/:ref/status',
      async ({ params, repo, page, request, set }) => {
        const sha = await commitOfRef(deps, repo, params.ref)
        const latest = latestStatuses(deps, repo.repo.id, sha, page)
        setPageHeaders(set, deps.config, request, page, latest.total)
        return toApiCombinedStatus(deps, repo, sha, latest)
      },
      {
        repo: { level: 'read' },
        paged: true,
        params: RefParams,
        query: PageQuery,
        response: { 200: CombinedStatusSchema },
        detail: { operationId: 'repoGetCombinedStatus', summary: "Get a commit's combined status, by branch/tag/commit reference" },
      },
    )
}
