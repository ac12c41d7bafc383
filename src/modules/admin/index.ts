import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import { toApiUser } from '../../convert/user'
import { PageQuery } from '../../lib/pagination'
import { UserSchema, UsernameParams } from '../users/model'
import { createUser, getUserByName } from '../users/service'
import { CreateUserOption, EditUserOption, formBooleans } from './model'
import { deleteUser, editUser, listAllUsers } from './service'

/** Site administration of users: /admin/users ... (all: site admins; 401 anonymous, 403 others). */
export const adminModule = (deps: AppDeps) => {
  const { config } = deps
  return new Elysia({ name: 'admin', detail: { tags: ['admin'] } })
    .use(pipeline(deps))
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
}
