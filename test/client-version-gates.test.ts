/**
 * The version Warren reports (src/version.ts: 1.23.0) and, for each gate the clients put between
 * 1.17 and 1.23, the call a client makes once the gate opens, against a real server: the Go SDK's
 * HTTP signatures (ed25519, and RSA with rsa-sha2-256 as from 1.23), its LFS-or-raw read, compare
 * and tag protections; Renovate's reviewers and native auto-merge body; the Actions routes behind
 * refusal-only gates; the Terraform provider's token without scopes.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto'
import { giteaApi, type Api } from 'gitea-js'
import { eq } from 'drizzle-orm'
import { pullRequests } from '../src/db/schema'
import { startPullChecker } from '../src/jobs/pull-checker'
import { startAutoMerger } from '../src/jobs/auto-merger'
import { GITEA_API_VERSION } from '../src/version'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { git, gitOk } from './git-fixture'
import { commitOn, pushedRepo } from './pull-fixtures'
import { fails, ok } from './gitea-calls'
import { until } from './webhook-receiver'

let s: TestServer
let alice: TestUser
let asAlice: Api<unknown>
let dir = ''
const dirs: string[] = []
const O = 'alice'
const R = 'gates'

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  asAlice = giteaApi(s.url, { token: alice.token })
  dir = (await pushedRepo(s, alice, R, dirs)).dir
})
afterAll(async () => {
  await s.stop()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})

/** Parses a version as node-semver and hashicorp's go-version do: major.minor.patch, build metadata ignored. */
const versionOf = (v: string) => /^(\d+)\.(\d+)\.(\d+)(?:\+[0-9A-Za-z.-]+)?$/.exec(v)!.slice(1, 4).map(Number)
const atLeast = (v: string, min: string) => {
  const [a, b] = [versionOf(v), versionOf(min)]
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i]! > b[i]!
  return true
}

describe('the version clients compare', () => {
  test('GET /version is 1.23.0 with Warren\'s own version as build metadata, never read as Forgejo', async () => {
    const { version } = await ok(giteaApi(s.url, {}).version.getVersion())
    expect(version).toMatch(/^1\.23\.0\+warren-[0-9A-Za-z.-]+$/)
    expect(version!.startsWith(GITEA_API_VERSION)).toBe(true)
    expect(version).not.toContain('gitea-')
    // Go SDK gates up to 1.23 open; Renovate 44's native auto-merge (1.24) stays closed.
    for (const gate of ['1.17.0', '1.21.0', '1.22.0', '1.23.0']) expect(atLeast(version!, gate)).toBe(true)
    expect(atLeast(version!, '1.24.0')).toBe(false)
  })
})

// ---- HTTP signatures, signed as the Go SDK signs them (go-fed / 42wim httpsig, SSH signers) ----

/** An SSH key pair as a user adds it: the OpenSSH public line, its fingerprint, and the signer. */
function sshKey(kind: 'ed25519' | 'rsa') {
  const { publicKey, privateKey } = kind === 'ed25519' ? generateKeyPairSync('ed25519') : generateKeyPairSync('rsa', { modulusLength: 2048 })
  const jwk = publicKey.export({ format: 'jwk' })
  const str = (b: Buffer) => Buffer.concat([Buffer.from([0, 0, 0, 0].map((_, i) => (b.length >>> (24 - 8 * i)) & 255)), b])
  const mpint = (b64url: string) => {
    const b = Buffer.from(b64url, 'base64url')
    return str(b[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), b]) : b)
  }
  const type = kind === 'ed25519' ? 'ssh-ed25519' : 'ssh-rsa'
  const blob =
    kind === 'ed25519'
      ? Buffer.concat([str(Buffer.from(type)), str(Buffer.from(jwk.x!, 'base64url'))])
      : Buffer.concat([str(Buffer.from(type)), mpint(jwk.e!), mpint(jwk.n!)])
  const fingerprint = 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')
  return { line: `${type} ${blob.toString('base64')} ${kind}@gates`, fingerprint, privateKey, kind }
}
type SshKey = ReturnType<typeof sshKey>

