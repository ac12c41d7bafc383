import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { requireUser } from '../../auth/caller'
import { toApiUser } from '../../lib/convert/user'
import { UserSchema, UsernameParams } from './model'
import { findOwnerByName } from './service'
import { notFound } from '../../lib/errors'

/** `/user` (the caller) and `/users/{username}`. */
export const usersModule = (deps: AppDeps) =>
  new Elysia({ name: 'users', detail: { tags: ['user'] } })
    .get(
      '/user',
      async ({ request }) => {
        const caller = await deps.auth.caller(request)
        return toApiUser(deps.config, requireUser(caller), caller.user)
      },
      { response: { 200: UserSchema }, detail: { operationId: 'userGetCurrent', summary: 'Get the authenticated user' } },
    )
    .get(
      '/users/:username',
      async ({ request, params }) => {
        const caller = await deps.auth.caller(request)
        const user = findOwnerByName(deps, params.username)
        if (!user) throw notFound(`user does not exist [name: ${params.username}]`)
        return toApiUser(deps.config, user, caller.user)
      },
      { params: UsernameParams, response: { 200: UserSchema }, detail: { operationId: 'userGet', summary: 'Get a user' } },
    )
