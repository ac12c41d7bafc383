import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { AccessMode } from '../../auth/access'
import { area, type AreaApp } from '../../auth/pipeline'
import { toApiOrg, toApiUser } from '../../convert/user'
import { toApiRepo } from '../../convert/repo'
import { toApiPublicKey } from '../../convert/key'
import { toApiUserEmail } from '../../convert/account'
import { toApiCron } from '../../convert/cron'
import { notFound } from '../../lib/errors'
import { jobBoardOf } from '../../lib/job-board'
import { PageQuery } from '../../lib/pagination'
import { CreateKeyOption, PublicKeySchema, UserKeyParams } from '../keys/model'
import { addPublicKey, deletePublicKey, getOwnPublicKey } from '../keys/service'
import { CreateOrgOption, OrganizationSchema } from '../orgs/model'
import { createOrganization, listAllOrgs } from '../orgs/service'
import { CreateRepoOption, OwnerParams, RepositorySchema } from '../repos/model'
import { createRepository, newRepoFromOption } from '../repos/create'
import { UserSchema, UsernameParams } from '../users/model'
import { createUser, getUserByName, getVisibleUserByName } from '../users/service'
import { adoptRepository, deleteUnadopted, listUnadopted } from '../repos/adopt'
import { toApiBadge } from '../../convert/badge'
import {
  BadgeSchema,
  CreateUserOption,
  CronSchema,
  CronTaskParams,
  EmailSearchQuery,
  EditUserOption,
  formBooleans,
  RenameUserOption,
  UnadoptedParams,
  UnadoptedQuery,
  UserBadgeOption,
  UserEmailSchema,
} from './model'
import { deleteUser, editUser, listAllUsers, renameUser, searchEmails } from './service'
import { addUserBadges, listUserBadges, removeUserBadges } from './badges'

/**
 * Site administration, every `/admin/...` route (all: site admins; 401 anonymous, 403 others):
 * users, and the keys, organisations and repositories an admin makes on a user's behalf through
 * the same services as the user's own routes; every user's e-mail addresses; the background jobs
 * this process runs (`/admin/cron`, from `lib/job-board.ts`, where the jobs list themselves);
 * repository folders no row names (`/admin/unadopted`, `repos/adopt.ts`); users' badges
 * (`/admin/users/{username}/badges`, `badges.ts`).
 */
/** The declarations of `/admin/unadopted/{owner}/{repo}`'s adoption and removal. */
const unadoptedRoute = (operationId: string, summary: string) => ({
  scope: 'admin' as const,
  siteAdmin: true as const,
  params: UnadoptedParams,
  response: { 204: t.Void() },
  detail: { operationId, summary },
})

/** The declarations of giving and taking `/admin/users/{username}/badges`. */
const badgesRoute = (operationId: string, summary: string) => ({
  scope: 'admin' as const,
  siteAdmin: true as const,
  params: UsernameParams,
  body: UserBadgeOption,
  response: { 204: t.Void() },
  detail: { operationId, summary },
})

