import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, pipeline, type AreaApp } from '../../auth/pipeline'
import { releasesToApi, releaseToApi } from '../../convert/release'
import { toApiAttachment } from '../../convert/attachment'
import { PageQuery } from '../../lib/pagination'
import { FileBytes, RepoWildcardParams } from '../files/model'
import { RepoParams } from '../repos/model'
import {
  AssetParams,
  AttachmentUuidParams,
  CreateReleaseOption,
  EditReleaseOption,
  ListReleasesQuery,
  ReleaseParams,
  ReleaseSchema,
  TagParams,
} from './model'
import { assetRouteOptions } from '../attachments/routes'
import { createRelease, deleteRelease, editRelease, getLatestRelease, getRelease, getReleaseByTag, listReleases } from './service'
import { deleteAsset, editAsset, getAsset, listAssets, uploadAsset } from './assets'
import { downloadAttachment } from '../attachments/files'

const ReleaseList = t.Array(ReleaseSchema)
/** A release's assets: read with the releases unit, changed by its writers (signed in); the list pages when asked. */
const releaseAssets = assetRouteOptions({
  scope: 'repository',
  read: { level: 'read', unit: 'releases' },
  write: { repo: { level: 'write', unit: 'releases' }, signed: true },
  holderParams: ReleaseParams,
  assetParams: AssetParams,
  list: { pageIfAsked: true, query: PageQuery },
})

