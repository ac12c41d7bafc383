import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as openpgp from 'openpgp'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { git, gitOk, remoteUrl, tempDir } from './git-fixture'

/**
 * A branch protection rule's require_signed_commits (Gitea's verifyCommits): a push brings only
 * commits signed by a GPG key of their committer (a key naming the committer's activated address),
 * checked in git's pre-receive hook, over the real git client; unsigned commits, those signed by an
 * unknown key or by someone else's, are refused and nothing moves. The server signs nothing, so
 * its own commits (the contents API) are refused there too, as Gitea's without a signing key.
 */

let s: TestServer
let alice: TestUser
let bob: TestUser
let aliceKey: openpgp.PrivateKey
let strangerKey: openpgp.PrivateKey
let work: string
const dirs: string[] = []

/** A fresh curve25519 key for `email`; added to `user`'s GPG keys through the API when given. */
async function newKey(email: string, user?: TestUser): Promise<openpgp.PrivateKey> {
  const { privateKey, publicKey } = await openpgp.generateKey({ type: 'curve25519', userIDs: [{ name: email, email }], format: 'object' })
  if (user) expect((await s.post('/user/gpg_keys', { armored_public_key: publicKey.armor() }, { token: user.token })).status).toBe(201)
  return privateKey
}

/**
 * Writes a commit on top of `parent` (its tree, a new message) into the work repository, as git
 * writes a signed one: the `gpgsig` header holds an armored detached signature of the object
 * without it. Answers its id.
 */
async function commitOn(parent: string, message: string | Buffer, committer: string, key?: openpgp.PrivateKey, extraHeaders: string[] = []): Promise<string> {
  const tree = (await gitOk(work, 'rev-parse', `${parent}^{tree}`)).trim()
  const when = Math.floor(Date.now() / 1000)
  const person = `${committer.split('@')[0]} <${committer}> ${when} +0000`
  const headers = [`tree ${tree}`, `parent ${parent}`, `author ${person}`, `committer ${person}`, ...extraHeaders]
  // The message as bytes: it may be in another encoding than UTF-8 (an `encoding` header says which).
  const body = Buffer.concat([Buffer.from('\n'), typeof message === 'string' ? Buffer.from(message) : message, Buffer.from('\n')])
  let object = Buffer.concat([Buffer.from(`${headers.join('\n')}\n`), body])
  if (key) {
    const signed = await openpgp.sign({ message: await openpgp.createMessage({ binary: new Uint8Array(object) }), signingKeys: key, detached: true, format: 'armored' })
    const lines = (signed as string).trimEnd().split('\n')
    object = Buffer.concat([Buffer.from(`${headers.join('\n')}\ngpgsig ${lines.join('\n ')}\n`), body])
  }
  const file = join(work, '.git', `${crypto.randomUUID()}.commit`)
  writeFileSync(file, object)
  // --literally: the odd objects some tests write (two committers, an oversized signature) as a client could push them.
  return (await gitOk(work, 'hash-object', '-t', 'commit', '-w', '--literally', file)).trim()
}

const pushTo = (ref: string, commit: string) => git(work, 'push', remoteUrl(s.url, 'alice/signed.git', 'alice', alice.password), `${commit}:refs/heads/${ref}`)
const headOf = async (branch: string) => (await s.get(`/repos/alice/signed/branches/${branch}`, { token: alice.token })).body?.commit?.id as string | undefined

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  aliceKey = await newKey('alice@example.com', alice)
  strangerKey = await newKey('alice@example.com')
  expect((await s.post('/user/repos', { name: 'signed', auto_init: true }, { token: alice.token })).status).toBe(201)
  expect((await s.put('/repos/alice/signed/collaborators/bob', { permission: 'write' }, { token: alice.token })).status).toBe(204)
  for (const rule_name of ['main', 'release/*'])
    expect((await s.post('/repos/alice/signed/branch_protections', { rule_name, enable_push: true, require_signed_commits: true }, { token: alice.token })).status).toBe(201)
  work = tempDir()
  dirs.push(work)
  await gitOk(work, 'clone', '-q', remoteUrl(s.url, 'alice/signed.git', 'alice', alice.password), '.')
})
afterAll(() => s.stop())

