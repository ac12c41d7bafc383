import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import * as openpgp from 'openpgp'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gpgVerificationToken, MAX_TOKEN_SIGNATURE } from '../src/modules/keys/service'

/** GET /user/gpg_key_token and POST /user/gpg_key_verify: proving one holds a GPG key by signing a token with it. */

let s: TestServer
let alice: TestUser
let bob: TestUser

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
})
afterAll(() => s.stop())

type Made = { privateKey: openpgp.PrivateKey; publicArmored: string; keyId: string; id: number }

/** A fresh key for `user` (their e-mail as identity), added through the API. */
async function addKey(user: TestUser, opts: { signingSubkey?: boolean } = {}): Promise<Made> {
  const { privateKey, publicKey } = await openpgp.generateKey({
    type: 'curve25519',
    userIDs: [{ name: user.name, email: `${user.name}@example.com` }],
    subkeys: opts.signingSubkey ? [{ sign: true }] : [{}],
    format: 'object',
  })
  const publicArmored = publicKey.armor()
  const r = await s.post('/user/gpg_keys', { armored_public_key: publicArmored }, { token: user.token })
  expect(r.status).toBe(201)
  expect(r.body.verified).toBe(false)
  return { privateKey, publicArmored, keyId: r.body.key_id, id: r.body.id }
}

/** An armored detached signature of `text` (binary or text mode). */
async function sign(key: openpgp.PrivateKey, text: string, mode: 'binary' | 'text' = 'binary'): Promise<string> {
  const message = mode === 'binary' ? await openpgp.createMessage({ binary: new TextEncoder().encode(text) }) : await openpgp.createMessage({ text })
  return (await openpgp.sign({ message, signingKeys: key, detached: true, format: 'armored' })) as string
}

const getToken = async (user: TestUser) => {
  const r = await s.get('/user/gpg_key_token', { token: user.token })
  expect(r.status).toBe(200)
  expect(r.headers.get('content-type')).toContain('text/plain')
  return r.text
}

const verify = (user: TestUser | null, body: unknown) => s.post('/user/gpg_key_verify', body, user ? { token: user.token } : {})

describe('GET /user/gpg_key_token', () => {
  test("the signed-in user's token: 64 hex digits, Gitea's form, differing between users; 401 anonymous", async () => {
    const token = await getToken(alice)
    expect(token).toMatch(/^[0-9a-f]{64}$/)
    // The same token as Gitea's VerificationToken(user, 1) (or, if the minute turned meanwhile, the one before it).
    const now = Date.now()
    expect([gpgVerificationToken(alice.user, 1, now), gpgVerificationToken(alice.user, 0, now)]).toContain(token)
    const minute = Math.floor(now / 60_000) * 60_000
    const expected = new Bun.CryptoHasher('sha256')
      .update(
        `${new Date(minute + 60_000).toUTCString().replace('GMT', '+0000')}:${new Date(alice.user.createdUnix * 1000).toUTCString().replace('GMT', '+0000')}:alice:alice@example.com:${alice.user.id}`,
      )
      .digest('hex')
    expect(gpgVerificationToken(alice.user, 1, now)).toBe(expected)
    expect(await getToken(bob)).not.toBe(token)
    expect((await s.get('/user/gpg_key_token')).status).toBe(401)
  })
})

