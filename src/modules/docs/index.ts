import { Elysia, t } from 'elysia'
import { isAbsolute, join } from 'node:path'
import { notFound } from '../../lib/errors'
import { docsUrl } from '../../lib/urls'
import type { Config } from '../../config'
import { GITEA_COMPAT_VERSION, WARREN_VERSION } from '../../version'
// Imported as files: running from the sources each is the package's own file (an absolute path);
// `bun build --compile` embeds them in the single binary (an absolute path inside it); `bun build`
// (npm start) copies them beside the bundle and names them relative to it (see assetPath).
import bundleJs from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import uiCss from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import presetJs from 'swagger-ui-dist/swagger-ui-standalone-preset.js' with { type: 'file' }
import favicon from 'swagger-ui-dist/favicon-32x32.png' with { type: 'file' }

/**
 * Where an imported file is. The bundle names its copies relative to the bundle's own folder,
 * not to the working folder of the process, which is wherever the operator started it.
 */
const assetPath = (path: string) => (isAbsolute(path) ? path : join(import.meta.dir, path))

/** Each asset the docs page may ask for: where it is and its media type. */
const ASSETS = new Map<string, { path: string; type: string }>([
  ['swagger-ui-bundle.js', { path: assetPath(bundleJs), type: 'text/javascript; charset=utf-8' }],
  ['swagger-ui.css', { path: assetPath(uiCss), type: 'text/css; charset=utf-8' }],
  ['swagger-ui-standalone-preset.js', { path: assetPath(presetJs), type: 'text/javascript; charset=utf-8' }],
  ['favicon-32x32.png', { path: assetPath(favicon), type: 'image/png' }],
])

/**
 * The assets' bytes, read once when first asked for (about 2 MiB for all four). Read here rather
 * than handed to Bun as a file to send: a file that cannot be read then fails inside the
 * handler, so the answer (500, in the API's error shape) and the log say what happened, where a
 * file body fails only while Bun sends it, after the request was logged as answered.
 */
const loaded = new Map<string, Promise<Uint8Array<ArrayBuffer>>>()

function assetBytes(name: string, path: string): Promise<Uint8Array<ArrayBuffer>> {
  let bytes = loaded.get(name)
  if (!bytes) {
    bytes = Bun.file(path).bytes()
    loaded.set(name, bytes)
    // A failed read is not kept: the next request tries again (the file may have been restored).
    bytes.catch(() => loaded.delete(name))
  }
  return bytes
}

/** The docs page's scripts and styles, served from the swagger-ui-dist package (no CDN). */
export const docsAssetsModule = () =>
  new Elysia({ name: 'docs-assets' }).get(
    '/api/swagger/assets/:file',
    async ({ params }) => {
      const asset = ASSETS.get(params.file)
      if (!asset) throw notFound()
      const bytes = await assetBytes(params.file, asset.path)
      return new Response(bytes, { headers: { 'cache-control': 'public, max-age=86400', 'content-type': asset.type } })
    },
    { params: t.Object({ file: t.String({ maxLength: 100 }) }), detail: { hide: true } },
  )

const RootInfo = t.Object({
  name: t.String(),
  version: t.String({ description: "Warren's own version" }),
  gitea_version: t.String({ description: 'The Gitea version whose API Warren answers (GET /api/v1/version)' }),
  api_url: t.String(),
  docs_url: t.String(),
  openapi_url: t.String(),
})

/** What `GET /` says: the service, its version, and where the API and its documents are. */
const rootInfo = (config: Config) => ({
  name: 'Warren',
  version: WARREN_VERSION,
  gitea_version: GITEA_COMPAT_VERSION,
  api_url: config.baseUrl + 'api/v1',
  docs_url: docsUrl(config),
  openapi_url: config.baseUrl + 'swagger.v1.json',
})

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

/**
 * `GET /`: JSON by default (what a script or client gets), a small HTML page with the same
 * links when a browser asks for HTML first.
 */
export const rootModule = (config: Config) =>
  new Elysia({ name: 'root' }).get(
    '/',
    ({ request, set }) => {
      const info = rootInfo(config)
      const accept = request.headers.get('accept') ?? ''
      if (/^\s*text\/html/i.test(accept)) {
        set.headers['content-type'] = 'text/html; charset=utf-8'
        const link = (url: string, text: string) => `<a href="${escapeHtml(url)}">${escapeHtml(text)}</a>`
        return (
          `<!doctype html><html><head><meta charset="utf-8"><title>Warren</title></head><body>` +
            `<h1>Warren ${escapeHtml(info.version)}</h1><p>A self-hosted git service with a Gitea-compatible API (Gitea ${escapeHtml(info.gitea_version)}).</p>` +
            `<ul><li>${link(info.docs_url, 'API documentation')}</li><li>${link(info.openapi_url, 'OpenAPI document')}</li><li>API root: ${escapeHtml(info.api_url)}</li></ul></body></html>`
        )
      }
      return info
    },
    {
      response: { 200: t.Union([RootInfo, t.String()]) },
      detail: { operationId: 'warrenRoot', summary: "The service's name, version and where its API documents are", hide: true },
    },
  )
