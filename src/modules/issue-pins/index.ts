import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { pathNumber } from '../../lib/path-number'
import { issuesToApi } from '../../convert/issue'
import { pullsToApi } from '../../convert/pull'
import { IssueParams, IssueSchema } from '../issues/model'
import { PullRequestSchema } from '../pulls/model'
import { RepoParams } from '../repos/model'
import { movePin, newPinsAllowed, pinIssue, pinnedIssues, pinnedPulls, unpinIssue } from './service'

const PinParams = t.Object({ owner: t.String(), repo: t.String(), index: t.String({ description: 'index of the issue' }), position: t.String({ description: 'the new position (1-based)' }) })
const NewIssuePinsAllowed = t.Object({ issues: t.Boolean(), pull_requests: t.Boolean() }, { $id: '#/components/schemas/NewIssuePinsAllowed' })

/** What pinning, unpinning and moving need: Gitea's reqAdmin. */
const byAdmins = { scope: 'issue', repo: { level: 'admin', unit: 'issues' }, signed: true, response: { 204: t.Void() } } as const

/** Pinned issues and pull requests: pin, unpin and move (repository admins, as Gitea's reqAdmin), and the lists. */
export const issuePinsModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['issue'] })
    .get('/repos/:owner/:repo/issues/pinned', async ({ repo }) => await issuesToApi(deps, repo.repo, await pinnedIssues(deps, repo.repo.id), repo.caller.user), {
      scope: 'issue',
      repo: { unit: 'issues' },
      params: RepoParams,
      response: { 200: t.Array(IssueSchema) },
      detail: { operationId: 'repoListPinnedIssues', summary: "List a repository's pinned issues, in their order" },
    })
    .get(
      '/repos/:owner/:repo/pulls/pinned',
      async ({ repo }) => await pullsToApi(deps, repo.repo, repo.owner, await pinnedPulls(deps, repo.repo.id), repo.caller.user),
      {
        scope: 'repository',
        repo: { unit: 'pulls' },
        params: RepoParams,
        response: { 200: t.Array(PullRequestSchema) },
        detail: { operationId: 'repoListPinnedPullRequests', summary: "List a repository's pinned pull requests, in their order" },
      },
    )
    .get('/repos/:owner/:repo/new_pin_allowed', async ({ repo }) => await newPinsAllowed(deps, repo.repo.id), {
      scope: 'repository',
      repo: { level: 'read' },
      params: RepoParams,
      response: { 200: NewIssuePinsAllowed },
      detail: { operationId: 'repoNewPinAllowed', summary: 'Whether one more issue and one more pull request may be pinned' },
    })
    .post(
      '/repos/:owner/:repo/issues/:index/pin',
      async ({ params, status, repo, user }) => {
        await pinIssue(deps, repo, pathNumber(params.index), user)
        return status(204, undefined)
      },
      { ...byAdmins, params: IssueParams, detail: { operationId: 'pinIssue', summary: 'Pin an issue or pull request at the last place (at most 3 of each kind)' } },
    )
    .delete(
      '/repos/:owner/:repo/issues/:index/pin',
      async ({ params, status, repo, user }) => {
        await unpinIssue(deps, repo, pathNumber(params.index), user)
        return status(204, undefined)
      },
      { ...byAdmins, params: IssueParams, detail: { operationId: 'unpinIssue', summary: 'Unpin an issue or pull request' } },
    )
    .patch(
      '/repos/:owner/:repo/issues/:index/pin/:position',
      async ({ params, status, repo }) => {
        await movePin(deps, repo, pathNumber(params.index), pathNumber(params.position))
        return status(204, undefined)
      },
      {
        ...byAdmins,
        params: PinParams,
        detail: { operationId: 'moveIssuePin', summary: 'Move a pinned issue or pull request to a place (past the last: last)' },
      },
    )
