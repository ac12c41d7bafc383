import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { createHash, randomBytes } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { webVisitors } from './web-session'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { remoteUrl, sh, tempDir } from './git-fixture'
import { lfsMetaObjects } from '../src/db/schema'
import { objectPath, repairLfsObjects } from '../src/modules/lfs/store'

/**
 * The Git LFS server with the real git-lfs client: a push over HTTP uploads the tracked files'
 * objects through the batch API, a clone elsewhere downloads them; the endpoints' rules (readers
 * download, writers upload, the per-repository meta objects, verified uploads, the size limit,
 * locks) through the API itself; `git-lfs-authenticate` over the SSH server.
 */

let s: TestServer
let alice: TestUser, reader: TestUser, stranger: TestUser
let lfsConfig: string
const dirs: string[] = []
const temp = () => {
  const d = tempDir('warren-lfs-')
  dirs.push(d)
  return d
}
const MAX = 200_000
const data = randomBytes(50_000)
const oidOf = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex')
const dataOid = oidOf(data)

/** git with git-lfs's filters configured (as `git lfs install` writes them), in `cwd`. */
const lfsGit = (cwd: string, ...args: string[]) => sh(['git', ...args], cwd, { GIT_CONFIG_GLOBAL: lfsConfig })
async function lfsGitOk(cwd: string, ...args: string[]): Promise<string> {
  const r = await lfsGit(cwd, ...args)
  if (r.code !== 0) throw new Error(`git ${args.join(' ')} failed (${r.code}): ${r.stderr}`)
  return r.stdout.trim()
}

const LFS = 'application/vnd.git-lfs+json'
/** A request to the LFS endpoints of `repo` (`owner/name`), with Basic credentials of `who` (none: anonymous). */
async function lfs(method: string, repo: string, path: string, opts: { who?: TestUser; body?: unknown; raw?: BodyInit; headers?: Record<string, string>; auth?: string } = {}) {
  const headers: Record<string, string> = { accept: LFS, ...(opts.headers ?? {}) }
  if (opts.who) headers.authorization = opts.who.basic
  if (opts.auth) headers.authorization = opts.auth
  let body = opts.raw
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body)
    headers['content-type'] = LFS
  }
  const res = await fetch(`${s.url}/${repo}.git/info/lfs/${path}`, { method, headers, body })
  const bytes = new Uint8Array(await res.arrayBuffer())
  let json: any = null
  try {
    json = JSON.parse(new TextDecoder().decode(bytes))
  } catch {}
  return { status: res.status, headers: res.headers, bytes, json }
}

const metaRows = async (repoId: number) => s.deps.db.select().from(lfsMetaObjects).where(eq(lfsMetaObjects.repoId, repoId))
let bigId: number

