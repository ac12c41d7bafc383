/**
 * Web pages of the issue tracker: time and HTML size of an issue with 50 comments (markdown
 * rendered, with its timeline events) and of the issue list, beside the targets of
 * ../shared/PERFORMANCE.md (≤ 10 ms p50, ≤ 100 KB). Starts Warren in this process on SQLite,
 * files the issue through the API, then asks for each page one request at a time (after a warm-up)
 * and prints p50 and p99 of the time to the whole answer, as a client on the same machine sees it.
 *
 *   bun bench/web-issues.ts [requests = 300]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/deps'
import { startServer } from '../src/server'
import { createUser } from '../src/modules/users/service'
import { BENCH_ADMIN } from './lib/git'

const requests = Number(process.argv[2] ?? 300)
const tmp = mkdtempSync(join(tmpdir(), 'warren-bench-web-issues-'))
const config = loadConfig({}, { dataDir: join(tmp, 'data'), port: 0, host: '127.0.0.1', logLevel: 'warn' })
const deps = await createDeps(config)
const { server } = startServer(deps, { hostname: '127.0.0.1', port: 0 })
config.baseUrl = `http://127.0.0.1:${server.port}/`
const base = `http://127.0.0.1:${server.port}`
const auth = 'Basic ' + Buffer.from(`${BENCH_ADMIN.user}:${BENCH_ADMIN.password}`).toString('base64')
await createUser(deps, { username: BENCH_ADMIN.user, password: BENCH_ADMIN.password, email: 'admin@example.com', isAdmin: true })
const call = async (method: string, path: string, body: unknown) => {
  const res = await fetch(`${base}/api/v1${path}`, { method, headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  return res.json() as Promise<any>
}
const owner = BENCH_ADMIN.user
await call('POST', '/user/repos', { name: 'web', auto_init: true })
const label = await call('POST', `/repos/${owner}/web/labels`, { name: 'bug', color: '#d73a4a' })
const issue = await call('POST', `/repos/${owner}/web/issues`, {
  title: 'An issue with fifty comments',
  body: '## Steps\n\n1. Open the page\n2. Read **everything**\n\n```ts\nconst answer = 42\n```\n\nSee #1 and @' + owner,
})
await call('POST', `/repos/${owner}/web/issues/${issue.number}/labels`, { labels: [label.id] })
for (let i = 0; i < 50; i++) {
  const body = `Comment ${i}: a *short* reply with a [link](https://example.com/${i}), \`code\` and a list:\n\n- one\n- two\n\n> quoted text from the comment before`
  await call('POST', `/repos/${owner}/web/issues/${issue.number}/comments`, { body })
  if (i % 10 === 5) await call('PATCH', `/repos/${owner}/web/issues/${issue.number}`, { state: i % 20 === 5 ? 'closed' : 'open' })
}
for (let i = 0; i < 40; i++) await call('POST', `/repos/${owner}/web/issues`, { title: `Filler issue ${i}`, labels: [label.id] })

async function measure(label: string, path: string, targetMs: number, targetKb: number) {
  const once = async () => {
    const started = performance.now()
    const res = await fetch(base + path, { headers: { accept: 'text/html' } })
    const text = await res.text()
    if (res.status !== 200) throw new Error(`${path}: ${res.status}`)
    return { ms: performance.now() - started, bytes: Buffer.byteLength(text) }
  }
  for (let i = 0; i < 20; i++) await once()
  const times: number[] = []
  let bytes = 0
  for (let i = 0; i < requests; i++) {
    const r = await once()
    times.push(r.ms)
    bytes = r.bytes
  }
  times.sort((a, b) => a - b)
  const p = (q: number) => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(2)
  console.log(`${label.padEnd(28)} p50 ${p(0.5).padStart(7)} ms  p99 ${p(0.99).padStart(7)} ms  ${(bytes / 1024).toFixed(1).padStart(6)} KB   (target ≤ ${targetMs} ms p50, ≤ ${targetKb} KB)`)
}

console.log(`${requests} requests each, one at a time; load: ${(await Bun.file('/proc/loadavg').text()).trim()}`)
await measure('issue with 50 comments', `/${owner}/web/issues/${issue.number}`, 10, 100)
await measure('issue list (20 a page)', `/${owner}/web/issues`, 10, 100)
server.stop(true)
rmSync(tmp, { recursive: true, force: true })
process.exit(0)
