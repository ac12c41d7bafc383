import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as openpgp from 'openpgp'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { parseSshPublicKey } from '../src/modules/keys/ssh-key'
import { publicKeys, gpgKeys } from '../src/db/schema'

let s: TestServer
let alice: TestUser
let bob: TestUser
let admin: TestUser
const keyDir = mkdtempSync(join(tmpdir(), 'warren-keys-'))

/** A fresh key made by ssh-keygen: [public line, fingerprint as ssh-keygen -lf prints it]. */
function sshKeygen(type: string, bits?: number): { line: string; fingerprint: string } {
  const file = join(keyDir, `k${Math.random().toString(36).slice(2)}`)
  const args = ['ssh-keygen', '-q', '-t', type, '-N', '', '-C', 'me@laptop', '-f', file]
  if (bits) args.push('-b', String(bits))
  const gen = Bun.spawnSync(args)
  if (gen.exitCode !== 0) throw new Error(gen.stderr.toString())
  const line = readFileSync(file + '.pub', 'utf8').trim()
  const fp = Bun.spawnSync(['ssh-keygen', '-l', '-E', 'sha256', '-f', file + '.pub']).stdout.toString()
  return { line, fingerprint: fp.split(' ')[1]! }
}

const keyCount = async () => (await s.deps.db.select().from(publicKeys)).length
const gpgCount = async () => (await s.deps.db.select().from(gpgKeys)).length

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  admin = await s.user('root', { admin: true })
})
afterAll(async () => {
  await s.stop()
  rmSync(keyDir, { recursive: true, force: true })
})

describe('SSH key parsing', () => {
  test('fingerprints match ssh-keygen for every algorithm', () => {
    for (const [type, bits] of [['ed25519'], ['rsa', 2048], ['ecdsa', 256], ['ecdsa', 384], ['ecdsa', 521]] as const) {
      const { line, fingerprint } = sshKeygen(type, bits)
      const parsed = parseSshPublicKey(line)
      expect(parsed.fingerprint).toBe(fingerprint)
      expect(parsed.normalized).toBe(line)
      expect(parsed.type).toBe(line.split(' ')[0]!)
    }
  })

  test('known vector, bare blob and RFC 4716 form', () => {
    const blob = Buffer.concat([Buffer.from([0, 0, 0, 11]), Buffer.from('ssh-ed25519'), Buffer.from([0, 0, 0, 32]), Buffer.alloc(32, 1)])
    const b64 = blob.toString('base64')
    const expected = 'SHA256:' + new Bun.CryptoHasher('sha256').update(blob).digest('base64').replace(/=+$/, '')
    expect(parseSshPublicKey(`ssh-ed25519 ${b64}`).fingerprint).toBe(expected)
    expect(parseSshPublicKey(b64).normalized).toBe(`ssh-ed25519 ${b64}`)
    const rfc = `---- BEGIN SSH2 PUBLIC KEY ----\nComment: "my key"\n${b64.slice(0, 40)}\n${b64.slice(40)}\n---- END SSH2 PUBLIC KEY ----`
    const parsed = parseSshPublicKey(rfc)
    expect(parsed.normalized).toBe(`ssh-ed25519 ${b64} my key`)
  })

  test('rejects garbage, wrong type prefix, truncated blobs', () => {
    const { line } = sshKeygen('ed25519')
    const b64 = line.split(' ')[1]!
    for (const bad of ['not a key', `ssh-rsa ${b64}`, `ssh-ed25519 ${b64.slice(0, 30)}`, 'ssh-ed25519 !!!!', `ssh-ed25519 ${Buffer.from('xx').toString('base64')}`]) {
      expect(() => parseSshPublicKey(bad)).toThrow(/Invalid key content/)
    }
  })
})

