/**
 * The package registry: the generic registry (Gitea 1.23's /api/packages/{owner}/generic/...:
 * publish, 409 for a file already there, download, delete a file or a version, names checked,
 * size bounded, who may publish) through fetch, and the API's package calls (listPackages with
 * type, q and paging, getPackage, listPackageFiles, deletePackage) through gitea-js; files kept
 * by content, removed once no file names them, and with their owner. Gitea's `package` webhook:
 * an owner's and the system hooks told of a version published (its first file) and deleted.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { giteaApi, type Api } from 'gitea-js'
import { count, eq, like } from 'drizzle-orm'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { startReceiver, until } from './webhook-receiver'
import { events, hookTasks } from '../src/db/schema'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { contentMark } from './db-snapshot'
import { empty, fails, ok } from './gitea-calls'
import { createAccessToken } from '../src/modules/users/service'
import { blobPath, repairPackageBlobs } from '../src/modules/packages/blobs'

type Client = Api<unknown>
let s: TestServer
let alice: TestUser, bob: TestUser, carol: TestUser, dave: TestUser, root: TestUser
let asAlice: Client, asBob: Client, anon: Client
let mark: () => Promise<string>

type Who = TestUser | { token: string } | { basic: string } | null
const authOf = (who: Who): Record<string, string> =>
  !who ? {} : 'basic' in who && !('token' in who) ? { authorization: who.basic } : { authorization: `token ${(who as { token: string }).token}` }

/** A request to the generic registry. */
async function registry(method: string, path: string, who: Who, body?: BodyInit, headers: Record<string, string> = {}) {
  const res = await fetch(`${s.url}/api/packages/${path}`, { method, headers: { ...authOf(who), ...headers }, body })
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()), headers: res.headers }
}
const put = (path: string, who: Who, body: BodyInit) => registry('PUT', path, who, body)

const hex = (algorithm: 'md5' | 'sha1' | 'sha256' | 'sha512', bytes: Uint8Array | string) => new Bun.CryptoHasher(algorithm).update(bytes).digest('hex')

beforeAll(async () => {
  s = await startTestServer({ webhookAllowedHostList: 'loopback', webhookRetryDelay: 0.05, webhookDeliverTimeout: 2 })
  mark = contentMark(s.deps.db)
  root = await s.user('root', { admin: true })
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  dave = await s.user('dave')
  asAlice = giteaApi(s.url, { token: alice.token })
  asBob = giteaApi(s.url, { token: bob.token })
  anon = giteaApi(s.url, {})
  // acme: alice owns it; carol is in a write team, dave in a read team. hush is private.
  for (const org of ['acme', 'hush']) expect((await s.post('/orgs', { username: org, visibility: org === 'hush' ? 'private' : 'public' }, { token: alice.token })).status).toBe(201)
  for (const [team, permission, member] of [['writers', 'write', carol], ['readers', 'read', dave]] as const) {
    const made = await s.post('/orgs/acme/teams', { name: team, permission }, { token: alice.token })
    expect(made.status).toBe(201)
    expect((await s.put(`/teams/${made.body.id}/members/${member.name}`, undefined, { token: alice.token })).status).toBe(204)
  }
})
afterAll(() => s.stop())