describe('POST /user/gpg_key_verify', () => {
  test('a signature of the token by the key verifies it: 200 (as Gitea 1.23 answers; its swagger says 201), and the key reads verified afterwards', async () => {
    const key = await addKey(alice)
    const token = await getToken(alice)
    const r = await verify(alice, { key_id: key.keyId, armored_signature: await sign(key.privateKey, token) })
    expect(r.status).toBe(200)
    expect(r.body.id).toBe(key.id)
    expect(r.body.key_id).toBe(key.keyId)
    expect(r.body.verified).toBe(true)
    expect(r.body.emails).toEqual([{ email: 'alice@example.com', verified: true }])
    const got = await s.get(`/user/gpg_keys/${key.id}`, { token: alice.token })
    expect(got.body.verified).toBe(true)
    const listed = (await s.get('/user/gpg_keys', { token: alice.token })).body.find((k: any) => k.id === key.id)
    expect(listed.verified).toBe(true)
    // Verifying again is harmless.
    expect((await verify(alice, { key_id: key.keyId, armored_signature: await sign(key.privateKey, token) })).status).toBe(200)
  })

  test("the forms Gitea accepts: a trailing line end, text mode, lower case and zero-padded ids, a signing subkey's signature", async () => {
    const key = await addKey(alice)
    const token = await getToken(alice)
    const crlf = await verify(alice, { key_id: key.keyId.toLowerCase(), armored_signature: await sign(key.privateKey, `${token}\r\n`) })
    expect(crlf.status).toBe(200)

    const other = await addKey(alice)
    const text = await verify(alice, { key_id: `00${other.keyId}`, armored_signature: await sign(other.privateKey, `${token}\n`, 'text') })
    expect(text.status).toBe(200)

    const withSub = await addKey(alice, { signingSubkey: true })
    const signature = await sign(withSub.privateKey, token)
    const issuer = (await openpgp.readSignature({ armoredSignature: signature })).getSigningKeyIDs()[0]!.toHex().toUpperCase()
    expect(issuer).not.toBe(withSub.keyId) // openpgp signs with the subkey
    const r = await verify(alice, { key_id: withSub.keyId, armored_signature: signature })
    expect(r.status).toBe(200)
    expect(r.body.verified).toBe(true)
  })

  test('a key made by gpg, and its signature of the token with the newline a shell adds', async () => {
    if (!Bun.which('gpg')) return
    const home = mkdtempSync(join(tmpdir(), 'warren-gnupg-'))
    const env = { ...process.env, GNUPGHOME: home }
    const gpg = (args: string[], stdin?: string) => {
      const run = Bun.spawnSync(['gpg', '--batch', '--pinentry-mode', 'loopback', '--passphrase', '', ...args], {
        env,
        stdin: stdin === undefined ? 'ignore' : new TextEncoder().encode(stdin),
      })
      expect(run.exitCode).toBe(0)
      return run.stdout.toString()
    }
    try {
      gpg(['--quick-gen-key', 'Alice <alice@example.com>', 'ed25519', 'sign', 'never'])
      const added = await s.post('/user/gpg_keys', { armored_public_key: gpg(['--armor', '--export', 'alice@example.com']) }, { token: alice.token })
      expect(added.status).toBe(201)
      expect(added.body.verified).toBe(false)
      const token = await getToken(alice)
      const signature = gpg(['--local-user', 'alice@example.com', '--armor', '--detach-sign'], `${token}\n`)
      const r = await verify(alice, { key_id: added.body.key_id, armored_signature: signature })
      expect(r.status).toBe(200)
      expect(r.body.verified).toBe(true)
    } finally {
      Bun.spawnSync(['gpgconf', '--kill', 'gpg-agent'], { env })
      rmSync(home, { recursive: true, force: true })
    }
  })

  test('a wrong signature is 422 and leaves the key unverified', async () => {
    const key = await addKey(alice)
    const stranger = (await openpgp.generateKey({ type: 'curve25519', userIDs: [{ email: 'x@example.org' }], format: 'object' })).privateKey
    const token = await getToken(alice)
    const cases = [
      await sign(key.privateKey, 'not the token'), // another text
      await sign(key.privateKey, `${token} `), // not one of the accepted forms
      await sign(stranger, token), // another key
      await sign(key.privateKey, await getToken(bob)), // another user's token
      await sign(key.privateKey, gpgVerificationToken(alice.user, -1)), // a token two minutes old
      'not a signature',
      '',
      '-----BEGIN PGP SIGNATURE-----\n\nAAAA\n-----END PGP SIGNATURE-----\n',
      'x'.repeat(MAX_TOKEN_SIGNATURE + 1),
    ]
    for (const armored_signature of cases) {
      const r = await verify(alice, { key_id: key.keyId, armored_signature })
      expect(r.status).toBe(422)
      expect(r.body.message).toStartWith('The provided GPG key, signature and token do not match or token is out of date')
      expect(r.body.url).toBeString()
    }
    expect((await s.get(`/user/gpg_keys/${key.id}`, { token: alice.token })).body.verified).toBe(false)
  })

  test("another user's key and unknown ids are 404; anonymous 401; a missing field is a 4xx", async () => {
    const aliceKey = await addKey(alice)
    const token = await getToken(bob)
    // Bob signs his own token with Alice's key (say he stole it): still not his key.
    const stolen = await verify(bob, { key_id: aliceKey.keyId, armored_signature: await sign(aliceKey.privateKey, token) })
    expect(stolen.status).toBe(404)
    expect(stolen.body.url).toBeString()
    for (const key_id of ['FFFFFFFFFFFFFFFF', '', '000', 'not-hex', 'A'.repeat(41)]) {
      expect((await verify(alice, { key_id, armored_signature: await sign(aliceKey.privateKey, await getToken(alice)) })).status).toBe(404)
    }
    expect((await verify(null, { key_id: aliceKey.keyId, armored_signature: 'x' })).status).toBe(401)
    const missing = await verify(alice, { key_id: aliceKey.keyId })
    expect(missing.status).toBeGreaterThanOrEqual(400)
    expect(missing.status).toBeLessThan(500)
    expect((await s.get(`/user/gpg_keys/${aliceKey.id}`, { token: alice.token })).body.verified).toBe(false)
  })
})

describe('POST /user/gpg_keys with armored_signature', () => {
  test('a key none of whose e-mails is the user\'s is added, verified, when it signed the token; a wrong signature adds nothing', async () => {
    const { privateKey, publicKey } = await openpgp.generateKey({
      type: 'curve25519',
      userIDs: [{ email: 'elsewhere@example.org' }],
      subkeys: [{ sign: true }],
      format: 'object',
    })
    const armored_public_key = publicKey.armor()
    const refused = await s.post('/user/gpg_keys', { armored_public_key }, { token: bob.token })
    expect(refused.status).toBe(422)
    const token = await getToken(bob)
    expect(refused.body.message).toContain('It may still be added if you provide a valid signature for the token')
    const count = async () => (await s.get('/user/gpg_keys', { token: bob.token })).body.length
    const before = await count()
    for (const armored_signature of [await sign(privateKey, `${token}x`), await sign(privateKey, await getToken(alice)), 'garbage']) {
      const r = await s.post('/user/gpg_keys', { armored_public_key, armored_signature }, { token: bob.token })
      expect(r.status).toBe(422)
      expect(r.body.message).toStartWith('The provided GPG key, signature and token do not match')
    }
    expect(await count()).toBe(before)
    const r = await s.post('/user/gpg_keys', { armored_public_key, armored_signature: await sign(privateKey, token) }, { token: bob.token })
    expect(r.status).toBe(201)
    expect(r.body.verified).toBe(true)
    expect(r.body.emails).toEqual([])
    expect(r.body.subkeys).toHaveLength(1)
    expect((await s.get(`/user/gpg_keys/${r.body.id}`, { token: bob.token })).body.verified).toBe(true)
    expect(await count()).toBe(before + 1)
  })
})
