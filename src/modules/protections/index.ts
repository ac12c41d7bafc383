import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { pathNumber } from '../../lib/path-number'
import { RepoParams } from '../repos/model'
import { RepoWildcardParams, refNameOf } from '../files/model'
import { branchProtectionsToApi, tagProtectionsToApi } from '../../convert/protection'
import {
  BranchProtectionSchema,
  CreateBranchProtectionOption,
  CreateTagProtectionOption,
  EditBranchProtectionOption,
  EditTagProtectionOption,
  TagProtectionParams,
  TagProtectionSchema,
  UpdateBranchProtectionPriories,
} from './model'
import {
  createBranchRule,
  createTagRule,
  deleteBranchRule,
  deleteTagRule,
  editBranchRule,
  editTagRule,
  getBranchRule,
  getTagRule,
  listBranchRules,
  listTagRules,
  setBranchRulePriorities,
} from './service'

const admin = { scope: 'repository', repo: { level: 'admin' } } as const
const adminWrites = { scope: 'repository', repo: { level: 'admin', writes: true }, signed: true } as const
const one = async (deps: AppDeps, row: Parameters<typeof branchProtectionsToApi>[1][number]) => (await branchProtectionsToApi(deps, [row]))[0]!
const oneTag = async (deps: AppDeps, row: Parameters<typeof tagProtectionsToApi>[1][number]) => (await tagProtectionsToApi(deps, [row]))[0]!

/**
 * A repository's branch and tag protection rules (Gitea's branch_protections, tag_protections):
 * repository admins only. Lists are whole (a repository's rules are bounded by
 * WARREN_MAX_PROTECTIONS_PER_REPO). A rule name may hold slashes (`release/*`): the path's wildcard.
 */
export const protectionsModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] })
    .get('/repos/:owner/:repo/branch_protections', async ({ repo }) => await branchProtectionsToApi(deps, await listBranchRules(deps, repo.repo.id)), {
      ...admin,
      params: RepoParams,
      response: { 200: t.Array(BranchProtectionSchema) },
      detail: { operationId: 'repoListBranchProtection', summary: 'List branch protections for a repository' },
    })
    .post('/repos/:owner/:repo/branch_protections', async ({ body, repo, status }) => status(201, await one(deps, await createBranchRule(deps, repo, body))), {
      ...adminWrites,
      params: RepoParams,
      body: CreateBranchProtectionOption,
      response: { 201: BranchProtectionSchema },
      detail: { operationId: 'repoCreateBranchProtection', summary: 'Create a branch protections for a repository' },
    })
    .post(
      '/repos/:owner/:repo/branch_protections/priority',
      async ({ body, repo, status }) => {
        await setBranchRulePriorities(deps, repo, body.ids ?? [])
        return status(204, undefined)
      },
      {
        ...adminWrites,
        params: RepoParams,
        body: UpdateBranchProtectionPriories,
        response: { 204: t.Void() },
        detail: { operationId: 'repoUpdateBranchProtectionPriories', summary: 'Update the priorities of branch protections for a repository.' },
      },
    )
    .get('/repos/:owner/:repo/branch_protections/*', async ({ params, repo }) => await one(deps, await getBranchRule(deps, repo.repo.id, refNameOf(params))), {
      ...admin,
      params: RepoWildcardParams,
      response: { 200: BranchProtectionSchema },
      detail: { operationId: 'repoGetBranchProtection', summary: 'Get a specific branch protection for the repository' },
    })
    .patch('/repos/:owner/:repo/branch_protections/*', async ({ params, body, repo }) => await one(deps, await editBranchRule(deps, repo, refNameOf(params), body)), {
      ...adminWrites,
      params: RepoWildcardParams,
      body: EditBranchProtectionOption,
      response: { 200: BranchProtectionSchema },
      detail: { operationId: 'repoEditBranchProtection', summary: 'Edit a branch protections for a repository. Only fields that are set will be changed' },
    })
    .delete(
      '/repos/:owner/:repo/branch_protections/*',
      async ({ params, repo, status }) => {
        await deleteBranchRule(deps, repo, refNameOf(params))
        return status(204, undefined)
      },
      {
        ...adminWrites,
        params: RepoWildcardParams,
        response: { 204: t.Void() },
        detail: { operationId: 'repoDeleteBranchProtection', summary: 'Delete a specific branch protection for the repository' },
      },
    )
    .get('/repos/:owner/:repo/tag_protections', async ({ repo }) => await tagProtectionsToApi(deps, await listTagRules(deps, repo.repo.id)), {
      ...admin,
      params: RepoParams,
      response: { 200: t.Array(TagProtectionSchema) },
      detail: { operationId: 'repoListTagProtection', summary: 'List tag protections for a repository' },
    })
    .post('/repos/:owner/:repo/tag_protections', async ({ body, repo, status }) => status(201, await oneTag(deps, await createTagRule(deps, repo, body))), {
      ...adminWrites,
      params: RepoParams,
      body: CreateTagProtectionOption,
      response: { 201: TagProtectionSchema },
      detail: { operationId: 'repoCreateTagProtection', summary: 'Create a tag protections for a repository' },
    })
    .get('/repos/:owner/:repo/tag_protections/:id', async ({ params, repo }) => await oneTag(deps, await getTagRule(deps, repo.repo.id, pathNumber(params.id))), {
      ...admin,
      params: TagProtectionParams,
      response: { 200: TagProtectionSchema },
      detail: { operationId: 'repoGetTagProtection', summary: 'Get a specific tag protection for the repository' },
    })
    .patch('/repos/:owner/:repo/tag_protections/:id', async ({ params, body, repo }) => await oneTag(deps, await editTagRule(deps, repo, pathNumber(params.id), body)), {
      ...adminWrites,
      params: TagProtectionParams,
      body: EditTagProtectionOption,
      response: { 200: TagProtectionSchema },
      detail: { operationId: 'repoEditTagProtection', summary: 'Edit a tag protections for a repository. Only fields that are set will be changed' },
    })
    .delete(
      '/repos/:owner/:repo/tag_protections/:id',
      async ({ params, repo, status }) => {
        await deleteTagRule(deps, repo, pathNumber(params.id))
        return status(204, undefined)
      },
      {
        ...adminWrites,
        params: TagProtectionParams,
        response: { 204: t.Void() },
        detail: { operationId: 'repoDeleteTagProtection', summary: 'Delete a specific tag protection for the repository' },
      },
    )