describe('SSH keys API', () => {
  let aliceKeyId = 0
  let aliceKey: { line: string; fingerprint: string }

  test('POST /user/keys creates a key; GET lists and reads it', async () => {
    aliceKey = sshKeygen('ed25519')
    const r = await s.post('/user/keys', { title: 'laptop', key: aliceKey.line + '\n' }, { token: alice.token })
    expect(r.status).toBe(201)
    expect(r.body).toMatchObject({
      key: aliceKey.line,
      title: 'laptop',
      fingerprint: aliceKey.fingerprint,
      key_type: 'user',
      url: `${s.config.baseUrl}api/v1/user/keys/${r.body.id}`,
      user: { login: 'alice' },
    })
    expect(r.body.read_only).toBeUndefined()
    expect(r.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    aliceKeyId = r.body.id
    expect((await s.deps.db.select().from(publicKeys))[0]!.keyType).toBe('ssh-ed25519')

    const list = await s.get('/user/keys', { token: alice.token })
    expect(list.status).toBe(200)
    expect(list.body.map((k: any) => k.id)).toEqual([aliceKeyId])
    expect(list.headers.get('x-total-count')).toBe('1')
    const one = await s.get(`/user/keys/${aliceKeyId}`, { token: alice.token })
    expect(one.status).toBe(200)
    expect(one.body.fingerprint).toBe(aliceKey.fingerprint)
    const byFp = await s.get(`/user/keys?fingerprint=${encodeURIComponent(aliceKey.fingerprint)}`, { token: alice.token })
    expect(byFp.body).toHaveLength(1)
    const noFp = await s.get('/user/keys?fingerprint=SHA256:nothing', { token: alice.token })
    expect(noFp.body).toEqual([])
  })

  test('RSA and ECDSA keys are accepted too; paging works', async () => {
    const rsa = sshKeygen('rsa', 2048)
    const ec = sshKeygen('ecdsa', 384)
    expect((await s.post('/user/keys', { title: 'rsa', key: rsa.line }, { token: alice.token })).body.fingerprint).toBe(rsa.fingerprint)
    expect((await s.post('/user/keys', { title: 'ec', key: ec.line }, { token: alice.token })).status).toBe(201)
    const page = await s.get('/user/keys?limit=2&page=2', { token: alice.token })
    expect(page.body).toHaveLength(1)
    expect(page.headers.get('x-total-count')).toBe('3')
    expect(page.headers.get('link')).toContain('rel="first"')
  })

  test('anonymous callers get 401 everywhere', async () => {
    expect((await s.get('/user/keys')).status).toBe(401)
    expect((await s.post('/user/keys', { title: 'x', key: aliceKey.line })).status).toBe(401)
    expect((await s.get(`/user/keys/${aliceKeyId}`)).status).toBe(401)
    expect((await s.del(`/user/keys/${aliceKeyId}`)).status).toBe(401)
    const r = await s.get('/users/alice/keys')
    expect(r.status).toBe(401)
    expect(r.body).toEqual({ message: expect.any(String), url: `${s.config.baseUrl}api/swagger` })
  })

  test('GET /users/{u}/keys for signed-in callers; 404 unknown user', async () => {
    const r = await s.get('/users/ALICE/keys', { token: bob.token })
    expect(r.status).toBe(200)
    expect(r.body).toHaveLength(3)
    expect(r.body[0].user.login).toBe('alice')
    expect(r.body[0].url).toBe(`${s.config.baseUrl}api/v1/user/keys/${aliceKeyId}`)
    expect((await s.get('/users/nobody/keys', { token: bob.token })).status).toBe(404)
  })

  test("another user's key: GET 404, DELETE 403; unknown 404", async () => {
    expect((await s.get(`/user/keys/${aliceKeyId}`, { token: bob.token })).status).toBe(404)
    const del = await s.del(`/user/keys/${aliceKeyId}`, undefined, { token: bob.token })
    expect(del.status).toBe(403)
    expect(del.body.message).toBeString()
    expect((await s.del('/user/keys/99999', undefined, { token: bob.token })).status).toBe(404)
    expect((await s.get('/user/keys/99999', { token: alice.token })).status).toBe(404)
    expect((await s.get(`/user/keys/${aliceKeyId}`, { token: alice.token })).status).toBe(200)
  })

  test('422: invalid content, duplicate title, key already registered; nothing stored', async () => {
    const before = await keyCount()
    const fresh = sshKeygen('ed25519')
    const cases: [unknown, RegExp][] = [
      [{ title: 'laptop', key: fresh.line }, /Key title has been used/],
      [{ title: 'other', key: aliceKey.line }, /has been used/],
      [{ title: 'garbage', key: 'ssh-ed25519 AAAA' }, /Invalid key content/],
      [{ title: 'mismatch', key: 'ssh-rsa ' + fresh.line.split(' ')[1] }, /Invalid key content/],
      [{ title: 'empty', key: '' }, /Key/],
      [{ title: '', key: fresh.line }, /Title/],
      [{ title: 'x'.repeat(256), key: fresh.line }, /Title/],
      [{ title: 'huge', key: 'ssh-ed25519 ' + 'A'.repeat(20000) }, /Invalid key content/],
      [{ title: 'nokey' }, /key/i],
      [{ key: fresh.line }, /title/i],
      [{ title: 5, key: fresh.line }, /title/i],
      [[], /./],
    ]
    for (const [body, message] of cases) {
      const r = await s.post('/user/keys', body, { token: alice.token })
      expect(r.status).toBe(422)
      expect(r.body.message).toMatch(message)
      expect(r.body.url).toBe(`${s.config.baseUrl}api/swagger`)
    }
    // the same key under another account is refused as well
    const r = await s.post('/user/keys', { title: 'stolen', key: aliceKey.line }, { token: bob.token })
    expect(r.status).toBe(422)
    const bad = await s.request('POST', '/user/keys', { token: alice.token, raw: '{"title": "x", ', headers: { 'content-type': 'application/json' } })
    expect(bad.status).toBe(400)
    expect(bad.body.message).toBeString()
    expect(await keyCount()).toBe(before)
    expect((await s.get('/user/keys/abc', { token: alice.token })).status).toBe(422)
  })

  test('DELETE /user/keys/{id} removes the key', async () => {
    const k = sshKeygen('ed25519')
    const created = await s.post('/user/keys', { title: 'temp', key: k.line }, { token: bob.token })
    expect(created.status).toBe(201)
    const r = await s.del(`/user/keys/${created.body.id}`, undefined, { token: bob.token })
    expect(r.status).toBe(204)
    expect(r.text).toBe('')
    expect((await s.get(`/user/keys/${created.body.id}`, { token: bob.token })).status).toBe(404)
    expect((await s.del(`/user/keys/${created.body.id}`, undefined, { token: bob.token })).status).toBe(404)
  })

  test('admin routes: create and delete a key for a user; 401/403/404', async () => {
    const k = sshKeygen('ed25519')
    expect((await s.post('/admin/users/bob/keys', { title: 'by-admin', key: k.line })).status).toBe(401)
    expect((await s.post('/admin/users/bob/keys', { title: 'by-admin', key: k.line }, { token: alice.token })).status).toBe(403)
    expect((await s.post('/admin/users/nobody/keys', { title: 'by-admin', key: k.line }, { token: admin.token })).status).toBe(404)
    expect((await s.post('/admin/users/bob/keys', { title: 'by-admin', key: 'nope' }, { token: admin.token })).status).toBe(422)
    const r = await s.post('/admin/users/bob/keys', { title: 'by-admin', key: k.line }, { token: admin.token })
    expect(r.status).toBe(201)
    expect(r.body.user.login).toBe('bob')
    expect((await s.get(`/user/keys/${r.body.id}`, { token: bob.token })).status).toBe(200)

    expect((await s.del(`/admin/users/bob/keys/${r.body.id}`)).status).toBe(401)
    expect((await s.del(`/admin/users/bob/keys/${r.body.id}`, undefined, { token: bob.token })).status).toBe(403)
    expect((await s.del(`/admin/users/alice/keys/${r.body.id}`, undefined, { token: admin.token })).status).toBe(404)
    expect((await s.del(`/admin/users/nobody/keys/${r.body.id}`, undefined, { token: admin.token })).status).toBe(404)
    expect((await s.del(`/admin/users/bob/keys/${r.body.id}`, undefined, { token: admin.token })).status).toBe(204)
    expect((await s.get(`/user/keys/${r.body.id}`, { token: bob.token })).status).toBe(404)
  })
})

describe('GPG keys API', () => {
  let primaryId = 0
  let withSub: openpgp.PublicKey
  let aliceArmored = ''

  test('POST /user/gpg_keys with a subkey: ids, capabilities, emails, subkeys', async () => {
    const { publicKey } = await openpgp.generateKey({
      type: 'curve25519',
      userIDs: [{ name: 'Alice', email: 'alice@example.com' }, { name: 'Alice (work)', email: 'alice@work.example' }],
      format: 'armored',
    })
    aliceArmored = publicKey
    withSub = await openpgp.readKey({ armoredKey: publicKey })
    const r = await s.post('/user/gpg_keys', { armored_public_key: publicKey }, { token: alice.token })
    expect(r.status).toBe(201)
    const keyId = withSub.getKeyID().toHex().toUpperCase()
    expect(r.body.key_id).toBe(keyId)
    expect(r.body.key_id).toMatch(/^[0-9A-F]{16}$/)
    expect(r.body.primary_key_id).toBe('')
    expect(r.body.emails).toEqual([{ email: 'alice@example.com', verified: true }])
    expect(r.body).toMatchObject({ can_sign: true, can_certify: true, can_encrypt_comms: false, can_encrypt_storage: false })
    expect(r.body.expires_at).toBe('0001-01-01T00:00:00Z')
    expect(r.body.created_at).toBe(withSub.getCreationTime().toISOString().replace(/\.\d{3}Z$/, 'Z'))
    // public_key is the binary packet: it reads back as the same key id
    const packets = await openpgp.PacketList.fromBinary(Buffer.from(r.body.public_key, 'base64'), { [openpgp.enums.packet.publicKey]: openpgp.PublicKeyPacket } as any)
    expect((packets[0] as openpgp.PublicKeyPacket).getKeyID().toHex().toUpperCase()).toBe(keyId)
    expect(r.body.subkeys).toHaveLength(1)
    const sub = r.body.subkeys[0]
    expect(sub.primary_key_id).toBe(keyId)
    expect(sub.key_id).toBe(withSub.subkeys[0]!.getKeyID().toHex().toUpperCase())
    expect(sub).toMatchObject({ can_sign: false, can_encrypt_comms: true, can_encrypt_storage: true, can_certify: false, emails: [], subkeys: [] })
    primaryId = r.body.id
  })

  test('key with an expiry and no subkey', async () => {
    const { publicKey } = await openpgp.generateKey({
      type: 'curve25519',
      userIDs: [{ email: 'bob@example.com' }],
      keyExpirationTime: 86400,
      subkeys: [],
      format: 'armored',
    })
    const key = await openpgp.readKey({ armoredKey: publicKey })
    const r = await s.post('/user/gpg_keys', { armored_public_key: publicKey }, { token: bob.token })
    expect(r.status).toBe(201)
    const expires = Date.parse(r.body.expires_at) / 1000
    expect(expires).toBe(Math.floor(key.getCreationTime().getTime() / 1000) + 86400)
    expect(r.body.subkeys).toEqual([])
  })

  test('lists and reads; other users and anonymous callers', async () => {
    const list = await s.get('/user/gpg_keys', { token: alice.token })
    expect(list.status).toBe(200)
    expect(list.body).toHaveLength(1)
    expect(list.body[0].subkeys).toHaveLength(1)
    expect(list.headers.get('x-total-count')).toBe('1')
    expect((await s.get(`/user/gpg_keys/${primaryId}`, { token: alice.token })).body.id).toBe(primaryId)
    expect((await s.get(`/user/gpg_keys/${primaryId}`, { token: bob.token })).status).toBe(404)
    expect((await s.get('/user/gpg_keys/99999', { token: alice.token })).status).toBe(404)
    const theirs = await s.get('/users/alice/gpg_keys', { token: bob.token })
    expect(theirs.status).toBe(200)
    expect(theirs.body[0].key_id).toBe(list.body[0].key_id)
    expect((await s.get('/users/alice/gpg_keys')).status).toBe(401)
    expect((await s.get('/users/nobody/gpg_keys', { token: bob.token })).status).toBe(404)
    expect((await s.get('/user/gpg_keys')).status).toBe(401)
    expect((await s.post('/user/gpg_keys', { armored_public_key: aliceArmored })).status).toBe(401)
    expect((await s.get(`/user/gpg_keys/${primaryId}`)).status).toBe(401)
    expect((await s.del(`/user/gpg_keys/${primaryId}`)).status).toBe(401)
  })

  test('422: duplicate key id, no matching e-mail, private key, garbage, wrong shapes', async () => {
    const before = await gpgCount()
    const stranger = await openpgp.generateKey({ type: 'curve25519', userIDs: [{ email: 'someone@else.example' }], format: 'armored' })
    const cases: [unknown, RegExp][] = [
      [{ armored_public_key: aliceArmored }, /same id/],
      [{ armored_public_key: stranger.publicKey }, /emails/],
      [{ armored_public_key: stranger.privateKey }, /private/],
      [{ armored_public_key: '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nxx\n-----END PGP PUBLIC KEY BLOCK-----' }, /parsing/],
      [{ armored_public_key: 'hello' }, /parsing/],
      [{ armored_public_key: '' }, /Required/],
      [{ armored_public_key: 'x'.repeat(300 * 1024) }, /too long/],
      [{ armored_public_key: 42 }, /armored_public_key/],
      [{}, /armored_public_key/],
    ]
    for (const [body, message] of cases) {
      const r = await s.post('/user/gpg_keys', body, { token: alice.token })
      expect(r.status).toBe(422)
      expect(r.body.message).toMatch(message)
    }
    // bob cannot add alice's key (no address of his), nor can anybody re-add it
    expect((await s.post('/user/gpg_keys', { armored_public_key: aliceArmored }, { token: bob.token })).status).toBe(422)
    const bad = await s.request('POST', '/user/gpg_keys', { token: alice.token, raw: '{nope', headers: { 'content-type': 'application/json' } })
    expect(bad.status).toBe(400)
    expect(await gpgCount()).toBe(before)
  })

  test('DELETE: 403 for another user, 404 unknown, 204 removes key and subkeys', async () => {
    expect((await s.del(`/user/gpg_keys/${primaryId}`, undefined, { token: bob.token })).status).toBe(403)
    expect((await s.del('/user/gpg_keys/99999', undefined, { token: alice.token })).status).toBe(404)
    const before = await gpgCount()
    expect((await s.del(`/user/gpg_keys/${primaryId}`, undefined, { token: alice.token })).status).toBe(204)
    expect(await gpgCount()).toBe(before - 2)
    expect((await s.get('/user/gpg_keys', { token: alice.token })).body).toEqual([])
    // once deleted it can be added again
    expect((await s.post('/user/gpg_keys', { armored_public_key: aliceArmored }, { token: alice.token })).status).toBe(201)
  })
})
