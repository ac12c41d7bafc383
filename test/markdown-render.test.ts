// runs in one half: postgresql
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { startTestServer, type TestServer } from './helpers'
import { latencyProbe } from './latency-probe'
import { freshTestDatabase } from './test-database'
import { dropInBackground, startServe, type Served } from './process-helpers'
import { HOSTILE_FAMILIES, prose } from '../bench/lib/markdown-families'

/**
 * Markdown rendering runs in a pool of workers with a time budget: hostile input of any shape
 * costs time roughly proportional to its size (or is cut at the budget with a 422) and never
 * holds other requests.
 */

const BUDGET_MS = 1000
/**
 * Close to the longest text accepted, and what takes the renderer longest per character: a table
 * of a quarter of a million rows (about 8 MB of HTML to sanitise), at least a second on any machine.
 */
const SLOW_TEXT = `|a|b|\n|-|-|\n${'|x|\n'.repeat(261_000)}`
let s: TestServer
beforeAll(async () => {
  s = await startTestServer({ markdownTimeoutMs: BUDGET_MS })
})
afterAll(() => s.stop())

/** Hostile inputs by family: each builds a text of about `size` characters. */
const fill = (unit: string, size: number) => unit.repeat(Math.max(1, Math.floor(size / unit.length)))
const HOSTILE: Record<string, (size: number) => string> = {
  'one long paragraph': (n) => fill('a\n', n),
  'open brackets': (n) => fill('[', n),
  'quote markers': (n) => fill('>', n),
  'mixed emphasis': (n) => fill('*a _b ', n),
  'nested emphasis': (n) => fill('*', n / 2) + 'a' + fill('_', n / 2),
  'link reference chain': (n) => fill('[a]: /u\n', n / 2) + fill('[a][a]', n / 2),
  'deep list': (n) => Array.from({ length: Math.floor(n / 40) }, (_, i) => ' '.repeat(2 * (i % 18)) + '- item\n').join(''),
  'backtick runs': (n) => fill('`a``', n),
  'html-ish': (n) => fill('<a ', n / 3) + fill('<div>', n / 3) + fill('<!--', n / 3),
  'gfm references': (n) => fill('#1 @a [[a| ', n),
  'unclosed links': (n) => fill('[a](', n),
}

type Route = { name: string; send: (text: string) => Promise<{ status: number; text: string; body: any }> }
const ROUTES: Route[] = [
  { name: '/markdown gfm', send: (Text) => s.post('/markdown', { Text, Mode: 'gfm', Context: 'alice/proj' }) },
  { name: '/markdown gfm wiki', send: (Text) => s.post('/markdown', { Text, Mode: 'gfm', Context: 'alice/proj', Wiki: true }) },
  { name: '/markdown markdown', send: (Text) => s.post('/markdown', { Text, Mode: 'markdown' }) },
  { name: '/markdown/raw', send: (text) => s.request('POST', '/markdown/raw', { raw: text, headers: { 'content-type': 'text/plain' } }) },
]


