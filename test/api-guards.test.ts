import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import { contentMark } from './db-snapshot'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { refsOf } from './git-fixture'
import { attachments } from '../src/db/schema'

/**
 * Bounds and races of the API found by a robustness review: bodies nested without end, an asset
 * upload racing its repository's deletion, forks of private repositories made public, and
 * repositories (or organisations) collecting hooks and releases without end. Every refusal is a
 * 4xx in the API's error shape and changes nothing.
 */

let s: TestServer
let alice: TestUser
const auth = () => ({ token: alice.token })

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
})
afterAll(async () => {
  await s.stop()
})

/** Waits (bounded by attempts, not time) until `check` holds. */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (await check()) return
    await Bun.sleep(5)
  }
  throw new Error(`never happened: ${what}`)
}

describe('an asset upload racing the deletion of its repository', () => {
  test('answers 404 and leaves no file, folder or row behind', async () => {
    const repo = (await s.post('/user/repos', { name: 'doomed', auto_init: true }, auth())).body
    const release = await s.post('/repos/alice/doomed/releases', { tag_name: 'v1' }, auth())
    expect(release.status).toBe(201)
    const folder = join(s.dataDir, 'attachments', String(repo.id))
    const boundary = 'race-boundary-1234'
    const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="attachment"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`)
    let finish!: () => void
    const rest = new Promise<void>((resolve) => (finish = resolve))
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(head)
        controller.enqueue(Buffer.alloc(64 * 1024, 'x'))
        await rest
        controller.enqueue(Buffer.alloc(64 * 1024, 'y'))
        controller.enqueue(Buffer.from(`\r\n--${boundary}--\r\n`))
        controller.close()
      },
    })
    const upload = fetch(`${s.url}/api/v1/repos/alice/doomed/releases/${release.body.id}/assets`, {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}`, authorization: `token ${alice.token}` },
      body,
      duplex: 'half',
    } as RequestInit)
    // The upload is under way (its file is being written) when the repository goes.
    await until(() => existsSync(folder) && readdirSync(folder).length > 0, 'the upload started writing')
    expect((await s.del('/repos/alice/doomed', undefined, auth())).status).toBe(204)
    finish()
    const res = await upload
    const answer = await res.json()
    expect(res.status).toBe(404)
    expect(answer.message).toBeString()
    expect(answer.url).toBeString()
    expect(existsSync(folder)).toBe(false)
    expect(await s.deps.db.select().from(attachments).where(eq(attachments.repoId, repo.id))).toEqual([])
  })
})

describe('bodies nested without end', () => {
  const nested = (depth: number, leaf = '1') => '{"a":'.repeat(depth) + leaf + '}'.repeat(depth)

  test('100,000 levels on routes with and without a body schema: 400, nothing changes', async () => {
    expect((await s.post('/user/repos', { name: 'deep' }, auth())).status).toBe(201)
    const mark = contentMark(s.deps.db)
    const before = await mark()
    const routes: [string, string][] = [
      // No body schema: the storable check walked these bodies.
      ['PUT', '/user/starred/alice/deep'],
      ['DELETE', '/repos/alice/deep/subscription'],
      ['POST', '/repos/alice/deep/mirror-sync'],
      // A body schema.
      ['PATCH', '/repos/alice/deep'],
      ['POST', '/user/repos'],
    ]
    for (const [method, path] of routes)
      for (const body of [nested(100_000), `{"a":${'['.repeat(100_000)}${']'.repeat(100_000)}}`]) {
        const res = await s.request(method, path, { raw: body, token: alice.token, headers: { 'content-type': 'application/json' } })
        expect([method, path, res.status]).toEqual([method, path, 400])
        expect(res.body.message).toContain('deeper than 64 levels')
        expect(res.body.url).toBeString()
      }
    expect(await mark()).toBe(before)
    expect((await s.get('/user/starred/alice/deep', auth())).status).toBe(404)
    // Brackets inside strings do not count.
    const inString = await s.request('PATCH', '/repos/alice/deep', { raw: JSON.stringify({ description: '{['.repeat(100) }), token: alice.token, headers: { 'content-type': 'application/json' } })
    expect(inString.status).toBe(200)
    expect(inString.body.description).toBe('{['.repeat(100))
  })

  test('64 levels are taken, 65 refused', async () => {
    const json = { token: alice.token, headers: { 'content-type': 'application/json' } }
    expect((await s.request('PUT', '/user/starred/alice/deep', { raw: nested(64), ...json })).status).toBe(204)
    expect((await s.request('DELETE', '/user/starred/alice/deep', { raw: nested(65), ...json })).status).toBe(400)
    expect((await s.get('/user/starred/alice/deep', auth())).status).toBe(204)
  })
})

