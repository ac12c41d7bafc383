import { Elysia, t } from 'elysia'
import { dirname, join } from 'node:path'
import { notFound } from '../../lib/errors'

const assetsDir = dirname(require.resolve('swagger-ui-dist/package.json'))
const ASSETS = new Set(['swagger-ui-bundle.js', 'swagger-ui.css', 'swagger-ui-standalone-preset.js', 'favicon-32x32.png'])

/** The docs page's scripts and styles, served from the swagger-ui-dist package (no CDN). */
export const docsAssetsModule = () =>
  new Elysia({ name: 'docs-assets' }).get(
    '/api/swagger/assets/:file',
    ({ params, set }) => {
      if (!ASSETS.has(params.file)) throw notFound()
      set.headers['cache-control'] = 'public, max-age=86400'
      return Bun.file(join(assetsDir, params.file))
    },
    { params: t.Object({ file: t.String() }), detail: { hide: true } },
  )
