import type { AppDeps } from './deps'
import { createApp } from './app'

/** Starts listening; pack data of git over HTTP streams through, so body limits are generous. */
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
    maxRequestBodySize: 8 * 1024 * 1024 * 1024,
    idleTimeout: 255,
    development: false,
  })
  return { app, server }
}