describe('forks of private repositories', () => {
  test('stay private: making one public (a fork of a fork too) is a 422 that changes nothing, until the source is public', async () => {
    const rita = await s.user('rita')
    const asRita = { token: rita.token }
    expect((await s.post('/user/repos', { name: 'secret', private: true, auto_init: true }, auth())).status).toBe(201)
    expect((await s.put('/repos/alice/secret/collaborators/rita', { permission: 'read' }, auth())).status).toBe(204)
    const fork = await s.post('/repos/alice/secret/forks', {}, asRita)
    expect(fork.status).toBe(202)
    expect(fork.body.private).toBe(true)
    expect((await s.post('/orgs', { username: 'ritas' }, asRita)).status).toBe(201)
    const forkOfFork = await s.post('/repos/rita/secret/forks', { organization: 'ritas' }, asRita)
    expect(forkOfFork.status).toBe(202)
    expect(forkOfFork.body.private).toBe(true)

    const mark = contentMark(s.deps.db)
    const before = await mark()
    for (const path of ['/repos/rita/secret', '/repos/ritas/secret']) {
      const res = await s.patch(path, { private: false }, asRita)
      expect([path, res.status]).toEqual([path, 422])
      expect(res.body.message).toContain('a fork of a private repository must stay private')
      expect(res.body.url).toBeString()
      // Nothing else of the same edit is applied either.
      expect((await s.patch(path, { private: false, description: 'leaked' }, asRita)).status).toBe(422)
    }
    expect(await mark()).toBe(before)
    expect((await s.get('/repos/rita/secret', asRita)).body.private).toBe(true)
    expect((await s.get('/repos/rita/secret')).status).toBe(404)
    // Other edits, and keeping it private, still work.
    expect((await s.patch('/repos/rita/secret', { private: true, description: 'mine' }, asRita)).status).toBe(200)

    // Once the source is public, its forks may be too (each in turn: the org's fork waits for its own source).
    expect((await s.patch('/repos/alice/secret', { private: false }, auth())).status).toBe(200)
    expect((await s.patch('/repos/ritas/secret', { private: false }, asRita)).status).toBe(422)
    expect((await s.patch('/repos/rita/secret', { private: false }, asRita)).status).toBe(200)
    expect((await s.patch('/repos/ritas/secret', { private: false }, asRita)).status).toBe(200)
    // A fork of a public repository is free to change.
    expect((await s.patch('/repos/ritas/secret', { private: true }, asRita)).status).toBe(200)
    expect((await s.patch('/repos/ritas/secret', { private: false }, asRita)).status).toBe(200)
  })
})

describe('hooks and releases per repository are bounded', () => {
  const hook = (n: number) => ({ type: 'gitea', config: { url: `http://127.0.0.1:9/${n}`, content_type: 'json' }, events: ['push'], active: false })

  test("WARREN_MAX_HOOKS_PER_REPO bounds a repository's hooks and an organisation's, concurrent creations included; a refusal is a 422 that stores nothing", async () => {
    const limit = s.config.maxHooksPerRepo
    expect(limit).toBe(100)
    s.config.maxHooksPerRepo = 5
    try {
      expect((await s.post('/user/repos', { name: 'hooked' }, auth())).status).toBe(201)
      expect((await s.post('/orgs', { username: 'hookers' }, auth())).status).toBe(201)
      for (const base of ['/repos/alice/hooked/hooks', '/orgs/hookers/hooks']) {
        // Twelve at once for five places: exactly five are made.
        const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => s.post(base, hook(i), auth())))
        expect(answers.filter((r) => r.status === 201)).toHaveLength(5)
        const refused = answers.filter((r) => r.status !== 201)
        expect(refused.map((r) => r.status)).toEqual(Array(7).fill(422))
        expect(refused[0]!.body.message).toMatch(/may have at most 5 webhooks$/)
        expect(refused[0]!.body.url).toBeString()
        const listed = await s.get(`${base}?limit=50`, auth())
        expect(listed.body).toHaveLength(5)
        const mark = contentMark(s.deps.db)
        const before = await mark()
        expect((await s.post(base, hook(99), auth())).status).toBe(422)
        expect(await mark()).toBe(before)
        // A place freed is a place taken again.
        expect((await s.del(`${base}/${listed.body[0].id}`, undefined, auth())).status).toBe(204)
        expect((await s.post(base, hook(100), auth())).status).toBe(201)
      }
    } finally {
      s.config.maxHooksPerRepo = limit
    }
  })

  test("WARREN_MAX_RELEASES_PER_REPO bounds a repository's releases (drafts too), concurrent creations included; a refusal makes no tag and no row", async () => {
    const limit = s.config.maxReleasesPerRepo
    expect(limit).toBe(10_000)
    s.config.maxReleasesPerRepo = 4
    try {
      expect((await s.post('/user/repos', { name: 'released', auto_init: true }, auth())).status).toBe(201)
      const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => s.post('/repos/alice/released/releases', { tag_name: `d${i}`, draft: true }, auth())))
      expect(answers.filter((r) => r.status === 201)).toHaveLength(4)
      expect(answers.filter((r) => r.status !== 201).map((r) => r.status)).toEqual(Array(6).fill(422))
      expect((await s.get('/repos/alice/released/releases?limit=50', auth())).body).toHaveLength(4)
      const gitDir = join(s.dataDir, 'repositories', 'alice', 'released.git')
      const refs = async () => JSON.stringify(await refsOf(gitDir))
      const mark = contentMark(s.deps.db)
      const before = { refs: await refs(), db: await mark() }
      const refused = await s.post('/repos/alice/released/releases', { tag_name: 'v9' }, auth())
      expect(refused.status).toBe(422)
      expect(refused.body.message).toBe('a repository may have at most 4 releases')
      expect({ refs: await refs(), db: await mark() }).toEqual(before)
      expect(before.refs).not.toContain('v9')
    } finally {
      s.config.maxReleasesPerRepo = limit
    }
  })
})
