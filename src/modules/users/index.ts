import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import type { UserRow } from '../../auth/caller'
import { toApiUser, toApiUserSettings } from '../../convert/user'
import { recordJson } from '../../convert/record-json'
import { editUser } from '../admin/service'
import { userHeatmap } from './heatmap'
import { notFound } from '../../lib/errors'
import { PageQuery } from '../../lib/pagination'
import {
  AccessTokenSchema,
  CreateAccessTokenOption,
  EmailListOption,
  EmailSchema,
  FollowParams,
  TokenParams,
  UserSchema,
  UserSearchQuery,
  UserHeatmapData,
  UserSearchResult,
  UserSettingsOptions,
  UserSettingsSchema,
  UsernameParams,
} from './model'
import { toApiAccessToken, toApiEmail } from '../../convert/account'
import { addEmails, createAccessToken, deleteAccessToken, deleteEmails, followedOrVisibleUser, followUser, getVisibleUserByName, isFollowing, listAccessTokens, listEmails, listFollows, searchUsers, tokenOwnerFor, unfollowUser } from './service'

const UserList = t.Array(UserSchema)
/** GET /users/{username}'s record as JSON text, kept while the database is unchanged. */
const userJson = recordJson('user', UserSchema)
const NoContent = { 204: t.Void() }

/**
 * `/user` (the caller), `/users/{username}`, user search, access tokens, e-mail addresses and
 * followers.
 */
