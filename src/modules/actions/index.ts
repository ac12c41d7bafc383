import { Elysia, t, type TSchema } from 'elysia'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import type { ScopeCategory } from '../../auth/scopes'
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

interface Holder {
  /** The path before `/actions/…` (`/admin` for the site: `/admin/runners/…`). */
  prefix: string
  /** The pipeline's needs, beside `scope`. */
  needs: Record<string, unknown>
  scope: ScopeCategory
  holder: (ctx: any) => ActionsHolder
  params: { base?: TSchema; secret?: TSchema; variable?: TSchema }
  tag: string
  /** Operation ids by operation; an operation left out is not served. */
  ids: Partial<Record<'listSecrets' | 'putSecret' | 'deleteSecret' | 'listVariables' | 'getVariable' | 'createVariable' | 'updateVariable' | 'deleteVariable' | 'getToken' | 'resetToken', string>>
}

/** What a 201 without a record answers (Gitea's empty body). */
const Empty = t.String({ description: 'empty' })

function holderRoutes(deps: AppDeps, h: Holder) {
  const base = h.prefix === '/admin' ? '/admin' : `${h.prefix}/actions`
  const declare = (id: string, summary: string, more: Record<string, unknown>) =>
    ({ scope: h.scope, ...h.needs, ...more, detail: { operationId: id, summary, tags: [h.tag] } }) as any
  const withParams = (schema: TSchema | undefined) => (schema ? { params: schema } : {})
  let app = new Elysia({ name: `actions-${h.tag}-${h.prefix}` }).use(pipeline(deps)) as any
  const { ids } = h
  if (ids.listSecrets)
    app = app.get(
      `${base}/secrets`,
      async (ctx: any) => ctx.respond(await listSecrets(deps, h.holder(ctx), ctx.page), (rows: any[]) => rows.map(secretToApi)),
      declare(ids.listSecrets, "List the holder's actions secrets (names and times, never values)", {
        paged: true,
        ...withParams(h.params.base),
        query: PageQuery,
        response: { 200: t.Array(SecretSchema) },
      }),
    )
  if (ids.putSecret)
    app = app.put(
      `${base}/secrets/:secretname`,
      async (ctx: any) => (await putSecret(deps, h.holder(ctx), ctx.params.secretname, ctx.body.data)) ? ctx.status(201, '') : ctx.status(204, undefined),
      declare(ids.putSecret, 'Create or update a secret', {
        ...withParams(h.params.secret),
        body: CreateOrUpdateSecretOption,
        response: { 201: Empty, 204: t.Void() },
      }),
    )
  if (ids.deleteSecret)
    app = app.delete(
      `${base}/secrets/:secretname`,
      async (ctx: any) => {
        await deleteSecret(deps, h.holder(ctx), ctx.params.secretname)
        return ctx.status(204, undefined)
      },
      declare(ids.deleteSecret, 'Delete a secret', { ...withParams(h.params.secret), response: { 204: t.Void() } }),
    )
  if (ids.listVariables)
    app = app.get(
      `${base}/variables`,
      async (ctx: any) => ctx.respond(await listVariables(deps, h.holder(ctx), ctx.page), (rows: any[]) => rows.map(variableToApi)),
      declare(ids.listVariables, "List the holder's actions variables", {
        paged: true,
        ...withParams(h.params.base),
        query: PageQuery,
        response: { 200: t.Array(ActionVariableSchema) },
      }),
    )
  if (ids.getVariable)
    app = app.get(
      `${base}/variables/:variablename`,
      async (ctx: any) => variableToApi(await getVariable(deps, h.holder(ctx), ctx.params.variablename)),
      declare(ids.getVariable, 'Get a variable', { ...withParams(h.params.variable), response: { 200: ActionVariableSchema } }),
    )
  if (ids.createVariable)
    app = app.post(
      `${base}/variables/:variablename`,
      async (ctx: any) => {
        await createVariable(deps, h.holder(ctx), ctx.params.variablename, ctx.body.value)
        return ctx.status(201, '')
      },
      declare(ids.createVariable, 'Create a variable', { ...withParams(h.params.variable), body: CreateVariableOption, response: { 201: Empty } }),
    )
  if (ids.updateVariable)
    app = app.put(
      `${base}/variables/:variablename`,
      async (ctx: any) => {
        await updateVariable(deps, h.holder(ctx), ctx.params.variablename, ctx.body)
        return ctx.status(204, undefined)
      },
      declare(ids.updateVariable, 'Update a variable (and rename it when `name` is given)', {
        ...withParams(h.params.variable),
        body: UpdateVariableOption,
        response: { 204: t.Void() },
      }),
    )
  if (ids.deleteVariable)
    app = app.delete(
      `${base}/variables/:variablename`,
      async (ctx: any) => {
        await deleteVariable(deps, h.holder(ctx), ctx.params.variablename)
        return ctx.status(204, undefined)
      },
      declare(ids.deleteVariable, 'Delete a variable', { ...withParams(h.params.variable), response: { 204: t.Void() } }),
    )
  if (ids.getToken)
    app = app.get(
      `${base}/runners/registration-token`,
      async (ctx: any) => ({ token: await runnerRegistrationToken(deps, h.holder(ctx)) }),
      declare(ids.getToken, "Get the holder's actions runner registration token (made on first ask)", {
        ...withParams(h.params.base),
        response: { 200: RegistrationTokenSchema },
      }),
    )
  if (ids.resetToken)
    app = app.post(
      `${base}/runners/registration-token`,
      async (ctx: any) => ({ token: await runnerRegistrationToken(deps, h.holder(ctx), true) }),
      declare(ids.resetToken, "Reset the holder's actions runner registration token", {
        ...withParams(h.params.base),
        response: { 200: RegistrationTokenSchema },
      }),
    )
  return app as Elysia
}