beforeAll(async () => {
  s = await startTestServer({ lfsStartServer: true, lfsMaxFileSize: MAX, startSshServer: true })
  alice = await s.user('alice')
  reader = await s.user('reader')
  stranger = await s.user('stranger')
  lfsConfig = join(temp(), 'gitconfig')
  writeFileSync(
    lfsConfig,
    '[filter "lfs"]\n\tclean = git-lfs clean -- %f\n\tsmudge = git-lfs smudge -- %f\n\tprocess = git-lfs filter-process\n\trequired = true\n[init]\n\tdefaultBranch = main\n',
  )
  const created = await s.post('/user/repos', { name: 'big', private: true }, { token: alice.token })
  expect(created.status).toBe(201)
  bigId = created.body.id
  expect((await s.put('/repos/alice/big/collaborators/reader', { permission: 'read' }, { token: alice.token })).status).toBe(204)
  expect((await s.post('/user/repos', { name: 'mine', private: false }, { token: stranger.token })).status).toBe(201)
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('the git-lfs client over HTTP', () => {
  test('a push uploads the tracked files through the batch API; a clone elsewhere downloads them', async () => {
    const work = temp()
    await lfsGitOk(work, 'init', '-q')
    await lfsGitOk(work, 'lfs', 'install', '--local')
    await lfsGitOk(work, 'lfs', 'track', '*.bin')
    writeFileSync(join(work, 'data.bin'), data)
    writeFileSync(join(work, 'README.md'), '# big\n')
    await lfsGitOk(work, 'add', '.gitattributes', 'data.bin', 'README.md')
    await lfsGitOk(work, 'commit', '-q', '-m', 'large file')
    const pushed = await lfsGit(work, 'push', remoteUrl(s.url, 'alice/big.git', 'alice', alice.password), 'main')
    expect(pushed.code, pushed.stderr).toBe(0)
    // The object is stored by content and the repository has it.
    expect(readFileSync(objectPath(s.deps, dataOid)).equals(data)).toBe(true)
    expect((await metaRows(bigId)).map((r) => [r.oid, r.size])).toEqual([[dataOid, data.length]])
    // No temporary file stays behind.
    expect(existsSync(join(s.dataDir, 'lfs', 'tmp')) ? readdirSync(join(s.dataDir, 'lfs', 'tmp')) : []).toEqual([])

    // A reader clones with a token: the smudge filter downloads the object.
    const clone = temp()
    const cloned = await lfsGit(clone, 'clone', '-q', remoteUrl(s.url, 'alice/big.git', 'reader', reader.token), 'copy')
    expect(cloned.code, cloned.stderr).toBe(0)
    expect(readFileSync(join(clone, 'copy', 'data.bin')).equals(data)).toBe(true)
    // The blob in git is the pointer.
    const pointer = await lfsGitOk(join(clone, 'copy'), 'cat-file', 'blob', 'HEAD:data.bin')
    expect(pointer).toContain(`oid sha256:${dataOid}`)
  })

  test('the media endpoint serves the object, raw the pointer; the file view says "Stored with Git LFS"', async () => {
    const media = await fetch(`${s.url}/api/v1/repos/alice/big/media/data.bin`, { headers: { authorization: `token ${reader.token}` } })
    expect(media.status).toBe(200)
    expect(Buffer.from(await media.arrayBuffer()).equals(data)).toBe(true)
    const raw = await s.get('/repos/alice/big/raw/data.bin', { token: reader.token })
    expect(raw.text).toStartWith('version https://git-lfs.github.com/spec/v1\n')
    // A file that is no pointer is served as it is.
    expect((await s.get('/repos/alice/big/media/README.md', { token: reader.token })).text).toBe('# big\n')
    // The web's media address too.
    const web = await fetch(`${s.url}/alice/big/media/branch/main/data.bin`, { headers: { authorization: reader.basic } })
    expect(Buffer.from(await web.arrayBuffer()).equals(data)).toBe(true)
    const page = await fetch(`${s.url}/alice/big/src/branch/main/data.bin`, { headers: { authorization: reader.basic } })
    const html = await page.text()
    expect(page.status).toBe(200)
    expect(html).toContain('Stored with Git LFS')
    expect(html).toContain('/alice/big/media/branch/main/data.bin')
  })

  test('a fork has its source\'s objects (Gitea\'s CopyLFS): its media and batch download serve them', async () => {
    expect((await s.post('/repos/alice/big/forks', {}, { token: reader.token })).status).toBe(202)
    const media = await fetch(`${s.url}/api/v1/repos/reader/big/media/data.bin`, { headers: { authorization: `token ${reader.token}` } })
    expect(media.status).toBe(200)
    expect(Buffer.from(await media.arrayBuffer()).equals(data)).toBe(true)
    const batch = await lfs('POST', 'reader/big', 'objects/batch', { who: reader, body: { operation: 'download', objects: [{ oid: dataOid, size: data.length }] } })
    expect(batch.json.objects[0].actions.download.href).toBe(`${s.url}/reader/big.git/info/lfs/objects/${dataOid}`)
  })
})

describe('who may download and upload', () => {
  const upload = (oid: string, size: number) => ({ operation: 'upload', transfers: ['basic'], objects: [{ oid, size }] })
  const downloadBatch = { operation: 'download', objects: [{ oid: dataOid, size: data.length }] }

  test('a reader downloads (batch and object, with Range) but may not upload: 403', async () => {
    const batch = await lfs('POST', 'alice/big', 'objects/batch', { who: reader, body: downloadBatch })
    expect(batch.status).toBe(200)
    expect(batch.headers.get('content-type')).toBe(LFS)
    const action = batch.json.objects[0].actions.download
    expect(action.href).toBe(`${s.url}/alice/big.git/info/lfs/objects/${dataOid}`)
    // The action carries the caller's own credentials (Gitea's).
    expect(action.header.Authorization).toBe(reader.basic)
    const whole = await fetch(action.href, { headers: action.header })
    expect(Buffer.from(await whole.arrayBuffer()).equals(data)).toBe(true)
    const part = await lfs('GET', 'alice/big', `objects/${dataOid}`, { who: reader, headers: { range: 'bytes=10-19' } })
    expect([part.status, part.headers.get('content-range')]).toEqual([206, `bytes 10-19/${data.length}`])
    expect(Buffer.from(part.bytes).equals(data.subarray(10, 20))).toBe(true)
    expect((await lfs('GET', 'alice/big', `objects/${dataOid}`, { who: reader, headers: { range: `bytes=${data.length}-` } })).status).toBe(416)

    const bytes = randomBytes(100)
    expect((await lfs('POST', 'alice/big', 'objects/batch', { who: reader, body: upload(oidOf(bytes), 100) })).status).toBe(403)
    expect((await lfs('PUT', 'alice/big', `objects/${oidOf(bytes)}/100`, { who: reader, raw: bytes })).status).toBe(403)
    expect(existsSync(objectPath(s.deps, oidOf(bytes)))).toBe(false)
  })

  test('a stranger is told a private repository does not exist (404), an anonymous caller to sign in (401)', async () => {
    expect((await lfs('POST', 'alice/big', 'objects/batch', { who: stranger, body: downloadBatch })).status).toBe(404)
    expect((await lfs('GET', 'alice/big', `objects/${dataOid}`, { who: stranger })).status).toBe(404)
    const anonymous = await lfs('POST', 'alice/big', 'objects/batch', { body: downloadBatch })
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get('www-authenticate')).toStartWith('Basic')
    expect((await lfs('POST', 'nobody/none', 'objects/batch', { who: alice, body: downloadBatch })).status).toBe(404)
  })

  test("an object uploaded to another repository is not readable through one's own until uploaded there too", async () => {
    const batch = await lfs('POST', 'stranger/mine', 'objects/batch', { who: stranger, body: { operation: 'download', objects: [{ oid: dataOid, size: data.length }] } })
    expect(batch.status).toBe(200)
    expect(batch.json.objects[0].error.code).toBe(404)
    expect((await lfs('GET', 'stranger/mine', `objects/${dataOid}`, { who: stranger })).status).toBe(404)
    // Asked to upload it (the bytes prove the client has them), and then it is the repository's too.
    const asked = await lfs('POST', 'stranger/mine', 'objects/batch', { who: stranger, body: upload(dataOid, data.length) })
    expect(Object.keys(asked.json.objects[0].actions).sort()).toEqual(['upload', 'verify'])
    expect((await lfs('PUT', 'stranger/mine', `objects/${dataOid}/${data.length}`, { who: stranger, raw: data })).status).toBe(200)
    expect((await lfs('POST', 'stranger/mine', 'verify', { who: stranger, body: { oid: dataOid, size: data.length } })).status).toBe(200)
    const again = await lfs('GET', 'stranger/mine', `objects/${dataOid}`, { who: stranger })
    expect(Buffer.from(again.bytes).equals(data)).toBe(true)
    // Known now: an upload batch asks for nothing.
    const known = await lfs('POST', 'stranger/mine', 'objects/batch', { who: stranger, body: upload(dataOid, data.length) })
    expect(known.json.objects[0]).toEqual({ oid: dataOid, size: data.length })
  })

  test('an upload whose bytes are not the oid, or not its size, is refused with 422 and nothing is kept', async () => {
    const bytes = randomBytes(1000)
    const claimed = oidOf(randomBytes(10))
    const wrongHash = await lfs('PUT', 'alice/big', `objects/${claimed}/1000`, { who: alice, raw: bytes })
    expect([wrongHash.status, wrongHash.json.message]).toEqual([422, 'content hash does not match OID'])
    const wrongSize = await lfs('PUT', 'alice/big', `objects/${oidOf(bytes)}/999`, { who: alice, raw: bytes })
    expect(wrongSize.status).toBe(422)
    const short = await lfs('PUT', 'alice/big', `objects/${oidOf(bytes)}/1001`, { who: alice, raw: bytes })
    expect(short.status).toBe(422)
    expect([existsSync(objectPath(s.deps, claimed)), existsSync(objectPath(s.deps, oidOf(bytes)))]).toEqual([false, false])
    expect((await metaRows(bigId)).length).toBe(1)
    expect((await lfs('PUT', 'alice/big', `objects/not-an-oid/10`, { who: alice, raw: bytes })).status).toBe(422)
    // In a batch, an invalid object is the object's error, and a size unlike the repository's record too.
    const batch = await lfs('POST', 'alice/big', 'objects/batch', {
      who: alice,
      body: { operation: 'upload', objects: [{ oid: 'xyz', size: 1 }, { oid: dataOid, size: 5 }] },
    })
    expect(batch.json.objects.map((o: any) => o.error.code)).toEqual([422, 422])
    // An unknown operation, or a client that does not accept the LFS type.
    expect((await lfs('POST', 'alice/big', 'objects/batch', { who: alice, body: { operation: 'delete', objects: [] } })).status).toBe(400)
    expect((await lfs('POST', 'alice/big', 'objects/batch', { who: alice, body: downloadBatch, headers: { accept: 'application/json' } })).status).toBe(415)
  })

  test('an object past WARREN_LFS_MAX_FILE_SIZE is refused: in the batch (422), on upload (413)', async () => {
    const big = { oid: oidOf(randomBytes(8)), size: MAX + 1 }
    const batch = await lfs('POST', 'alice/big', 'objects/batch', { who: alice, body: upload(big.oid, big.size) })
    expect(batch.json.objects[0].error).toEqual({ code: 422, message: `Size must be less than or equal to ${MAX}` })
    const bytes = randomBytes(MAX + 1)
    expect((await lfs('PUT', 'alice/big', `objects/${oidOf(bytes)}/${MAX + 1}`, { who: alice, raw: bytes })).status).toBe(413)
    expect(existsSync(objectPath(s.deps, oidOf(bytes)))).toBe(false)
  })

  test("a batch of many objects: each answered by the repository's record and the store's file (one gone from the store is asked for again)", async () => {
    const blobs = Array.from({ length: 40 }, (_, i) => randomBytes(200 + i))
    for (const b of blobs) expect((await lfs('PUT', 'alice/big', `objects/${oidOf(b)}/${b.length}`, { who: alice, raw: b })).status).toBe(200)
    const objects = blobs.map((b) => ({ oid: oidOf(b), size: b.length }))
    // Two files lost from the store (a disk restored from an old backup): their rows remain.
    const lost = [objects[3]!, objects[37]!]
    for (const o of lost) renameSync(objectPath(s.deps, o.oid), `${objectPath(s.deps, o.oid)}.away`)
    try {
      const down = await lfs('POST', 'alice/big', 'objects/batch', { who: alice, body: { operation: 'download', objects } })
      expect(down.status).toBe(200)
      expect(down.json.objects.map((o: any) => (o.actions ? 'download' : o.error.code))).toEqual(objects.map((o) => (lost.includes(o) ? 404 : 'download')))
      const up = await lfs('POST', 'alice/big', 'objects/batch', { who: alice, body: { operation: 'upload', objects } })
      expect(up.json.objects.map((o: any) => (o.actions ? 'upload' : 'held'))).toEqual(objects.map((o) => (lost.includes(o) ? 'upload' : 'held')))
      expect((await lfs('POST', 'alice/big', 'verify', { who: alice, body: lost[0] })).status).toBe(404)
      expect((await lfs('GET', 'alice/big', `objects/${lost[0]!.oid}`, { who: alice })).status).toBe(404)
    } finally {
      for (const o of lost) renameSync(`${objectPath(s.deps, o.oid)}.away`, objectPath(s.deps, o.oid))
    }
    expect((await lfs('POST', 'alice/big', 'verify', { who: alice, body: lost[0] })).status).toBe(200)
  })

  test('off unless WARREN_LFS_START_SERVER: 404', async () => {
    s.config.lfsStartServer = false
    try {
      expect((await lfs('POST', 'alice/big', 'objects/batch', { who: alice, body: downloadBatch })).status).toBe(404)
      // The media endpoint serves the pointer then.
      expect((await s.get('/repos/alice/big/media/data.bin', { token: alice.token })).text).toStartWith('version https://git-lfs')
    } finally {
      s.config.lfsStartServer = true
    }
  })
})

describe('locks', () => {
  test('create, list by path and id, conflict, verify, unlock (another holder: only with force)', async () => {
    const made = await lfs('POST', 'alice/big', 'locks', { who: alice, body: { path: '/data.bin' } })
    expect(made.status).toBe(201)
    expect(made.json.lock).toMatchObject({ path: 'data.bin', owner: { name: 'alice' } })
    const id = made.json.lock.id
    expect(typeof id).toBe('string')
    const again = await lfs('POST', 'alice/big', 'locks', { who: alice, body: { path: 'data.bin' } })
    expect([again.status, again.json.message, again.json.lock.id]).toEqual([409, 'already created lock', id])
    expect((await lfs('GET', 'alice/big', 'locks?path=data.bin', { who: reader })).json.locks.map((l: any) => l.id)).toEqual([id])
    expect((await lfs('GET', 'alice/big', `locks?id=${id}`, { who: reader })).json.locks.length).toBe(1)
    expect((await lfs('GET', 'alice/big', 'locks?path=other.bin', { who: reader })).json.locks).toEqual([])
    // A cursor that is no page number reads the first page; one past the end, none (a 500 for 1e308 before).
    for (const cursor of ['1e308', '-5', '1.5', 'x']) expect([cursor, (await lfs('GET', 'alice/big', `locks?cursor=${cursor}`, { who: reader })).json.locks.map((l: any) => l.id)]).toEqual([cursor, [id]])
    expect((await lfs('GET', 'alice/big', `locks?cursor=${2 ** 40}`, { who: reader })).json.locks).toEqual([])
    // A reader lists but may not lock; a stranger sees nothing.
    expect((await lfs('POST', 'alice/big', 'locks', { who: reader, body: { path: 'x.bin' } })).status).toBe(403)
    expect((await lfs('GET', 'alice/big', 'locks', { who: stranger })).status).toBe(404)
    expect((await lfs('POST', 'alice/big', 'locks/verify', { who: alice, body: {} })).json).toMatchObject({ ours: [{ id }], theirs: [] })
    // Paged: one lock a page.
    const second = await lfs('POST', 'alice/big', 'locks', { who: alice, body: { path: 'b.bin' } })
    const first = await lfs('GET', 'alice/big', 'locks?limit=1', { who: alice })
    expect([first.json.locks.map((l: any) => l.id), first.json.next_cursor]).toEqual([[id], '2'])
    const next = await lfs('GET', 'alice/big', `locks?limit=1&cursor=${first.json.next_cursor}`, { who: alice })
    expect(next.json.locks.map((l: any) => l.id)).toEqual([second.json.lock.id])

    // Another writer: the lock is theirs, released only with force.
    expect((await s.put('/repos/alice/big/collaborators/stranger', { permission: 'write' }, { token: alice.token })).status).toBe(204)
    expect((await lfs('POST', 'alice/big', 'locks/verify', { who: stranger, body: {} })).json.theirs.length).toBe(2)
    expect((await lfs('POST', 'alice/big', `locks/${id}/unlock`, { who: stranger, body: {} })).status).toBe(403)
    const forced = await lfs('POST', 'alice/big', `locks/${id}/unlock`, { who: stranger, body: { force: true } })
    expect([forced.status, forced.json.lock.id]).toEqual([200, id])
    expect((await lfs('POST', 'alice/big', `locks/${second.json.lock.id}/unlock`, { who: alice, body: {} })).status).toBe(200)
    expect((await lfs('GET', 'alice/big', 'locks', { who: alice })).json.locks).toEqual([])
    expect((await lfs('POST', 'alice/big', `locks/${id}/unlock`, { who: alice, body: {} })).status).toBe(404)
    expect((await s.del('/repos/alice/big/collaborators/stranger', undefined, { token: alice.token })).status).toBe(204)
  })
})

describe('git-lfs-authenticate over SSH', () => {
  let keyPath: string
  let knownHosts: string
  const sshArgs = () => ['-F', '/dev/null', '-T', '-i', keyPath, '-o', 'IdentitiesOnly=yes', '-o', `UserKnownHostsFile=${knownHosts}`, '-o', 'StrictHostKeyChecking=yes', '-o', 'BatchMode=yes', '-p', String(s.ssh!.port)]

  beforeAll(async () => {
    const dir = temp()
    keyPath = join(dir, 'reader')
    knownHosts = join(dir, 'known_hosts')
    writeFileSync(knownHosts, `[127.0.0.1]:${s.ssh!.port} ${s.ssh!.hostKey.publicKey}\n`)
    expect((await sh(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'reader', '-f', keyPath], dir)).code).toBe(0)
    const pub = readFileSync(keyPath + '.pub', 'utf8').trim()
    expect((await s.post('/user/keys', { title: 'laptop', key: pub }, { token: reader.token })).status).toBe(201)
  })

  test('answers href and a short-lived token that opens the repository for that operation only', async () => {
    const r = await sh(['ssh', ...sshArgs(), 'git@127.0.0.1', 'git-lfs-authenticate', 'alice/big.git', 'download'], join(keyPath, '..'))
    expect(r.code, r.stderr).toBe(0)
    const answer = JSON.parse(r.stdout)
    expect(answer.href).toBe(`${s.url}/alice/big.git/info/lfs`)
    expect(answer.header.Authorization).toStartWith('Bearer ')
    expect(Date.parse(answer.expires_at)).toBeGreaterThan(0)
    const auth = answer.header.Authorization
    const batch = await lfs('POST', 'alice/big', 'objects/batch', { auth, body: { operation: 'download', objects: [{ oid: dataOid, size: data.length }] } })
    expect(batch.status).toBe(200)
    expect(batch.json.objects[0].actions.download.header.Authorization).toBe(auth)
    const bytes = (await lfs('GET', 'alice/big', `objects/${dataOid}`, { auth })).bytes
    expect(Buffer.from(bytes).equals(data)).toBe(true)
    // Not for uploads, not for another repository; a reader may not ask for an upload token at all.
    const bytes2 = randomBytes(10)
    expect((await lfs('PUT', 'alice/big', `objects/${oidOf(bytes2)}/10`, { auth, raw: bytes2 })).status).toBe(401)
    expect((await lfs('GET', 'stranger/mine', `objects/${dataOid}`, { auth })).status).toBe(401)
    const upload = await sh(['ssh', ...sshArgs(), 'git@127.0.0.1', 'git-lfs-authenticate', 'alice/big.git', 'upload'], join(keyPath, '..'))
    expect([upload.code, upload.stderr.trim()]).toEqual([1, 'Warren: you do not have permission to push to alice/big.git'])
    const hidden = await sh(['ssh', ...sshArgs(), 'git@127.0.0.1', 'git-lfs-authenticate', 'stranger/none.git', 'download'], join(keyPath, '..'))
    expect(hidden.code).toBe(1)
  })

  test('a clone over SSH downloads the objects through the token', async () => {
    const clone = temp()
    const r = await sh(['git', 'clone', '-q', `ssh://git@127.0.0.1:${s.ssh!.port}/alice/big.git`, 'copy'], clone, {
      GIT_CONFIG_GLOBAL: lfsConfig,
      GIT_SSH_COMMAND: ['ssh', ...sshArgs()].join(' '),
    })
    expect(r.code, r.stderr).toBe(0)
    expect(readFileSync(join(clone, 'copy', 'data.bin')).equals(data)).toBe(true)
  })
})