/** Releases and their assets under /api/v1. */
export const releasesModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] })
    .get(
      '/repos/:owner/:repo/releases',
      async ({ query, repo, page, respond }) =>
        respond(await listReleases(deps, repo, page, { draft: query.draft, prerelease: query['pre-release'] }), async (rows) => await releasesToApi(deps, repo.repo, rows, repo.caller.user)),
      {
        scope: 'repository',
        repo: { level: 'read', unit: 'releases' },
        paged: true,
        params: RepoParams,
        query: ListReleasesQuery,
        response: { 200: ReleaseList },
        detail: { operationId: 'repoListReleases', summary: "List a repository's releases (drafts for writers only), newest first" },
      },
    )
    .post(
      '/repos/:owner/:repo/releases',
      async ({ body, repo, user, status }) => status(201, await releaseToApi(deps, repo, await createRelease(deps, repo, user, body))),
      {
        scope: 'repository',
        repo: { level: 'write', unit: 'releases' },
        signed: true,
        params: RepoParams,
        body: CreateReleaseOption,
        response: { 201: ReleaseSchema },
        detail: { operationId: 'repoCreateRelease', summary: 'Create a release (its tag is created at target_commitish when missing, unless a draft)' },
      },
    )
    .get('/repos/:owner/:repo/releases/latest', async ({ repo }) => await releaseToApi(deps, repo, await getLatestRelease(deps, repo)), {
      scope: 'repository',
      repo: { level: 'read', unit: 'releases' },
      params: RepoParams,
      response: { 200: ReleaseSchema },
      detail: { operationId: 'repoGetLatestRelease', summary: 'Get the newest published release that is not a pre-release' },
    })
    .get('/repos/:owner/:repo/releases/tags/:tag', async ({ params, repo }) => await releaseToApi(deps, repo, await getReleaseByTag(deps, repo, params.tag)), {
      scope: 'repository',
      repo: { level: 'read', unit: 'releases' },
      params: TagParams,
      response: { 200: ReleaseSchema },
      detail: { operationId: 'repoGetReleaseByTag', summary: 'Get a release by its tag name' },
    })
    .delete(
      '/repos/:owner/:repo/releases/tags/:tag',
      async ({ params, repo, user, status }) => {
        await deleteRelease(deps, repo, user, await getReleaseByTag(deps, repo, params.tag))
        return status(204, undefined)
      },
      {
        scope: 'repository',
        repo: { level: 'write', unit: 'releases' },
        signed: true,
        params: TagParams,
        response: { 204: t.Void() },
        detail: { operationId: 'repoDeleteReleaseByTag', summary: 'Delete a release by its tag name (the tag stays)' },
      },
    )
    .get('/repos/:owner/:repo/releases/:id', async ({ params, repo }) => await releaseToApi(deps, repo, await getRelease(deps, repo, params.id)), {
      scope: 'repository',
      repo: { level: 'read', unit: 'releases' },
      params: ReleaseParams,
      response: { 200: ReleaseSchema },
      detail: { operationId: 'repoGetRelease', summary: 'Get a release' },
    })
    .patch(
      '/repos/:owner/:repo/releases/:id',
      async ({ params, body, repo, user }) => await releaseToApi(deps, repo, await editRelease(deps, repo, user, params.id, body)),
      {
        scope: 'repository',
        repo: { level: 'write', unit: 'releases' },
        signed: true,
        params: ReleaseParams,
        body: EditReleaseOption,
        response: { 200: ReleaseSchema },
        detail: { operationId: 'repoEditRelease', summary: 'Update a release' },
      },
    )
    .delete(
      '/repos/:owner/:repo/releases/:id',
      async ({ params, repo, user, status }) => {
        await deleteRelease(deps, repo, user, await getRelease(deps, repo, params.id))
        return status(204, undefined)
      },
      {
        scope: 'repository',
        repo: { level: 'write', unit: 'releases' },
        signed: true,
        params: ReleaseParams,
        response: { 204: t.Void() },
        detail: { operationId: 'repoDeleteRelease', summary: 'Delete a release (its tag stays)' },
      },
    )
    .get(
      '/repos/:owner/:repo/releases/:id/assets',
      async ({ params, repo, page, respond }) => respond(await listAssets(deps, repo, params.id, page), (rows) => rows.map((a) => toApiAttachment(deps.config, a))),
      releaseAssets.list({ operationId: 'repoListReleaseAttachments', summary: "List a release's attachments" }),
    )
    .post(
      '/repos/:owner/:repo/releases/:id/assets',
      async ({ params, query, request, repo, user, status }) =>
        status(201, toApiAttachment(deps.config, await uploadAsset(deps, repo, user, params.id, request, query.name))),
      releaseAssets.upload({
        operationId: 'repoCreateReleaseAttachment',
        summary: 'Upload a release attachment (multipart field "attachment", streamed; at most WARREN_MAX_ATTACHMENT_SIZE bytes)',
      }),
    )
    .get(
      '/repos/:owner/:repo/releases/:id/assets/:asset',
      async ({ params, repo }) => toApiAttachment(deps.config, await getAsset(deps, repo, params.id, params.asset)),
      releaseAssets.get({ operationId: 'repoGetReleaseAttachment', summary: 'Get a release attachment' }),
    )
    .patch(
      '/repos/:owner/:repo/releases/:id/assets/:asset',
      async ({ params, body, repo, status }) => status(201, toApiAttachment(deps.config, await editAsset(deps, repo, params.id, params.asset, body.name))),
      releaseAssets.edit({ operationId: 'repoEditReleaseAttachment', summary: 'Rename a release attachment' }),
    )
    .delete(
      '/repos/:owner/:repo/releases/:id/assets/:asset',
      async ({ params, repo, status }) => {
        await deleteAsset(deps, repo, params.id, params.asset)
        return status(204, undefined)
      },
      releaseAssets.delete({ operationId: 'repoDeleteReleaseAttachment', summary: 'Delete a release attachment (and its file)' }),
    )

/**
 * Outside /api/v1: the assets' download URLs, `browser_download_url` (`/attachments/{uuid}`) and
 * Gitea's `/{owner}/{repo}/releases/download/{tag}/{name}`, streamed from disk only to those who
 * may read the attachment's unit (a release's: the releases'; attachment-context.ts).
 */
export const releaseDownloadsModule = (deps: AppDeps) =>
  new Elysia({ name: 'release-downloads', detail: { hide: true } })
    .use(pipeline(deps))
    .get('/attachments/:uuid', async ({ attachment }) => await downloadAttachment(deps, attachment), {
      scope: 'repository',
      attachment: 'uuid',
      params: AttachmentUuidParams,
      response: { 200: FileBytes },
      detail: { operationId: 'webAttachment', summary: 'Download an attachment (a release\'s, an issue\'s or a comment\'s) by its uuid' },
    })
    .get('/:owner/:repo/releases/download/*', async ({ attachment }) => await downloadAttachment(deps, attachment), {
      scope: 'repository',
      repo: { level: 'read', unit: 'releases' },
      attachment: 'tag',
      params: RepoWildcardParams,
      response: { 200: FileBytes },
      detail: { operationId: 'webReleaseDownload', summary: 'Download a release attachment ({tag}/{name})' },
    })
