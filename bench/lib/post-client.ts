/**
 * A benchmark's HTTP client in a process of its own (as clients are), so that its requests share
 * neither the measured server's event loop nor Bun's fetch thread (one per process: the webhook
 * thread's deliveries go through it). Reads one JSON command a line on stdin, `{ url, headers,
 * bodies }`: POSTs each body in turn, one at a time, and writes back one line, the JSON list of
 * each request's time in ms (from sending to the whole answer read), or `{ error }`.
 *
 *   const client = await startPostClient(); await client.post(url, headers, bodies); client.stop()
 */
import { fileURLToPath } from 'node:url'

type Command = { url: string; headers: Record<string, string>; bodies: string[] }

if (import.meta.main) {
  const decoder = new TextDecoder()
  let buffered = ''
  for await (const chunk of Bun.stdin.stream() as unknown as AsyncIterable<Uint8Array>) {
    buffered += decoder.decode(chunk, { stream: true })
    for (let nl = buffered.indexOf('\n'); nl >= 0; nl = buffered.indexOf('\n')) {
      const command = JSON.parse(buffered.slice(0, nl)) as Command
      buffered = buffered.slice(nl + 1)
      const times: number[] = []
      let error: string | null = null
      for (const body of command.bodies) {
        const start = performance.now()
        const res = await fetch(command.url, { method: 'POST', headers: command.headers, body })
        await res.arrayBuffer()
        times.push(performance.now() - start)
        if (!res.ok) error = `${res.status} from ${command.url}`
      }
      process.stdout.write(JSON.stringify(error ? { error } : times) + '\n')
    }
  }
}

/** Starts the client process; `post` answers each request's time in ms (throws on a non-2xx answer). */
export async function startPostClient() {
  const proc = Bun.spawn([process.execPath, fileURLToPath(import.meta.url)], { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' })
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let buffered = ''
  return {
    pid: proc.pid,
    async post(url: string, headers: Record<string, string>, bodies: string[]): Promise<number[]> {
      proc.stdin.write(JSON.stringify({ url, headers, bodies } satisfies Command) + '\n')
      proc.stdin.flush()
      while (!buffered.includes('\n')) {
        const chunk = await reader.read()
        if (chunk.done) throw new Error('the client process ended')
        buffered += decoder.decode(chunk.value, { stream: true })
      }
      const nl = buffered.indexOf('\n')
      const answer = JSON.parse(buffered.slice(0, nl)) as number[] | { error: string }
      buffered = buffered.slice(nl + 1)
      if (!Array.isArray(answer)) throw new Error(answer.error)
      return answer
    },
    stop: () => proc.kill(),
  }
}
