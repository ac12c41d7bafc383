import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import * as openpgp from 'openpgp'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { git, gitOk, remoteUrl, sh, tempDir } from './git-fixture'
import { webVisitors } from './web-session'

/**
 * Keys verified on the keys settings page (Gitea's: the user signs their verification token with
 * the key, `ssh-keygen -Y sign -n gitea` or `gpg --detach-sig`), and commits signed with SSH keys
 * (git's `gpg.format=ssh`, made here by the real git and ssh-keygen): verified when signed by a
 * verified SSH key of the committer (Gitea's ParseCommitWithSSHSignature), in the commit records,
 * the pages and a branch's require_signed_commits alike.
 */

let s: TestServer
let alice: TestUser
let work: string
let keyDir: string
const web = webVisitors(() => s.url, async () => '')

/** A new SSH key pair in keyDir (no passphrase): the private key's path and the public line. */
async function sshKey(name: string): Promise<{ path: string; pub: string }> {
  const path = join(keyDir, name)
  expect((await sh(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', path], keyDir)).code).toBe(0)
  return { path, pub: readFileSync(`${path}.pub`, 'utf8').trim() }
}

/** `text` signed with the SSH key at `path` in `namespace`, armored (ssh-keygen -Y sign, the text on stdin). */
async function sshSign(path: string, text: string, namespace: string): Promise<string> {
  const file = join(keyDir, `${crypto.randomUUID()}.txt`)
  await Bun.write(file, text)
  expect((await sh(['ssh-keygen', '-q', '-Y', 'sign', '-n', namespace, '-f', path, file], keyDir)).code).toBe(0)
  return readFileSync(`${file}.sig`, 'utf8')
}

/** The token the keys page asks to sign (each key's command shows it). */
const tokenOnPage = (html: string) => /echo -n (?:'|&#39;|&#x27;)([0-9a-f]{64})/.exec(html)?.[1]

/** A commit on the work repository's HEAD signed by the SSH key at `path` with the real git (`gpg.format=ssh`). */
async function sshSignedCommit(path: string, message: string): Promise<string> {
  await gitOk(work, '-c', 'gpg.format=ssh', '-c', `user.signingkey=${path}`, 'commit', '-q', '-S', '--allow-empty', '-m', message)
  return (await gitOk(work, 'rev-parse', 'HEAD')).trim()
}

const verificationOf = async (sha: string) => (await s.get(`/repos/alice/ssh-signed/git/commits/${sha}`, { token: alice.token })).body.commit.verification
const pushTo = (ref: string) => git(work, 'push', remoteUrl(s.url, 'alice/ssh-signed.git', 'alice', alice.password), `HEAD:refs/heads/${ref}`)

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  keyDir = tempDir('warren-ssh-keys-')
  expect((await s.post('/user/repos', { name: 'ssh-signed', auto_init: true }, { token: alice.token })).status).toBe(201)
  work = tempDir()
  await gitOk(work, 'clone', '-q', remoteUrl(s.url, 'alice/ssh-signed.git', 'alice', alice.password), '.')
})
afterAll(async () => {
  await s.stop()
  for (const d of [work, keyDir]) Bun.spawnSync(['rm', '-rf', d])
})

describe('keys verified on the keys page; commits signed with SSH keys', () => {
  test("an SSH key is verified by its signature of the token; its signed commits are then verified, an unverified key's are not", async () => {
    const key = await sshKey('laptop')
    const other = await sshKey('other')
    for (const [title, k] of [['laptop', key], ['other', other]] as const) expect((await s.post('/user/keys', { title, key: k.pub }, { token: alice.token })).status).toBe(201)
    const fingerprint = (await s.get('/user/keys', { token: alice.token })).body.find((k: { title: string }) => k.title === 'laptop').fingerprint as string

    // Before its key is verified, an SSH-signed commit is not.
    const early = await sshSignedCommit(key.path, 'signed before the key was verified')
    expect((await pushTo('main')).code).toBe(0)
    expect(await verificationOf(early)).toEqual(expect.objectContaining({ verified: false, reason: 'gpg.error.no_gpg_keys_found', signature: expect.stringContaining('BEGIN SSH SIGNATURE') }))

    const cookie = await web.signIn(alice)
    const page = await (await web.page('/user/settings/keys', cookie)).text()
    const token = tokenOnPage(page)!
    expect(page).toContain('ssh-keygen -Y sign -n gitea')
    // A signature of something else, or in another namespace, or by another key, is refused and verifies nothing.
    for (const signature of [await sshSign(key.path, 'not the token', 'gitea'), await sshSign(key.path, token, 'git'), await sshSign(other.path, token, 'gitea'), 'junk']) {
      const refused = await web.submit(alice, '/user/settings/keys', { type: 'verify_ssh', fingerprint, signature }, { from: '/user/settings/keys' })
      expect([refused.status, refused.html]).toEqual([422, expect.stringContaining('do not match or token is out of date')])
    }
    expect(await verificationOf(early)).toEqual(expect.objectContaining({ verified: false }))
    const verified = await web.submit(alice, '/user/settings/keys', { type: 'verify_ssh', fingerprint, signature: await sshSign(key.path, token, 'gitea') }, { from: '/user/settings/keys' })
    expect([verified.status, verified.location]).toEqual([303, '/user/settings/keys?done=key-verified'])
    expect(await (await web.page('/user/settings/keys', cookie)).text()).toContain(`<code>${fingerprint}</code> <span class="label signature-verified">Verified</span>`)

    // Now the same commit is verified, with Gitea's reason (the user and the key's fingerprint).
    expect(await verificationOf(early)).toEqual({
      verified: true,
      reason: `alice / ${fingerprint}`,
      signature: expect.stringMatching(/^-----BEGIN SSH SIGNATURE-----\n[\s\S]*-----END SSH SIGNATURE-----\n$/),
      signer: { name: 'alice', email: 'alice@example.com', username: 'alice' },
      payload: expect.stringContaining('signed before the key was verified'),
    })
    const byOther = await sshSignedCommit(other.path, 'signed by the key not verified')
    expect((await pushTo('main')).code).toBe(0)
    expect(await verificationOf(byOther)).toEqual(expect.objectContaining({ verified: false, reason: 'gpg.error.no_gpg_keys_found' }))
    const commitPage = await (await fetch(`${s.url}/alice/ssh-signed/commit/${early}`)).text()
    expect(commitPage).toContain(`Signed by <a href="/alice">alice</a> · SSH key <code>${fingerprint}</code>`)

    // A branch requiring signed commits takes the verified key's commits, refuses the other's.
    expect((await s.post('/repos/alice/ssh-signed/branch_protections', { rule_name: 'main', enable_push: true, require_signed_commits: true }, { token: alice.token })).status).toBe(201)
    const good = await sshSignedCommit(key.path, 'signed by the verified key')
    expect((await pushTo('main')).code).toBe(0)
    const bad = await sshSignedCommit(other.path, 'signed by the other key')
    expect((await pushTo('main')).stderr).toContain(`branch main is protected from unverified commit ${bad}`)
    expect((await s.get('/repos/alice/ssh-signed/branches/main', { token: alice.token })).body.commit.id).toBe(good)
  })

  test('a GPG key is verified on the keys page by its signature of the token', async () => {
    const { privateKey, publicKey } = await openpgp.generateKey({ type: 'curve25519', userIDs: [{ name: 'alice', email: 'alice@example.com' }], format: 'object' })
    expect((await s.post('/user/gpg_keys', { armored_public_key: publicKey.armor() }, { token: alice.token })).status).toBe(201)
    const keyId = privateKey.getKeyID().toHex().toUpperCase()
    const cookie = await web.signIn(alice)
    const page = await (await web.page('/user/settings/keys', cookie)).text()
    expect(page).toContain(`--default-key ${keyId} --detach-sig`)
    const token = /echo (?:'|&#39;|&#x27;)([0-9a-f]{64})/.exec(page)![1]!
    expect((await s.get('/user/gpg_keys', { token: alice.token })).body.find((k: { key_id: string }) => k.key_id === keyId).verified).toBe(false)
    const sign = async (text: string) => (await openpgp.sign({ message: await openpgp.createMessage({ text }), signingKeys: privateKey, detached: true, format: 'armored' })) as string
    const refused = await web.submit(alice, '/user/settings/keys', { type: 'verify_gpg', key_id: keyId, signature: await sign('not the token') }, { from: '/user/settings/keys' })
    expect(refused.status).toBe(422)
    const done = await web.submit(alice, '/user/settings/keys', { type: 'verify_gpg', key_id: keyId, signature: await sign(token) }, { from: '/user/settings/keys' })
    expect([done.status, done.location]).toEqual([303, '/user/settings/keys?done=key-verified'])
    expect((await s.get('/user/gpg_keys', { token: alice.token })).body.find((k: { key_id: string }) => k.key_id === keyId).verified).toBe(true)
  })
})