describe('the settings pages', () => {
  const { page, signIn, submit } = webVisitors(() => s.url, async () => '')
  const PAGE = '/alice/big/settings/lfs'

  test("the repository's objects, listed for its administrators; one deleted from it (its file kept while another repository has it)", async () => {
    const own = randomBytes(300)
    expect((await lfs('PUT', 'alice/big', `objects/${oidOf(own)}/${own.length}`, { who: alice, raw: own })).status).toBe(200)
    const html = await (await page(PAGE, await signIn(alice))).text()
    expect(html).toContain('aria-label="LFS objects"')
    expect(html).toContain(`title="${dataOid}"`)
    expect(html).toContain(`title="${oidOf(own)}"`)
    expect(await (await page('/alice/big/settings', await signIn(alice))).text()).toContain(`href="${PAGE}"`)
    // A reader may not; a stranger is not told the repository exists.
    expect((await page(PAGE, await signIn(reader))).status).toBe(403)
    expect((await page(PAGE, await signIn(stranger))).status).toBe(404)

    // Only this repository has `own`: its file goes. stranger/mine has dataOid too: its file stays.
    const gone = await submit(alice, `${PAGE}/delete/${oidOf(own)}`, {}, { from: PAGE })
    expect([gone.status, gone.location]).toEqual([303, `${PAGE}?done=lfs-object-deleted`])
    expect(existsSync(objectPath(s.deps, oidOf(own)))).toBe(false)
    expect((await submit(alice, `${PAGE}/delete/${dataOid}`, {}, { from: PAGE })).status).toBe(303)
    expect(existsSync(objectPath(s.deps, dataOid))).toBe(true)
    expect((await metaRows(bigId)).map((r) => r.oid)).not.toContain(dataOid)
    expect((await lfs('GET', 'alice/big', `objects/${dataOid}`, { who: alice })).status).toBe(404)
    expect((await lfs('GET', 'stranger/mine', `objects/${dataOid}`, { who: stranger })).status).toBe(200)
    // Again, or a name that is no object: 404, nothing changed.
    expect((await submit(alice, `${PAGE}/delete/${dataOid}`, {}, { from: PAGE })).status).toBe(404)
    expect((await submit(alice, `${PAGE}/delete/not-an-oid`, {}, { from: PAGE })).status).toBe(404)
    expect((await submit(reader, `${PAGE}/delete/${oidOf(own)}`, {}, { from: '/' })).status).toBe(403)
    // Uploaded again, it is the repository's once more.
    expect((await lfs('PUT', 'alice/big', `objects/${dataOid}/${data.length}`, { who: alice, raw: data })).status).toBe(200)
  })

  test('the locks: listed with their holders, released by an administrator whoever holds them', async () => {
    expect((await s.put('/repos/alice/big/collaborators/stranger', { permission: 'write' }, { token: alice.token })).status).toBe(204)
    const held = await lfs('POST', 'alice/big', 'locks', { who: stranger, body: { path: 'assets/logo.psd' } })
    expect(held.status).toBe(201)
    const html = await (await page(`${PAGE}/locks`, await signIn(alice))).text()
    expect(html).toContain('assets/logo.psd')
    expect(html).toContain('href="/stranger"')
    // The writer may not use the administrators' page.
    expect((await submit(stranger, `${PAGE}/locks/${held.json.lock.id}/unlock`, {}, { from: '/' })).status).toBe(403)
    const released = await submit(alice, `${PAGE}/locks/${held.json.lock.id}/unlock`, {}, { from: `${PAGE}/locks` })
    expect([released.status, released.location]).toEqual([303, `${PAGE}/locks?done=lfs-unlocked`])
    expect((await lfs('GET', 'alice/big', 'locks', { who: alice })).json.locks).toEqual([])
    expect((await submit(alice, `${PAGE}/locks/${held.json.lock.id}/unlock`, {}, { from: `${PAGE}/locks` })).status).toBe(404)
    expect((await s.del('/repos/alice/big/collaborators/stranger', undefined, { token: alice.token })).status).toBe(204)
  })

  test('with the LFS server off the pages are 404 and not offered', async () => {
    s.deps.config.lfsStartServer = false
    try {
      expect((await page(PAGE, await signIn(alice))).status).toBe(404)
      expect(await (await page('/alice/big/settings', await signIn(alice))).text()).not.toContain(`href="${PAGE}"`)
    } finally {
      s.deps.config.lfsStartServer = true
    }
  })
})

describe('deletion', () => {
  test("a repository's deletion removes its meta objects; the sweep's repair removes objects no repository has", async () => {
    const bytes = randomBytes(300)
    const oid = oidOf(bytes)
    expect((await lfs('PUT', 'stranger/mine', `objects/${oid}/300`, { who: stranger, raw: bytes })).status).toBe(200)
    expect(existsSync(objectPath(s.deps, oid))).toBe(true)
    expect((await s.del('/repos/stranger/mine', undefined, { token: stranger.token })).status).toBe(204)
    const removed = await repairLfsObjects(s.deps)
    expect(removed).toContain(oid)
    expect(existsSync(objectPath(s.deps, oid))).toBe(false)
    // Still had by alice/big: kept.
    expect(existsSync(objectPath(s.deps, dataOid))).toBe(true)
  })
})
