import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { loadConfig } from '../src/config'

let s: TestServer
let admin: TestUser

beforeAll(async () => {
  // The production minimum (tests elsewhere lower it to 1).
  s = await startTestServer({ minPasswordLength: 8 })
  admin = await s.user('root', { admin: true })
})
afterAll(() => s.stop())

describe('the shortest password', () => {
  test('refused (400, nothing written) when an admin creates a user or sets a password through the API', async () => {
    const created = await s.post('/admin/users', { username: 'shorty', email: 'shorty@example.com', password: 'seven77' }, { token: admin.token })
    expect(created.status).toBe(400)
    expect(created.body.message).toBe('password must be at least 8 characters')
    expect((await s.get('/users/shorty')).status).toBe(404)
    const ok = await s.post('/admin/users', { username: 'longer', email: 'longer@example.com', password: 'eight888', must_change_password: false }, { token: admin.token })
    expect(ok.status).toBe(201)

    const edit = await s.patch('/admin/users/longer', { login_name: 'longer', source_id: 0, password: 'short', full_name: 'Changed' }, { token: admin.token })
    expect(edit.status).toBe(400)
    expect((await s.get('/users/longer')).body.full_name).toBe('')
    // the old password still works, the new short one does not
    expect((await s.get('/user', { basic: ['longer', 'eight888'] })).status).toBe(200)
    expect((await s.get('/user', { basic: ['longer', 'short'] })).status).toBe(401)
  })

  test('WARREN_MIN_PASSWORD_LENGTH is read and bounded', () => {
    expect(loadConfig({}).minPasswordLength).toBe(8)
    expect(loadConfig({ WARREN_MIN_PASSWORD_LENGTH: '12' }).minPasswordLength).toBe(12)
    expect(() => loadConfig({ WARREN_MIN_PASSWORD_LENGTH: '0' })).toThrow('WARREN_MIN_PASSWORD_LENGTH')
    expect(loadConfig({ WARREN_SHUTDOWN_GRACE: '2.5' }).shutdownGraceMs).toBe(2500)
    expect(() => loadConfig({ WARREN_LOG_LEVEL: 'loud' })).toThrow('WARREN_LOG_LEVEL must be one of debug, info, warn, error')
  })
})

describe('GET /', () => {
  test("names the service, its version and where the docs and the OpenAPI document are; HTML for a browser", async () => {
    const res = await fetch(`${s.url}/`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toContain('application/json')
    const json = { body: (await res.json()) as any }
    expect(json.body).toEqual({
      name: 'Warren',
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      gitea_version: (await s.get('/version')).body.version,
      api_url: `${s.config.baseUrl}api/v1`,
      docs_url: `${s.config.baseUrl}api/swagger`,
      openapi_url: `${s.config.baseUrl}swagger.v1.json`,
    })
    for (const link of [json.body.docs_url, json.body.openapi_url]) expect((await fetch(link)).status).toBe(200)
    const html = await fetch(`${s.url}/`, { headers: { accept: 'text/html,application/xhtml+xml;q=0.9' } })
    expect(html.status).toBe(200)
    expect(html.headers.get('content-type')).toContain('text/html')
    expect(await html.text()).toContain(`href="${s.config.baseUrl}api/swagger"`)
  })
})

describe('the dump archive (tar)', () => {
  test('long and non-ASCII paths, empty and multi-chunk files read back as written; system tar reads it too', async () => {
    const { TarWriter, readTar } = await import('../src/ops/tar')
    const { mkdtempSync, openSync, closeSync, writeFileSync, rmSync } = await import('node:fs')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const dir = mkdtempSync(join(tmpdir(), 'warren-tar-'))
    try {
      const big = Buffer.alloc(2.5 * 1024 * 1024 + 7)
      for (let i = 0; i < big.length; i++) big[i] = (i * 31) % 251
      writeFileSync(join(dir, 'big'), big)
      const files: Record<string, Buffer> = {
        [`repositories/${'o'.repeat(40)}/${'n'.repeat(100)}.git/objects/pack/pack-${'a'.repeat(40)}.idx`]: Buffer.from('long path'),
        'attachments/ünïcödé.txt': Buffer.from('non-ascii'),
        'empty': Buffer.alloc(0),
      }
      const archive = join(dir, 'a.tar')
      const writer = new TarWriter(archive)
      writer.addDirectory('repositories', 0o755, 1_700_000_000)
      for (const [path, data] of Object.entries(files)) writer.addBytes(path, data, 0o640, 1_700_000_000)
      const fd = openSync(join(dir, 'big'), 'r')
      writer.addFile('big', fd, big.length, 0o600, 1_700_000_000)
      closeSync(fd)
      writer.finish()
      const read: Record<string, Buffer> = {}
      const kinds: string[] = []
      readTar(archive, (entry, content) => {
        kinds.push(`${entry.type}:${entry.mode.toString(8)}:${entry.mtime}`)
        if (entry.type === 'directory') return
        const chunks: Buffer[] = []
        content((chunk) => chunks.push(Buffer.from(chunk)))
        read[entry.path] = Buffer.concat(chunks)
      })
      expect(Object.keys(read)).toEqual([...Object.keys(files), 'big'])
      for (const [path, data] of Object.entries(files)) expect(read[path]!.equals(data)).toBe(true)
      expect(read.big!.equals(big)).toBe(true)
      expect(kinds[0]).toBe('directory:755:1700000000')
      expect(kinds[1]).toBe('file:640:1700000000')
      // the archive is ordinary tar: the system's tar lists the same paths
      if (Bun.which('tar')) expect(Bun.spawnSync(['tar', '-tf', archive]).stdout.toString().trim().split('\n')).toEqual(['repositories/', ...Object.keys(files), 'big'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