export const actionsModule = (deps: AppDeps) =>
  new Elysia({ name: 'actions' })
    .use(
      holderRoutes(deps, {
        prefix: '/repos/:owner/:repo',
        needs: { repo: { level: 'owner', writes: false } },
        scope: 'repository',
        holder: (ctx) => ({ repoId: ctx.repo.repo.id }),
        params: { base: RepoParams, secret: RepoSecretParams, variable: RepoVariableParams },
        tag: 'repository',
        ids: {
          listSecrets: 'repoListActionsSecrets',
          putSecret: 'updateRepoSecret',
          deleteSecret: 'deleteRepoSecret',
          listVariables: 'getRepoVariablesList',
          getVariable: 'getRepoVariable',
          createVariable: 'createRepoVariable',
          updateVariable: 'updateRepoVariable',
          deleteVariable: 'deleteRepoVariable',
          getToken: 'repoGetRunnerRegistrationToken',
          resetToken: 'repoCreateRunnerRegistrationToken',
        },
      }),
    )
    .use(
      holderRoutes(deps, {
        prefix: '/orgs/:org',
        needs: { org: 'owner' },
        scope: 'organization',
        holder: (ctx) => ({ ownerId: ctx.org.org.id }),
        params: { base: OrgParams, secret: OrgSecretParams, variable: OrgVariableParams },
        tag: 'organization',
        ids: {
          listSecrets: 'orgListActionsSecrets',
          putSecret: 'updateOrgSecret',
          deleteSecret: 'deleteOrgSecret',
          listVariables: 'getOrgVariablesList',
          getVariable: 'getOrgVariable',
          createVariable: 'createOrgVariable',
          updateVariable: 'updateOrgVariable',
          deleteVariable: 'deleteOrgVariable',
          getToken: 'orgGetRunnerRegistrationToken',
          resetToken: 'orgCreateRunnerRegistrationToken',
        },
      }),
    )
    .use(
      holderRoutes(deps, {
        // Gitea 1.23 lists no user's secrets.
        prefix: '/user',
        needs: { signed: true },
        scope: 'user',
        holder: (ctx) => ({ ownerId: ctx.user.id }),
        params: { secret: SecretParams, variable: VariableParams },
        tag: 'user',
        ids: {
          putSecret: 'updateUserSecret',
          deleteSecret: 'deleteUserSecret',
          listVariables: 'getUserVariablesList',
          getVariable: 'getUserVariable',
          createVariable: 'createUserVariable',
          updateVariable: 'updateUserVariable',
          deleteVariable: 'deleteUserVariable',
          getToken: 'userGetRunnerRegistrationToken',
          resetToken: 'userCreateRunnerRegistrationToken',
        },
      }),
    )
    .use(
      holderRoutes(deps, {
        prefix: '/admin',
        needs: { siteAdmin: true },
        scope: 'admin',
        holder: () => 'global',
        params: {},
        tag: 'admin',
        ids: { getToken: 'adminGetRunnerRegistrationToken', resetToken: 'adminCreateRunnerRegistrationToken' },
      }),
    )