interface SignOptions {
  created?: number
  lifetime?: number
  headers?: string[]
  keyId?: string
  /** The hash of an RSA signature (the SDK's: sha256 from 1.23, sha1 before). */
  rsaHash?: string
  /** Sent instead of the body that was signed (and digested). */
  sendBody?: string
  /** The body as it is, not as JSON (with `contentType`). */
  rawBody?: string
  contentType?: string
  omitDigest?: boolean
  /** Sent as `Authorization: Signature ...` (go-fed's other scheme) instead of a `Signature` header. */
  inAuthorization?: boolean
  extraHeaders?: Record<string, string>
}

/** A request signed as the SDK's `SignRequest` does: (request-target), (created), (expires), and Digest when there is a body. */
async function signed(key: SshKey, method: string, path: string, body?: unknown, o: SignOptions = {}) {
  const created = o.created ?? Math.floor(Date.now() / 1000)
  const expires = created + (o.lifetime ?? 10)
  const text = o.rawBody ?? (body === undefined ? undefined : JSON.stringify(body))
  const headers: Record<string, string> = { ...o.extraHeaders }
  const names = o.headers ?? ['(request-target)', '(created)', '(expires)', ...(text !== undefined && !o.omitDigest ? ['digest'] : [])]
  if (text !== undefined) {
    headers['content-type'] = o.contentType ?? 'application/json'
    if (!o.omitDigest) headers.digest = 'SHA-512=' + createHash('sha512').update(text).digest('base64')
  }
  const q = path.indexOf('?')
  const decodedPath = decodeURIComponent(q < 0 ? path : path.slice(0, q))
  const lines = names.map((n) => {
    if (n === '(request-target)') return `(request-target): ${method.toLowerCase()} ${decodedPath}${q < 0 ? '' : path.slice(q)}`
    if (n === '(created)') return `(created): ${created}`
    if (n === '(expires)') return `(expires): ${expires}`
    return `${n}: ${headers[n]}`
  })
  const data = Buffer.from(lines.join('\n'))
  const signature = (key.kind === 'ed25519' ? sign(null, data, key.privateKey as KeyObject) : sign(o.rsaHash ?? 'sha256', data, key.privateKey as KeyObject)).toString('base64')
  const params = `keyId="${o.keyId ?? key.fingerprint}",algorithm="hs2019",created=${created},expires=${expires},headers="${names.join(' ')}",signature="${signature}"`
  if (o.inAuthorization) headers.authorization = `Signature ${params}`
  else headers.signature = params
  const res = await fetch(`${s.url}${path}`, { method, headers, body: o.sendBody ?? text })
  const answer = await res.text()
  return { status: res.status, body: answer ? JSON.parse(answer) : null }
}

