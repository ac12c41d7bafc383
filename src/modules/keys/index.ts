import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { PageQuery } from '../../lib/pagination'
import { UsernameParams } from '../users/model'
import { getVisibleUserByName } from '../users/service'
import { CreateGPGKeyOption, CreateKeyOption, GPGKeySchema, GPGKeyToken, KeyIdParams, KeyListQuery, PublicKeySchema, VerifyGPGKeyOption } from './model'
import { gpgKeysToApi, toApiPublicKey } from '../../convert/key'
import {
  addGpgKey,
  addPublicKey,
  deleteGpgKey,
  deletePublicKey,
  getOwnGpgKey,
  getOwnPublicKey,
  gpgVerificationToken,
  listGpgKeys,
  listPublicKeys,
  verifyGpgKey,
} from './service'

const Empty = t.Void()

/** SSH keys and GPG keys: /user/keys, /users/{u}/keys, /user/gpg_keys, /user/gpg_key_token and _verify (an admin's key routes: src/modules/admin). */
export const keysModule = (deps: AppDeps, api: AreaApp) => {
  const { config } = deps
  return area(api, { tags: ['user'] })
    .get(
      '/user/keys',
      async ({ user, query, page, respond }) =>
        respond(await listPublicKeys(deps, user.id, page, query.fingerprint), (rows) => rows.map((k) => toApiPublicKey(config, k, user, user))),
      {
        scope: 'user',
        signed: true,
        paged: true,
        query: KeyListQuery,
        response: { 200: t.Array(PublicKeySchema) },
        detail: { operationId: 'userCurrentListKeys', summary: "List the authenticated user's public keys" },
      },
    )
    .post(
      '/user/keys',
      async ({ user, body, status }) => status(201, toApiPublicKey(config, await addPublicKey(deps, user.id, body), user, user)),
      {
        scope: 'user',
        signed: true,
        body: CreateKeyOption,
        response: { 201: PublicKeySchema },
        detail: { operationId: 'userCurrentPostKey', summary: 'Create a public key' },
      },
    )
    .get(
      '/user/keys/:id',
      async ({ user, params }) => toApiPublicKey(config, await getOwnPublicKey(deps, user.id, params.id), user, user),
      {
        scope: 'user',
        signed: true,
        params: KeyIdParams,
        response: { 200: PublicKeySchema },
        detail: { operationId: 'userCurrentGetKey', summary: 'Get a public key' },
      },
    )
    .delete(
      '/user/keys/:id',
      async ({ user, params, status }) => {
        await deletePublicKey(deps, user.id, params.id)
        return status(204, undefined)
      },
      {
        scope: 'user',
        signed: true,
        params: KeyIdParams,
        response: { 204: Empty },
        detail: { operationId: 'userCurrentDeleteKey', summary: 'Delete a public key' },
      },
    )
    .get(
      '/users/:username/keys',
      async ({ user: viewer, params, query, page, respond }) => {
        const owner = await getVisibleUserByName(deps, params.username, viewer)
        return respond(await listPublicKeys(deps, owner.id, page, query.fingerprint), (rows) => rows.map((k) => toApiPublicKey(config, k, owner, viewer)))
      },
      {
        scope: 'user',
        signed: true,
        paged: true,
        params: UsernameParams,
        query: KeyListQuery,
        response: { 200: t.Array(PublicKeySchema) },
        detail: { operationId: 'userListKeys', summary: 'List the given user\'s public keys' },
      },
    )
    .get(
      '/user/gpg_keys',
      async ({ user, page, respond }) => respond(await listGpgKeys(deps, user.id, page), async (rows) => await gpgKeysToApi(deps, user.id, rows)),
      {
        scope: 'user',
        signed: true,
        paged: true,
        query: PageQuery,
        response: { 200: t.Array(GPGKeySchema) },
        detail: { operationId: 'userCurrentListGPGKeys', summary: "List the authenticated user's GPG keys" },
      },
    )
    .post(
      '/user/gpg_keys',
      async ({ user, body, status }) => {
        const key = await addGpgKey(deps, user, body.armored_public_key, body.armored_signature)
        return status(201, (await gpgKeysToApi(deps, user.id, [key]))[0]!)
      },
      {
        scope: 'user',
        signed: true,
        body: CreateGPGKeyOption,
        response: { 201: GPGKeySchema },
        detail: { operationId: 'userCurrentPostGPGKey', summary: 'Create a GPG key' },
      },
    )
    .get(
      '/user/gpg_keys/:id',
      async ({ user, params }) => (await gpgKeysToApi(deps, user.id, [await getOwnGpgKey(deps, user.id, params.id)]))[0]!,
      {
        scope: 'user',
        signed: true,
        params: KeyIdParams,
        response: { 200: GPGKeySchema },
        detail: { operationId: 'userCurrentGetGPGKey', summary: 'Get a GPG key' },
      },
    )
    .delete(
      '/user/gpg_keys/:id',
      async ({ user, params, status }) => {
        await deleteGpgKey(deps, user.id, params.id)
        return status(204, undefined)
      },
      {
        scope: 'user',
        signed: true,
        params: KeyIdParams,
        response: { 204: Empty },
        detail: { operationId: 'userCurrentDeleteGPGKey', summary: 'Remove a GPG key' },
      },
    )
    .get(
      '/user/gpg_key_token',
      ({ user, set }) => {
        set.headers['content-type'] = 'text/plain; charset=utf-8'
        return gpgVerificationToken(user, 1)
      },
      {
        scope: 'user',
        signed: true,
        response: { 200: GPGKeyToken },
        detail: { operationId: 'getVerificationToken', summary: 'Get a Token to verify' },
      },
    )
    .post(
      '/user/gpg_key_verify',
      async ({ user, body }) => {
        const key = await verifyGpgKey(deps, user, body.key_id, body.armored_signature)
        // 200, as Gitea 1.23's handler answers (its swagger says 201; clients read any 2xx).
        return (await gpgKeysToApi(deps, user.id, [key]))[0]!
      },
      {
        scope: 'user',
        signed: true,
        body: VerifyGPGKeyOption,
        response: { 200: GPGKeySchema },
        detail: { operationId: 'userVerifyGPGKey', summary: 'Verify a GPG key' },
      },
    )
    .get(
      '/users/:username/gpg_keys',
      async ({ user: viewer, params, page, respond }) => {
        const owner = await getVisibleUserByName(deps, params.username, viewer)
        return respond(await listGpgKeys(deps, owner.id, page), async (rows) => await gpgKeysToApi(deps, owner.id, rows))
      },
      {
        scope: 'user',
        signed: true,
        paged: true,
        params: UsernameParams,
        query: PageQuery,
        response: { 200: t.Array(GPGKeySchema) },
        detail: { operationId: 'userListGPGKeys', summary: "List the given user's GPG keys" },
      },
    )
}
