/**
 * A webhook receiver for benchmarks, in a process of its own (as receivers are), so that the
 * requests it answers do not share the measured server's event loop. Answers 200 to every POST
 * and counts them; `GET /count` tells the count. Prints its port on its first line of output.
 *
 *   const rx = await startHookReceiver(); ...; await rx.count(); rx.stop()
 */
import { fileURLToPath } from 'node:url'

if (import.meta.main) {
  let received = 0
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (req) => {
      if (req.method === 'GET') return new Response(String(received))
      await req.arrayBuffer()
      received++
      return new Response('ok')
    },
  })
  console.log(server.port)
}

/** Starts the receiver process; answers its port, how many deliveries it got so far, and stop. */
export async function startHookReceiver() {
  const proc = Bun.spawn([process.execPath, fileURLToPath(import.meta.url)], { stdout: 'pipe', stderr: 'inherit' })
  const reader = proc.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const chunk = await reader.read()
    if (chunk.done) throw new Error('the receiver did not start')
    text += new TextDecoder().decode(chunk.value)
  }
  const port = Number(text.trim())
  return {
    port,
    pid: proc.pid,
    count: async () => Number(await (await fetch(`http://127.0.0.1:${port}/count`)).text()),
    stop: () => proc.kill(),
  }
}