describe('Go SDK 1.17 / 1.23: requests signed with an SSH key', () => {
  let ed: SshKey, rsa: SshKey, stranger: SshKey
  beforeAll(async () => {
    ;[ed, rsa, stranger] = [sshKey('ed25519'), sshKey('rsa'), sshKey('ed25519')]
    for (const [k, title] of [[ed, 'ed'], [rsa, 'rsa']] as const)
      expect((await s.post('/user/keys', { title, key: k.line }, { token: alice.token })).status).toBe(201)
  })

  test('an ed25519 and an RSA signature (rsa-sha2-256; SHA-1 of older SDKs, SHA-512 as Gitea 1.23) sign the key\'s owner in', async () => {
    for (const [key, rsaHash] of [[ed], [rsa], [rsa, 'sha1'], [rsa, 'sha512']] as const) {
      const r = await signed(key, 'GET', '/api/v1/user', undefined, { rsaHash })
      expect(r.status).toBe(200)
      expect(r.body.login).toBe('alice')
    }
    expect((await signed(rsa, 'GET', '/api/v1/user', undefined, { rsaHash: 'sha384' })).status).toBe(401)
    const viaAuthorization = await signed(ed, 'GET', '/api/v1/user', undefined, { inAuthorization: true })
    expect([viaAuthorization.status, viaAuthorization.body.login]).toEqual([200, 'alice'])
    // A private repository's record: the signature carries the owner's rights.
    expect((await s.patch(`/repos/${O}/${R}`, { private: true }, { token: alice.token })).status).toBe(200)
    expect((await signed(ed, 'GET', `/api/v1/repos/${O}/${R}`)).status).toBe(200)
    expect((await fetch(`${s.url}/api/v1/repos/${O}/${R}`)).status).toBe(404)
    expect((await s.patch(`/repos/${O}/${R}`, { private: false }, { token: alice.token })).status).toBe(200)
  })

  test('the request target is the decoded path with the raw query, as Go\'s URL.Path', async () => {
    const r = await signed(ed, 'GET', '/api/v1/repos/search?q=ga%20tes&limit=5')
    expect(r.status).toBe(200)
    const file = await signed(ed, 'GET', `/api/v1/repos/${O}/${R}/contents/a%2Etxt`)
    expect(file.status).toBe(200)
    expect(file.body.name).toBe('a.txt')
  })

  test('a body is covered by its Digest: signed and matching writes; a different body is 400', async () => {
    const made = await signed(rsa, 'POST', '/api/v1/user/repos', { name: 'signed-repo' })
    expect(made.status).toBe(201)
    expect(made.body.owner.login).toBe('alice')
    const swapped = await signed(ed, 'POST', '/api/v1/user/repos', { name: 'signed-other' }, { sendBody: JSON.stringify({ name: 'swapped' }) })
    expect(swapped.status).toBe(400)
    expect(swapped.body.message).toContain('Digest')
    const undigested = await signed(ed, 'POST', '/api/v1/user/repos', { name: 'no-digest' }, { omitDigest: true })
    expect(undigested.status).toBe(401)
    expect(undigested.body.message).toContain('Digest')
    // A signed Digest must name SHA-256 or SHA-512; an unsigned request's other algorithms are passed over (RFC 3230).
    const md5 = await signed(ed, 'POST', '/api/v1/user/repos', { name: 'md5' }, { headers: ['(request-target)', '(created)', '(expires)', 'digest'], extraHeaders: { digest: 'MD5=AAAA' }, omitDigest: true })
    expect(md5.status).toBe(400)
    const post = (digest: string, name: string) =>
      fetch(`${s.url}/api/v1/user/repos`, { method: 'POST', headers: { authorization: `token ${alice.token}`, 'content-type': 'application/json', digest }, body: JSON.stringify({ name }) })
    expect((await post('MD5=AAAA', 'unsigned-md5')).status).toBe(201)
    expect((await post('SHA-256=' + createHash('sha256').update('{}').digest('base64'), 'wrong-sha')).status).toBe(400)
    expect((await s.get('/repos/alice/md5', { token: alice.token })).status).toBe(404)
    expect((await s.get('/repos/alice/swapped', { token: alice.token })).status).toBe(404)
    expect((await s.get('/repos/alice/no-digest', { token: alice.token })).status).toBe(404)
  })

  test('refused with the reason (401, the API\'s error shape): unknown key, wrong signature, expired, too long, uncovered time or target, certificate', async () => {
    const cases: [string, Promise<{ status: number; body: any }>, string][] = [
      ['unknown key', signed(stranger, 'GET', '/api/v1/user'), 'fingerprint'],
      ['signed by another key', signed(stranger, 'GET', '/api/v1/user', undefined, { keyId: ed.fingerprint }), 'verification failed'],
      ['expired', signed(ed, 'GET', '/api/v1/user', undefined, { created: Math.floor(Date.now() / 1000) - 3600 }), 'time'],
      ['valid for a day', signed(ed, 'GET', '/api/v1/user', undefined, { lifetime: 86400 }), 'too long'],
      ['no time covered', signed(ed, 'GET', '/api/v1/user', undefined, { headers: ['(request-target)'] }), '(created) or (expires)'],
      ['no target covered', signed(ed, 'GET', '/api/v1/user', undefined, { headers: ['(created)', '(expires)'] }), '(request-target)'],
      ['certificate', signed(ed, 'GET', '/api/v1/user', undefined, { extraHeaders: { 'x-ssh-certificate': 'AAAA' } }), 'certificate authority'],
    ]
    for (const [what, call, reason] of cases) {
      const r = await call
      expect([what, r.status]).toEqual([what, 401])
      expect(r.body).toEqual({ message: expect.stringContaining(reason), url: expect.any(String) })
    }
    const malformed = await fetch(`${s.url}/api/v1/user`, { headers: { signature: 'keyId=nope' } })
    expect(malformed.status).toBe(401)
    // A wrong signature on the request path: the target is part of what was signed.
    const good = await signed(ed, 'GET', '/api/v1/user')
    expect(good.status).toBe(200)
  })

  test("a deploy key, a barred account's key, sudo, token creation and oversized headers: each refused with its reason", async () => {
    // A deploy key opens one repository over SSH; it signs no API request in.
    const deploy = sshKey('ed25519')
    expect((await s.post(`/repos/${O}/${R}/keys`, { title: 'ci', key: deploy.line, read_only: true }, { token: alice.token })).status).toBe(201)
    const byDeploy = await signed(deploy, 'GET', '/api/v1/user')
    expect([byDeploy.status, byDeploy.body.message]).toEqual([401, expect.stringContaining('fingerprint')])
    // A key of an account barred from signing in (prohibited, or not active) is refused as its password would be.
    const root = await s.user('gates-root', { admin: true })
    const dora = await s.user('dora')
    const doraKey = sshKey('ed25519')
    expect((await s.post('/user/keys', { title: 'dora', key: doraKey.line }, { token: dora.token })).status).toBe(201)
    expect((await signed(doraKey, 'GET', '/api/v1/user')).body.login).toBe('dora')
    for (const bar of [{ prohibit_login: true }, { active: false }]) {
      expect((await s.patch('/admin/users/dora', { login_name: 'dora', source_id: 0, ...bar }, { token: root.token })).status).toBe(200)
      const barred = await signed(doraKey, 'GET', '/api/v1/user')
      expect([barred.status, barred.body.message]).toEqual([403, expect.stringContaining('prohibited')])
      expect((await s.patch('/admin/users/dora', { login_name: 'dora', source_id: 0, prohibit_login: false, active: true }, { token: root.token })).status).toBe(200)
    }
    // sudo: only an administrator's signature acts as another user.
    expect((await signed(ed, 'GET', '/api/v1/user?sudo=dora')).status).toBe(403)
    const rootKey = sshKey('ed25519')
    expect((await s.post('/user/keys', { title: 'root', key: rootKey.line }, { token: root.token })).status).toBe(201)
    const asDora = await signed(rootKey, 'GET', '/api/v1/user?sudo=dora')
    expect([asDora.status, asDora.body.login]).toEqual([200, 'dora'])
    // A signature is a token's full rights (as Gitea's), not a password: it makes no access token.
    const token = await signed(ed, 'POST', '/api/v1/users/alice/tokens', { name: 'from-a-signature', scopes: ['all'] })
    expect(token.status).toBe(401)
    expect(token.body.message).toContain('Basic')
    // Oversized or malformed headers: 401 at once, whatever their length.
    for (const header of ['keyId="' + 'A'.repeat(9000) + '",signature="AAAA"', ' '.repeat(8000) + 'x', 'keyId="a",signature="@@@"', 'keyId="a"'.repeat(500)]) {
      const r = await fetch(`${s.url}/api/v1/user`, { headers: { signature: header } })
      expect(r.status).toBe(401)
      expect(await r.json()).toEqual({ message: expect.any(String), url: expect.any(String) })
    }
  })

  test("a release asset's upload, streamed to disk, is held to its Digest too: the signed bytes are stored, other bytes are 400 and nothing is kept", async () => {
    const release = await s.post(`/repos/${O}/${R}/releases`, { tag_name: 'v-signed', target_commitish: 'main', name: 'signed' }, { token: alice.token })
    expect(release.status).toBe(201)
    const boundary = 'warrenSignedBoundary'
    const multipart = (content: string) =>
      `--${boundary}\r\nContent-Disposition: form-data; name="attachment"; filename="notes.txt"\r\nContent-Type: text/plain\r\n\r\n${content}\r\n--${boundary}--\r\n`
    const path = `/api/v1/repos/${O}/${R}/releases/${release.body.id}/assets`
    const o = { contentType: `multipart/form-data; boundary=${boundary}` }
    const swapped = await signed(ed, 'POST', path, undefined, { ...o, rawBody: multipart('signed text'), sendBody: multipart('other text!') })
    expect([swapped.status, swapped.body.message]).toEqual([400, expect.stringContaining('Digest')])
    const undigested = await signed(ed, 'POST', path, undefined, { ...o, rawBody: multipart('signed text'), omitDigest: true })
    expect([undigested.status, undigested.body.message]).toEqual([401, expect.stringContaining('Digest')])
    expect((await s.get(`/repos/${O}/${R}/releases/${release.body.id}/assets`, { token: alice.token })).body).toEqual([])
    const made = await signed(ed, 'POST', path, undefined, { ...o, rawBody: multipart('signed text') })
    expect(made.status).toBe(201)
    expect(made.body).toMatchObject({ name: 'notes.txt', size: 'signed text'.length })
    const served = await fetch(made.body.browser_download_url)
    expect(await served.text()).toBe('signed text')
  })

  test('a key removed from the account signs in no more', async () => {
    const keys = (await s.get('/user/keys', { token: alice.token })).body as { id: number; fingerprint: string }[]
    const rsaId = keys.find((k) => k.fingerprint === rsa.fingerprint)!.id
    expect((await s.del(`/user/keys/${rsaId}`, undefined, { token: alice.token })).status).toBe(204)
    expect((await signed(rsa, 'GET', '/api/v1/user')).status).toBe(401)
  })
})

