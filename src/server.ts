import type { AppDeps } from './deps'
import { createApp } from './app'

/**
 * Starts listening. Bun's own body bound is the larger of the two limits (git packs stream in up
 * to `maxPushSize`); each body is counted against its own limit as it arrives (app.ts, git-http).
 */
export function startServer(deps: AppDeps, opts: { hostname?: string; port?: number } = {}) {
  const app = createApp(deps)
  const server = Bun.serve({
    hostname: opts.hostname ?? deps.config.host,
    port: opts.port ?? deps.config.port,
    fetch: (request, server) => {
      // From the connection, so a client cannot forge it (failed sign-ins are counted per address).
      const address = server.requestIP(request)?.address
      if (address) deps.auth.setClientAddress(request, address)
      return app.handle(request)
    },
    maxRequestBodySize: Math.max(deps.config.maxApiBody, deps.config.maxPushSize),
    idleTimeout: 255,
    development: false,
  })
  return { app, server }
}
