/** A port free now (the system's choice): a fixed one may be another process's on a shared machine. */
export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
  const port = probe.port!
  probe.stop(true)
  return port
}