describe('hostile markdown', () => {
  test('every route renders each hostile family, or refuses it with a clear 422, never holding /version (render times by size: bench/markdown.ts)', async () => {
    const probe = latencyProbe(s.url)
    const failures: string[] = []
    for (const [family, make] of Object.entries(HOSTILE))
      for (const route of ROUTES) {
        const small = await probe.during(`${family} 4k on ${route.name}`, () => route.send(make(4096)))
        const large = await probe.during(`${family} 16k on ${route.name}`, () => route.send(make(16384)))
        for (const r of [small, large]) {
          if (r.status === 200) continue
          // Past the budget or the stack: a clear 422, never a 500.
          if (r.status !== 422 || !/^The markdown (took longer than \d+ ms to render|cannot be rendered \(it is nested too deeply\))$/.test(r.body.message))
            failures.push(`${family} on ${route.name}: ${r.status} ${JSON.stringify(r.body)}`)
        }
      }
    // Rendering changes nothing: a request seen holding the loop is sent again to confirm it.
    const { held, answers } = await probe.stop({ confirm: true })
    expect(failures).toEqual([])
    expect(answers).toBeGreaterThan(0)
    expect(held).toEqual([])
  }, 120_000)

  test('with no queue (WARREN_MARKDOWN_QUEUE=0) a free worker still renders', async () => {
    const noQueue = await startTestServer({ markdownQueue: 0 })
    try {
      const r = await noQueue.post('/markdown', { Text: '*hi*', Mode: 'markdown' })
      expect([r.status, r.text.trim()]).toEqual([200, '<p><em>hi</em></p>'])
    } finally {
      await noQueue.stop()
    }
  })

  test('a render past the budget is a 422, and the replaced worker renders the next request', async () => {
    // The renderer is linear now: what overruns a budget is a large input against a small budget.
    const tight = await startTestServer({ markdownTimeoutMs: 300 })
    try {
      const probe = latencyProbe(tight.url)
      const slow = await probe.during('past the budget', () => tight.request('POST', '/markdown/raw', { raw: SLOW_TEXT, headers: { 'content-type': 'text/plain' } }))
      expect([slow.status, slow.body.message]).toEqual([422, 'The markdown took longer than 300 ms to render'])
      const ok = await tight.post('/markdown', { Text: '# Back\n\n*fine*', Mode: 'gfm' })
      expect([ok.status, ok.text]).toEqual([200, '<h1 id="user-content-back">Back</h1>\n<p><em>fine</em></p>\n'])
      expect((await probe.stop()).held).toEqual([])
    } finally {
      await tight.stop()
    }
    // Nesting deeper than any stack used to be a 422 (marked recursed); md4c renders it.
    const deep = await s.post('/markdown', { Text: fill('>', 16384) })
    expect(deep.status).toBe(200)
    expect(deep.text).toStartWith('<blockquote>')
  }, 240_000)

  test('a burst queues up to the limit; past it the answer is 503 with Retry-After', async () => {
    const small = await startTestServer({ markdownWorkers: 1, markdownQueue: 1, markdownTimeoutMs: 400 })
    try {
      const burst = await Promise.all([0, 1, 2, 3].map(() => small.post('/markdown', { Text: SLOW_TEXT })))
      const statuses = burst.map((r) => r.status).sort()
      // One runs, one waits (both cut at the budget); the rest are refused at once.
      expect(statuses).toEqual([422, 422, 503, 503])
      const refused = burst.find((r) => r.status === 503)!
      expect(refused.body.message).toBe('Too many markdown documents are being rendered; try again shortly')
      expect(refused.headers.get('retry-after')).toBe('1')
      expect((await small.post('/markdown', { Text: '*ok*' })).text).toBe('<p><em>ok</em></p>\n')
    } finally {
      await small.stop()
    }
  }, 240_000)
})

describe('hostile markdown at 256 KB', () => {
  test('every family (and prose) renders: a 200 with HTML, never a refusal at the budget', async () => {
    // A budget far above the renderer's time even on a machine whose cores are shared many times
    // over (bench/markdown.ts: under a second for each family at 256 KB; 15 s was overrun at a load
    // average of 36 on 2 cores), and still far below what a renderer that is not linear needs.
    const big = await startTestServer({ markdownTimeoutMs: 120_000 })
    try {
      const failures: string[] = []
      for (const [family, make] of Object.entries({ prose, ...HOSTILE_FAMILIES })) {
        const text = make(256 * 1024)
        const r = await big.post('/markdown', { Text: text, Mode: 'gfm', Context: 'alice/proj' })
        if (r.status !== 200 || !r.text.includes('<')) failures.push(`${family}: ${r.status} ${r.text.slice(0, 120)}`)
      }
      expect(failures).toEqual([])
    } finally {
      await big.stop()
    }
  }, 600_000)
})

describe('bundled server', () => {
  test('`bun build` output (as `npm start` runs it) renders markdown in its worker', async () => {
    const root = resolve(import.meta.dir, '..')
    const dir = mkdtempSync(join(tmpdir(), 'warren-bundle-'))
    // The run's database kind, but a database of its own (never the WARREN_DATABASE_URL of the run itself).
    const database = await freshTestDatabase()
    let server: Served | undefined
    try {
      // package.json's "build" command, into a temp folder laid out like the checkout
      // (dist/bin beside drizzle/).
      const script: string = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.build
      const args = script.split(/\s+/).map((arg) => (arg === 'dist/bin' ? join(dir, 'dist/bin') : arg))
      const build = Bun.spawnSync(args, { cwd: root, stderr: 'pipe', stdout: 'pipe' })
      expect([build.exitCode, build.stderr.toString()]).toEqual([0, ''])
      symlinkSync(join(root, 'drizzle'), join(dir, 'drizzle'))
      server = await startServe(['bun', join(dir, 'dist/bin/cli.js')], join(dir, 'data'), { WARREN_DATABASE_URL: database.url ?? '' }, { cwd: dir })
      const { url } = server
      const res = await fetch(`${url}/api/v1/markdown/raw`, { method: 'POST', body: '# Bundled\n\n**yes**', headers: { 'content-type': 'text/plain' } })
      expect([res.status, await res.text()]).toEqual([200, '<h1 id="user-content-bundled">Bundled</h1>\n<p><strong>yes</strong></p>\n'])
    } finally {
      await server?.stop()
      dropInBackground(database)
      rmSync(dir, { recursive: true, force: true })
    }
  }, 240_000)
})
