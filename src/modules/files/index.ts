import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, pipeline, type AreaApp } from '../../auth/pipeline'
import { EditorConfigSchema, FileBytes, RepoWildcardParams, wildcardOf } from './model'
import { archive, editorConfigFor, rawFile } from './service'
import { QueryText } from '../../lib/validate'

/**
 * `raw/*` and `archive/*` below `base` (`/repos/:owner/:repo` in the API, `/:owner/:repo` on the
 * web side): the same handlers at both places; `web` adds the `raw/branch|tag|commit/` forms, and
 * lets the web session sign a raw file's or an archive's reader in (the file view's Raw link and a
 * tag's archives work for a private repository as its pages do; a GET changes nothing, so no CSRF
 * token is needed), their errors then answered as pages.
 */
export const downloadRoutes = (deps: AppDeps, base: string, opts: { web: boolean; ids: [string, string] }) =>
  new Elysia({ name: `downloads:${base}` })
    .use(
      new Elysia({ name: `raw:${base}` }).use(pipeline(deps, { session: opts.web })).get(
        `${base}/raw/*`,
        ({ params, query, repo }) => rawFile(deps, repo, { wildcard: wildcardOf(params), ref: query.ref, explicitKinds: opts.web }),
        {
          scope: 'repository',
          repo: { level: 'read' },
          params: RepoWildcardParams,
          query: t.Object({ ref: QueryText() }),
          response: { 200: FileBytes },
          detail: {
            operationId: opts.ids[0],
            summary: 'Get a file from a repository ({ref}/{filepath}, or {filepath}?ref=)',
            ...(opts.web ? { 'x-warren-page': true } : {}),
          },
        },
      ),
    )
    .use(opts.web ? mediaRoute(deps, base) : new Elysia({ name: `no-media:${base}` }))
    .use(
      new Elysia({ name: `archive:${base}` }).use(pipeline(deps, { session: opts.web })).get(
        `${base}/archive/*`,
        ({ params, repo }) => archive(deps, repo, wildcardOf(params)),
        {
          scope: 'repository',
          repo: { level: 'read' },
          params: RepoWildcardParams,
          response: { 200: FileBytes },
          detail: {
            operationId: opts.ids[1],
            summary: 'Get an archive of a repository ({ref}.zip or {ref}.tar.gz)',
            ...(opts.web ? { 'x-warren-page': true } : {}),
          },
        },
      ),
    )

/** The web's `media/*` (Gitea's): a file, or the LFS object its pointer stands for; the API's is the contents area's. */
const mediaRoute = (deps: AppDeps, base: string) =>
  new Elysia({ name: `media:${base}` }).use(pipeline(deps, { session: true })).get(
    `${base}/media/*`,
    ({ params, query, repo }) => rawFile(deps, repo, { wildcard: wildcardOf(params), ref: query.ref, explicitKinds: true, media: true }),
    {
      scope: 'repository',
      repo: { level: 'read' },
      params: RepoWildcardParams,
      query: t.Object({ ref: QueryText() }),
      response: { 200: FileBytes },
      detail: { operationId: 'webMediaFile', summary: 'Get a file or the LFS object its pointer stands for (branch|tag|commit/{ref}/{filepath})', 'x-warren-page': true },
    },
  )

/** Raw files, archives and editorconfig under /repos/{o}/{r}. */
export const filesModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] })
    .use(downloadRoutes(deps, '/repos/:owner/:repo', { web: false, ids: ['repoGetRawFile', 'repoGetArchive'] }))
    .get(
      '/repos/:owner/:repo/editorconfig/*',
      ({ params, repo }) => editorConfigFor(deps, repo, wildcardOf(params)),
      {
        scope: 'repository',
        repo: { level: 'read' },
        params: RepoWildcardParams,
        response: { 200: EditorConfigSchema },
        detail: { operationId: 'repoGetEditorConfig', summary: 'Get the EditorConfig definitions of a file in a repository' },
      },
    )
