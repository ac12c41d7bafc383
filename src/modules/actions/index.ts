import { t, type TSchema } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import type { ScopeCategory } from '../../auth/scopes'
import type { RepoContext } from '../../auth/repo-context'
import type { OrgContext } from '../../auth/org-context'
import type { UserRow } from '../../auth/caller'
import { PageQuery } from '../../lib/pagination'
import { secretToApi, variableToApi } from '../../convert/actions'
import { RepoParams } from '../repos/model'
import { OrgParams } from '../orgs/model'
import {
  ActionVariableSchema,
  CreateOrUpdateSecretOption,
  CreateVariableOption,
  OrgSecretParams,
  OrgVariableParams,
  RegistrationTokenSchema,
  RepoSecretParams,
  RepoVariableParams,
  SecretParams,
  SecretSchema,
  UpdateVariableOption,
  VariableParams,
} from './model'
import {
  createVariable,
  deleteSecret,
  deleteVariable,
  getVariable,
  listSecrets,
  listVariables,
  putSecret,
  runnerRegistrationToken,
  updateVariable,
  type ActionsHolder,
} from './service'

/**
 * Gitea Actions' API for what needs no runner: secrets, variables and runner registration tokens
 * of a repository (its owners: Gitea's reqOwner), an organisation (its owners), the signed-in
 * user, and (tokens only) the site (its administrators). No route refuses an archived
 * repository, as in Gitea. Every holder serves the same operations through one set of handlers
 * (`holderRoutes`); the ids are Gitea's (1.23; the POST that resets a registration token, 1.24's).
 */

/** The needs a holder's routes resolve (each route has the one of its holder). */
interface HolderNeeds {
  repo?: RepoContext
  org?: OrgContext
  user?: UserRow
}

/** The two kinds of setting a holder keeps by name. */
type Kind = 'secrets' | 'variables'

interface Holder {
  /** The path before `/actions/…` (`/admin` for the site: `/admin/runners/…`). */
  prefix: string
  /** The pipeline's needs, beside `scope`. */
  needs: Record<string, unknown>
  scope: ScopeCategory
  /** The holder, from the route's needs (a route's handler destructures them: test/route-context.test.ts). */
  holder: (needs: HolderNeeds) => ActionsHolder
  /** The path's schema: the holder's (`base`), and with a secret's or a variable's name. */
  params: { base?: TSchema } & Partial<Record<Kind, TSchema>>
  tag: string
  /** Operation ids by kind and operation; an operation or kind left out is not served. */
  ids: {
    secrets?: { list?: string; put: string; delete: string }
    variables?: { list: string; get: string; create: string; update: string; delete: string }
    token?: { get: string; reset: string }
  }
}

/** What a 201 without a record answers (Gitea's empty body). */
const Empty = t.String({ description: 'empty' })

/** What the routes of secrets and of variables share: a page of them, and one deleted by name. */
const KINDS = {
  secrets: {
    param: 'secretname',
    list: listSecrets,
    remove: deleteSecret,
    toApi: secretToApi,
    record: SecretSchema,
    listed: "List the holder's actions secrets (names and times, never values)",
    removed: 'Delete a secret',
  },
  variables: {
    param: 'variablename',
    list: listVariables,
    remove: deleteVariable,
    toApi: variableToApi,
    record: ActionVariableSchema,
    listed: "List the holder's actions variables",
    removed: 'Delete a variable',
  },
} as const