describe('the generic registry', () => {
  test('publish (token or basic), 409 for a file already there, download streamed back; the API lists, shows and hashes it', async () => {
    expect((await put('alice/generic/tool/1.0.0/tool.bin', alice, 'tool bytes 1.0.0')).status).toBe(201)
    const before = await mark()
    expect((await put('alice/generic/tool/1.0.0/tool.bin', alice, 'other bytes')).status).toBe(409)
    // The same name in another case is the same file.
    expect((await put('alice/generic/Tool/1.0.0/TOOL.bin', alice, 'other bytes')).status).toBe(409)
    expect(await mark()).toBe(before)
    expect((await put('alice/generic/tool/1.0.0/tool.txt', { basic: alice.basic }, 'notes')).status).toBe(201)
    expect((await put('alice/generic/tool/2.0.0/tool.bin', alice, 'tool bytes 2.0.0')).status).toBe(201)
    expect((await put('alice/generic/other/0.1/a file (1).zip', alice, 'zip')).status).toBe(201)

    const got = await registry('GET', 'alice/generic/tool/1.0.0/tool.bin', null)
    expect(got.status).toBe(200)
    expect(new TextDecoder().decode(got.bytes)).toBe('tool bytes 1.0.0')
    expect(got.headers.get('content-length')).toBe('16')
    expect(got.headers.get('content-disposition')).toContain('tool.bin')
    expect((await registry('GET', 'alice/generic/tool/1.0.0/missing.bin', null)).status).toBe(404)
    expect((await registry('GET', 'alice/generic/tool/9.9/tool.bin', null)).status).toBe(404)
    expect((await registry('GET', 'nobody/generic/tool/1.0.0/tool.bin', null)).status).toBe(404)

    // The API: newest first, with the records of gitea-js.
    const list = await ok(anon.packages.listPackages('alice'))
    expect(list.map((p) => `${p.name}@${p.version}`)).toEqual(['other@0.1', 'tool@2.0.0', 'tool@1.0.0'])
    const one = list[2]!
    expect(one).toMatchObject({ type: 'generic', name: 'tool', version: '1.0.0', repository: null })
    expect(one.owner!.login).toBe('alice')
    expect(one.creator!.login).toBe('alice')
    expect(one.html_url).toBe(`${s.url}/alice/-/packages/generic/tool/1.0.0`)
    expect(Number.isNaN(Date.parse(one.created_at!))).toBe(false)
    expect(await ok(anon.packages.getPackage('alice', 'generic', 'TOOL', '1.0.0'))).toEqual(one)
    const files = await ok(anon.packages.listPackageFiles('alice', 'generic', 'tool', '1.0.0'))
    expect(files.map((f) => f.name)).toEqual(['tool.bin', 'tool.txt'])
    const body = 'tool bytes 1.0.0'
    expect(files[0]).toMatchObject({ Size: 16, md5: hex('md5', body), sha1: hex('sha1', body), sha256: hex('sha256', body), sha512: hex('sha512', body) })
    expect(existsSync(blobPath(s.deps, hex('sha256', body)))).toBe(true)

    // Paging, type and name filters.
    const page = await anon.packages.listPackages('alice', { limit: 1, page: 2 })
    expect(page.data.map((p) => p.version)).toEqual(['2.0.0'])
    expect(page.headers.get('x-total-count')).toBe('3')
    expect(await ok(anon.packages.listPackages('alice', { type: 'npm' }))).toEqual([])
    expect((await ok(anon.packages.listPackages('alice', { q: 'OO' }))).map((p) => p.version)).toEqual(['2.0.0', '1.0.0'])
    await fails(anon.packages.getPackage('alice', 'npm', 'tool', '1.0.0'), 404)
    await fails(anon.packages.listPackageFiles('alice', 'generic', 'tool', '7'), 404)
    // Names arrive decoded from the path.
    expect((await ok(anon.packages.listPackageFiles('alice', 'generic', 'other', '0.1'))).map((f) => f.name)).toEqual(['a file (1).zip'])
    expect((await registry('GET', 'alice/generic/other/0.1/a%20file%20(1).zip', null)).status).toBe(200)
  })

  test("names checked as Gitea's (400), the size bounded (413): nothing kept", async () => {
    const before = await mark()
    for (const path of ['alice/generic/inval!d/1.0/f.bin', 'alice/generic/-/1.0/f.bin', 'alice/generic/ok/%201.0/f.bin', 'alice/generic/ok/1.0/bad*name', 'alice/generic/ok/1.0/%20lead', `alice/generic/${'n'.repeat(256)}/1.0/f.bin`])
      expect([path, (await put(path, alice, 'x')).status]).toEqual([path, 400])
    const limit = s.config.maxPackageFileSize
    s.config.maxPackageFileSize = 1000
    try {
      expect((await put('alice/generic/big/1.0/big.bin', alice, 'x'.repeat(1001))).status).toBe(413)
      // Streamed without a length: counted as it arrives.
      const stream = new ReadableStream({
        start(c) {
          for (let i = 0; i < 4; i++) c.enqueue(new Uint8Array(400))
          c.close()
        },
      })
      expect((await put('alice/generic/big/1.0/big.bin', alice, stream)).status).toBe(413)
      expect(await mark()).toBe(before)
      expect((await put('alice/generic/big/1.0/fits.bin', alice, 'x'.repeat(1000))).status).toBe(201)
      expect((await registry('DELETE', 'alice/generic/big/1.0', alice)).status).toBe(204)
    } finally {
      s.config.maxPackageFileSize = limit
    }
    expect(readdirSync(join(s.dataDir, 'packages', 'tmp'))).toEqual([])
    expect(await ok(anon.packages.listPackages('alice', { q: 'big' }))).toEqual([])
  })

  test('who may publish: the user, org owners and write teams, site admins; scopes read:package / write:package', async () => {
    const readOnly = await createAccessToken(s.deps, alice.user.id, 'read-package', ['read:package'])
    const repoOnly = await createAccessToken(s.deps, alice.user.id, 'repo-only', ['write:repository'])
    const before = await mark()
    const anonymous = await put('alice/generic/x/1/f', null, 'x')
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get('www-authenticate')).toBe('Basic realm="Gitea Package API"')
    // A token that is not one: refused by the caller's resolution, with the registry's challenge too; the API's 401s carry none.
    const unknown = await put('alice/generic/x/1/f', { token: 'f'.repeat(40) }, 'x')
    expect(unknown.status).toBe(401)
    expect(unknown.headers.get('www-authenticate')).toBe('Basic realm="Gitea Package API"')
    const api = await fetch(`${s.url}/api/v1/packages/alice`, { headers: { authorization: `token ${'f'.repeat(40)}` } })
    expect(api.status).toBe(401)
    expect(api.headers.get('www-authenticate')).toBeNull()
    expect((await put('alice/generic/x/1/f', bob, 'x')).status).toBe(403)
    expect((await put('acme/generic/x/1/f', bob, 'x')).status).toBe(403)
    expect((await put('acme/generic/x/1/f', dave, 'x')).status).toBe(403)
    expect((await put('hush/generic/x/1/f', bob, 'x')).status).toBe(404)
    expect((await put('alice/generic/x/1/f', { token: readOnly.secret }, 'x')).status).toBe(403)
    expect((await registry('GET', 'alice/generic/tool/1.0.0/tool.bin', { token: repoOnly.secret })).status).toBe(403)
    await fails(giteaApi(s.url, { token: repoOnly.secret }).packages.listPackages('alice'), 403)
    expect((await registry('DELETE', 'alice/generic/tool/1.0.0/tool.bin', bob)).status).toBe(403)
    await fails(asBob.packages.deletePackage('alice', 'generic', 'tool', '1.0.0'), 403)
    await fails(anon.packages.deletePackage('alice', 'generic', 'tool', '1.0.0'), 401)
    expect(await mark()).toBe(before)

    const writeToken = await createAccessToken(s.deps, alice.user.id, 'write-package', ['write:package'])
    expect((await put('alice/generic/x/1/f', { token: writeToken.secret }, 'x')).status).toBe(201)
    expect((await put('acme/generic/x/1/by-alice', alice, 'x')).status).toBe(201)
    expect((await put('acme/generic/x/1/by-carol', carol, 'x')).status).toBe(201)
    expect((await put('acme/generic/x/1/by-root', root, 'x')).status).toBe(201)
    expect((await put('hush/generic/secret/1/f', alice, 'hush bytes')).status).toBe(201)
    // A private organisation's packages: hidden from outsiders, read by members.
    expect((await registry('GET', 'hush/generic/secret/1/f', null)).status).toBe(404)
    await fails(asBob.packages.listPackages('hush'), 404)
    expect((await ok(asAlice.packages.listPackages('hush'))).map((p) => p.name)).toEqual(['secret'])
    const acme = await ok(giteaApi(s.url, { token: dave.token }).packages.listPackageFiles('acme', 'generic', 'x', '1'))
    expect(acme.map((f) => f.name)).toEqual(['by-alice', 'by-carol', 'by-root'])
    // Same content, one blob.
    expect(new Set(acme.map((f) => f.sha256)).size).toBe(1)
  })

  test('deleting a file, the last file (its version goes), a version; blobs go once no file names them', async () => {
    const shared = 'shared bytes'
    expect((await put('alice/generic/del/1/a', alice, shared)).status).toBe(201)
    expect((await put('alice/generic/del/1/b', alice, shared)).status).toBe(201)
    expect((await put('alice/generic/del/2/c', alice, 'only in 2')).status).toBe(201)
    const blob = blobPath(s.deps, hex('sha256', shared))
    expect((await registry('DELETE', 'alice/generic/del/1/a', alice)).status).toBe(204)
    expect((await registry('DELETE', 'alice/generic/del/1/a', alice)).status).toBe(404)
    expect(existsSync(blob)).toBe(true)
    expect((await ok(anon.packages.listPackageFiles('alice', 'generic', 'del', '1'))).map((f) => f.name)).toEqual(['b'])
    expect((await registry('DELETE', 'alice/generic/del/1/b', alice)).status).toBe(204)
    await fails(anon.packages.getPackage('alice', 'generic', 'del', '1'), 404)
    expect(existsSync(blob)).toBe(false)

    await empty(asAlice.packages.deletePackage('alice', 'generic', 'del', '2'))
    await fails(asAlice.packages.deletePackage('alice', 'generic', 'del', '2'), 404)
    expect(existsSync(blobPath(s.deps, hex('sha256', 'only in 2')))).toBe(false)
    expect((await registry('DELETE', 'alice/generic/tool/2.0.0', alice)).status).toBe(204)
    expect((await registry('DELETE', 'alice/generic/tool/2.0.0', alice)).status).toBe(404)
    expect((await ok(anon.packages.listPackages('alice', { q: 'del' })))).toEqual([])
  })

  test('at once: the same file twice is one 201 and one 409; a deletion beside an upload of the same bytes leaves the new file whole; a wrong Digest keeps nothing', async () => {
    const both = await Promise.all([put('alice/generic/race/1/f.bin', alice, 'first'), put('alice/generic/race/1/f.bin', alice, 'second')])
    expect(both.map((r) => r.status).sort()).toEqual([201, 409])
    expect((await ok(anon.packages.listPackageFiles('alice', 'generic', 'race', '1'))).length).toBe(1)

    expect((await put('alice/generic/race/2/old.bin', alice, 'same bytes')).status).toBe(201)
    expect((await put('alice/generic/race/2/keep.bin', alice, 'x')).status).toBe(201)
    const [gone, added] = await Promise.all([registry('DELETE', 'alice/generic/race/2/old.bin', alice), put('alice/generic/race/2/new.bin', alice, 'same bytes')])
    expect([gone.status, added.status]).toEqual([204, 201])
    expect(new TextDecoder().decode((await registry('GET', 'alice/generic/race/2/new.bin', null)).bytes)).toBe('same bytes')

    const before = await mark()
    const wrong = await registry('PUT', 'alice/generic/race/3/d.bin', alice, 'digested', { digest: `SHA-256=${Buffer.from(hex('sha256', 'other'), 'hex').toString('base64')}` })
    expect(wrong.status).toBe(400)
    expect(await mark()).toBe(before)
    const right = await registry('PUT', 'alice/generic/race/3/d.bin', alice, 'digested', { digest: `SHA-256=${Buffer.from(hex('sha256', 'digested'), 'hex').toString('base64')}` })
    expect(right.status).toBe(201)
  })

  test("an owner's deletion takes their packages and files; the sweep removes blobs and temporary files no file names", async () => {
    expect((await s.post('/orgs', { username: 'gone' }, { token: alice.token })).status).toBe(201)
    expect((await put('gone/generic/p/1/f', alice, 'bytes of gone')).status).toBe(201)
    expect((await s.del('/orgs/gone', undefined, { token: alice.token })).status).toBe(204)
    expect(existsSync(blobPath(s.deps, hex('sha256', 'bytes of gone')))).toBe(false)
    // A user's too, by a site administrator.
    const erin = await s.user('erin')
    expect((await put('erin/generic/p/1/f', erin, 'bytes of erin')).status).toBe(201)
    expect((await s.del('/admin/users/erin', undefined, { token: root.token })).status).toBe(204)
    expect(existsSync(blobPath(s.deps, hex('sha256', 'bytes of erin')))).toBe(false)
    await fails(giteaApi(s.url, { token: root.token }).packages.listPackages('erin'), 404)

    const orphan = blobPath(s.deps, hex('sha256', 'orphan'))
    mkdirSync(join(orphan, '..'), { recursive: true })
    writeFileSync(orphan, 'orphan')
    writeFileSync(join(s.dataDir, 'packages', 'tmp', 'left.part'), 'half')
    const kept = blobPath(s.deps, hex('sha256', 'tool bytes 1.0.0'))
    const removed = await repairPackageBlobs(s.deps)
    expect(removed.sort()).toEqual([hex('sha256', 'orphan'), 'tmp/left.part'].sort())
    expect(existsSync(orphan)).toBe(false)
    expect(existsSync(kept)).toBe(true)
    expect(new TextDecoder().decode((await registry('GET', 'alice/generic/tool/1.0.0/tool.bin', null)).bytes)).toBe('tool bytes 1.0.0')
  })
})

