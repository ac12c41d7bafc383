import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { deployKeys } from '../src/db/schema'
import { deployKeysByFingerprint } from '../src/modules/deploy-keys/service'

let s: TestServer
let alice: TestUser
let bob: TestUser
const keyDir = mkdtempSync(join(tmpdir(), 'warren-deploy-keys-'))

function sshKeygen(): { line: string; fingerprint: string } {
  const file = join(keyDir, `k${Math.random().toString(36).slice(2)}`)
  const gen = Bun.spawnSync(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'ci@server', '-f', file])
  if (gen.exitCode !== 0) throw new Error(gen.stderr.toString())
  const fp = Bun.spawnSync(['ssh-keygen', '-l', '-E', 'sha256', '-f', file + '.pub']).stdout.toString()
  return { line: readFileSync(file + '.pub', 'utf8').trim(), fingerprint: fp.split(' ')[1]! }
}
const rowCount = async () => (await s.deps.db.select().from(deployKeys)).length

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  for (const name of ['app', 'other']) expect((await s.post('/user/repos', { name }, { token: alice.token })).status).toBe(201)
  expect((await s.put('/repos/alice/app/collaborators/bob', { permission: 'write' }, { token: alice.token })).status).toBe(204)
})
afterAll(async () => {
  await s.stop()
  rmSync(keyDir, { recursive: true, force: true })
})

