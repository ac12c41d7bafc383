import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type RepoNeed, type AreaApp } from '../../auth/pipeline'
import { pathNumber } from '../../lib/path-number'
import { issueToApi, issuesOfReposToApi } from '../../convert/issue'
import { IssueParams, IssueSchema } from '../issues/model'
import { reposOfIssues } from '../issues/search'
import { addDependency, listDependencies, removeDependency, type Direction } from './service'
import { IssueMeta } from './model'

const SUMMARIES: Record<Direction, { list: string; add: string; remove: string; ids: [string, string, string] }> = {
  dependencies: {
    list: "List an issue's dependencies: the issues that block it (those the caller may read)",
    add: 'Make the issue in the path depend on the issue in the body (writers of its repository)',
    remove: 'Remove a dependency of the issue in the path (writers of its repository)',
    ids: ['issueListIssueDependencies', 'issueCreateIssueDependencies', 'issueRemoveIssueDependencies'],
  },
  blocks: {
    list: 'List the issues the issue blocks (those the caller may read)',
    add: 'Block the issue in the body by the issue in the path (writers of the blocked issue’s repository)',
    remove: 'Unblock the issue in the body from the issue in the path (writers of the blocked issue’s repository)',
    ids: ['issueListBlocks', 'issueCreateIssueBlocking', 'issueRemoveIssueBlocking'],
  },
}

/** Dependencies between issues, both ways: …/dependencies (what blocks it) and …/blocks (what it blocks). */
export const issueDependenciesModule = (deps: AppDeps, api: AreaApp) => {
  const app = area(api, { tags: ['issue'] })
  for (const direction of ['dependencies', 'blocks'] as const) {
    const path = `/repos/:owner/:repo/issues/:index/${direction}`
    const words = SUMMARIES[direction]
    // Write access to the blocked issue's repository: the path's for …/dependencies, the body's
    // for …/blocks (which the service checks).
    const need: RepoNeed = direction === 'dependencies' ? { level: 'write', unit: 'issues' } : { unit: 'issues' }
    const change = {
      scope: 'issue',
      repo: need,
      signed: true,
      params: IssueParams,
      body: IssueMeta,
      response: { 201: IssueSchema },
    } as const
    app
      .get(
        path,
        async ({ params, repo, page, respond }) =>
          respond(await listDependencies(deps, repo, pathNumber(params.index), direction, page), async (rows) =>
            await issuesOfReposToApi(deps, await reposOfIssues(deps, rows), rows, repo.caller.user),
          ),
        {
          scope: 'issue',
          repo: { unit: 'issues' },
          paged: true,
          params: IssueParams,
          response: { 200: t.Array(IssueSchema) },
          detail: { operationId: words.ids[0], summary: words.list },
        },
      )
      .post(
        path,
        async ({ params, body, status, repo, user }) =>
          status(201, await issueToApi(deps, repo.repo, await addDependency(deps, repo, user, pathNumber(params.index), body, direction), user)),
        { ...change, detail: { operationId: words.ids[1], summary: words.add } },
      )
      .delete(
        path,
        // Gitea answers 201 with the issue here too.
        async ({ params, body, status, repo, user }) =>
          status(201, await issueToApi(deps, repo.repo, await removeDependency(deps, repo, user, pathNumber(params.index), body, direction), user)),
        { ...change, detail: { operationId: words.ids[2], summary: words.remove } },
      )
  }
  return app
}
