import { Elysia } from 'elysia'
import { STYLESHEET as stylesheet } from './style'

/**
 * The one stylesheet, at a path named by its content's hash: a page always links the current one,
 * so browsers may keep it for a year.
 */
const STYLE_HASH = new Bun.CryptoHasher('sha256').update(stylesheet).digest('hex').slice(0, 12)
export const STYLESHEET_PATH = `/assets/style-${STYLE_HASH}.css`

export const webAssets = () =>
  new Elysia({ name: 'web-assets' }).get(
    STYLESHEET_PATH,
    () =>
      new Response(stylesheet, {
        headers: { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'public, max-age=31536000, immutable', 'x-content-type-options': 'nosniff' },
      }),
    { detail: { hide: true, operationId: 'webStylesheet' } },
  )