describe('deploy keys', () => {
  test('add, list, get, delete; the SSH lookup finds the repository and the write right', async () => {
    const k = sshKeygen()
    const created = await s.post('/repos/alice/app/keys', { title: 'ci', key: k.line, read_only: true }, { token: alice.token })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ title: 'ci', key: k.line, fingerprint: k.fingerprint, read_only: true, key_id: created.body.id })
    expect(created.body.url).toBe(`${s.config.baseUrl}api/v1/repos/alice/app/keys/${created.body.id}`)
    expect(created.body.repository.full_name).toBe('alice/app')

    const writer = sshKeygen()
    const second = await s.post('/repos/alice/app/keys', { title: 'deploy', key: writer.line }, { token: alice.token })
    expect(second.status).toBe(201)
    expect(second.body.read_only).toBe(false)

    const list = await s.get('/repos/alice/app/keys', { token: alice.token })
    expect(list.status).toBe(200)
    expect(list.body.map((x: any) => x.title)).toEqual(['ci', 'deploy'])
    expect(list.headers.get('x-total-count')).toBe('2')
    const filtered = await s.get(`/repos/alice/app/keys?fingerprint=${encodeURIComponent(writer.fingerprint)}`, { token: alice.token })
    expect(filtered.body.map((x: any) => x.title)).toEqual(['deploy'])
    const none = await s.get('/repos/alice/app/keys?fingerprint=SHA256:nothing', { token: alice.token })
    expect(none.body).toEqual([])

    const one = await s.get(`/repos/alice/app/keys/${created.body.id}`, { token: alice.token })
    expect(one.status).toBe(200)
    expect(one.body.fingerprint).toBe(k.fingerprint)

    const app = (await s.get('/repos/alice/app', { token: alice.token })).body
    expect(await deployKeysByFingerprint(s.deps, k.fingerprint)).toEqual([{ keyId: created.body.id, repoId: app.id, readOnly: true, updatedUnix: expect.any(Number) }])
    expect(await deployKeysByFingerprint(s.deps, writer.fingerprint)).toEqual([{ keyId: second.body.id, repoId: app.id, readOnly: false, updatedUnix: expect.any(Number) }])

    expect((await s.del(`/repos/alice/app/keys/${created.body.id}`, undefined, { token: alice.token })).status).toBe(204)
    expect((await s.get(`/repos/alice/app/keys/${created.body.id}`, { token: alice.token })).status).toBe(404)
    expect((await s.del(`/repos/alice/app/keys/${created.body.id}`, undefined, { token: alice.token })).status).toBe(404)
    expect(await deployKeysByFingerprint(s.deps, k.fingerprint)).toEqual([])
  })

  test('duplicates, user keys and garbage are refused with 422 and change nothing', async () => {
    const k = sshKeygen()
    expect((await s.post('/repos/alice/app/keys', { title: 'dup', key: k.line }, { token: alice.token })).status).toBe(201)
    const before = await rowCount()
    const again = await s.post('/repos/alice/app/keys', { title: 'dup2', key: k.line }, { token: alice.token })
    expect(again.status).toBe(422)
    expect(again.body.message).toContain('already been added')
    const sameTitle = await s.post('/repos/alice/app/keys', { title: 'dup', key: sshKeygen().line }, { token: alice.token })
    expect(sameTitle.status).toBe(422)
    expect(sameTitle.body.message).toContain('Key title has been used')
    for (const key of ['garbage', 'ssh-ed25519 AAAAnotbase64!!', '', 'x'.repeat(20000)]) {
      const bad = await s.post('/repos/alice/app/keys', { title: 'bad', key }, { token: alice.token })
      expect(bad.status).toBe(422)
    }
    const userKey = sshKeygen()
    expect((await s.post('/user/keys', { title: 'mine', key: userKey.line }, { token: bob.token })).status).toBe(201)
    const asDeploy = await s.post('/repos/alice/app/keys', { title: 'bobs', key: userKey.line }, { token: alice.token })
    expect(asDeploy.status).toBe(422)
    expect(asDeploy.body.message).toContain('Key content has been used as non-deploy key')
    // …and a deploy key is not accepted as a user key either.
    expect((await s.post('/user/keys', { title: 'deploy', key: k.line }, { token: bob.token })).status).toBe(422)
    expect(await rowCount()).toBe(before)
    // The same key may open another repository.
    expect((await s.post('/repos/alice/other/keys', { title: 'dup', key: k.line }, { token: alice.token })).status).toBe(201)
    expect((await deployKeysByFingerprint(s.deps, k.fingerprint)).length).toBe(2)
  })

  test("another repository's key id is 404; non-admins are refused", async () => {
    const k = sshKeygen()
    const other = await s.post('/repos/alice/other/keys', { title: 'elsewhere', key: k.line }, { token: alice.token })
    expect(other.status).toBe(201)
    expect((await s.get(`/repos/alice/app/keys/${other.body.id}`, { token: alice.token })).status).toBe(404)
    expect((await s.del(`/repos/alice/app/keys/${other.body.id}`, undefined, { token: alice.token })).status).toBe(404)
    expect((await s.get('/repos/alice/app/keys/abc', { token: alice.token })).status).toBe(404)
    expect((await s.get(`/repos/alice/other/keys/${other.body.id}`, { token: alice.token })).status).toBe(200)

    // bob may write to alice/app but is no admin of it.
    const before = await rowCount()
    expect((await s.get('/repos/alice/app/keys', { token: bob.token })).status).toBe(403)
    expect((await s.post('/repos/alice/app/keys', { title: 'b', key: sshKeygen().line }, { token: bob.token })).status).toBe(403)
    expect((await s.del(`/repos/alice/other/keys/${other.body.id}`, undefined, { token: bob.token })).status).toBe(403)
    expect((await s.get('/repos/alice/app/keys')).status).toBe(401)
    expect(await rowCount()).toBe(before)
  })

  test('keys of an archived repository can still be changed (Gitea has no mustNotBeArchived there)', async () => {
    expect((await s.post('/user/repos', { name: 'old' }, { token: alice.token })).status).toBe(201)
    expect((await s.patch('/repos/alice/old', { archived: true }, { token: alice.token })).status).toBe(200)
    const added = await s.post('/repos/alice/old/keys', { title: 'ro', key: sshKeygen().line, read_only: true }, { token: alice.token })
    expect(added.status).toBe(201)
    expect((await s.del(`/repos/alice/old/keys/${added.body.id}`, undefined, { token: alice.token })).status).toBe(204)
  })

  test('deleting the repository removes its deploy keys', async () => {
    expect((await s.post('/user/repos', { name: 'gone' }, { token: alice.token })).status).toBe(201)
    const k = sshKeygen()
    expect((await s.post('/repos/alice/gone/keys', { title: 'g', key: k.line }, { token: alice.token })).status).toBe(201)
    expect((await s.del('/repos/alice/gone', undefined, { token: alice.token })).status).toBe(204)
    expect(await deployKeysByFingerprint(s.deps, k.fingerprint)).toEqual([])
  })
})