describe('Go SDK 1.17, 1.22, 1.23: the calls behind the gates', () => {
  test('1.17 GetFileReader(resolveLFS): GET /media/{path}?ref= serves the file', async () => {
    const r = await fetch(`${s.url}/api/v1/repos/${O}/${R}/media/a.txt?ref=main`)
    expect(r.status).toBe(200)
    expect(await r.text()).toBe('one\n')
    await fails(asAlice.repos.repoGetRawFileOrLfs(O, R, 'nope.txt', { ref: 'main' }), 404)
  })

  test('1.22 CompareCommits: GET /compare/{base}...{head} answers total_commits and commits', async () => {
    await gitOk(dir, 'fetch', '-q', 'origin', 'main')
    const head = await commitOn(dir, 'cmp', { 'cmp.txt': 'cmp\n' }, 'compare me', 'FETCH_HEAD')
    await gitOk(dir, 'push', '-q', 'origin', 'cmp')
    const c = await ok(asAlice.repos.repoCompareDiff(O, R, 'main...cmp'))
    expect(c.total_commits).toBe(1)
    expect(c.commits!.map((x) => x.sha)).toEqual([head])
    expect(c.commits![0]!.commit!.message).toBe('compare me\n')
  })

  test('1.23 tag protections: list, create, get, edit, delete', async () => {
    expect(await ok(asAlice.repos.repoListTagProtection(O, R))).toEqual([])
    const made = await ok(asAlice.repos.repoCreateTagProtection(O, R, { name_pattern: 'v*', whitelist_usernames: ['alice'] }), 201)
    expect(made).toMatchObject({ name_pattern: 'v*', whitelist_usernames: ['alice'], whitelist_teams: [] })
    expect(await ok(asAlice.repos.repoGetTagProtection(O, R, made.id!))).toMatchObject({ id: made.id, name_pattern: 'v*' })
    const edited = await ok(asAlice.repos.repoEditTagProtection(O, R, made.id!, { name_pattern: 'release-*' }))
    expect(edited.name_pattern).toBe('release-*')
    expect((await asAlice.repos.repoDeleteTagProtection(O, R, made.id!)).status).toBe(204)
    expect(await ok(asAlice.repos.repoListTagProtection(O, R))).toEqual([])
  })

  test('1.21 / 1.22 Actions secrets, variables and runners: the SDK\'s calls answer as Gitea\'s', async () => {
    expect(await ok(asAlice.repos.repoListActionsSecrets(O, R))).toEqual([])
    expect(await ok(asAlice.repos.getRepoVariablesList(O, R))).toEqual([])
    const token = await fetch(`${s.url}/api/v1/repos/${O}/${R}/actions/runners/registration-token`, { headers: { authorization: `token ${alice.token}` } })
    expect(token.status).toBe(200)
    expect((await token.json()).token).toMatch(/^[0-9a-f]{40}$/)
  })

  test('the Go SDK\'s file bodies: dates left unset are Go\'s zero time, taken as now as Gitea does', async () => {
    const zero = '0001-01-01T00:00:00Z'
    const before = Math.floor(Date.now() / 1000) - 5
    const made = await ok(asAlice.repos.repoCreateFile(O, R, 'sdk.txt', { content: 'aGVsbG8K', dates: { author: zero, committer: zero } }), 201)
    for (const who of [made.commit!.author!, made.commit!.committer!]) expect(Date.parse(who.date!) / 1000).toBeGreaterThanOrEqual(before)
    // Any other date before 1970 stays out of range.
    await fails(asAlice.repos.repoCreateFile(O, R, 'old.txt', { content: 'aGVsbG8K', dates: { author: '1969-12-31T00:00:00Z' } }), 422)
  })

  test('the Terraform provider from 1.20 creates tokens without scopes: 400, as Gitea 1.23', async () => {
    const r = await fetch(`${s.url}/api/v1/users/alice/tokens`, {
      method: 'POST',
      headers: { authorization: 'Basic ' + Buffer.from(`alice:${alice.password}`).toString('base64'), 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'terraform' }),
    })
    expect(r.status).toBe(400)
    expect((await r.json()).message).toContain('scope')
  })
})

