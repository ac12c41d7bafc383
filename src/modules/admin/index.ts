import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { requireSiteAdmin } from '../../auth/caller'
import { toApiUser } from '../../lib/convert/user'
import { PageQuery, pageOf, setPageHeaders } from '../../lib/pagination'
import { UserSchema, UsernameParams } from '../users/model'
import { createUser, getUserByName } from '../users/service'
import { CreateUserOption, EditUserOption, formBooleans } from './model'
import { deleteUser, editUser, listAllUsers } from './service'

/** Site administration of users: /admin/users ... (all: site admins; 401 anonymous, 403 others). */
export const adminModule = (deps: AppDeps) => {
  const { config } = deps
  const siteAdmin = async (request: Request) => requireSiteAdmin(await deps.auth.caller(request))

  return new Elysia({ name: 'admin', detail: { tags: ['admin'] } })
    .get(
      '/admin/users',
      async ({ request, query, set }) => {
        const admin = await siteAdmin(request)
        const page = pageOf(query)
        const { rows, total } = listAllUsers(deps, page)
        setPageHeaders(set, config, request, page, total)
        return rows.map((u) => toApiUser(config, u, admin))
      },
      {
        query: PageQuery,
        response: { 200: t.Array(UserSchema) },
        detail: { operationId: 'adminGetAllUsers', summary: 'List all users' },
      },
    )
    .post(
      '/admin/users',
      async ({ request, body, status }) => {
        const admin = await siteAdmin(request)
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
        transform: formBooleans(CreateUserOption),
        body: CreateUserOption,
        response: { 201: UserSchema },
        detail: { operationId: 'adminCreateUser', summary: 'Create a user' },
      },
    )
    .patch(
      '/admin/users/:username',
      async ({ request, params, body }) => {
        const admin = await siteAdmin(request)
        const user = await editUser(deps, getUserByName(deps, params.username), body)
        return toApiUser(config, user, admin)
      },
      {
        params: UsernameParams,
        transform: formBooleans(EditUserOption),
        body: EditUserOption,
        response: { 200: UserSchema },
        detail: { operationId: 'adminEditUser', summary: 'Edit an existing user' },
      },
    )
    .delete(
      '/admin/users/:username',
      async ({ request, params, status }) => {
        const admin = await siteAdmin(request)
        deleteUser(deps, getUserByName(deps, params.username), admin)
        return status(204, undefined)
      },
      {
        params: UsernameParams,
        response: { 204: t.Void() },
        detail: { operationId: 'adminDeleteUser', summary: 'Delete a user' },
      },
    )
}
