import { Elysia } from 'elysia'
import { STYLESHEET as stylesheet } from './style'
import { SCRIPT as script } from './script'

/**
 * The one stylesheet, at a path named by its content's hash: a page always links the current one,
 * so browsers may keep it for a year.
 */
const STYLE_HASH = new Bun.CryptoHasher('sha256').update(stylesheet).digest('hex').slice(0, 12)
export const STYLESHEET_PATH = `/assets/style-${STYLE_HASH}.css`
/** The one script (an enhancement: line ranges), named by its hash the same way. */
const SCRIPT_HASH = new Bun.CryptoHasher('sha256').update(script).digest('hex').slice(0, 12)
export const SCRIPT_PATH = `/assets/warren-${SCRIPT_HASH}.js`
const IMMUTABLE = { 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' }

export const webAssets = () =>
  new Elysia({ name: 'web-assets' }).get(
    STYLESHEET_PATH,
    () =>
      new Response(stylesheet, {
        headers: { 'content-type': 'text/css; charset=utf-8', ...IMMUTABLE },
      }),
    { detail: { hide: true, operationId: 'webStylesheet' } },
  )
    .get(SCRIPT_PATH, () => new Response(script, { headers: { 'content-type': 'text/javascript; charset=utf-8', ...IMMUTABLE } }), {
      detail: { hide: true, operationId: 'webScript' },
    })
