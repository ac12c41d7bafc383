// runs in one half: postgresql
import { afterAll, describe, expect, test } from 'bun:test'
import http from 'node:http'
import { startTestServer, type TestServer } from './helpers'

/**
 * The render workers are shared out between clients (their addresses): one client's slow renders
 * wait behind its own while another client's render goes first, and a full queue makes room for
 * a client with less waiting.
 */

/**
 * A render that holds its worker a while (a million nested blockquotes: 28 MB of HTML from md4c,
 * cut to 100 levels before sanitising) and answers little, so its answer arrives as it finishes.
 */
const SLOW_TEXT = '>'.repeat(1_000_000)

const servers: TestServer[] = []
afterAll(() => Promise.all(servers.map((s) => s.stop())))

/** POST /markdown from another loopback address (127.0.0.2): another client to the server. */
function postFrom(s: TestServer, localAddress: string, body: unknown): Promise<{ status: number; text: string }> {
  const url = new URL(`${s.url}/api/v1/markdown`)
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', localAddress, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk) => (text += chunk))
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }))
      },
    )
    req.on('error', reject)
    req.end(JSON.stringify(body))
  })
}

describe('markdown workers are shared between clients', () => {
  test('two slow renders of one client leave a worker to another client, whose render completes while both are in flight', async () => {
    const s = await startTestServer({ markdownWorkers: 2, markdownTimeoutMs: 120_000 })
    servers.push(s)
    // Both workers started (one for each client), so no render below waits for one to load.
    expect((await Promise.all([s.post('/markdown', { Text: 'a' }), postFrom(s, '127.0.0.2', { Text: 'b' })])).map((r) => r.status)).toEqual([200, 200])
    const finished: string[] = []
    const slow = [1, 2].map((n) => s.post('/markdown', { Text: SLOW_TEXT }).then((r) => (finished.push(`slow ${n}`), r)))
    // (Which of the two the server takes first is up to the connections.)
    // Both slow requests reach the server first (sequencing only; nothing is timed).
    await Bun.sleep(300)
    const other = await postFrom(s, '127.0.0.2', { Text: '*other client*' })
    finished.push('other')
    expect([other.status, other.text]).toEqual([200, '<p><em>other client</em></p>\n'])
    // Answered while both slow renders were still in flight (one running, one waiting behind it).
    expect(finished).toEqual(['other'])
    const answers = await Promise.all(slow)
    expect(answers.map((r) => r.status)).toEqual([200, 200])
    expect(finished.sort()).toEqual(['other', 'slow 1', 'slow 2'])
  }, 300_000)

  test('a full queue refuses the busiest client, not a newcomer, and the newcomer goes before its waiting jobs', async () => {
    const s = await startTestServer({ markdownWorkers: 1, markdownQueue: 2, markdownTimeoutMs: 120_000 })
    servers.push(s)
    const finished: string[] = []
    const track = (name: string, p: Promise<{ status: number }>) => p.then((r) => (finished.push(`${name} ${r.status}`), r))
    // One runs, two wait; the fourth finds the queue full of its own client's jobs: 503 at once.
    const first = [1, 2, 3].map((n) => track(`a${n}`, s.post('/markdown', { Text: SLOW_TEXT })))
    await Bun.sleep(300)
    const fourth = await s.post('/markdown', { Text: SLOW_TEXT })
    expect([fourth.status, fourth.body.message]).toEqual([503, 'Too many markdown documents are being rendered; try again shortly'])
    // Another client: the busiest client's newest waiting job gives up its place (503).
    const other = await postFrom(s, '127.0.0.2', { Text: '**newcomer**' })
    expect([other.status, other.text]).toEqual([200, '<p><strong>newcomer</strong></p>\n'])
    finished.push('other')
    const answers = await Promise.all(first)
    expect(answers.map((r) => r.status)).toEqual([200, 200, 503])
    // a3 was refused when the newcomer came; the newcomer ran as soon as a1 finished, before a2.
    expect(finished[0]).toBe('a3 503')
    expect(finished.indexOf('other')).toBeLessThan(finished.indexOf('a2 200'))
  }, 300_000)
})
