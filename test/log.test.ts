import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { loggerOf } from '../src/lib/log'
import { startTestServer, type TestServer } from './helpers'
import { logOutput } from './log-capture'

/** The log keeps no secrets: request lines and any logged message, at the level an operator runs. */

/** A server that logs every request, as JSON lines. */
let s: TestServer
const dataDir = mkdtempSync(join(tmpdir(), 'warren-log-'))
beforeAll(async () => {
  s = await startTestServer({ logLevel: 'info', logFormat: 'json' })
})
afterAll(async () => {
  await s.stop()
  rmSync(dataDir, { recursive: true, force: true })
})

describe('the log', () => {
  test('tokens in the query (however their names are spelled), Authorization headers and passwords never reach it', async () => {
    const u = await s.user('logged')
    const out = await logOutput(
      async () => {
        // %74oken is read as token by the API: it must be masked like token.
        expect((await fetch(`${s.url}/api/v1/user?%74oken=${u.token}`)).status).toBe(200)
        expect((await fetch(`${s.url}/api/v1/user?page=1&access_token=${u.token}`)).status).toBe(200)
        expect((await fetch(`${s.url}/api/v1/user?ACCESS_TOKEN=${u.token}x`)).status).toBe(401)
        expect((await fetch(`${s.url}/api/v1/user`, { headers: { authorization: u.basic } })).status).toBe(200)
        expect((await fetch(`${s.url}/api/v1/user`, { headers: { authorization: `token ${u.token}` } })).status).toBe(200)
      },
      (o) => o.split('"msg":"request"').length > 5,
    )
    const lines = out.split('\n').filter((l) => l.includes('"msg":"request"')).map((l) => JSON.parse(l))
    expect(lines.map((l) => l.path)).toEqual(['/api/v1/user?%74oken=…', '/api/v1/user?page=1&access_token=…', '/api/v1/user?ACCESS_TOKEN=…', '/api/v1/user', '/api/v1/user'])
    expect(lines.map((l) => l.user)).toEqual(['logged', 'logged', '-', 'logged', 'logged'])
    expect(out).not.toContain(u.token)
    expect(out).not.toContain(u.password)
    expect(out).not.toContain(u.basic.slice(6))
  })

  test('credentials written into a URL are masked in any logged message or field', async () => {
    const config = loadConfig({}, { dataDir, logFormat: 'text', logLevel: 'info' })
    const out = await logOutput(
      async () => loggerOf(config).error('fetching https://bob:hunter2@example.com/x.git failed', { error: 'fatal: http://tok3n@host/y: 403' }),
      (o) => o.includes('failed'),
    )
    expect(out).toContain('https://…@example.com/x.git')
    expect(out).toContain('http://…@host/y')
    expect(out).not.toContain('hunter2')
    expect(out).not.toContain('tok3n')
  })
})
