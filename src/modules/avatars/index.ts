import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { notFound } from '../../lib/errors'
import { FileBytes } from '../files/model'
import { OrgParams } from '../orgs/model'
import { RepoParams } from '../repos/model'
import { avatarTypeOf, decodeBase64Image } from './image'
import { AvatarHashParams, UpdateAvatarOption } from './model'
import { changeAvatar } from './service'
import { avatarPath, isAvatarHash, type AvatarKind } from './storage'

const NoContent = { 204: t.Void({ description: 'no content' }) }

/**
 * Avatar uploads (Gitea 1.23's routers/api/v1/{user,org,repo}/avatar.go): the caller's own, an
 * organisation's (its owners), a repository's (its administrators; also while archived, as in
 * Gitea). Each answers 204.
 */
export const avatarsModule = (deps: AppDeps, api: AreaApp) =>
  area(api)
    .post(
      '/user/avatar',
      async ({ user, body, set }) => {
        await changeAvatar(deps, 'user', user.id, decodeBase64Image(body.image))
        set.status = 204
      },
      { scope: 'user', signed: true, body: UpdateAvatarOption, response: NoContent, detail: { tags: ['user'], operationId: 'userUpdateAvatar', summary: 'Update the caller\'s avatar' } },
    )
    .delete(
      '/user/avatar',
      async ({ user, set }) => {
        await changeAvatar(deps, 'user', user.id, null)
        set.status = 204
      },
      { scope: 'user', signed: true, response: NoContent, detail: { tags: ['user'], operationId: 'userDeleteAvatar', summary: 'Delete the caller\'s avatar' } },
    )
    .post(
      '/orgs/:org/avatar',
      async ({ org, body, set }) => {
        await changeAvatar(deps, 'user', org.org.id, decodeBase64Image(body.image))
        set.status = 204
      },
      {
        scope: 'organization',
        signed: true,
        org: 'owner',
        params: OrgParams,
        body: UpdateAvatarOption,
        response: NoContent,
        detail: { tags: ['organization'], operationId: 'orgUpdateAvatar', summary: "Update an organization's avatar" },
      },
    )
    .delete(
      '/orgs/:org/avatar',
      async ({ org, set }) => {
        await changeAvatar(deps, 'user', org.org.id, null)
        set.status = 204
      },
      { scope: 'organization', signed: true, org: 'owner', params: OrgParams, response: NoContent, detail: { tags: ['organization'], operationId: 'orgDeleteAvatar', summary: "Delete an organization's avatar" } },
    )
    .post(
      '/repos/:owner/:repo/avatar',
      async ({ repo, body, set }) => {
        await changeAvatar(deps, 'repo', repo.repo.id, decodeBase64Image(body.image))
        set.status = 204
      },
      {
        scope: 'repository',
        repo: { level: 'admin', writes: false },
        params: RepoParams,
        body: UpdateAvatarOption,
        response: NoContent,
        detail: { tags: ['repository'], operationId: 'repoUpdateAvatar', summary: "Update a repository's avatar" },
      },
    )
    .delete(
      '/repos/:owner/:repo/avatar',
      async ({ repo, set }) => {
        await changeAvatar(deps, 'repo', repo.repo.id, null)
        set.status = 204
      },
      {
        scope: 'repository',
        repo: { level: 'admin', writes: false },
        params: RepoParams,
        response: NoContent,
        detail: { tags: ['repository'], operationId: 'repoDeleteAvatar', summary: "Delete a repository's avatar" },
      },
    )

/**
 * An avatar's bytes as uploaded, with the type its first bytes say. The name is a hash of the
 * content, so the answer never changes: cached a year. Anyone may fetch one (as in Gitea): the
 * URL is known only from a record its reader could see.
 */
async function serveAvatar(deps: AppDeps, kind: AvatarKind, hash: string): Promise<Response> {
  if (!isAvatarHash(hash)) throw notFound()
  const file = Bun.file(avatarPath(deps, kind, hash))
  if (!(await file.exists())) throw notFound()
  const type = avatarTypeOf(await file.slice(0, 16).bytes())
  if (!type) throw notFound()
  return new Response(file, {
    headers: {
      'Content-Type': type,
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': "default-src 'none'; sandbox",
      'Cache-Control': 'public, max-age=31536000, immutable',
    },
  })
}

/** Outside /api/v1: the uploaded avatars at Gitea's URLs, `/avatars/{hash}` and `/repo-avatars/{hash}`. */
export const avatarFilesModule = (deps: AppDeps) =>
  new Elysia({ name: 'avatar-files', detail: { hide: true } })
    .get('/avatars/:hash', ({ params }) => serveAvatar(deps, 'user', params.hash), {
      params: AvatarHashParams,
      response: { 200: FileBytes },
      detail: { operationId: 'webUserAvatar', summary: "A user's or organization's uploaded avatar" },
    })
    .get('/repo-avatars/:hash', ({ params }) => serveAvatar(deps, 'repo', params.hash), {
      params: AvatarHashParams,
      response: { 200: FileBytes },
      detail: { operationId: 'webRepoAvatar', summary: "A repository's uploaded avatar" },
    })