describe('Go SDK bodies: null for what a Go client leaves unset, read as left out (as Gitea\'s Go decoding does)', () => {
  test('a pull request, a review, a branch protection and an issue edit as the Go SDK marshals them', async () => {
    await gitOk(dir, 'fetch', '-q', 'origin', 'main')
    await commitOn(dir, 'go-sdk', { 'go.txt': 'go\n' }, 'go', 'FETCH_HEAD')
    await gitOk(dir, 'push', '-q', 'origin', 'go-sdk')
    const ms = await ok(asAlice.repos.issueCreateMilestone(O, R, { title: 'm1' }), 201)
    const post = (path: string, body: unknown, method = 'POST') =>
      fetch(`${s.url}/api/v1/repos/${O}/${R}${path}`, { method, headers: { authorization: `token ${alice.token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })
    // CreatePullRequestOption: nil slices and a nil time are null.
    const pr = await post('/pulls', { head: 'go-sdk', base: 'main', title: 'Go', body: '', assignee: '', assignees: null, milestone: ms.id, labels: null, due_date: null })
    expect(pr.status).toBe(201)
    const pull = (await pr.json()) as { number: number; milestone: { id: number } }
    expect(pull.milestone.id).toBe(ms.id!)
    // CreatePullReviewOptions without line comments.
    const review = await post(`/pulls/${pull.number}/reviews`, { event: 'COMMENT', body: 'looks fine', commit_id: '', comments: null })
    expect(review.status).toBe(200)
    // CreateBranchProtectionOption with every list left unset.
    const rule = await post('/branch_protections', {
      branch_name: '', rule_name: 'go-*', enable_push: true, enable_push_whitelist: false, push_whitelist_usernames: null, push_whitelist_teams: null,
      push_whitelist_deploy_keys: false, enable_merge_whitelist: false, merge_whitelist_usernames: null, merge_whitelist_teams: null,
      enable_status_check: false, status_check_contexts: null, required_approvals: 0, enable_approvals_whitelist: false,
      approvals_whitelist_username: null, approvals_whitelist_teams: null, block_on_rejected_reviews: false, block_on_official_review_requests: false,
      block_on_outdated_branch: false, dismiss_stale_approvals: false, require_signed_commits: false, protected_file_patterns: '', unprotected_file_patterns: '',
    })
    expect(rule.status).toBe(201)
    expect(await rule.json()).toMatchObject({ rule_name: 'go-*', push_whitelist_usernames: [], status_check_contexts: [] })
    // EditIssueOption of `tea pr close`: only the state set, every pointer null; nothing else changes.
    await ok(asAlice.repos.issueEditIssue(O, R, pull.number, { due_date: '2032-01-01T00:00:00Z', assignees: ['alice'] }), 201)
    const closed = await post(`/issues/${pull.number}`, { title: '', body: null, ref: null, assignee: null, assignees: null, milestone: null, state: 'closed', due_date: null, unset_due_date: null }, 'PATCH')
    expect(closed.status).toBe(201)
    expect(await closed.json()).toMatchObject({ state: 'closed', title: 'Go', milestone: { id: ms.id }, due_date: '2032-01-01T00:00:00Z', assignees: [{ login: 'alice' }] })
    // A required field that takes null keeps it: the deadline route clears with it.
    const cleared: { due_date?: string | null } = await ok(asAlice.repos.issueEditIssueDeadline(O, R, pull.number, { due_date: null as unknown as string }), 201)
    expect(cleared).toEqual({ due_date: null })
  })
})

describe('Renovate: reviewers (1.14) and native auto-merge (1.17 before Renovate 44, 1.24 in it)', () => {
  // The pull-checker and the auto-merge job, as `warren serve` runs them.
  let checker: ReturnType<typeof startPullChecker>
  let merger: Awaited<ReturnType<typeof startAutoMerger>>
  beforeAll(async () => {
    checker = startPullChecker(s.deps)
    merger = await startAutoMerger(s.deps, { pollMs: 10 })
    await s.user('bob')
    expect((await s.put(`/repos/${O}/${R}/collaborators/bob`, { permission: 'write' }, { token: alice.token })).status).toBe(204)
  })
  afterAll(async () => {
    await merger.stop()
    await checker.stop()
  })
  const pullOf = async (index: number) => (await s.deps.db.select().from(pullRequests).where(eq(pullRequests.index, index)))[0]!
  const isMerged = async (index: number) => (await asAlice.repos.repoPullRequestIsMerged(O, R, index).catch((e) => e)).status === 204

  test('the pull request Renovate opens: reviewers asked, then merged by Gitea when its check succeeds, head branch deleted', async () => {
    await gitOk(dir, 'fetch', '-q', 'origin', 'main')
    const head = await commitOn(dir, 'renovate/dep', { 'dep.txt': 'v2\n' }, 'Update dep', 'FETCH_HEAD')
    await gitOk(dir, 'push', '-q', 'origin', 'renovate/dep')
    const pull = await ok(asAlice.repos.repoCreatePullRequest(O, R, { head: 'renovate/dep', base: 'main', title: 'Update dep' }), 201)
    await checker.drain()
    expect((await pullOf(pull.number!)).headSha).toBe(head)
    const asked = await ok(asAlice.repos.repoCreatePullReviewRequests(O, R, pull.number!, { reviewers: ['bob'] }), 201)
    expect(asked.map((r) => [r.state, r.user?.login])).toEqual([['REQUEST_REVIEW', 'bob']])
    await ok(asAlice.repos.repoCreateStatus(O, R, head, { state: 'pending', context: 'ci/test' }), 201)
    // Renovate's body, as its gitea platform sends it.
    const r = await asAlice.repos.repoMergePullRequest(O, R, pull.number!, { Do: 'merge', merge_when_checks_succeed: true, delete_branch_after_merge: true })
    expect(r.status).toBe(201)
    await merger.drained()
    expect(await isMerged(pull.number!)).toBe(false)
    await ok(asAlice.repos.repoCreateStatus(O, R, head, { state: 'success', context: 'ci/test' }), 201)
    await until(() => isMerged(pull.number!), 'the scheduled merge')
    await until(async () => (await git(dir, 'ls-remote', '--exit-code', 'origin', 'refs/heads/renovate/dep')).code !== 0, 'the head branch deleted')
  })
})