describe('require_signed_commits', () => {
  test("a push of a commit signed by its committer's key is taken; unsigned, unknown-key and someone else's are refused, nothing moving", async () => {
    const main = (await headOf('main'))!
    for (const [why, commit] of [
      ['unsigned', await commitOn(main, 'unsigned', 'alice@example.com')],
      ['an unknown key', await commitOn(main, 'by a key Warren does not hold', 'alice@example.com', strangerKey)],
      ["another's address", await commitOn(main, 'committed as bob, signed by alice', 'bob@example.com', aliceKey)],
    ] as const) {
      const refused = await pushTo('main', commit)
      expect([why, refused.code !== 0, refused.stderr]).toEqual([why, true, expect.stringContaining(`branch main is protected from unverified commit ${commit}`)])
      expect(await headOf('main')).toBe(main)
    }
    const signed = await commitOn(main, 'signed', 'alice@example.com', aliceKey)
    const pushed = await pushTo('main', signed)
    expect([pushed.code, pushed.stderr]).toEqual([0, expect.any(String)])
    expect(await headOf('main')).toBe(signed)
    // Every commit a push brings is checked: a signed one on top of an unsigned one is refused.
    const unsignedBelow = await commitOn(signed, 'unsigned below', 'alice@example.com')
    const signedAbove = await commitOn(unsignedBelow, 'signed above', 'alice@example.com', aliceKey)
    expect((await pushTo('main', signedAbove)).stderr).toContain(`protected from unverified commit ${unsignedBelow}`)
    expect(await headOf('main')).toBe(signed)
  })

  test('a new branch under a rule brings only signed commits; the contents API, which signs nothing, is refused there', async () => {
    const main = (await headOf('main'))!
    const unsigned = await commitOn(main, 'release notes', 'alice@example.com')
    expect((await pushTo('release/1.0', unsigned)).stderr).toContain(`protected from unverified commit ${unsigned}`)
    expect(await headOf('release/1.0')).toBeUndefined()
    // Made from a signed branch's commits alone, it brings none: taken.
    expect((await pushTo('release/1.0', main)).code).toBe(0)
    const file = { content: Buffer.from('x\n').toString('base64'), message: 'From the API', branch: 'main' }
    const written = await s.post('/repos/alice/signed/contents/api.txt', file, { token: alice.token })
    expect([written.status, written.body.message]).toEqual([403, expect.stringContaining('protected from unverified commit')])
    expect(await headOf('main')).toBe(main)
    // A branch no rule names takes anything.
    expect((await pushTo('feature', unsigned)).code).toBe(0)
  })

  test('a message in Latin-1 (its bytes signed as they are) is verified', async () => {
    const main = (await headOf('main'))!
    const latin1 = await commitOn(main, Buffer.from([0x63, 0x61, 0x66, 0xe9]), 'alice@example.com', aliceKey, ['encoding ISO-8859-1'])
    const pushed = await pushTo('main', latin1)
    expect([pushed.code, pushed.stderr]).toEqual([0, expect.any(String)])
    expect(await headOf('main')).toBe(latin1)
  })

  test("a pull request into such a branch is not merged: the server would not sign the merge (Gitea's words)", async () => {
    const main = (await headOf('main'))!
    expect((await pushTo('topic', await commitOn(main, 'a topic', 'alice@example.com', aliceKey))).code).toBe(0)
    const pull = await s.post('/repos/alice/signed/pulls', { head: 'topic', base: 'main', title: 'Topic' }, { token: alice.token })
    expect(pull.status).toBe(201)
    const merged = await s.post(`/repos/alice/signed/pulls/${pull.body.number}/merge`, { Do: 'merge' }, { token: alice.token })
    expect([merged.status, merged.body.message]).toEqual([405, 'Protected branch main requires signed commits but this merge would not be signed'])
    expect(await headOf('main')).toBe(main)
  })
})

