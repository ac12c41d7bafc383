import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { area, pipeline, type AreaApp } from '../../auth/pipeline'
import { packagesToApi, toApiPackageFile } from '../../convert/package'
import { readsBody } from '../../lib/body'
import { setChallenge } from '../../lib/errors'
import { GenericFileParams, GenericVersionParams, OwnerParams, PackageFileSchema, PackageListQuery, PackageSchema, VersionParams } from './model'
import { deleteGenericFile, deletePackageVersion, findGenericFile, getPackageVersion, listPackageVersions, listVersionFiles, packageFileResponse, uploadGenericFile } from './service'

const NoContent = { 204: t.Void() }

/** The handler deleting a version: the API's (its path names the type) and the generic registry's. */
const removeVersion =
  (deps: AppDeps) =>
  async ({ packageOwner, caller, params, set }: { packageOwner: UserRow; caller: { user: UserRow | null }; params: { type?: string; name: string; version: string }; set: { status?: number | string } }) => {
    await deletePackageVersion(deps, caller.user!, packageOwner.id, params.type ?? 'generic', params.name, params.version)
    set.status = 204
  }

/** The package API of /api/v1 (gitea-js's `package` calls): the owner's list, a version, its files, its deletion. */
export const packagesModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['package'] })
    .get(
      '/packages/:owner',
      async ({ packageOwner, caller, query, page, respond }) =>
        respond(await listPackageVersions(deps, packageOwner.id, { type: query.type, q: query.q }, page), (rows) => packagesToApi(deps, caller.user, rows)),
      {
        scope: 'package',
        packageOwner: 'read',
        paged: true,
        params: OwnerParams,
        query: PackageListQuery,
        response: { 200: t.Array(PackageSchema) },
        detail: { operationId: 'listPackages', summary: "Gets all packages of an owner" },
      },
    )
    .get(
      '/packages/:owner/:type/:name/:version',
      async ({ packageOwner, caller, params }) =>
        (await packagesToApi(deps, caller.user, [await getPackageVersion(deps, packageOwner.id, params.type, params.name, params.version)]))[0]!,
      {
        scope: 'package',
        packageOwner: 'read',
        params: VersionParams,
        response: { 200: PackageSchema },
        detail: { operationId: 'getPackage', summary: 'Gets a package' },
      },
    )
    .delete(
      '/packages/:owner/:type/:name/:version',
      removeVersion(deps),
      {
        scope: 'package',
        packageOwner: 'write',
        params: VersionParams,
        response: NoContent,
        detail: { operationId: 'deletePackage', summary: 'Delete a package' },
      },
    )
    .get(
      '/packages/:owner/:type/:name/:version/files',
      async ({ packageOwner, params }) => {
        const found = await getPackageVersion(deps, packageOwner.id, params.type, params.name, params.version)
        return (await listVersionFiles(deps, found.version.id)).map(toApiPackageFile)
      },
      {
        scope: 'package',
        packageOwner: 'read',
        params: VersionParams,
        response: { 200: t.Array(PackageFileSchema) },
        detail: { operationId: 'listPackageFiles', summary: 'Gets all files of a package' },
      },
    )

/**
 * The generic package registry (Gitea's /api/packages/{owner}/generic/...), outside /api/v1:
 * publishing a file (the raw body, streamed to disk: `readsBody('unread')`), downloading it
 * (streamed from disk), deleting a file or a whole version. Errors answer in the API's shape.
 */
export const packageRegistryModule = (deps: AppDeps) =>
  new Elysia({ name: 'package-registry', prefix: '/api/packages', detail: { tags: ['package'] } })
    .use(pipeline(deps))
    // A 401 here asks for Basic credentials in Gitea's realm, so clients that send them only when
    // challenged (Gradle, Maven, .NET, curl --anyauth) can sign in (the app's error handler adds it).
    .onTransform(({ request }) => setChallenge(request, 'Basic realm="Gitea Package API"'))
    .put(
      '/:owner/generic/:name/:version/:filename',
      async ({ packageOwner, caller, params, request, set }) => {
        await uploadGenericFile(deps, packageOwner, caller.user!, params.name, params.version, params.filename, request)
        set.status = 201
      },
      {
        scope: 'package',
        signed: true,
        packageOwner: 'write',
        params: GenericFileParams,
        response: { 201: t.Void() },
        detail: { operationId: 'genericUploadPackageFile', summary: 'Publishes a file of a generic package', ...readsBody('unread') },
      },
    )
    .get(
      '/:owner/generic/:name/:version/:filename',
      async ({ packageOwner, params }) => packageFileResponse(deps, await findGenericFile(deps, packageOwner.id, params.name, params.version, params.filename)),
      {
        scope: 'package',
        packageOwner: 'read',
        params: GenericFileParams,
        detail: { operationId: 'genericDownloadPackageFile', summary: 'Downloads a file of a generic package' },
      },
    )
    .delete(
      '/:owner/generic/:name/:version/:filename',
      async ({ packageOwner, caller, params, set }) => {
        await deleteGenericFile(deps, caller.user!, packageOwner.id, params.name, params.version, params.filename)
        set.status = 204
      },
      {
        scope: 'package',
        packageOwner: 'write',
        params: GenericFileParams,
        response: NoContent,
        detail: { operationId: 'genericDeletePackageFile', summary: 'Deletes a file of a generic package (its version with its last file)' },
      },
    )
    .delete(
      '/:owner/generic/:name/:version',
      removeVersion(deps),
      {
        scope: 'package',
        packageOwner: 'write',
        params: GenericVersionParams,
        response: NoContent,
        detail: { operationId: 'genericDeletePackageVersion', summary: 'Deletes a version of a generic package' },
      },
    )
