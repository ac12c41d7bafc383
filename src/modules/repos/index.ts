import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { requireSiteAdmin, requireUser } from '../../auth/caller'
import { AccessMode } from '../../auth/access'
import { loadRepoContext } from '../../auth/repo-context'
import { toApiRepo } from '../../lib/convert/repo'
import { unprocessable } from '../../lib/errors'
import { PageQuery, pageOf, setPageHeaders } from '../../lib/pagination'
import { getVisibleOwnerByName } from '../orgs/service'
import {
  CreateRepoOption,
  EditRepoOption,
  OwnerParams,
  RepoIdParams,
  RepoParams,
  RepoSearchQuery,
  RepositoryList,
  RepositorySchema,
  SearchResultsSchema,
} from './model'
import {
  createRepository,
  deleteRepository,
  editRepository,
  getReadableRepoById,
  listCallerRepos,
  listOwnedRepos,
  reposToApi,
  searchRepositories,
  newRepoFromOption,
} from './service'

/** Go's strconv.ParseBool, as Gitea reads boolean query parameters (anything else: 422). */
function queryBool(value: string | undefined, field: string): boolean {
  if (value === undefined || value === '') return false
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value)) return true
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value)) return false
  throw unprocessable('must be a boolean', field)
}

/** Repositories: create, get, edit, delete, lists and search (issue 3). */
export const reposModule = (deps: AppDeps) =>
  new Elysia({ name: 'repos', detail: { tags: ['repository'] } })
    .post(
      '/user/repos',
      async ({ request, body, status }) => {
        const user = requireUser(await deps.auth.caller(request))
        const repo = await createRepository(deps, user, { ...newRepoFromOption(body), creator: user })
        return status(201, toApiRepo(deps.config, repo, user, user, AccessMode.Owner))
      },
      {
        body: CreateRepoOption,
        response: { 201: RepositorySchema },
        detail: { operationId: 'createCurrentUserRepo', summary: 'Create a repository' },
      },
    )
    .post(
      '/admin/users/:username/repos',
      async ({ request, params, body, status }) => {
        const admin = requireSiteAdmin(await deps.auth.caller(request))
        const owner = getVisibleOwnerByName(deps, params.username, admin)
        const repo = await createRepository(deps, owner, { ...newRepoFromOption(body), creator: admin })
        return status(201, toApiRepo(deps.config, repo, owner, admin, AccessMode.Owner))
      },
      {
        params: OwnerParams,
        body: CreateRepoOption,
        response: { 201: RepositorySchema },
        detail: { operationId: 'adminCreateRepo', summary: 'Create a repository on behalf of a user or organisation' },
      },
    )
    .get(
      '/repos/search',
      async ({ request, query, set }) => {
        const caller = await deps.auth.caller(request)
        const page = pageOf(query, { defaultLimit: 10, maxLimit: 50 })
        const { rows, total } = searchRepositories(
          deps,
          caller.user,
          { q: query.q, uid: query.uid, mode: query.mode, exclusive: queryBool(query.exclusive, 'exclusive') },
          page,
        )
        setPageHeaders(set, deps.config, request, page, total)
        return { ok: true, data: reposToApi(deps, caller.user, rows) }
      },
      {
        query: RepoSearchQuery,
        response: { 200: SearchResultsSchema },
        detail: { operationId: 'repoSearch', summary: 'Search for repositories' },
      },
    )
    .get(
      '/repos/:owner/:repo',
      async ({ request, params }) => {
        const ctx = await loadRepoContext(deps, request, params.owner, params.repo)
        return toApiRepo(deps.config, ctx.repo, ctx.owner, ctx.caller.user, ctx.mode)
      },
      { params: RepoParams, response: { 200: RepositorySchema }, detail: { operationId: 'repoGet', summary: 'Get a repository' } },
    )
    .patch(
      '/repos/:owner/:repo',
      async ({ request, params, body }) => {
        const ctx = await loadRepoContext(deps, request, params.owner, params.repo, AccessMode.Admin)
        const repo = await editRepository(deps, ctx.repo, ctx.owner, ctx.mode, {
          name: body.name,
          description: body.description,
          website: body.website,
          private: body.private,
          defaultBranch: body.default_branch,
          hasIssues: body.has_issues,
          hasWiki: body.has_wiki,
          hasPullRequests: body.has_pull_requests,
          archived: body.archived,
          ignoreWhitespaceConflicts: body.ignore_whitespace_conflicts,
          allowMergeCommits: body.allow_merge_commits,
          allowRebase: body.allow_rebase,
          allowRebaseExplicit: body.allow_rebase_explicit,
          allowSquashMerge: body.allow_squash_merge,
          internalTracker: body.internal_tracker && {
            enableTimeTracker: body.internal_tracker.enable_time_tracker,
            allowOnlyContributorsToTrackTime: body.internal_tracker.allow_only_contributors_to_track_time,
          },
        }, ctx.caller.user)
        // Editing changes none of what the caller's access depends on (owner, members, teams).
        return toApiRepo(deps.config, repo, ctx.owner, ctx.caller.user, ctx.mode)
      },
      {
        params: RepoParams,
        body: EditRepoOption,
        response: { 200: RepositorySchema },
        detail: { operationId: 'repoEdit', summary: "Edit a repository's properties" },
      },
    )
    .delete(
      '/repos/:owner/:repo',
      async ({ request, params, status }) => {
        const ctx = await loadRepoContext(deps, request, params.owner, params.repo, AccessMode.Admin)
        deleteRepository(deps, ctx.repo, ctx.owner, ctx.mode, ctx.caller.user)
        return status(204, undefined)
      },
      { params: RepoParams, detail: { operationId: 'repoDelete', summary: 'Delete a repository' } },
    )
    .get(
      '/repositories/:id',
      async ({ request, params }) => {
        const user = requireUser(await deps.auth.caller(request))
        const repo = getReadableRepoById(deps, user, params.id)
        return reposToApi(deps, user, [repo])[0]!
      },
      { params: RepoIdParams, response: { 200: RepositorySchema }, detail: { operationId: 'repoGetByID', summary: 'Get a repository by id' } },
    )
    .get(
      '/user/repos',
      async ({ request, query, set }) => {
        const user = requireUser(await deps.auth.caller(request))
        const page = pageOf(query)
        const { rows, total } = listCallerRepos(deps, user, page)
        setPageHeaders(set, deps.config, request, page, total)
        return reposToApi(deps, user, rows)
      },
      {
        query: PageQuery,
        response: { 200: RepositoryList },
        detail: { operationId: 'userCurrentListRepos', summary: 'List the repositories the authenticated user owns or can reach' },
      },
    )
    .get(
      '/users/:username/repos',
      async ({ request, params, query, set }) => {
        const caller = await deps.auth.caller(request)
        const page = pageOf(query)
        // A user, or an organisation the caller may see (hidden ones answer 404 like unknown names).
        const owner = getVisibleOwnerByName(deps, params.username, caller.user)
        const { rows, total } = listOwnedRepos(deps, caller.user, owner, page)
        setPageHeaders(set, deps.config, request, page, total)
        return reposToApi(deps, caller.user, rows)
      },
      {
        params: OwnerParams,
        query: PageQuery,
        response: { 200: RepositoryList },
        detail: { operationId: 'userListRepos', summary: "List a user's repositories" },
      },
    )