export const adminModule = (deps: AppDeps, api: AreaApp) => {
  const { config } = deps
  return area(api, { tags: ['admin'] })
    .get(
      '/admin/users',
      async ({ user: admin, page, respond }) => respond(await listAllUsers(deps, page), (rows) => rows.map((u) => toApiUser(config, u, admin))),
      {
        scope: 'admin',
        siteAdmin: true,
        paged: true,
        query: PageQuery,
        response: { 200: t.Array(UserSchema) },
        detail: { operationId: 'adminGetAllUsers', summary: 'List all users' },
      },
    )
    .post(
      '/admin/users',
      async ({ body, status, user: admin }) => {
        const user = await createUser(deps, {
          username: body.username,
          email: body.email,
          password: body.password,
          fullName: body.full_name,
          loginName: body.login_name,
          sourceId: body.source_id,
          mustChangePassword: body.must_change_password ?? false,
          visibility: body.visibility,
        })
        return status(201, toApiUser(config, user, admin))
      },
      {
        scope: 'admin',
        siteAdmin: true,
        transform: formBooleans(CreateUserOption),
        body: CreateUserOption,
        response: { 201: UserSchema },
        detail: { operationId: 'adminCreateUser', summary: 'Create a user' },
      },
    )
    .patch(
      '/admin/users/:username',
      async ({ params, body, user: admin }) => {
        const user = await editUser(deps, await getUserByName(deps, params.username), body)
        return toApiUser(config, user, admin)
      },
      {
        scope: 'admin',
        siteAdmin: true,
        params: UsernameParams,
        transform: formBooleans(EditUserOption),
        body: EditUserOption,
        response: { 200: UserSchema },
        detail: { operationId: 'adminEditUser', summary: 'Edit an existing user' },
      },
    )
    .delete(
      '/admin/users/:username',
      async ({ params, status, user: admin }) => {
        await deleteUser(deps, await getUserByName(deps, params.username), admin)
        return status(204, undefined)
      },
      {
        scope: 'admin',
        siteAdmin: true,
        params: UsernameParams,
        response: { 204: t.Void() },
        detail: { operationId: 'adminDeleteUser', summary: 'Delete a user' },
      },
    )
    .post(
      '/admin/users/:username/rename',
      async ({ params, body, status }) => {
        await renameUser(deps, await getUserByName(deps, params.username), body.new_username)
        return status(204, undefined)
      },
      {
        scope: 'admin',
        siteAdmin: true,
        params: UsernameParams,
        body: RenameUserOption,
        response: { 204: t.Void() },
        detail: { operationId: 'adminRenameUser', summary: 'Rename a user' },
      },
    )
    .post(
      '/admin/users/:username/keys',
      async ({ user: admin, params, body, status }) => {
        const owner = await getUserByName(deps, params.username)
        return status(201, toApiPublicKey(config, await addPublicKey(deps, owner.id, body), owner, admin))
      },
      {
        scope: 'admin',
        siteAdmin: true,
        params: UsernameParams,
        body: CreateKeyOption,
        response: { 201: PublicKeySchema },
        detail: { operationId: 'adminCreatePublicKey', summary: 'Add a public key on behalf of a user' },
      },
    )
    .delete(
      '/admin/users/:username/keys/:id',
      async ({ params, status }) => {
        const owner = await getUserByName(deps, params.username)
        await deletePublicKey(deps, owner.id, (await getOwnPublicKey(deps, owner.id, params.id)).id)
        return status(204, undefined)
      },
      {
        scope: 'admin',
        siteAdmin: true,
        params: UserKeyParams,
        response: { 204: t.Void() },
        detail: { operationId: 'adminDeleteUserPublicKey', summary: "Delete a user's public key" },
      },
    )
    .post(
      '/admin/users/:username/orgs',
      async ({ params, body, status, user: admin }) =>
        status(201, toApiOrg(config, await createOrganization(deps, await getUserByName(deps, params.username), body), admin)),
      {
        scope: 'admin',
        siteAdmin: true,
        params: UsernameParams,
        body: CreateOrgOption,
        response: { 201: OrganizationSchema },
        detail: { operationId: 'adminCreateOrg', summary: 'Create an organization owned by a user' },
      },
    )
    .get(
      '/admin/orgs',
      async ({ user: admin, page, respond }) => respond(await listAllOrgs(deps, admin, page), (rows) => rows.map((o) => toApiOrg(config, o, admin))),
      {
        scope: 'admin',
        siteAdmin: true,
        paged: true,
        query: PageQuery,
        response: { 200: t.Array(OrganizationSchema) },
        detail: { operationId: 'adminGetAllOrgs', summary: 'List all organizations' },
      },
    )
    .get('/admin/emails', async ({ page, respond }) => respond(await searchEmails(deps, '', page), (rows) => rows.map(toApiUserEmail)), {
      scope: 'admin',
      siteAdmin: true,
      paged: true,
      query: PageQuery,
      response: { 200: t.Array(UserEmailSchema) },
      detail: { operationId: 'adminGetAllEmails', summary: 'List all emails' },
    })
    .get('/admin/emails/search', async ({ query, page, respond }) => respond(await searchEmails(deps, query.q ?? '', page), (rows) => rows.map(toApiUserEmail)), {
      scope: 'admin',
      siteAdmin: true,
      paged: true,
      query: EmailSearchQuery,
      response: { 200: t.Array(UserEmailSchema) },
      detail: { operationId: 'adminSearchEmails', summary: 'Search all emails' },
    })
    .get(
      '/admin/cron',
      async ({ page, respond }) => {
        const jobs = jobBoardOf(deps).list()
        return respond({ rows: jobs.slice(page.offset, page.offset + page.limit), total: jobs.length }, (rows) => rows.map(toApiCron))
      },
      {
        scope: 'admin',
        siteAdmin: true,
        paged: true,
        query: PageQuery,
        response: { 200: t.Array(CronSchema) },
        detail: { operationId: 'adminCronList', summary: 'List cron tasks (the background jobs this process runs)' },
      },
    )
    .post(
      '/admin/cron/:task',
      ({ params, status }) => {
        if (!jobBoardOf(deps).runNow(params.task)) throw notFound()
        return status(204, undefined)
      },
      {
        scope: 'admin',
        siteAdmin: true,
        params: CronTaskParams,
        detail: { operationId: 'adminCronRun', summary: 'Run cron task' },
      },
    )
    .post(
      '/admin/users/:username/repos',
      async ({ params, body, status, user: admin }) => {
        const owner = await getVisibleUserByName(deps, params.username, admin, 'owner')
        const repo = await createRepository(deps, owner, { ...newRepoFromOption(body), creator: admin })
        return status(201, toApiRepo(config, repo, owner, admin, AccessMode.Owner))
      },
      {
        scope: 'admin',
        siteAdmin: true,
        params: OwnerParams,
        body: CreateRepoOption,
        response: { 201: RepositorySchema },
        // Listed with the repository operations in the API document, where it has always been.
        detail: { operationId: 'adminCreateRepo', summary: 'Create a repository on behalf of a user or organisation', tags: ['repository'] },
      },
    )
    .get(
      '/admin/unadopted',
      async ({ query, page, respond }) => respond(await listUnadopted(deps, query.pattern ?? query.query ?? '', page), (rows) => rows),
      {
        scope: 'admin',
        siteAdmin: true,
        paged: true,
        query: UnadoptedQuery,
        response: { 200: t.Array(t.String()) },
        detail: { operationId: 'adminUnadoptedList', summary: 'List unadopted repositories' },
      },
    )
    .post(
      '/admin/unadopted/:owner/:repo',
      async ({ params, status, user: admin }) => {
        await adoptRepository(deps, admin, params.owner, params.repo)
        return status(204, undefined)
      },
      unadoptedRoute('adminAdoptRepository', 'Adopt unadopted files as a repository'),
    )
    .delete(
      '/admin/unadopted/:owner/:repo',
      async ({ params, status }) => {
        await deleteUnadopted(deps, params.owner, params.repo)
        return status(204, undefined)
      },
      unadoptedRoute('adminDeleteUnadoptedRepository', 'Delete unadopted files'),
    )
    .get(
      '/admin/users/:username/badges',
      async ({ params, page, respond }) => {
        const user = await getUserByName(deps, params.username)
        return respond(await listUserBadges(deps, user.id, page), (rows) => rows.map(toApiBadge))
      },
      {
        scope: 'admin',
        siteAdmin: true,
        pageIfAsked: true,
        params: UsernameParams,
        query: PageQuery,
        response: { 200: t.Array(BadgeSchema) },
        detail: { operationId: 'adminListUserBadges', summary: "List a user's badges" },
      },
    )
    .post(
      '/admin/users/:username/badges',
      async ({ params, body, status }) => {
        await addUserBadges(deps, (await getUserByName(deps, params.username)).id, body.badge_slugs ?? [])
        return status(204, undefined)
      },
      badgesRoute('adminAddUserBadges', 'Add a badge to a user'),
    )
    .delete(
      '/admin/users/:username/badges',
      async ({ params, body, status }) => {
        await removeUserBadges(deps, (await getUserByName(deps, params.username)).id, body.badge_slugs ?? [])
        return status(204, undefined)
      },
      badgesRoute('adminDeleteUserBadges', 'Remove a badge from a user'),
    )
}
