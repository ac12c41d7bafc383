import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { requireUser, type UserRow } from '../../auth/caller'
import { toApiUser } from '../../lib/convert/user'
import { notFound } from '../../lib/errors'
import { PageQuery, pageOf, setPageHeaders } from '../../lib/pagination'
import {
  AccessTokenSchema,
  CreateAccessTokenOption,
  EmailListOption,
  EmailSchema,
  FollowParams,
  TokenParams,
  UserSchema,
  UserSearchQuery,
  UserSearchResult,
  UsernameParams,
} from './model'
import {
  addEmails,
  createAccessToken,
  deleteAccessToken,
  deleteEmails,
  followUser,
  getVisibleUserByName,
  isFollowing,
  listAccessTokens,
  listEmails,
  listFollows,
  searchUsers,
  tokenOwnerFor,
  toApiAccessToken,
  toApiEmail,
  unfollowUser,
} from './service'

const UserList = t.Array(UserSchema)
type PageQueryValue = typeof PageQuery.static
const NoContent = { 204: t.Void() }

/**
 * `/user` (the caller), `/users/{username}`, user search, access tokens, e-mail addresses and
 * followers.
 */
export const usersModule = (deps: AppDeps) => {
  const { config } = deps
  const callerOf = (request: Request) => deps.auth.caller(request)
  const signedIn = async (request: Request) => requireUser(await callerOf(request))
  /** One page of followers or followed users of `userId`, with the paging headers. */
  const followPage = (request: Request, query: PageQueryValue, set: any, viewer: UserRow, userId: number, direction: 'followers' | 'following') => {
    const page = pageOf(query)
    const { rows, total } = listFollows(deps, viewer, userId, direction, page)
    setPageHeaders(set, config, request, page, total)
    return rows.map((u) => toApiUser(config, u, viewer))
  }

  return new Elysia({ name: 'users', detail: { tags: ['user'] } })
    .get(
      '/user',
      async ({ request }) => {
        const caller = await callerOf(request)
        return toApiUser(config, requireUser(caller), caller.user)
      },
      { response: { 200: UserSchema }, detail: { operationId: 'userGetCurrent', summary: 'Get the authenticated user' } },
    )
    .get(
      '/users/search',
      async ({ request, query, set }) => {
        const caller = await callerOf(request)
        const page = pageOf(query, { defaultLimit: 10, maxLimit: 50 })
        const { rows, total } = searchUsers(deps, caller.user, query.q ?? '', query.uid, page)
        setPageHeaders(set, config, request, page, total)
        return { ok: true, data: rows.map((u) => toApiUser(config, u, caller.user)) }
      },
      {
        query: UserSearchQuery,
        response: { 200: UserSearchResult },
        detail: { operationId: 'userSearch', summary: 'Search for users' },
      },
    )
    .get(
      '/users/:username',
      async ({ request, params }) => {
        const caller = await callerOf(request)
        return toApiUser(config, getVisibleUserByName(deps, params.username, caller.user, 'owner'), caller.user)
      },
      { params: UsernameParams, response: { 200: UserSchema }, detail: { operationId: 'userGet', summary: 'Get a user' } },
    )

    // ---- access tokens (Basic credentials with a password only) ----
    .get(
      '/users/:username/tokens',
      async ({ request, params, query, set }) => {
        const owner = tokenOwnerFor(deps, await callerOf(request), params.username)
        const page = pageOf(query)
        const { rows, total } = listAccessTokens(deps, owner.id, page)
        setPageHeaders(set, config, request, page, total)
        return rows.map((row) => toApiAccessToken(row))
      },
      {
        params: UsernameParams,
        query: PageQuery,
        response: { 200: t.Array(AccessTokenSchema) },
        detail: { operationId: 'userGetTokens', summary: "List the user's access tokens (Basic auth)" },
      },
    )
    .post(
      '/users/:username/tokens',
      async ({ request, params, body, status }) => {
        const owner = tokenOwnerFor(deps, await callerOf(request), params.username)
        const { row, secret } = createAccessToken(deps, owner.id, body.name)
        return status(201, toApiAccessToken(row, secret))
      },
      {
        params: UsernameParams,
        body: CreateAccessTokenOption,
        response: { 201: AccessTokenSchema },
        detail: { operationId: 'userCreateToken', summary: 'Create an access token (Basic auth)' },
      },
    )
    .delete(
      '/users/:username/tokens/:id',
      async ({ request, params, status }) => {
        const owner = tokenOwnerFor(deps, await callerOf(request), params.username)
        deleteAccessToken(deps, owner.id, params.id)
        return status(204, undefined)
      },
      {
        params: TokenParams,
        response: NoContent,
        detail: { operationId: 'userDeleteAccessToken', summary: 'Delete an access token (Basic auth)' },
      },
    )

    // ---- e-mail addresses of the caller ----
    .get(
      '/user/emails',
      async ({ request }) => listEmails(deps, (await signedIn(request)).id).map(toApiEmail),
      { response: { 200: t.Array(EmailSchema) }, detail: { operationId: 'userListEmails', summary: "List the authenticated user's email addresses" } },
    )
    .post(
      '/user/emails',
      async ({ request, body, status }) => {
        const user = await signedIn(request)
        return status(201, addEmails(deps, user.id, body.emails ?? []).map(toApiEmail))
      },
      {
        body: EmailListOption,
        response: { 201: t.Array(EmailSchema) },
        detail: { operationId: 'userAddEmail', summary: 'Add email addresses' },
      },
    )
    .delete(
      '/user/emails',
      async ({ request, body, status }) => {
        const user = await signedIn(request)
        deleteEmails(deps, user.id, body.emails ?? [])
        return status(204, undefined)
      },
      { body: EmailListOption, response: NoContent, detail: { operationId: 'userDeleteEmail', summary: 'Delete email addresses' } },
    )

    // ---- followers of the caller ----
    .get(
      '/user/followers',
      async ({ request, query, set }) => {
        const user = await signedIn(request)
        return followPage(request, query, set, user, user.id, 'followers')
      },
      { query: PageQuery, response: { 200: UserList }, detail: { operationId: 'userCurrentListFollowers', summary: "List the authenticated user's followers" } },
    )
    .get(
      '/user/following',
      async ({ request, query, set }) => {
        const user = await signedIn(request)
        return followPage(request, query, set, user, user.id, 'following')
      },
      { query: PageQuery, response: { 200: UserList }, detail: { operationId: 'userCurrentListFollowing', summary: 'List the users that the authenticated user is following' } },
    )
    .get(
      '/user/following/:username',
      async ({ request, params, status }) => {
        const user = await signedIn(request)
        const target = getVisibleUserByName(deps, params.username, user)
        if (!isFollowing(deps, user.id, target.id)) throw notFound(`you are not following ${target.name}`)
        return status(204, undefined)
      },
      { params: UsernameParams, response: NoContent, detail: { operationId: 'userCurrentCheckFollowing', summary: 'Check whether a user is followed by the authenticated user' } },
    )
    .put(
      '/user/following/:username',
      async ({ request, params, status }) => {
        const user = await signedIn(request)
        followUser(deps, user, getVisibleUserByName(deps, params.username, user))
        return status(204, undefined)
      },
      { params: UsernameParams, response: NoContent, detail: { operationId: 'userCurrentPutFollow', summary: 'Follow a user' } },
    )
    .delete(
      '/user/following/:username',
      async ({ request, params, status }) => {
        const user = await signedIn(request)
        unfollowUser(deps, user, getVisibleUserByName(deps, params.username, user))
        return status(204, undefined)
      },
      { params: UsernameParams, response: NoContent, detail: { operationId: 'userCurrentDeleteFollow', summary: 'Unfollow a user' } },
    )

    // ---- followers of any user ----
    .get(
      '/users/:username/followers',
      async ({ request, params, query, set }) => {
        const viewer = await signedIn(request)
        return followPage(request, query, set, viewer, getVisibleUserByName(deps, params.username, viewer).id, 'followers')
      },
      { params: UsernameParams, query: PageQuery, response: { 200: UserList }, detail: { operationId: 'userListFollowers', summary: "List the given user's followers" } },
    )
    .get(
      '/users/:username/following',
      async ({ request, params, query, set }) => {
        const viewer = await signedIn(request)
        return followPage(request, query, set, viewer, getVisibleUserByName(deps, params.username, viewer).id, 'following')
      },
      { params: UsernameParams, query: PageQuery, response: { 200: UserList }, detail: { operationId: 'userListFollowing', summary: 'List the users that the given user is following' } },
    )
    .get(
      '/users/:username/following/:target',
      async ({ request, params, status }) => {
        const viewer = await signedIn(request)
        const user = getVisibleUserByName(deps, params.username, viewer)
        const target = getVisibleUserByName(deps, params.target, viewer)
        if (!isFollowing(deps, user.id, target.id)) throw notFound(`${user.name} does not follow ${target.name}`)
        return status(204, undefined)
      },
      { params: FollowParams, response: NoContent, detail: { operationId: 'userCheckFollowing', summary: 'Check whether one user follows another' } },
    )
}