describe("a commit's verification (Gitea's PayloadCommitVerification), the same rule in the API and the pages", () => {
  test('verified by its committer\'s key, or not signed, or by no key of the committer; switched off; a branch\'s head; the pages\' marks', async () => {
    const main = (await headOf('main'))!
    const verified = await commitOn(main, 'signed by alice', 'alice@example.com', aliceKey)
    const unsigned = await commitOn(verified, 'not signed', 'alice@example.com')
    const stranger = await commitOn(unsigned, 'by a key Warren does not hold', 'alice@example.com', strangerKey)
    const others = await commitOn(stranger, "committed as bob, signed by alice's key", 'bob@example.com', aliceKey)
    expect((await pushTo('verify', others)).code).toBe(0)
    const keyId = aliceKey.getKeyID().toHex().toUpperCase()

    const list = await s.get('/repos/alice/signed/commits?sha=verify&limit=4&stat=false&files=false', { token: alice.token })
    expect(list.status).toBe(200)
    const bySha = new Map((list.body as { sha: string; commit: { verification: Record<string, unknown> } }[]).map((c) => [c.sha, c.commit.verification]))
    expect(bySha.get(verified)).toEqual({
      verified: true,
      reason: `alice / ${keyId}`,
      signature: expect.stringMatching(/^-----BEGIN PGP SIGNATURE-----\n[\s\S]*-----END PGP SIGNATURE-----\n$/),
      signer: { name: 'alice', email: 'alice@example.com', username: 'alice' },
      payload: expect.stringMatching(/^tree [0-9a-f]{40}\nparent [\s\S]*\nsigned by alice\n$/),
    })
    expect(bySha.get(unsigned)).toEqual({ verified: false, reason: 'gpg.error.not_signed_commit', signature: '', signer: null, payload: '' })
    for (const sha of [stranger, others])
      expect(bySha.get(sha)).toEqual({ verified: false, reason: 'gpg.error.no_gpg_keys_found', signature: expect.stringContaining('BEGIN PGP SIGNATURE'), signer: null, payload: expect.stringContaining('tree ') })
    // Anyone who reads the repository sees the same; `verification=false` answers null (Gitea's switch).
    expect((await s.get(`/repos/alice/signed/git/commits/${verified}`, { token: bob.token })).body.commit.verification.verified).toBe(true)
    expect((await s.get(`/repos/alice/signed/git/commits/${verified}?verification=false`, { token: alice.token })).body.commit.verification).toBeNull()
    // A branch's record verifies its head commit.
    const branch = await s.get('/repos/alice/signed/branches/verify', { token: alice.token })
    expect(branch.body.commit.verification).toEqual(expect.objectContaining({ verified: false, reason: 'gpg.error.no_gpg_keys_found' }))
    expect((await pushTo('verified-head', verified)).code).toBe(0)
    expect((await s.get('/repos/alice/signed/branches/verified-head', { token: alice.token })).body.commit.verification).toEqual(expect.objectContaining({ verified: true, reason: `alice / ${keyId}` }))

    // An annotated tag's record carries its commit's verification, as Gitea 1.23's.
    await gitOk(work, 'tag', '-a', '-m', 'a release', 'v-verified', verified)
    expect((await git(work, 'push', remoteUrl(s.url, 'alice/signed.git', 'alice', alice.password), 'refs/tags/v-verified')).code).toBe(0)
    const tagObject = (await gitOk(work, 'rev-parse', 'v-verified')).trim()
    expect((await s.get(`/repos/alice/signed/git/tags/${tagObject}`, { token: alice.token })).body.verification).toMatchObject({ verified: true, reason: `alice / ${keyId}` })

    // The pages: the history marks each signed commit; the commit page names the signer and key.
    const history = (await (await fetch(`${s.url}/alice/signed/commits/branch/verify`)).text()).split('<li>')
    const markOf = (sha: string) => /<span class="label signature signature-(\w+)"/.exec(history.find((item) => item.includes(`<code>${sha.slice(0, 10)}</code>`)) ?? '')?.[1] ?? 'none'
    expect([verified, unsigned, stranger, others].map(markOf)).toEqual(['verified', 'none', 'unverified', 'unverified'])
    const page = await (await fetch(`${s.url}/alice/signed/commit/${verified}`)).text()
    expect(page).toContain('Signed by <a href="/alice">alice</a>')
    expect(page).toContain(`<code>${keyId}</code>`)
    expect(await (await fetch(`${s.url}/alice/signed/commit/${unsigned}`)).text()).not.toContain('Signature</dt>')

    // The keys are read at each request: once alice adds the other key, the commit it signed is
    // verified (its earlier check, against her first key alone, is not reused); once her keys
    // are gone, neither is.
    expect((await s.post('/user/gpg_keys', { armored_public_key: strangerKey.toPublic().armor() }, { token: alice.token })).status).toBe(201)
    expect((await s.get(`/repos/alice/signed/git/commits/${stranger}`, { token: alice.token })).body.commit.verification).toEqual(
      expect.objectContaining({ verified: true, reason: `alice / ${strangerKey.getKeyID().toHex().toUpperCase()}` }),
    )
    const keys = await s.get('/user/gpg_keys', { token: alice.token })
    for (const k of keys.body as { id: number }[]) expect((await s.del(`/user/gpg_keys/${k.id}`, undefined, { token: alice.token })).status).toBe(204)
    for (const sha of [verified, stranger])
      expect((await s.get(`/repos/alice/signed/git/commits/${sha}`, { token: alice.token })).body.commit.verification).toEqual(expect.objectContaining({ verified: false, reason: 'gpg.error.no_gpg_keys_found' }))
  })

  test('the committer checked is the one git shows (the last header, its first address); a signature past 16 KiB is not read', async () => {
    const main = (await headOf('main'))!
    const keyed = await newKey('alice@example.com', alice)
    const when = Math.floor(Date.now() / 1000)
    const keyId = keyed.getKeyID().toHex().toUpperCase()
    // Shown as bob's (git's %ce: the first <…> of the line), signed by alice's key: not verified,
    // nor taken by a branch requiring signatures. Two committer headers (git's log shows the
    // last, for-each-ref the first): verified for neither.
    const twoAddresses = await commitOn(main, 'two addresses on one line', 'bob@example.com> <alice@example.com', keyed)
    const aliceLast = await commitOn(main, 'bob, then alice', 'bob@example.com', keyed, [`committer alice <alice@example.com> ${when} +0000`])
    const bobLast = await commitOn(main, 'alice, then bob', 'alice@example.com', keyed, [`committer bob <bob@example.com> ${when} +0000`])
    const plain = await commitOn(main, 'signed by alice as alice', 'alice@example.com', keyed)
    for (const [sha, branch] of [[twoAddresses, 'two-addresses'], [aliceLast, 'alice-last'], [bobLast, 'bob-last'], [plain, 'plain']] as const) expect((await pushTo(branch, sha)).code).toBe(0)
    const record = async (sha: string) => (await s.get(`/repos/alice/signed/git/commits/${sha}`, { token: alice.token })).body.commit
    for (const [sha, shown] of [[twoAddresses, 'bob@example.com'], [aliceLast, 'alice@example.com'], [bobLast, 'bob@example.com']] as const) {
      const c = await record(sha)
      expect([c.committer.email, c.verification.verified, c.verification.reason]).toEqual([shown, false, 'gpg.error.no_gpg_keys_found'])
      expect((await pushTo('main', sha)).stderr).toContain(`protected from unverified commit ${sha}`)
    }
    // The Branch record (its head read by for-each-ref) says the same.
    expect((await s.get('/repos/alice/signed/branches/alice-last', { token: alice.token })).body.commit.verification.verified).toBe(false)
    expect((await record(plain)).verification).toMatchObject({ verified: true, reason: `alice / ${keyId}` })

    // A signature of more than 16 KiB (packets repeated) is signed but unreadable: never parsed, not verified, not answered back.
    const tree = (await gitOk(work, 'rev-parse', `${main}^{tree}`)).trim()
    const huge = ['-----BEGIN PGP SIGNATURE-----', '', ...Array.from({ length: 400 }, () => 'A'.repeat(64)), '-----END PGP SIGNATURE-----']
    const object = `tree ${tree}\nparent ${main}\nauthor alice <alice@example.com> ${when} +0000\ncommitter alice <alice@example.com> ${when} +0000\ngpgsig ${huge.join('\n ')}\n\nhuge signature\n`
    const file = join(work, '.git', 'huge.commit')
    writeFileSync(file, object)
    const big = (await gitOk(work, 'hash-object', '-t', 'commit', '-w', '--literally', file)).trim()
    expect((await pushTo('huge', big)).code).toBe(0)
    expect((await record(big)).verification).toEqual({ verified: false, reason: 'gpg.error.extract_sign', signature: '', signer: null, payload: '' })
    expect((await pushTo('main', big)).stderr).toContain(`protected from unverified commit ${big}`)
  })
})

afterAll(() => {
  for (const d of dirs) Bun.spawnSync(['rm', '-rf', d])
})
