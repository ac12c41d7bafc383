import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, git, remoteUrl, tempDir } from './git-fixture'
import { freshTestDatabase } from './test-database'
import { dropInBackground, SOURCES, startServe, type Served } from './process-helpers'

/** Every request body is counted as it arrives and refused with 413 at its limit. */

const LIMIT = 64 * 1024
let s: TestServer
let alice: TestUser
const dirs: string[] = []
beforeAll(async () => {
  // The markdown render of a body near the limit is no test of the renderer's budget: a budget no
  // loaded machine reaches.
  s = await startTestServer({ maxApiBody: LIMIT, maxPushSize: 1024 * 1024, markdownTimeoutMs: 120_000 })
  alice = await s.user('alice')
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** `size` bytes of `unit` as a chunked body (no Content-Length), in 16 KiB chunks. */
function chunked(prefix: string, unit: string, size: number): ReadableStream<Uint8Array> {
  let sent = 0
  const head = new TextEncoder().encode(prefix)
  const chunk = new TextEncoder().encode(unit.repeat(Math.ceil(16384 / unit.length)).slice(0, 16384))
  return new ReadableStream({
    pull(controller) {
      if (sent === 0) controller.enqueue(head)
      if (sent >= size) return controller.close()
      controller.enqueue(chunk)
      sent += chunk.byteLength
    },
  })
}

const BODIES: Record<string, { type: string; prefix: string; unit: string; suffix: string }> = {
  json: { type: 'application/json', prefix: '{"name":"', unit: 'x', suffix: '"}' },
  form: { type: 'application/x-www-form-urlencoded', prefix: 'name=', unit: 'x', suffix: '' },
  text: { type: 'text/plain', prefix: '{"name":"', unit: 'x', suffix: '"}' },
  multipart: { type: 'multipart/form-data; boundary=XyZ', prefix: '--XyZ\r\nContent-Disposition: form-data; name="name"\r\n\r\n', unit: 'x', suffix: '\r\n--XyZ--\r\n' },
}

async function send(path: string, type: string, body: BodyInit, token?: string) {
  const headers: Record<string, string> = { 'content-type': type }
  if (token) headers.authorization = `token ${token}`
  const res = await fetch(`${s.url}${path}`, { method: 'POST', headers, body, duplex: 'half' } as RequestInit)
  return { status: res.status, body: await res.json().catch(() => null) }
}

describe('API body limit', () => {
  test('every type and framing past the limit is a 413 and changes nothing', async () => {
    const message = `The request body is larger than ${LIMIT} bytes`
    for (const [kind, b] of Object.entries(BODIES))
      for (const path of ['/api/v1/user/repos', '/api/v1/markdown', '/api/v1/markdown/raw']) {
        const whole = b.prefix + 'x'.repeat(LIMIT) + b.suffix
        const withLength = await send(path, b.type, whole, alice.token)
        expect([kind, path, withLength.status, withLength.body?.message]).toEqual([kind, path, 413, message])
        const streamed = await send(path, b.type, chunked(b.prefix, b.unit, LIMIT * 4), alice.token)
        expect([kind, path, 'chunked', streamed.status, streamed.body?.message]).toEqual([kind, path, 'chunked', 413, message])
      }
    expect((await s.get('/user/repos', { token: alice.token })).body).toEqual([])
  })

  test('bodies under the limit are read as before, in every type and framing', async () => {
    const name = 'r'.repeat(40)
    for (const [kind, b] of Object.entries(BODIES)) {
      const repo = `${name}-${kind}`
      const body = b.prefix + repo + b.suffix
      const r = await send('/api/v1/user/repos', b.type, kind === 'multipart' ? body : new Blob([body]).stream(), alice.token)
      expect([kind, r.status, r.body?.name]).toEqual([kind, 201, repo])
    }
    const raw = await fetch(`${s.url}/api/v1/markdown/raw`, { method: 'POST', body: chunked('', '*a* ', LIMIT - 16384), duplex: 'half' } as RequestInit)
    expect(raw.status).toBe(200)
    expect((await raw.text()).startsWith('<p><em>a</em> <em>a</em>')).toBe(true)
  })
})

describe('git push limit', () => {
  test('a pack over WARREN_MAX_PUSH_SIZE is refused and no ref changes', async () => {
    expect((await s.post('/user/repos', { name: 'packs' }, { token: alice.token })).status).toBe(201)
    const dir = tempDir('warren-packs-')
    dirs.push(dir)
    await gitOk(dir, 'init', '-q', '-b', 'master')
    writeFileSync(join(dir, 'small.txt'), 'small\n')
    await gitOk(dir, 'add', '.')
    await gitOk(dir, 'commit', '-q', '-m', 'small')
    const url = remoteUrl(s.url, 'alice/packs.git', 'alice', alice.token)
    await gitOk(dir, 'push', '-q', url, 'master')
    writeFileSync(join(dir, 'big.bin'), randomBytes(3 * 1024 * 1024))
    await gitOk(dir, 'add', '.')
    await gitOk(dir, 'commit', '-q', '-m', 'big')
    const pushed = await git(dir, 'push', url, 'master')
    expect(pushed.code).not.toBe(0)
    const branch = await s.get('/repos/alice/packs/branches/master', { token: alice.token })
    expect(branch.body.commit.message).toBe('small\n')
    // A small push still works.
    await gitOk(dir, 'reset', '-q', '--hard', 'HEAD~1')
    writeFileSync(join(dir, 'two.txt'), 'two\n')
    await gitOk(dir, 'add', '.')
    await gitOk(dir, 'commit', '-q', '-m', 'two')
    await gitOk(dir, 'push', '-q', url, 'master')
    expect((await s.get('/repos/alice/packs/branches/master', { token: alice.token })).body.commit.message).toBe('two\n')
  }, 240_000)
})

describe('memory', () => {
  test('100 MiB chunked bodies keep a separate server process bounded', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-rss-'))
    // The run's database kind, but a database of its own (never the WARREN_DATABASE_URL of the run itself).
    const database = await freshTestDatabase()
    // Started as an operator starts it, on a free port, waited for until it answers (a busy machine's start takes seconds).
    let server: Served | undefined
    try {
      server = await startServe(SOURCES, dir, { WARREN_MAX_API_BODY: String(4 * 1024 * 1024), ...(database.url ? { WARREN_DATABASE_URL: database.url } : {}) })
      const pid = server.proc.pid
      const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024
      const url = server.url
      const before = rss()
      let peak = before
      const watch = setInterval(() => (peak = Math.max(peak, rss())), 20)
      for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=XyZ', 'application/json'])
        for (const path of ['/api/v1/markdown/raw', '/api/v1/markdown']) {
          const res = await fetch(url + path, { method: 'POST', headers: { 'content-type': type }, body: chunked('', 'a\n', 100 * 1024 * 1024), duplex: 'half' } as RequestInit)
          expect([type, path, res.status]).toEqual([type, path, 413])
          await res.arrayBuffer()
        }
      clearInterval(watch)
      expect(peak - before).toBeLessThan(64)
    } finally {
      await server?.stop()
      dropInBackground(database)
      rmSync(dir, { recursive: true, force: true })
    }
  }, 240_000)
})
