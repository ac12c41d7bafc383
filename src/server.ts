import type { AppDeps } from './deps'
import { createApp } from './app'
import { errorFields, loggedPath, loggerOf } from './lib/log'
import { MULTIPART_OVERHEAD } from './lib/multipart'
import { docsUrl } from './lib/urls'
import { servingClient } from './lib/request-client'
import { answeringEnded, answeringStarted } from './lib/foreground'
import { feedPathOf } from './web/feed-xml'

/** The host of a request that names none (feedRequest). */
const UNNAMED_HOST = 'localhost'

/**
 * A feed asked for at Gitea's address whose last segment carries the format (`/{user}.rss`,
 * `/{owner}/{repo}.atom`): the same request at the path the web module serves it at
 * (web/feed-xml.ts feedPathOf); any other request as it came.
 */
function feedRequest(request: Request): Request {
  // A look at the raw URL first: every request passes here.
  const raw = request.url
  // Without a Host header git and browsers always send (HTTP/1.0), or with one a URL cannot hold
  // (empty, or with `/`, `?`, `#`, `@`, `\` or a space), Bun gives a relative URL: the request is
  // read as one to this server, so the apps route it by its own path (they look for it after
  // `http://`) and everything reading its URL can (a 500 before, or a path read from its middle).
  if (raw.startsWith('/')) return new Request(`http://${UNNAMED_HOST}${raw}`, request)
  const q = raw.indexOf('?')
  const end = q < 0 ? raw.length : q
  if (!raw.endsWith('.rss', end) && !raw.endsWith('.atom', end)) return request
  if (request.method !== 'GET' && request.method !== 'HEAD') return request
  const url = new URL(raw)
  const path = feedPathOf(url.pathname)
  if (!path) return request
  url.pathname = path
  return new Request(url, request)
}

/**
 * Starts listening. Bun's own body bound is the largest of the limits (git packs stream in up
 * to `maxPushSize`, release assets up to `maxAttachmentSize`); each body is counted against its own limit as it
 * arrives (app.ts, git-http, releases).
 * A port another process holds is an error here (EADDRINUSE), never a shared port: `reusePort`
 * is off, so a second Warren cannot take half of the first one's connections.
 *
 * `afterRequests.run` is called once, when the server has answered `afterRequests.count` requests.
 *
 * Each request gets one log line once answered (method, path, status, duration until the answer
 * began, user, client address); streamed answers (clones, pushes) go on after it. The status
 * logged is the one sent: an error that escapes the app is answered here (500, the API's error
 * shape) and logged as such, never left to Bun, which would print it in its own format and send
 * its own 500. Bun's `error` handler gets what fails after the answer left the app (a file body
 * that cannot be read while sent): it is logged in the log's format too.
 */
export function startServer(deps: AppDeps, opts: { hostname?: string; port?: number; afterRequests?: { count: number; run: () => void } } = {}) {
  const app = createApp(deps)
  let answered = 0
  const log = loggerOf(deps.config)
  const logged = async (request: Request, address: string | undefined, started: number, status: number) => {
    log.info('request', {
      method: request.method,
      path: loggedPath(request.url),
      status,
      duration_ms: Math.round((performance.now() - started) * 10) / 10,
      user: (await deps.auth.answeredFor(request)) ?? '-',
      address,
    })
  }
  const internalError = () =>
    Response.json({ message: 'Internal server error', url: docsUrl(deps.config) }, { status: 500, headers: { 'content-type': 'application/json; charset=utf-8' } })
  const server = Bun.serve({
    hostname: opts.hostname ?? deps.config.host,
    port: opts.port ?? deps.config.port,
    reusePort: false,
    fetch: async (request, server) => {
      const started = performance.now()
      // From the connection, so a client cannot forge it (failed sign-ins are counted per address):
      // asked of the request Bun received (it knows no address of a copy, such as feedRequest's),
      // when first wanted (most requests never do: a token found, no sign-in failing).
      const received = request
      const addressOf = () => server.requestIP(received)?.address
      request = feedRequest(request)
      deps.auth.setClientAddress(request, addressOf)
      let response: Response
      // Counted as the foreground's while it is answered (lib/foreground.ts: background threads step aside).
      answeringStarted()
      try {
        // Elysia's compiled handler itself (`app.handle` is an async wrapper around it), as the
        // client's work (lib/request-client.ts: work shared out between clients finds whose it is).
        const asked = request
        response = await servingClient(() => deps.auth.clientAddress(asked) ?? '', () => app.fetch(asked))
      } catch (e) {
        log.error('request failed', { method: request.method, path: loggedPath(request.url), ...errorFields(e) })
        response = internalError()
      } finally {
        answeringEnded()
      }
      if (log.enabled('info')) void logged(request, addressOf(), started, response.status)
      if (++answered === opts.afterRequests?.count) opts.afterRequests.run()
      return response
    },
    error: (e) => {
      log.error('answer failed while being sent', errorFields(e))
      return internalError()
    },
    maxRequestBodySize: Math.max(deps.config.maxApiBody, deps.config.maxPushSize, deps.config.maxAttachmentSize + MULTIPART_OVERHEAD),
    idleTimeout: 255,
    development: false,
  })
  return { app, server }
}
