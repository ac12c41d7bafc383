import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { pathNumber } from '../../lib/path-number'
import { PageQuery } from '../../lib/pagination'
import { RepoParams } from '../repos/model'
import { OrgParams } from '../orgs/model'
import {
  CreateHookOption,
  EditHookOption,
  HookDeliverySchema,
  HookIdParams,
  HookSchema,
  OrgHookDeliveryParams,
  OrgHookParams,
  RepoHookDeliveryParams,
  RepoHookParams,
} from './model'
import { deliveryToApi, hookToApi } from '../../convert/hook'
import { createHook, deleteHook, editHook, getDelivery, getHook, listDeliveries, listHooks, redeliver, testHook, type HookScope } from './service'
import { requireUser, type Caller } from '../../auth/caller'

const NoContent = { 204: t.Void({ description: 'no content' }) }
const Hooks = t.Array(HookSchema)
const Deliveries = t.Array(HookDeliverySchema)

/**
 * A scope of hooks the caller alone names (`/user/hooks`, `/admin/hooks`): its path, the needs of
 * its routes, its hooks' scope for the caller those needs let in, and its routes' operation ids
 * and tag.
 */
interface CallerHooks {
  path: string
  needs: { scope: 'user'; signed: true } | { scope: 'admin'; siteAdmin: true }
  scopeOf: (caller: Caller) => HookScope
  tag: string
  ids: { list: string; create: string; get: string; edit: string; delete: string }
  listSummary: string
}

/** The caller's own hooks (Gitea's /user/hooks: fired for every repository the caller owns). */
const USER_HOOKS: CallerHooks = {
  path: '/user/hooks',
  needs: { scope: 'user', signed: true },
  scopeOf: (caller) => ({ owner: requireUser(caller) }),
  tag: 'user',
  ids: { list: 'userListHooks', create: 'userCreateHook', get: 'userGetHook', edit: 'userEditHook', delete: 'userDeleteHook' },
  listSummary: "List the authenticated user's webhooks",
}

/** The site's hooks (Gitea's /admin/hooks: system and default hooks together). */
const SITE_HOOKS: CallerHooks = {
  path: '/admin/hooks',
  needs: { scope: 'admin', siteAdmin: true },
  scopeOf: () => ({ site: true }),
  tag: 'admin',
  ids: { list: 'adminListHooks', create: 'adminCreateHook', get: 'adminGetHook', edit: 'adminEditHook', delete: 'adminDeleteHook' },
  listSummary: "List system's webhooks",
}

/**
 * The five routes of a scope the caller alone names: list, create, get, edit, delete. The scope
 * comes from the caller the needs resolved (read again from its per-request cache: the two needs
 * resolve the same `user`, which Elysia's types cannot see through the union of needs).
 */
const callerHooksRoutes = (deps: AppDeps, app: AreaApp, hooks: CallerHooks) => {
  const { path, needs, tag, ids } = hooks
  const scopeOf = async (request: Request) => hooks.scopeOf(await deps.auth.caller(request))
  const detail = (operationId: string, summary: string) => ({ operationId, summary, tags: [tag] })
  app
    .get(path, async ({ request, respond, page }) => respond(await listHooks(deps, await scopeOf(request), page), (rows) => rows.map(hookToApi)), {
      ...needs,
      pageIfAsked: true,
      query: PageQuery,
      response: { 200: Hooks },
      detail: detail(ids.list, hooks.listSummary),
    })
    .post(path, async ({ request, body, status }) => status(201, hookToApi(await createHook(deps, await scopeOf(request), body))), {
      ...needs,
      body: CreateHookOption,
      response: { 201: HookSchema },
      detail: detail(ids.create, 'Create a hook'),
    })
    .get(`${path}/:id`, async ({ request, params }) => hookToApi(await getHook(deps, await scopeOf(request), pathNumber(params.id))), {
      ...needs,
      params: HookIdParams,
      response: { 200: HookSchema },
      detail: detail(ids.get, 'Get a hook'),
    })
    .patch(`${path}/:id`, async ({ request, params, body }) => hookToApi(await editHook(deps, await scopeOf(request), pathNumber(params.id), body)), {
      ...needs,
      params: HookIdParams,
      body: EditHookOption,
      response: { 200: HookSchema },
      detail: detail(ids.edit, 'Update a hook'),
    })
    .delete(`${path}/:id`, async ({ request, params, status }) => status(204, await deleteHook(deps, await scopeOf(request), pathNumber(params.id))), {
      ...needs,
      params: HookIdParams,
      response: NoContent,
      detail: detail(ids.delete, 'Delete a hook'),
    })
}

