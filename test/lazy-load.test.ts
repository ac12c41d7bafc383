import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { DIALECT } from '../src/db/dialect'
import { freshTestDatabase, type TestDatabase } from './test-database'
import { dropInBackground, root, runCli, tempDirs } from './process-helpers'
import { startTestServer, type TestServer } from './helpers'

/**
 * What start-up leaves for later: code a first request does not need is loaded when first needed
 * (the OpenAPI document's plugin when the document is asked for; PostgreSQL's client and schema
 * on PostgreSQL only; ssh2 when SSH is on; the web pages at the first page asked for; highlight.js never in the main thread, only in the render
 * workers that highlight a file; the repository templates when a repository is created with a
 * first commit), and what it
 * makes then is what it made before.
 */
const temp = tempDirs()
let database: TestDatabase
let s: TestServer
beforeAll(async () => {
  database = await freshTestDatabase()
  s = await startTestServer()
})
afterAll(async () => {
  await s.stop()
  dropInBackground(database)
  temp.cleanup()
})

describe('lazy start', () => {
  test('a first answer loads neither the OpenAPI plugin nor another dialect, highlight.js, ssh2, the repository templates or the web pages; the document loads its plugin when asked for, a first page the pages; a highlighted file view leaves highlight.js unloaded in the main thread', async () => {
    const data = temp.make('warren-lazy-')
    const run = await runCli([process.execPath, join(root, 'test/start-modules.ts')], data, [], {
      env: database.url ? { WARREN_DATABASE_URL: database.url } : {},
    })
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const r = JSON.parse(run.stdout.trim().split('\n').at(-1)!)
    expect(r.versionStatus).toBe(200)
    expect(r.documentStatus).toBe(200)
    const postgres = DIALECT === 'postgres'
    expect(r.atStart).toEqual({ openapi: false, postgres, pgSchema: postgres, bunSqlDriver: postgres, highlight: false, ssh2: false, repoTemplates: false, webPages: false })
    expect(r.afterDocument.openapi).toBe(true)
    // The web pages are the first page's to load (the API's document and answers load none).
    expect(r.afterDocument.webPages).toBe(false)
    expect(r.afterFileView.webPages).toBe(true)
    // A highlighted file view: highlighted in the render pool's workers, its language found by a
    // table (lib/code-language.ts), highlight.js never loaded in the main thread.
    expect([r.putStatus, r.fileViewStatus, r.fileViewHighlighted]).toEqual([201, 200, true])
    expect(r.afterFileView.highlight).toBe(false)
  }, 60_000)

  test('the OpenAPI document and its page, made on the first ask (two at once), are the same on every later ask', async () => {
    const [a, b] = await Promise.all([fetch(`${s.url}/swagger.v1.json`), fetch(`${s.url}/swagger.v1.json`)])
    expect(a.status).toBe(200)
    expect(a.headers.get('content-type')).toBe('application/json;charset=utf-8')
    const first = await a.text()
    expect(await b.text()).toBe(first)
    const doc = JSON.parse(first)
    expect(doc.openapi).toBe('3.1.2')
    expect(doc.info.title).toBe('Warren API')
    // The document's own route and the page's are hidden.
    expect(doc.paths['/swagger.v1.json']).toBeUndefined()
    expect(doc.paths['/api/swagger']).toBeUndefined()
    expect(Object.keys(doc.paths).length).toBeGreaterThan(150)
    expect(await (await fetch(`${s.url}/swagger.v1.json`)).text()).toBe(first)
    const [p, q] = await Promise.all([fetch(`${s.url}/api/swagger`), fetch(`${s.url}/api/swagger`)])
    expect(p.headers.get('content-type')).toBe('text/html; charset=utf8')
    const page = await p.text()
    expect(await q.text()).toBe(page)
    expect(page).toContain('"url":"/swagger.v1.json"')
    expect(page).toContain('<title>Warren API</title>')
  })
})