describe('the package webhook event', () => {
  test("an owner's and the system hooks taking `package` hear of a version's first file and its deletion, nothing of a second file or a refused upload; other hooks nothing", async () => {
    const worker = startWebhookWorker(s.deps, { pollMs: 10 })
    const rx = await startReceiver()
    try {
      expect((await s.post('/orgs', { username: 'hooked' }, { token: alice.token })).status).toBe(201)
      const hook = async (url: string, path: string, events: string[], who = alice, type = 'gitea') => {
        const config = { url: rx.url(path), content_type: 'json', ...(who === root ? { is_system_webhook: 'true' } : {}), ...(type === 'slack' ? { channel: '#pkg' } : {}) }
        const made = await s.post(url, { type, config, events, active: true }, { token: who.token })
        expect(made.status).toBe(201)
        return made.body.id as number
      }
      await hook('/orgs/hooked/hooks', '/org', ['package'])
      const others = await hook('/orgs/hooked/hooks', '/org-other', ['repository'])
      await hook('/admin/hooks', '/system', ['package'], root)
      await hook('/orgs/hooked/hooks', '/slack', ['package'], alice, 'slack')
      const packageEvents = async () => (await s.deps.db.select({ n: count() }).from(events).where(like(events.kind, 'package.%')))[0]!.n

      expect((await put('hooked/generic/lib/1.0/a.bin', alice, 'a')).status).toBe(201)
      const published = await ok(anon.packages.getPackage('hooked', 'generic', 'lib', '1.0'))
      const before = await packageEvents()
      expect((await put('hooked/generic/lib/1.0/b.bin', carol, 'b')).status).toBe(403)
      expect((await put('hooked/generic/lib/1.0/b.bin', root, 'b')).status).toBe(201)
      expect((await put('hooked/generic/lib/1.0/A.bin', alice, 'again')).status).toBe(409)
      const limit = s.config.maxPackageFileSize
      s.config.maxPackageFileSize = 10
      try {
        expect((await put('hooked/generic/lib/3.0/big.bin', alice, 'x'.repeat(11))).status).toBe(413)
      } finally {
        s.config.maxPackageFileSize = limit
      }
      expect(await packageEvents()).toBe(before)
      expect((await registry('DELETE', 'hooked/generic/lib/1.0', root)).status).toBe(204)
      // A version's last file takes it: deleted too.
      expect((await put('hooked/generic/lib/2.0/c.bin', alice, 'c')).status).toBe(201)
      expect((await registry('DELETE', 'hooked/generic/lib/2.0/c.bin', alice)).status).toBe(204)
      // The repository the other hook hears of comes after every package event: once it is in, their tasks are written.
      expect((await s.post('/orgs/hooked/repos', { name: 'after' }, { token: alice.token })).status).toBe(201)
      await until(() => rx.received.find((r) => r.payload?.repository?.full_name === 'hooked/after'), 'the repository event')
      const tasks = await s.deps.db.select({ type: hookTasks.eventType }).from(hookTasks).where(eq(hookTasks.hookId, others))
      expect(tasks.map((t) => t.type)).toEqual(['repository'])

      for (const path of ['/org', '/system']) {
        const got = await until(() => {
          // The system hook also hears of the packages earlier tests published within its second.
          const at = rx.received.filter((r) => r.path === path && r.payload?.package?.owner?.login === 'hooked')
          return at.length >= 4 && at
        }, `package deliveries at ${path}`)
        expect(got.map((r) => `${r.payload.action} ${r.payload.package.version} by ${r.payload.sender.login}`)).toEqual([
          'created 1.0 by alice',
          'deleted 1.0 by root',
          'created 2.0 by alice',
          'deleted 2.0 by alice',
        ])
        for (const r of got) {
          expect([r.headers['x-gitea-event'], r.headers['x-gitea-event-type']]).toEqual(['package', 'package'])
          expect(Object.keys(r.payload)).toEqual(['action', 'repository', 'package', 'organization', 'sender'])
          expect([r.payload.repository, r.payload.organization]).toEqual([null, null])
        }
        // The API's Package record, as it was.
        expect(got[0]!.payload.package).toEqual(published)
        expect(got[1]!.payload.package).toEqual(published)
      }
      expect(rx.received.filter((r) => r.path === '/org').length).toBe(4)
      const slack = await until(() => rx.received.find((r) => r.path === '/slack'), 'the slack message')
      expect(slack.payload.text).toBe(`<${published.html_url}|Package created: lib:1.0>`)
    } finally {
      await worker.stop()
      rx.stop()
    }
  })
})