/** A holder's routes, added to the app (`area`). */
function holderRoutes(deps: AppDeps, api: AreaApp, h: Holder) {
  const base = h.prefix === '/admin' ? '/admin' : `${h.prefix}/actions`
  const declare = (id: string, summary: string, more: Record<string, unknown>) =>
    ({ scope: h.scope, ...h.needs, ...more, detail: { operationId: id, summary, tags: [h.tag] } }) as any
  const withParams = (schema: TSchema | undefined) => (schema ? { params: schema } : {})
  let app = api as any

  /** A kind's list (when it has an id) and deletion. */
  const listAndDelete = (kind: Kind, ids: { list?: string; delete: string }) => {
    const k = KINDS[kind]
    if (ids.list)
      app = app.get(
        `${base}/${kind}`,
        async ({ repo, org, user, page, respond }: any) => respond(await k.list(deps, h.holder({ repo, org, user }), page), (rows: any[]) => rows.map((row) => k.toApi(row))),
        declare(ids.list, k.listed, { paged: true, ...withParams(h.params.base), query: PageQuery, response: { 200: t.Array(k.record) } }),
      )
    app = app.delete(
      `${base}/${kind}/:${k.param}`,
      async ({ repo, org, user, params, status }: any) => {
        await k.remove(deps, h.holder({ repo, org, user }), params[k.param])
        return status(204, undefined)
      },
      declare(ids.delete, k.removed, { ...withParams(h.params[kind]), response: { 204: t.Void() } }),
    )
  }

  const { secrets, variables, token } = h.ids
  if (secrets) {
    listAndDelete('secrets', secrets)
    app = app.put(
      `${base}/secrets/:secretname`,
      async ({ repo, org, user, params, body, status }: any) =>
        (await putSecret(deps, h.holder({ repo, org, user }), params.secretname, body.data)) ? status(201, '') : status(204, undefined),
      declare(secrets.put, 'Create or update a secret', { ...withParams(h.params.secrets), body: CreateOrUpdateSecretOption, response: { 201: Empty, 204: t.Void() } }),
    )
  }
  if (variables) {
    listAndDelete('variables', variables)
    app = app
      .get(
        `${base}/variables/:variablename`,
        async ({ repo, org, user, params }: any) => variableToApi(await getVariable(deps, h.holder({ repo, org, user }), params.variablename)),
        declare(variables.get, 'Get a variable', { ...withParams(h.params.variables), response: { 200: ActionVariableSchema } }),
      )
      .post(
        `${base}/variables/:variablename`,
        async ({ repo, org, user, params, body, status }: any) => {
          await createVariable(deps, h.holder({ repo, org, user }), params.variablename, body.value)
          return status(201, '')
        },
        declare(variables.create, 'Create a variable', { ...withParams(h.params.variables), body: CreateVariableOption, response: { 201: Empty } }),
      )
      .put(
        `${base}/variables/:variablename`,
        async ({ repo, org, user, params, body, status }: any) => {
          await updateVariable(deps, h.holder({ repo, org, user }), params.variablename, body)
          return status(204, undefined)
        },
        declare(variables.update, 'Update a variable (and rename it when `name` is given)', {
          ...withParams(h.params.variables),
          body: UpdateVariableOption,
          response: { 204: t.Void() },
        }),
      )
  }
  if (token)
    app = app
      .get(
        `${base}/runners/registration-token`,
        async ({ repo, org, user }: any) => ({ token: await runnerRegistrationToken(deps, h.holder({ repo, org, user })) }),
        declare(token.get, "Get the holder's actions runner registration token (made on first ask)", { ...withParams(h.params.base), response: { 200: RegistrationTokenSchema } }),
      )
      .post(
        `${base}/runners/registration-token`,
        async ({ repo, org, user }: any) => ({ token: await runnerRegistrationToken(deps, h.holder({ repo, org, user }), true) }),
        declare(token.reset, "Reset the holder's actions runner registration token", { ...withParams(h.params.base), response: { 200: RegistrationTokenSchema } }),
      )
}

export const actionsModule = (deps: AppDeps, api: AreaApp) => {
  const app = area(api)
  holderRoutes(deps, app, {
    prefix: '/repos/:owner/:repo',
    needs: { repo: { level: 'owner', writes: false } },
    scope: 'repository',
    holder: ({ repo }) => ({ repoId: repo!.repo.id }),
    params: { base: RepoParams, secrets: RepoSecretParams, variables: RepoVariableParams },
    tag: 'repository',
    ids: {
      secrets: { list: 'repoListActionsSecrets', put: 'updateRepoSecret', delete: 'deleteRepoSecret' },
      variables: { list: 'getRepoVariablesList', get: 'getRepoVariable', create: 'createRepoVariable', update: 'updateRepoVariable', delete: 'deleteRepoVariable' },
      token: { get: 'repoGetRunnerRegistrationToken', reset: 'repoCreateRunnerRegistrationToken' },
    },
  })
  holderRoutes(deps, app, {
    prefix: '/orgs/:org',
    needs: { org: 'owner' },
    scope: 'organization',
    holder: ({ org }) => ({ ownerId: org!.org.id }),
    params: { base: OrgParams, secrets: OrgSecretParams, variables: OrgVariableParams },
    tag: 'organization',
    ids: {
      secrets: { list: 'orgListActionsSecrets', put: 'updateOrgSecret', delete: 'deleteOrgSecret' },
      variables: { list: 'getOrgVariablesList', get: 'getOrgVariable', create: 'createOrgVariable', update: 'updateOrgVariable', delete: 'deleteOrgVariable' },
      token: { get: 'orgGetRunnerRegistrationToken', reset: 'orgCreateRunnerRegistrationToken' },
    },
  })
  holderRoutes(deps, app, {
    // Gitea 1.23 lists no user's secrets.
    prefix: '/user',
    needs: { signed: true },
    scope: 'user',
    holder: ({ user }) => ({ ownerId: user!.id }),
    params: { secrets: SecretParams, variables: VariableParams },
    tag: 'user',
    ids: {
      secrets: { put: 'updateUserSecret', delete: 'deleteUserSecret' },
      variables: { list: 'getUserVariablesList', get: 'getUserVariable', create: 'createUserVariable', update: 'updateUserVariable', delete: 'deleteUserVariable' },
      token: { get: 'userGetRunnerRegistrationToken', reset: 'userCreateRunnerRegistrationToken' },
    },
  })
  holderRoutes(deps, app, {
    prefix: '/admin',
    needs: { siteAdmin: true },
    scope: 'admin',
    holder: () => 'global',
    params: {},
    tag: 'admin',
    ids: { token: { get: 'adminGetRunnerRegistrationToken', reset: 'adminCreateRunnerRegistrationToken' } },
  })
}
