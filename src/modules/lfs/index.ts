import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { readsBody } from '../../lib/body'
import { QueryText } from '../../lib/validate'
import { authorizeLfs, LFS_MEDIA_TYPE, lfsError, type LfsNeed, type LfsTarget } from './access'
import { batch, download, upload, verify } from './service'
import { createLock, listLocks, unlock, verifyLocks } from './locks'

const RepoParams = t.Object({ owner: t.String(), repo: t.String() })
const LfsAnswer = t.Unknown({ description: 'an answer of the Git LFS API (application/vnd.git-lfs+json) or an object' })
/** Objects one batch may name (git-lfs sends 100 at a time). */
const MAX_BATCH_OBJECTS = 1000
const PointerSchema = t.Object({ oid: t.String({ maxLength: 128 }), size: t.Number() })

/**
 * Gitea's CheckAcceptMediaType: the batch, verify and locks endpoints answer only a client that
 * accepts the LFS media type (415 otherwise).
 */
const acceptRefusal = (deps: AppDeps, request: Request) =>
  (request.headers.get('accept') ?? '').split(';')[0]!.trim() === LFS_MEDIA_TYPE ? null : lfsError(deps, 415, `the LFS API answers in ${LFS_MEDIA_TYPE}; send it in Accept`)

/** Runs `fn` for a caller authorizeLfs lets in at `need`, else answers its refusal. */
async function asAllowed(deps: AppDeps, request: Request, params: { owner: string; repo: string }, need: LfsNeed, fn: (target: LfsTarget) => Promise<Response>) {
  const target = await authorizeLfs(deps, request, params.owner, params.repo, need)
  return target instanceof Response ? target : fn(target)
}

/**
 * Outside /api/v1: the Git LFS server at `/{owner}/{repo}.git/info/lfs/...` (also without `.git`),
 * Gitea's routes: the batch API, the basic transfer's upload and download, verify, and locks. Each
 * route finds its caller and repository as git over HTTP does (authorizeLfs) and answers in the LFS
 * media type; all answer 404 unless WARREN_LFS_START_SERVER.
 */
export const lfsModule = (deps: AppDeps) =>
  new Elysia({ name: 'lfs', detail: { hide: true } })
    .post(
      '/:owner/:repo/info/lfs/objects/batch',
      ({ request, params, body }) =>
        acceptRefusal(deps, request) ??
        (body.operation !== 'upload' && body.operation !== 'download'
          ? lfsError(deps, 400, `unknown operation "${body.operation.slice(0, 32)}": upload or download`)
          : asAllowed(deps, request, params, body.operation === 'upload' ? 'write' : 'read', (target) => batch(deps, target, body.operation as 'upload' | 'download', body.objects))),
      {
        params: RepoParams,
        body: t.Object({
          operation: t.String({ maxLength: 64 }),
          transfers: t.Optional(t.Array(t.String({ maxLength: 64 }), { maxItems: 64 })),
          ref: t.Optional(t.Object({ name: t.String({ maxLength: 1024 }) })),
          hash_algo: t.Optional(t.String({ maxLength: 64 })),
          objects: t.Array(PointerSchema, { maxItems: MAX_BATCH_OBJECTS }),
        }),
        response: { 200: LfsAnswer },
        detail: { operationId: 'lfsBatch', summary: 'Git LFS batch API' },
      },
    )
    .put(
      '/:owner/:repo/info/lfs/objects/:oid/:size',
      ({ request, params }) => asAllowed(deps, request, params, 'write', (target) => upload(deps, target, params.oid, params.size, request.body)),
      {
        params: t.Object({ owner: t.String(), repo: t.String(), oid: t.String(), size: t.String() }),
        response: { 200: LfsAnswer },
        detail: { operationId: 'lfsUpload', summary: 'Git LFS basic transfer: upload an object', ...readsBody('unread') },
      },
    )
    .get(
      '/:owner/:repo/info/lfs/objects/:oid',
      ({ request, params }) => asAllowed(deps, request, params, 'read', (target) => download(deps, target, params.oid, request.headers.get('range'))),
      {
        params: t.Object({ owner: t.String(), repo: t.String(), oid: t.String() }),
        response: { 200: LfsAnswer },
        detail: { operationId: 'lfsDownload', summary: 'Git LFS basic transfer: download an object (Range supported)' },
      },
    )
    .post(
      '/:owner/:repo/info/lfs/verify',
      ({ request, params, body }) => acceptRefusal(deps, request) ?? asAllowed(deps, request, params, 'write', (target) => verify(deps, target, body)),
      {
        params: RepoParams,
        body: PointerSchema,
        response: { 200: LfsAnswer },
        detail: { operationId: 'lfsVerify', summary: 'Git LFS basic transfer: verify an uploaded object' },
      },
    )
    .get(
      '/:owner/:repo/info/lfs/locks',
      ({ request, params, query }) =>
        acceptRefusal(deps, request) ??
        asAllowed(deps, request, params, 'read', (target) =>
          listLocks(deps, target, { id: query.id, path: query.path, cursor: Number(query.cursor ?? 0) || 0, limit: Number(query.limit ?? 0) || 0 }),
        ),
      {
        params: RepoParams,
        query: t.Object({ id: QueryText(), path: QueryText(), cursor: QueryText(), limit: QueryText(), refspec: QueryText() }),
        response: { 200: LfsAnswer },
        detail: { operationId: 'lfsListLocks', summary: 'Git LFS locks: list (by id, path, or a page)' },
      },
    )
    .post(
      '/:owner/:repo/info/lfs/locks',
      ({ request, params, body }) => acceptRefusal(deps, request) ?? asAllowed(deps, request, params, 'write', (target) => createLock(deps, target, body.path)),
      {
        params: RepoParams,
        body: t.Object({ path: t.String({ maxLength: 4096 }), ref: t.Optional(t.Object({ name: t.String({ maxLength: 1024 }) })) }),
        response: { 200: LfsAnswer },
        detail: { operationId: 'lfsCreateLock', summary: 'Git LFS locks: lock a path' },
      },
    )
    .post(
      '/:owner/:repo/info/lfs/locks/verify',
      ({ request, params, body }) => acceptRefusal(deps, request) ?? asAllowed(deps, request, params, 'write', (target) => verifyLocks(deps, target, body)),
      {
        params: RepoParams,
        body: t.Object({
          cursor: t.Optional(t.Union([t.String({ maxLength: 32 }), t.Number()])),
          limit: t.Optional(t.Number()),
          ref: t.Optional(t.Object({ name: t.String({ maxLength: 1024 }) })),
        }),
        response: { 200: LfsAnswer },
        detail: { operationId: 'lfsVerifyLocks', summary: "Git LFS locks: the caller's and the others' locks" },
      },
    )
    .post(
      '/:owner/:repo/info/lfs/locks/:id/unlock',
      ({ request, params, body }) => acceptRefusal(deps, request) ?? asAllowed(deps, request, params, 'write', (target) => unlock(deps, target, params.id, body.force === true)),
      {
        params: t.Object({ owner: t.String(), repo: t.String(), id: t.String() }),
        body: t.Object({ force: t.Optional(t.Boolean()), ref: t.Optional(t.Object({ name: t.String({ maxLength: 1024 }) })) }),
        response: { 200: LfsAnswer },
        detail: { operationId: 'lfsUnlock', summary: 'Git LFS locks: release a lock (another holder\'s with force)' },
      },
    )
