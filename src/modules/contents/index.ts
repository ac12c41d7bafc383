import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { RepoParams } from '../repos/model'
import { FileBytes, RepoWildcardParams, wildcardOf } from '../files/model'
import { rawFile } from '../files/service'
import { QueryText } from '../../lib/validate'
import {
  ChangeFilesOptions,
  ContentsOrList,
  ContentsSchema,
  CreateFileOptions,
  DeleteFileOptions,
  DiffPatchOptions,
  FileResponseSchema,
  FilesResponseSchema,
  UpdateFileOptions,
} from './model'
import { getContents } from './read'
import { applyPatch, changeFiles, fileResponse, filesResponse } from './write'
import { treePathOfUrl } from './paths'

const RefQuery = t.Object({ ref: QueryText('The name of the commit/branch/tag; the default branch when absent') })

/** What the single-file writes share: the write need of a signed-in caller. */
const writeNeeds = { scope: 'repository', repo: { level: 'write' }, signed: true } as const

/** Gitea's contents API: reading entries, and writing files as commits through the one push path. */
export const contentsModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] })
    .get('/repos/:owner/:repo/contents', async ({ query, repo }) => (await getContents(deps, repo, [], query.ref)) as any, {
      scope: 'repository',
      repo: { level: 'read' },
      params: RepoParams,
      query: RefQuery,
      response: { 200: t.Array(ContentsSchema) },
      detail: { operationId: 'repoGetContentsList', summary: 'Gets the metadata of all the entries of the root dir (at most WARREN_MAX_CONTENTS_LIST_ENTRIES)' },
    })
    .post(
      '/repos/:owner/:repo/contents',
      async ({ body, repo, user, status }) => {
        const { files, ...opts } = body
        return status(201, filesResponse(deps, repo, await changeFiles(deps, repo, user, opts, files)))
      },
      {
        ...writeNeeds,
        params: RepoParams,
        body: ChangeFilesOptions,
        response: { 201: FilesResponseSchema },
        detail: { operationId: 'repoChangeFiles', summary: 'Modify multiple files in a repository, in one commit' },
      },
    )
    .get('/repos/:owner/:repo/contents/*', async ({ params, query, repo }) => await getContents(deps, repo, treePathOfUrl(wildcardOf(params)), query.ref), {
      scope: 'repository',
      repo: { level: 'read' },
      params: RepoWildcardParams,
      query: RefQuery,
      response: { 200: ContentsOrList },
      detail: {
        operationId: 'repoGetContents',
        summary: "Gets the metadata and contents (if a file) of an entry in a repository, or a list of entries if a dir (at most WARREN_MAX_CONTENTS_LIST_ENTRIES)",
      },
    })
    .post(
      '/repos/:owner/:repo/contents/*',
      async ({ params, body, repo, user, status }) => {
        const { content, ...opts } = body
        const path = wildcardPath(params)
        return status(201, fileResponse(deps, repo, await changeFiles(deps, repo, user, opts, [{ operation: 'create', path, content }])))
      },
      {
        ...writeNeeds,
        params: RepoWildcardParams,
        body: CreateFileOptions,
        response: { 201: FileResponseSchema },
        detail: { operationId: 'repoCreateFile', summary: 'Create a file in a repository' },
      },
    )
    .put(
      '/repos/:owner/:repo/contents/*',
      async ({ params, body, repo, user }) => {
        const { content, sha, from_path, ...opts } = body
        const change = { operation: 'update' as const, path: wildcardPath(params), content, sha, from_path }
        return fileResponse(deps, repo, await changeFiles(deps, repo, user, opts, [change]))
      },
      {
        ...writeNeeds,
        params: RepoWildcardParams,
        body: UpdateFileOptions,
        response: { 200: FileResponseSchema },
        detail: { operationId: 'repoUpdateFile', summary: 'Update a file in a repository (`sha` is its current blob id; `from_path` moves it)' },
      },
    )
    .delete(
      '/repos/:owner/:repo/contents/*',
      async ({ params, body, repo, user }) => {
        const { sha, ...opts } = body
        return fileResponse(deps, repo, await changeFiles(deps, repo, user, opts, [{ operation: 'delete', path: wildcardPath(params), sha }]))
      },
      {
        ...writeNeeds,
        params: RepoWildcardParams,
        body: DeleteFileOptions,
        response: { 200: FileResponseSchema },
        detail: { operationId: 'repoDeleteFile', summary: 'Delete a file in a repository (`sha` is its current blob id)' },
      },
    )
    .post(
      '/repos/:owner/:repo/diffpatch',
      async ({ body, repo, user }) => {
        const { content, sha: _sha, from_path: _from, ...opts } = body
        return await applyPatch(deps, repo, user, opts, content)
      },
      {
        ...writeNeeds,
        params: RepoParams,
        body: DiffPatchOptions,
        response: { 200: FileResponseSchema },
        detail: { operationId: 'repoApplyDiffPatch', summary: 'Apply a diff patch to a branch as one commit' },
      },
    )
    .get(
      '/repos/:owner/:repo/media/*',
      // A pointer file whose object the repository lacks is served as it is, as Gitea serves it.
      ({ params, query, repo }) => rawFile(deps, repo, { wildcard: wildcardOf(params), ref: query.ref, media: true }),
      {
        scope: 'repository',
        repo: { level: 'read' },
        params: RepoWildcardParams,
        query: RefQuery,
        response: { 200: FileBytes },
        detail: { operationId: 'repoGetRawFileOrLFS', summary: "Get a file or its LFS object from a repository ({ref}/{filepath}, or {filepath}?ref=)" },
      },
    )

/** The route's path, decoded and joined as the writes take it (checked again there). */
const wildcardPath = (params: Record<string, unknown>) => treePathOfUrl(wildcardOf(params)).join('/')