/**
 * Webhooks of repositories (repository admins), organisations (owners; fired for every
 * repository of the organisation), users (`/user/hooks`: the caller's own, fired for every
 * repository the caller owns) and the site (`/admin/hooks`, site administrators: system hooks,
 * fired for every repository, and default hooks, copied into each new repository); repositories'
 * and organisations' with their delivery history: `GET …/hooks/{id}/deliveries`
 * (newest first), `GET …/deliveries/{delivery}` (by id or delivery uuid) and
 * `POST …/deliveries/{delivery}/attempts` (send it again under a new delivery id; GitHub's path,
 * Gitea has the same only in its web UI). Like Gitea (and deploy keys), hooks of an archived
 * repository can still be managed.
 */
export const hooksModule = (deps: AppDeps, api: AreaApp) => {
  area(api, { tags: ['repository'] })
    // ---- repository hooks
    .get('/repos/:owner/:repo/hooks', async ({ repo, respond, page }) => respond(await listHooks(deps, { repo: repo.repo }, page), (rows) => rows.map(hookToApi)), {
      scope: 'repository',
      repo: { level: 'admin' },
      pageIfAsked: true,
      params: RepoParams,
      query: PageQuery,
      response: { 200: Hooks },
      detail: { operationId: 'repoListHooks', summary: 'List the hooks in a repository' },
    })
    .post('/repos/:owner/:repo/hooks', async ({ repo, body, status }) => status(201, hookToApi(await createHook(deps, { repo: repo.repo }, body))), {
      scope: 'repository',
      repo: { level: 'admin', writes: false },
      params: RepoParams,
      body: CreateHookOption,
      response: { 201: HookSchema },
      detail: { operationId: 'repoCreateHook', summary: 'Create a hook' },
    })
    .get('/repos/:owner/:repo/hooks/:id', async ({ repo, params }) => hookToApi(await getHook(deps, { repo: repo.repo }, pathNumber(params.id))), {
      scope: 'repository',
      repo: { level: 'admin' },
      params: RepoHookParams,
      response: { 200: HookSchema },
      detail: { operationId: 'repoGetHook', summary: 'Get a hook' },
    })
    .patch('/repos/:owner/:repo/hooks/:id', async ({ repo, params, body }) => hookToApi(await editHook(deps, { repo: repo.repo }, pathNumber(params.id), body)), {
      scope: 'repository',
      repo: { level: 'admin', writes: false },
      params: RepoHookParams,
      body: EditHookOption,
      response: { 200: HookSchema },
      detail: { operationId: 'repoEditHook', summary: 'Edit a hook in a repository' },
    })
    .delete(
      '/repos/:owner/:repo/hooks/:id',
      async ({ repo, params, status }) => {
        await deleteHook(deps, { repo: repo.repo }, pathNumber(params.id))
        return status(204, undefined)
      },
      {
        scope: 'repository',
        repo: { level: 'admin', writes: false },
        params: RepoHookParams,
        response: NoContent,
        detail: { operationId: 'repoDeleteHook', summary: 'Delete a hook in a repository' },
      },
    )
    .post(
      '/repos/:owner/:repo/hooks/:id/tests',
      async ({ repo, params, status }) => {
        const hook = await getHook(deps, { repo: repo.repo }, pathNumber(params.id))
        await testHook(deps, repo.repo, repo.owner, repo.caller.user!, hook)
        return status(204, undefined)
      },
      {
        scope: 'repository',
        repo: { level: 'admin', writes: false },
        params: RepoHookParams,
        response: NoContent,
        detail: { operationId: 'repoTestHook', summary: "Test a push webhook (a push of the default branch's head)" },
      },
    )
    .get(
      '/repos/:owner/:repo/hooks/:id/deliveries',
      async ({ repo, params, page, respond }) => {
        const hook = await getHook(deps, { repo: repo.repo }, pathNumber(params.id))
        return respond(await listDeliveries(deps, hook, page), (rows) => rows.map((task) => deliveryToApi(hook, task)))
      },
      {
        scope: 'repository',
        repo: { level: 'admin' },
        paged: true,
        params: RepoHookParams,
        query: PageQuery,
        response: { 200: Deliveries },
        detail: { operationId: 'repoListHookDeliveries', summary: "List a hook's deliveries, newest first" },
      },
    )
    .get(
      '/repos/:owner/:repo/hooks/:id/deliveries/:delivery',
      async ({ repo, params }) => {
        const hook = await getHook(deps, { repo: repo.repo }, pathNumber(params.id))
        return deliveryToApi(hook, await getDelivery(deps, hook, params.delivery))
      },
      {
        scope: 'repository',
        repo: { level: 'admin' },
        params: RepoHookDeliveryParams,
        response: { 200: HookDeliverySchema },
        detail: { operationId: 'repoGetHookDelivery', summary: 'Get one delivery of a hook (by id or delivery uuid)' },
      },
    )
    .post(
      '/repos/:owner/:repo/hooks/:id/deliveries/:delivery/attempts',
      async ({ repo, params, status }) => {
        const hook = await getHook(deps, { repo: repo.repo }, pathNumber(params.id))
        return status(202, deliveryToApi(hook, await redeliver(deps, hook, await getDelivery(deps, hook, params.delivery))))
      },
      {
        scope: 'repository',
        repo: { level: 'admin', writes: false },
        params: RepoHookDeliveryParams,
        response: { 202: HookDeliverySchema },
        detail: { operationId: 'repoRedeliverHookDelivery', summary: 'Send a delivery again, under a new delivery id' },
      },
    )
    // ---- organisation hooks (the seed's POST has a trailing slash: both spellings are served)
    .get('/orgs/:org/hooks', async ({ org, respond, page }) => respond(await listHooks(deps, { owner: org.org }, page), (rows) => rows.map(hookToApi)), {
      scope: 'organization',
      org: 'owner',
      pageIfAsked: true,
      params: OrgParams,
      query: PageQuery,
      response: { 200: Hooks },
      detail: { operationId: 'orgListHooks', summary: "List an organization's webhooks" },
    })
    .post('/orgs/:org/hooks', async ({ org, body, status }) => status(201, hookToApi(await createHook(deps, { owner: org.org }, body))), {
      scope: 'organization',
      org: 'owner',
      params: OrgParams,
      body: CreateHookOption,
      response: { 201: HookSchema },
      detail: { operationId: 'orgCreateHook', summary: 'Create a hook' },
    })
    .get('/orgs/:org/hooks/:id', async ({ org, params }) => hookToApi(await getHook(deps, { owner: org.org }, pathNumber(params.id))), {
      scope: 'organization',
      org: 'owner',
      params: OrgHookParams,
      response: { 200: HookSchema },
      detail: { operationId: 'orgGetHook', summary: 'Get a hook' },
    })
    .patch('/orgs/:org/hooks/:id', async ({ org, params, body }) => hookToApi(await editHook(deps, { owner: org.org }, pathNumber(params.id), body)), {
      scope: 'organization',
      org: 'owner',
      params: OrgHookParams,
      body: EditHookOption,
      response: { 200: HookSchema },
      detail: { operationId: 'orgEditHook', summary: 'Update a hook' },
    })
    .delete(
      '/orgs/:org/hooks/:id',
      async ({ org, params, status }) => {
        await deleteHook(deps, { owner: org.org }, pathNumber(params.id))
        return status(204, undefined)
      },
      {
        scope: 'organization',
        org: 'owner',
        params: OrgHookParams,
        response: NoContent,
        detail: { operationId: 'orgDeleteHook', summary: 'Delete a hook' },
      },
    )
    .get(
      '/orgs/:org/hooks/:id/deliveries',
      async ({ org, params, page, respond }) => {
        const hook = await getHook(deps, { owner: org.org }, pathNumber(params.id))
        return respond(await listDeliveries(deps, hook, page), (rows) => rows.map((task) => deliveryToApi(hook, task)))
      },
      {
        scope: 'organization',
        org: 'owner',
        paged: true,
        params: OrgHookParams,
        query: PageQuery,
        response: { 200: Deliveries },
        detail: { operationId: 'orgListHookDeliveries', summary: "List an organization hook's deliveries, newest first" },
      },
    )
    .get(
      '/orgs/:org/hooks/:id/deliveries/:delivery',
      async ({ org, params }) => {
        const hook = await getHook(deps, { owner: org.org }, pathNumber(params.id))
        return deliveryToApi(hook, await getDelivery(deps, hook, params.delivery))
      },
      {
        scope: 'organization',
        org: 'owner',
        params: OrgHookDeliveryParams,
        response: { 200: HookDeliverySchema },
        detail: { operationId: 'orgGetHookDelivery', summary: 'Get one delivery of an organization hook' },
      },
    )
    .post(
      '/orgs/:org/hooks/:id/deliveries/:delivery/attempts',
      async ({ org, params, status }) => {
        const hook = await getHook(deps, { owner: org.org }, pathNumber(params.id))
        return status(202, deliveryToApi(hook, await redeliver(deps, hook, await getDelivery(deps, hook, params.delivery))))
      },
      {
        scope: 'organization',
        org: 'owner',
        params: OrgHookDeliveryParams,
        response: { 202: HookDeliverySchema },
        detail: { operationId: 'orgRedeliverHookDelivery', summary: 'Send an organization hook delivery again, under a new delivery id' },
      },
    )
  callerHooksRoutes(deps, api, USER_HOOKS)
  callerHooksRoutes(deps, api, SITE_HOOKS)
}
