import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { requireSiteAdmin, requireUser } from '../../auth/caller'
import { pageOf, PageQuery, setPageHeaders } from '../../lib/pagination'
import { UsernameParams } from '../users/model'
import { getUserByName, getVisibleUserByName } from '../users/service'
import { CreateGPGKeyOption, CreateKeyOption, GPGKeySchema, KeyIdParams, KeyListQuery, PublicKeySchema, UserKeyParams } from './model'
import {
  addGpgKey,
  addPublicKey,
  deleteGpgKey,
  deletePublicKey,
  getOwnGpgKey,
  getOwnPublicKey,
  gpgKeysToApi,
  listGpgKeys,
  listPublicKeys,
  toApiPublicKey,
} from './service'

const Empty = t.Void()

/** SSH keys and GPG keys: /user/keys, /users/{u}/keys, /user/gpg_keys, admin key routes. */
export const keysModule = (deps: AppDeps) => {
  const { config } = deps
  return new Elysia({ name: 'keys', detail: { tags: ['user'] } })
    .get(
      '/user/keys',
      async ({ request, query, set }) => {
        const caller = await deps.auth.caller(request)
        const user = requireUser(caller)
        const page = pageOf(query)
        const { rows, total } = listPublicKeys(deps, user.id, page, query.fingerprint)
        setPageHeaders(set, config, request, page, total)
        return rows.map((k) => toApiPublicKey(config, k, user, caller.user))
      },
      {
        query: KeyListQuery,
        response: { 200: t.Array(PublicKeySchema) },
        detail: { operationId: 'userCurrentListKeys', summary: "List the authenticated user's public keys" },
      },
    )
    .post(
      '/user/keys',
      async ({ request, body, status }) => {
        const caller = await deps.auth.caller(request)
        const user = requireUser(caller)
        const key = addPublicKey(deps, user.id, body)
        return status(201, toApiPublicKey(config, key, user, caller.user))
      },
      {
        body: CreateKeyOption,
        response: { 201: PublicKeySchema },
        detail: { operationId: 'userCurrentPostKey', summary: 'Create a public key' },
      },
    )
    .get(
      '/user/keys/:id',
      async ({ request, params }) => {
        const caller = await deps.auth.caller(request)
        const user = requireUser(caller)
        return toApiPublicKey(config, getOwnPublicKey(deps, user.id, params.id), user, caller.user)
      },
      {
        params: KeyIdParams,
        response: { 200: PublicKeySchema },
        detail: { operationId: 'userCurrentGetKey', summary: 'Get a public key' },
      },
    )
    .delete(
      '/user/keys/:id',
      async ({ request, params, status }) => {
        const user = requireUser(await deps.auth.caller(request))
        deletePublicKey(deps, user.id, params.id)
        return status(204, undefined)
      },
      {
        params: KeyIdParams,
        response: { 204: Empty },
        detail: { operationId: 'userCurrentDeleteKey', summary: 'Delete a public key' },
      },
    )
    .get(
      '/users/:username/keys',
      async ({ request, params, query, set }) => {
        const caller = await deps.auth.caller(request)
        const owner = getVisibleUserByName(deps, params.username, requireUser(caller))
        const page = pageOf(query)
        const { rows, total } = listPublicKeys(deps, owner.id, page, query.fingerprint)
        setPageHeaders(set, config, request, page, total)
        return rows.map((k) => toApiPublicKey(config, k, owner, caller.user))
      },
      {
        params: UsernameParams,
        query: KeyListQuery,
        response: { 200: t.Array(PublicKeySchema) },
        detail: { operationId: 'userListKeys', summary: 'List the given user\'s public keys' },
      },
    )
    .post(
      '/admin/users/:username/keys',
      async ({ request, params, body, status }) => {
        const caller = await deps.auth.caller(request)
        requireSiteAdmin(caller)
        const owner = getUserByName(deps, params.username)
        const key = addPublicKey(deps, owner.id, body)
        return status(201, toApiPublicKey(config, key, owner, caller.user))
      },
      {
        params: UsernameParams,
        body: CreateKeyOption,
        response: { 201: PublicKeySchema },
        detail: { operationId: 'adminCreatePublicKey', summary: 'Add a public key on behalf of a user', tags: ['admin'] },
      },
    )
    .delete(
      '/admin/users/:username/keys/:id',
      async ({ request, params, status }) => {
        requireSiteAdmin(await deps.auth.caller(request))
        const owner = getUserByName(deps, params.username)
        deletePublicKey(deps, owner.id, getOwnPublicKey(deps, owner.id, params.id).id)
        return status(204, undefined)
      },
      {
        params: UserKeyParams,
        response: { 204: Empty },
        detail: { operationId: 'adminDeleteUserPublicKey', summary: "Delete a user's public key", tags: ['admin'] },
      },
    )
    .get(
      '/user/gpg_keys',
      async ({ request, query, set }) => {
        const user = requireUser(await deps.auth.caller(request))
        const page = pageOf(query)
        const { rows, total } = listGpgKeys(deps, user.id, page)
        setPageHeaders(set, config, request, page, total)
        return gpgKeysToApi(deps, user.id, rows)
      },
      {
        query: PageQuery,
        response: { 200: t.Array(GPGKeySchema) },
        detail: { operationId: 'userCurrentListGPGKeys', summary: "List the authenticated user's GPG keys" },
      },
    )
    .post(
      '/user/gpg_keys',
      async ({ request, body, status }) => {
        const user = requireUser(await deps.auth.caller(request))
        const key = await addGpgKey(deps, user, body.armored_public_key)
        return status(201, gpgKeysToApi(deps, user.id, [key])[0]!)
      },
      {
        body: CreateGPGKeyOption,
        response: { 201: GPGKeySchema },
        detail: { operationId: 'userCurrentPostGPGKey', summary: 'Create a GPG key' },
      },
    )
    .get(
      '/user/gpg_keys/:id',
      async ({ request, params }) => {
        const user = requireUser(await deps.auth.caller(request))
        return gpgKeysToApi(deps, user.id, [getOwnGpgKey(deps, user.id, params.id)])[0]!
      },
      {
        params: KeyIdParams,
        response: { 200: GPGKeySchema },
        detail: { operationId: 'userCurrentGetGPGKey', summary: 'Get a GPG key' },
      },
    )
    .delete(
      '/user/gpg_keys/:id',
      async ({ request, params, status }) => {
        const user = requireUser(await deps.auth.caller(request))
        deleteGpgKey(deps, user.id, params.id)
        return status(204, undefined)
      },
      {
        params: KeyIdParams,
        response: { 204: Empty },
        detail: { operationId: 'userCurrentDeleteGPGKey', summary: 'Remove a GPG key' },
      },
    )
    .get(
      '/users/:username/gpg_keys',
      async ({ request, params, query, set }) => {
        const owner = getVisibleUserByName(deps, params.username, requireUser(await deps.auth.caller(request)))
        const page = pageOf(query)
        const { rows, total } = listGpgKeys(deps, owner.id, page)
        setPageHeaders(set, config, request, page, total)
        return gpgKeysToApi(deps, owner.id, rows)
      },
      {
        params: UsernameParams,
        query: PageQuery,
        response: { 200: t.Array(GPGKeySchema) },
        detail: { operationId: 'userListGPGKeys', summary: "List the given user's GPG keys" },
      },
    )
}
