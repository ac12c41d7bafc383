import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { loadRepoContext } from '../../auth/repo-context'
import { EditorConfigSchema, FileBytes, RepoWildcardParams, wildcardOf } from './model'
import { archive, editorConfigFor, rawFile } from './service'
import { QueryText } from '../../lib/validate'

/**
 * `raw/*` and `archive/*` below `base` (`/repos/:owner/:repo` in the API, `/:owner/:repo` on the
 * web side): the same handlers at both places; `web` adds the `raw/branch|tag|commit/` forms.
 */
export const downloadRoutes = (deps: AppDeps, base: string, opts: { web: boolean; ids: [string, string] }) =>
  new Elysia({ name: `downloads:${base}` })
    .get(
      `${base}/raw/*`,
      async ({ request, params, query }) => {
        const ctx = await loadRepoContext(deps, request, params.owner, params.repo)
        return rawFile(deps, ctx, { wildcard: wildcardOf(params), ref: query.ref, explicitKinds: opts.web })
      },
      {
        params: RepoWildcardParams,
        query: t.Object({ ref: QueryText() }),
        response: { 200: FileBytes },
        detail: { operationId: opts.ids[0], summary: 'Get a file from a repository ({ref}/{filepath}, or {filepath}?ref=)' },
      },
    )
    .get(
      `${base}/archive/*`,
      async ({ request, params }) => archive(deps, await loadRepoContext(deps, request, params.owner, params.repo), wildcardOf(params)),
      {
        params: RepoWildcardParams,
        response: { 200: FileBytes },
        detail: { operationId: opts.ids[1], summary: 'Get an archive of a repository ({ref}.zip or {ref}.tar.gz)' },
      },
    )

/** Raw files, archives and editorconfig under /repos/{o}/{r} (issue 3). */
export const filesModule = (deps: AppDeps) =>
  new Elysia({ name: 'files', detail: { tags: ['repository'] } })
    .use(downloadRoutes(deps, '/repos/:owner/:repo', { web: false, ids: ['repoGetRawFile', 'repoGetArchive'] }))
    .get(
      '/repos/:owner/:repo/editorconfig/*',
      async ({ request, params }) =>
        editorConfigFor(deps, await loadRepoContext(deps, request, params.owner, params.repo), wildcardOf(params)),
      {
        params: RepoWildcardParams,
        response: { 200: EditorConfigSchema },
        detail: { operationId: 'repoGetEditorConfig', summary: 'Get the EditorConfig definitions of a file in a repository' },
      },
    )