export const usersModule = (deps: AppDeps, api: AreaApp) => {
  const { config } = deps
  /** Converts a page of followers or followed users as `viewer` sees them. */
  const usersAs = (viewer: UserRow) => (rows: UserRow[]) => rows.map((u) => toApiUser(config, u, viewer))

  return area(api, { tags: ['user'] })
    .get(
      '/user',
      ({ user }) => toApiUser(config, user, user),
      { scope: 'user', signed: true, response: { 200: UserSchema }, detail: { operationId: 'userGetCurrent', summary: 'Get the authenticated user' } },
    )
    .get(
      '/user/settings',
      ({ user }) => toApiUserSettings(user),
      { scope: 'user', signed: true, response: { 200: UserSettingsSchema }, detail: { operationId: 'getUserSettings', summary: "Get the authenticated user's settings" } },
    )
    .patch(
      '/user/settings',
      async ({ user, body }) => toApiUserSettings(await editUser(deps, user, body)),
      {
        scope: 'user',
        signed: true,
        body: UserSettingsOptions,
        response: { 200: UserSettingsSchema },
        detail: { operationId: 'updateUserSettings', summary: "Update the authenticated user's settings" },
      },
    )
    .get(
      '/users/search',
      async ({ caller, query, page, respond }) => ({
        ok: true,
        data: await respond(await searchUsers(deps, caller.user, query.q ?? '', query.uid, page), (rows) => rows.map((u) => toApiUser(config, u, caller.user))),
      }),
      {
        scope: 'user',
        caller: true,
        paged: { defaultLimit: 10, maxLimit: 50 },
        query: UserSearchQuery,
        response: { 200: UserSearchResult },
        detail: { operationId: 'userSearch', summary: 'Search for users' },
      },
    )
    .get(
      '/users/:username',
      // The record's JSON text kept while nothing changes (recordJson); it depends on who asks.
      async ({ caller, params }) => {
        const user = await getVisibleUserByName(deps, params.username, caller.user, 'owner')
        return userJson(deps, `${user.id}:${caller.user?.id ?? '-'}`, () => toApiUser(config, user, caller.user))
      },
      { scope: 'user', caller: true, params: UsernameParams, response: { 200: UserSchema }, detail: { operationId: 'userGet', summary: 'Get a user' } },
    )
    .get(
      '/users/:username/heatmap',
      async ({ caller, params }) => await userHeatmap(deps, await getVisibleUserByName(deps, params.username, caller.user), caller.user),
      {
        scope: 'user',
        caller: true,
        params: UsernameParams,
        response: { 200: t.Array(UserHeatmapData) },
        detail: { operationId: 'userGetHeatmapData', summary: "Get a user's contributions per 15 minutes over the last year" },
      },
    )

    // ---- access tokens (Basic credentials with a password only) ----
    .get(
      '/users/:username/tokens',
      async ({ caller, params, page, respond }) =>
        respond(await listAccessTokens(deps, (await tokenOwnerFor(deps, caller, params.username)).id, page), (rows) => rows.map((row) => toApiAccessToken(row))),
      {
        scope: 'user',
        caller: true,
        paged: true,
        params: UsernameParams,
        query: PageQuery,
        response: { 200: t.Array(AccessTokenSchema) },
        detail: { operationId: 'userGetTokens', summary: "List the user's access tokens (Basic auth)" },
      },
    )
    .post(
      '/users/:username/tokens',
      async ({ caller, params, body, status }) => {
        const owner = await tokenOwnerFor(deps, caller, params.username)
        const { row, secret } = await createAccessToken(deps, owner.id, body.name, typeof body.scopes === 'string' ? [body.scopes] : (body.scopes ?? []))
        return status(201, toApiAccessToken(row, secret))
      },
      {
        scope: 'user',
        caller: true,
        params: UsernameParams,
        body: CreateAccessTokenOption,
        response: { 201: AccessTokenSchema },
        detail: { operationId: 'userCreateToken', summary: 'Create an access token (Basic auth)' },
      },
    )
    .delete(
      '/users/:username/tokens/:id',
      async ({ caller, params, status }) => {
        await deleteAccessToken(deps, (await tokenOwnerFor(deps, caller, params.username)).id, params.id)
        return status(204, undefined)
      },
      {
        scope: 'user',
        caller: true,
        params: TokenParams,
        response: NoContent,
        detail: { operationId: 'userDeleteAccessToken', summary: 'Delete an access token (Basic auth)' },
      },
    )

    // ---- e-mail addresses of the caller ----
    .get(
      '/user/emails',
      async ({ user }) => (await listEmails(deps, user.id)).map(toApiEmail),
      { scope: 'user', signed: true, response: { 200: t.Array(EmailSchema) }, detail: { operationId: 'userListEmails', summary: "List the authenticated user's email addresses" } },
    )
    .post(
      '/user/emails',
      async ({ user, body, status }) => status(201, (await addEmails(deps, user.id, body.emails ?? [])).map(toApiEmail)),
      {
        scope: 'user',
        signed: true,
        body: EmailListOption,
        response: { 201: t.Array(EmailSchema) },
        detail: { operationId: 'userAddEmail', summary: 'Add email addresses' },
      },
    )
    .delete(
      '/user/emails',
      async ({ user, body, status }) => {
        await deleteEmails(deps, user.id, body.emails ?? [])
        return status(204, undefined)
      },
      { scope: 'user', signed: true, body: EmailListOption, response: NoContent, detail: { operationId: 'userDeleteEmail', summary: 'Delete email addresses' } },
    )

    // ---- followers of the caller ----
    .get(
      '/user/followers',
      async ({ user, page, respond }) => respond(await listFollows(deps, user, user.id, 'followers', page), usersAs(user)),
      { scope: 'user', signed: true, paged: true, query: PageQuery, response: { 200: UserList }, detail: { operationId: 'userCurrentListFollowers', summary: "List the authenticated user's followers" } },
    )
    .get(
      '/user/following',
      async ({ user, page, respond }) => respond(await listFollows(deps, user, user.id, 'following', page), usersAs(user)),
      { scope: 'user', signed: true, paged: true, query: PageQuery, response: { 200: UserList }, detail: { operationId: 'userCurrentListFollowing', summary: 'List the users that the authenticated user is following' } },
    )
    .get(
      '/user/following/:username',
      async ({ user, params, status }) => {
        const target = await followedOrVisibleUser(deps, user, params.username)
        if (!await isFollowing(deps, user.id, target.id)) throw notFound(`you are not following ${target.name}`)
        return status(204, undefined)
      },
      { scope: 'user', signed: true, params: UsernameParams, response: NoContent, detail: { operationId: 'userCurrentCheckFollowing', summary: 'Check whether a user is followed by the authenticated user' } },
    )
    .put(
      '/user/following/:username',
      async ({ user, params, status }) => {
        await followUser(deps, user, await getVisibleUserByName(deps, params.username, user))
        return status(204, undefined)
      },
      { scope: 'user', signed: true, params: UsernameParams, response: NoContent, detail: { operationId: 'userCurrentPutFollow', summary: 'Follow a user' } },
    )
    .delete(
      '/user/following/:username',
      async ({ user, params, status }) => {
        await unfollowUser(deps, user, await followedOrVisibleUser(deps, user, params.username))
        return status(204, undefined)
      },
      { scope: 'user', signed: true, params: UsernameParams, response: NoContent, detail: { operationId: 'userCurrentDeleteFollow', summary: 'Unfollow a user' } },
    )

    // ---- followers of any user ----
    .get(
      '/users/:username/followers',
      async ({ user: viewer, params, page, respond }) =>
        respond(await listFollows(deps, viewer, (await getVisibleUserByName(deps, params.username, viewer)).id, 'followers', page), usersAs(viewer)),
      { scope: 'user', signed: true, paged: true, params: UsernameParams, query: PageQuery, response: { 200: UserList }, detail: { operationId: 'userListFollowers', summary: "List the given user's followers" } },
    )
    .get(
      '/users/:username/following',
      async ({ user: viewer, params, page, respond }) =>
        respond(await listFollows(deps, viewer, (await getVisibleUserByName(deps, params.username, viewer)).id, 'following', page), usersAs(viewer)),
      { scope: 'user', signed: true, paged: true, params: UsernameParams, query: PageQuery, response: { 200: UserList }, detail: { operationId: 'userListFollowing', summary: 'List the users that the given user is following' } },
    )
    .get(
      '/users/:username/following/:target',
      async ({ user: viewer, params, status }) => {
        const user = await getVisibleUserByName(deps, params.username, viewer)
        const target = await getVisibleUserByName(deps, params.target, viewer)
        if (!await isFollowing(deps, user.id, target.id)) throw notFound(`${user.name} does not follow ${target.name}`)
        return status(204, undefined)
      },
      { scope: 'user', signed: true, params: FollowParams, response: NoContent, detail: { operationId: 'userCheckFollowing', summary: 'Check whether one user follows another' } },
    )
}
