import type { AppDeps } from '../../deps'
import { AccessMode, accessLevel } from '../../auth/access'
import { area, type AreaApp } from '../../auth/pipeline'
import { toApiRepo, reposToApi, repoToApi } from '../../convert/repo'
import { recordJson } from '../../convert/record-json'
import { PageQuery } from '../../lib/pagination'
import { getVisibleUserByName } from '../users/service'
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
  TransferRepoOption,
  GenerateRepoOption,
} from './model'
import { createRepository, newRepoFromOption } from './create'
import { deleteRepository, editRepository } from './edit'
import { listCallerRepos, listOwnedRepos, searchRepositories } from './queries'
import { answerTransfer, startTransfer } from './transfer'
import { generateRepository } from './generate'
import { queryBool } from '../../lib/validate'

/** Repositories: create, get, edit, delete, lists and search. */
/** GET /repos/{owner}/{repo}'s record as JSON text, kept while the database is unchanged. */
const repoJson = recordJson('repository', RepositorySchema)

export const reposModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] })
    .post(
      '/user/repos',
      async ({ body, status, user }) => {
        const repo = await createRepository(deps, user, { ...newRepoFromOption(body), creator: user })
        return status(201, toApiRepo(deps.config, repo, user, user, AccessMode.Owner))
      },
      {
        scope: ['user', 'repository'],
        signed: true,
        body: CreateRepoOption,
        response: { 201: RepositorySchema },
        detail: { operationId: 'createCurrentUserRepo', summary: 'Create a repository' },
      },
    )
    .get(
      '/repos/search',
      async ({ query, caller, page, respond }) => {
        const found = await searchRepositories(
          deps,
          caller.user,
          {
            q: query.q,
            uid: query.uid,
            mode: query.mode,
            exclusive: queryBool(query.exclusive, 'exclusive'),
            archived: query.archived === undefined || query.archived === '' ? undefined : queryBool(query.archived, 'archived'),
            topic: queryBool(query.topic, 'topic'),
          },
          page,
        )
        return { ok: true, data: await respond(found, async (rows) => await reposToApi(deps, caller.user, rows)) }
      },
      {
        scope: 'repository',
        caller: true,
        paged: { defaultLimit: 10, maxLimit: 50 },
        query: RepoSearchQuery,
        response: { 200: SearchResultsSchema },
        detail: { operationId: 'repoSearch', summary: 'Search for repositories' },
      },
    )
    .get(
      '/repos/:owner/:repo',
      // The record's JSON text kept while nothing changes (recordJson); it depends on who asks and their access.
      async ({ repo: ctx }) => {
        const viewer = ctx.caller.user
        const key = `${ctx.repo.id}:${viewer?.id ?? '-'}:${viewer?.publicOnly ? 'public-only' : ''}:${ctx.mode}`
        return repoJson(deps, key, () => repoToApi(deps, ctx.repo, ctx.owner, viewer, ctx.mode))
      },
      { scope: 'repository', repo: { level: 'read' }, params: RepoParams, response: { 200: RepositorySchema }, detail: { operationId: 'repoGet', summary: 'Get a repository' } },
    )
    .patch(
      '/repos/:owner/:repo',
      async ({ body, repo: ctx }) => {
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
          allowFastForwardOnlyMerge: body.allow_fast_forward_only_merge,
          allowManualMerge: body.allow_manual_merge,
          autodetectManualMerge: body.autodetect_manual_merge,
          allowRebaseUpdate: body.allow_rebase_update,
          defaultMergeStyle: body.default_merge_style,
          defaultDeleteBranchAfterMerge: body.default_delete_branch_after_merge,
          defaultAllowMaintainerEdit: body.default_allow_maintainer_edit,
          hasReleases: body.has_releases,
          hasPackages: body.has_packages,
          hasProjects: body.has_projects,
          template: body.template,
          mirrorInterval: body.mirror_interval,
          externalTracker: body.external_tracker && {
            url: body.external_tracker.external_tracker_url,
            format: body.external_tracker.external_tracker_format,
            style: body.external_tracker.external_tracker_style,
            regexpPattern: body.external_tracker.external_tracker_regexp_pattern,
          },
          externalWikiUrl: body.external_wiki?.external_wiki_url ?? (body.external_wiki ? '' : undefined),
          internalTracker: body.internal_tracker && {
            enableTimeTracker: body.internal_tracker.enable_time_tracker,
            allowOnlyContributorsToTrackTime: body.internal_tracker.allow_only_contributors_to_track_time,
            enableIssueDependencies: body.internal_tracker.enable_issue_dependencies,
          },
        }, ctx.caller.user)
        // Editing changes none of what the caller's access depends on (owner, members, teams).
        return await repoToApi(deps, repo, ctx.owner, ctx.caller.user, ctx.mode)
      },
      {
        scope: 'repository',
        // Unarchiving is an edit: it works on an archived repository (Gitea checks no archive here).
        repo: { level: 'admin', writes: false },
        params: RepoParams,
        body: EditRepoOption,
        response: { 200: RepositorySchema },
        detail: { operationId: 'repoEdit', summary: "Edit a repository's properties" },
      },
    )
    .delete(
      '/repos/:owner/:repo',
      async ({ status, repo: ctx }) => {
        await deleteRepository(deps, ctx.repo, ctx.mode, ctx.caller.user)
        return status(204, undefined)
      },
      { scope: 'repository', repo: { level: 'admin', writes: false }, params: RepoParams, detail: { operationId: 'repoDelete', summary: 'Delete a repository' } },
    )
    .post(
      '/repos/:owner/:repo/generate',
      async ({ body, status, repo: ctx, user }) => {
        const made = await generateRepository(deps, ctx.repo, user, {
          owner: body.owner,
          name: body.name,
          description: body.description,
          private: body.private,
          defaultBranch: body.default_branch,
          gitContent: body.git_content,
          topics: body.topics,
          labels: body.labels,
          protectedBranch: body.protected_branch,
          avatar: body.avatar,
          others: body.git_hooks || body.webhooks,
        })
        return status(201, await repoToApi(deps, made.repo, made.owner, user, made.mode))
      },
      {
        scope: 'repository',
        repo: { level: 'read', writes: false },
        signed: true,
        params: RepoParams,
        body: GenerateRepoOption,
        response: { 201: RepositorySchema },
        detail: {
          operationId: 'generateRepo',
          summary: 'Create a repository using a template',
          description:
            "Copies what is asked of the template: its default branch's content as one new commit, topics, labels, branch protection rules, the avatar. Webhooks are never copied (their secrets and addresses would reach the new repository's administrators); git hooks are not kept per repository.",
        },
      },
    )
    .post(
      '/repos/:owner/:repo/transfer',
      async ({ body, status, repo: ctx, user }) => {
        const done = await startTransfer(deps, ctx.repo, ctx.owner, user, ctx.mode, body.new_owner, body.team_ids)
        // Gitea shows the record with admin access: 201 while the recipient must accept, 202 when moved.
        return status(done.pending ? 201 : 202, await repoToApi(deps, done.repo, done.owner, user, AccessMode.Admin))
      },
      {
        scope: 'repository',
        repo: { level: 'owner', writes: false },
        signed: true,
        params: RepoParams,
        body: TransferRepoOption,
        response: { 201: RepositorySchema, 202: RepositorySchema },
        detail: { operationId: 'repoTransfer', summary: 'Transfer a repo ownership' },
      },
    )
    .post(
      '/repos/:owner/:repo/transfer/accept',
      async ({ status, repo: ctx, user }) => {
        const done = await answerTransfer(deps, ctx.repo, ctx.owner, user, true)
        return status(202, await repoToApi(deps, done.repo, done.owner, user, await accessLevel(deps.db, user, done.repo, done.owner)))
      },
      {
        scope: 'repository',
        repo: { level: 'read', writes: false },
        signed: true,
        params: RepoParams,
        response: { 202: RepositorySchema },
        detail: { operationId: 'acceptRepoTransfer', summary: 'Accept a repo transfer' },
      },
    )
    .post(
      '/repos/:owner/:repo/transfer/reject',
      async ({ repo: ctx, user }) => {
        await answerTransfer(deps, ctx.repo, ctx.owner, user, false)
        return await repoToApi(deps, ctx.repo, ctx.owner, user, ctx.mode)
      },
      {
        scope: 'repository',
        repo: { level: 'read', writes: false },
        signed: true,
        params: RepoParams,
        response: { 200: RepositorySchema },
        detail: { operationId: 'rejectRepoTransfer', summary: 'Reject a repo transfer' },
      },
    )
    .get(
      '/repositories/:id',
      async ({ repoById, user }) => (await reposToApi(deps, user, [repoById]))[0]!,
      { scope: 'repository', signed: true, repoById: true, params: RepoIdParams, response: { 200: RepositorySchema }, detail: { operationId: 'repoGetByID', summary: 'Get a repository by id' } },
    )
    .get(
      '/user/repos',
      async ({ user, page, respond }) => respond(await listCallerRepos(deps, user, page), async (rows) => await reposToApi(deps, user, rows)),
      {
        scope: ['user', 'repository'],
        signed: true,
        paged: true,
        query: PageQuery,
        response: { 200: RepositoryList },
        detail: { operationId: 'userCurrentListRepos', summary: 'List the repositories the authenticated user owns or can reach' },
      },
    )
    .get(
      '/users/:username/repos',
      async ({ params, caller, page, respond }) => {
        // A user, or an organisation the caller may see (hidden ones answer 404 like unknown names).
        const owner = await getVisibleUserByName(deps, params.username, caller.user, 'owner')
        return respond(await listOwnedRepos(deps, caller.user, owner, page), async (rows) => await reposToApi(deps, caller.user, rows))
      },
      {
        scope: ['user', 'repository'],
        caller: true,
        paged: true,
        params: OwnerParams,
        query: PageQuery,
        response: { 200: RepositoryList },
        detail: { operationId: 'userListRepos', summary: "List a user's repositories" },
      },
    )
