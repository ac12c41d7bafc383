import { createHmac } from 'node:crypto'

/** One request a receiver got. */
export interface Received {
  path: string
  headers: Record<string, string>
  body: string
  /** The payload JSON text (the form's `payload` field for form hooks). */
  text: string
  payload: any
  /** The status the receiver answered. */
  answered: number
}

/**
 * A webhook receiver on loopback (Bun.serve): records every request, answers `status` (a
 * function of the request number may make it fail first), can be stopped and restarted on the
 * same port to play a receiver that is down.
 */
export async function startReceiver(opts: { port?: number; status?: (n: number, r: Received) => number } = {}) {
  const received: Received[] = []
  let answer = opts.status ?? (() => 200)
  let n = 0
  let delayMs = 0
  const handler = async (req: Request) => {
    const raw = await req.text()
    if (delayMs) await Bun.sleep(delayMs)
    const headers: Record<string, string> = {}
    req.headers.forEach((value, key) => (headers[key] = value))
    const text = (headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded') ? (new URLSearchParams(raw).get('payload') ?? '') : raw
    let payload: any = null
    try {
      payload = JSON.parse(text)
    } catch {}
    const r: Received = { path: new URL(req.url).pathname, headers, body: raw, text, payload, answered: 0 }
    r.answered = answer(++n, r)
    received.push(r)
    return new Response(r.answered < 300 ? 'ok' : 'nope', { status: r.answered })
  }
  let server: ReturnType<typeof Bun.serve> | null = Bun.serve({ hostname: '127.0.0.1', port: opts.port ?? 0, fetch: handler })
  const port = server.port!
  return {
    port,
    url: (path = '/hook') => `http://127.0.0.1:${port}${path}`,
    received,
    /** Accepted deliveries (2xx answers). */
    accepted: () => received.filter((r) => r.answered >= 200 && r.answered < 300),
    setStatus(fn: (n: number, r: Received) => number) {
      answer = fn
    },
    /** Answers each request only after this long (a slow receiver). */
    setDelay(ms: number) {
      delayMs = ms
    },
    down() {
      server?.stop(true)
      server = null
    },
    up() {
      if (!server) server = Bun.serve({ hostname: '127.0.0.1', port, fetch: handler })
    },
    stop() {
      server?.stop(true)
      server = null
    },
  }
}
export type Receiver = Awaited<ReturnType<typeof startReceiver>>

/** The signature a receiver computes: hex HMAC-SHA256 of the payload text with the secret. */
export const hmacHex = (secret: string, text: string, algorithm: 'sha256' | 'sha1' = 'sha256') => createHmac(algorithm, secret).update(text).digest('hex')

/** Waits until `check` holds (polling; bounded by `rounds`), then returns its last value. */
export async function until<T>(check: () => T | null | undefined | false | Promise<T | null | undefined | false>, what: string, rounds = 2400, everyMs = 25): Promise<T> {
  for (let i = 0; i < rounds; i++) {
    const value = await check()
    if (value) return value
    await Bun.sleep(everyMs)
  }
  throw new Error(`gave up waiting for ${what}`)
}

/**
 * Waits until `count()` reaches `target` for as long as it keeps rising: gives up only when it has
 * not moved for `stallMs`. A machine whose cores are busy makes a long run of deliveries slow
 * (a burst of 1,000 took 6 s alone and over a minute beside the suite and other tests), a stuck
 * one makes it stop: only the second fails.
 */
export async function untilCount(count: () => number, target: number, what: string, stallMs = 30_000, everyMs = 25): Promise<void> {
  let last = -1
  let movedAt = performance.now()
  for (;;) {
    const now = count()
    if (now >= target) return
    if (now !== last) [last, movedAt] = [now, performance.now()]
    else if (performance.now() - movedAt > stallMs) throw new Error(`gave up waiting for ${what}: ${now} of ${target}, none more in ${stallMs / 1000} s`)
    await Bun.sleep(everyMs)
  }
}
