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

/**
 * What `GET /` says to a script or client (anything but a browser, which gets the web's home
 * page): the service, its version, and where the API and its documents are.
 */
export const rootInfo = (config: Config) => ({
  name: 'Warren',
  version: WARREN_VERSION,
  gitea_version: GITEA_COMPAT_VERSION,
  api_url: config.baseUrl + 'api/v1',
  docs_url: docsUrl(config),
  openapi_url: config.baseUrl + 'swagger.v1.json',
})
