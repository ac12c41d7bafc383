import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHash, randomBytes } from 'node:crypto'
import { createReadStream, existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { contentMark } from './db-snapshot'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, makeWorkRepo, remoteUrl, tempDir } from './git-fixture'
import { eventsOfRepo } from '../src/events/outbox'
import { attachments, releases } from '../src/db/schema'
import { repairAttachments } from '../src/modules/attachments/storage'
import { giteaApi } from 'gitea-js'
import { eq } from 'drizzle-orm'
import { MAX_ASSETS_PER_RELEASE } from '../src/modules/releases/service'

let s: TestServer
let alice: TestUser, reader: TestUser, writer: TestUser, stranger: TestUser
let work: Awaited<ReturnType<typeof makeWorkRepo>>
let master: string, dev: string
let projId: number
const dirs: string[] = []

const asAlice = () => ({ token: alice.token })

/** `git ls-remote --tags` of a repository on the server → tag → object id. */
async function remoteTags(repo: string): Promise<Record<string, string>> {
  const out = await gitOk(work.dir, 'ls-remote', '--tags', remoteUrl(s.url, `alice/${repo}.git`, 'alice', alice.token))
  const tags: Record<string, string> = {}
  for (const line of out.split('\n').filter(Boolean)) {
    const [id, ref] = line.split('\t')
    tags[ref!.replace(/^refs\/tags\//, '')] = id!
  }
  return tags
}

/** A multipart body around a file's bytes, as parts: the head, the file, the tail. */
function multipartParts(field: string, filename: string, boundary = 'warren-test-boundary-7MA4YWxkTrZu0gW') {
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    head: Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="note"\r\n\r\nnot the file\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    tail: Buffer.from(`\r\n--${boundary}--\r\n`),
  }
}

/** Uploads bytes (a Buffer, or a file streamed from disk) as an asset. */
async function upload(
  server: TestServer,
  path: string,
  source: Buffer | { file: string },
  opts: { filename?: string; token?: string; field?: string; chunked?: boolean; chunkSize?: number } = {},
) {
  const parts = multipartParts(opts.field ?? 'attachment', opts.filename ?? 'asset.bin')
  let body: BodyInit
  if (opts.chunked || opts.chunkSize) {
    // Streamed without a Content-Length (chunked), optionally in tiny chunks so that boundaries straddle them.
    const pieces: AsyncIterable<Uint8Array> = (async function* () {
      yield parts.head
      if (Buffer.isBuffer(source)) yield source
      else for await (const chunk of createReadStream(source.file)) yield chunk as Buffer
      yield parts.tail
    })()
    const size = opts.chunkSize
    body = new ReadableStream<Uint8Array>({
      async start(controller) {
        for await (const piece of pieces) {
          if (!size) controller.enqueue(piece)
          else for (let i = 0; i < piece.length; i += size) controller.enqueue(piece.subarray(i, i + size))
        }
        controller.close()
      },
    })
  } else body = new Blob([parts.head, Buffer.isBuffer(source) ? (source as Uint8Array<ArrayBuffer>) : Bun.file(source.file), parts.tail])
  const headers: Record<string, string> = { 'content-type': parts.contentType }
  const token = opts.token ?? alice.token
  if (token) headers.authorization = `token ${token}`
  const res = await fetch(`${server.url}/api/v1${path}`, { method: 'POST', headers, body })
  const text = await res.text()
  let json: any = null
  try {
    json = JSON.parse(text)
  } catch {}
  return { status: res.status, body: json, text }
}

/** SHA-256 of a response body, read as a stream, and its length. */
async function hashOf(res: Response): Promise<{ hash: string; size: number }> {
  const h = createHash('sha256')
  let size = 0
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    h.update(chunk)
    size += chunk.byteLength
  }
  return { hash: h.digest('hex'), size }
}

const attachmentFiles = (server: TestServer) => {
  const root = join(server.dataDir, 'attachments')
  if (!existsSync(root)) return []
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name)
}

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  reader = await s.user('reader')
  writer = await s.user('writer')
  stranger = await s.user('stranger')
  for (const [name, priv] of [['proj', false], ['secret', true], ['void', false]] as const) {
    const res = await s.post('/user/repos', { name, private: priv }, asAlice())
    expect(res.status).toBe(201)
    if (name === 'proj') projId = res.body.id
    for (const [who, permission] of [[reader, 'read'], [writer, 'write']] as const)
      expect((await s.put(`/repos/alice/${name}/collaborators/${who.name}`, { permission }, asAlice())).status).toBe(204)
  }
  work = await makeWorkRepo()
  dirs.push(work.dir)
  for (const repo of ['proj', 'secret']) await gitOk(work.dir, 'push', remoteUrl(s.url, `alice/${repo}.git`, 'alice', alice.token), 'master', 'dev')
  master = await gitOk(work.dir, 'rev-parse', 'master')
  dev = await gitOk(work.dir, 'rev-parse', 'dev')
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('creating releases', () => {
  test('a release for a new tag creates the tag in git at the default branch, records its events, counts it', async () => {
    expect(await remoteTags('proj')).toEqual({})
    const lastEvent = (await eventsOfRepo(s.deps.db, projId, 0, 500)).at(-1)?.id ?? 0
    const res = await s.post('/repos/alice/proj/releases', { tag_name: 'v1.0', name: 'First', body: 'Notes' }, { token: writer.token })
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      tag_name: 'v1.0',
      target_commitish: 'master',
      name: 'First',
      body: 'Notes',
      draft: false,
      prerelease: false,
      assets: [],
      url: `${s.url}/api/v1/repos/alice/proj/releases/${res.body.id}`,
      tarball_url: `${s.url}/alice/proj/archive/v1.0.tar.gz`,
      zipball_url: `${s.url}/alice/proj/archive/v1.0.zip`,
    })
    expect(res.body.author.login).toBe('writer')
    expect(res.body.published_at).toBe(res.body.created_at)
    expect(await remoteTags('proj')).toEqual({ 'v1.0': master })
    // A clone has it, at the right commit.
    const clone = tempDir()
    dirs.push(clone)
    await gitOk(clone, 'clone', '-q', remoteUrl(s.url, 'alice/proj.git', 'alice', alice.token), 'c')
    expect(await gitOk(join(clone, 'c'), 'rev-parse', 'v1.0^{commit}')).toBe(master)
    // The tag's creation is a push by the writer (its push, then its create, as Gitea's); then the release's own event.
    const events = await eventsOfRepo(s.deps.db, projId, lastEvent)
    expect(events.map((e) => [e.kind, e.actorId])).toEqual([
      ['push', writer.user.id],
      ['ref.created', writer.user.id],
      ['release.published', writer.user.id],
    ])
    expect(events[1]!.payload).toEqual({ ref: 'v1.0', refType: 'tag', sha: master })
    expect(events[2]!.payload).toEqual({ releaseId: res.body.id, tagName: 'v1.0' })
    expect((await s.get('/repos/alice/proj')).body.release_counter).toBe(1)
    // The archive URLs it names work.
    expect((await fetch(res.body.tarball_url)).status).toBe(200)
  })

  test('target_commitish names the branch (or commit) the new tag is made from', async () => {
    const onDev = await s.post('/repos/alice/proj/releases', { tag_name: 'v2.0', target_commitish: 'dev' }, asAlice())
    expect(onDev.status).toBe(201)
    expect(onDev.body.target_commitish).toBe('dev')
    const bySha = await s.post('/repos/alice/proj/releases', { tag_name: 'nested/v2.1', target_commitish: master.slice(0, 10) }, asAlice())
    expect(bySha.status).toBe(201)
    // A sibling under the same folder is no clash.
    expect((await s.post('/repos/alice/proj/releases', { tag_name: 'nested/v2.2', target_commitish: 'dev' }, asAlice())).status).toBe(201)
    const tags = await remoteTags('proj')
    expect(tags['v2.0']).toBe(dev)
    expect(tags['nested/v2.1']).toBe(master)
    expect(tags['nested/v2.2']).toBe(dev)
    expect(bySha.body.tarball_url).toBe(`${s.url}/alice/proj/archive/nested/v2.1.tar.gz`)
  })

  test('a release for a tag that exists uses it, wherever the target points', async () => {
    await gitOk(work.dir, 'push', remoteUrl(s.url, 'alice/proj.git', 'alice', alice.token), 'refs/tags/v1.0:refs/tags/pushed')
    const res = await s.post('/repos/alice/proj/releases', { tag_name: 'pushed', target_commitish: 'dev' }, asAlice())
    expect(res.status).toBe(201)
    expect((await remoteTags('proj'))['pushed']).toBe(master)
  })

  test('refusals: a second release for a tag (409), bad tag names and unknown targets (4xx), an empty repository, readers; nothing changes', async () => {
    const mark = contentMark(s.deps.db)
    const before = await mark()
    const tagsBefore = await remoteTags('proj')
    const cases: [unknown, number, string?][] = [
      [{ tag_name: 'v1.0' }, 409],
      [{ tag_name: 'V1.0' }, 409],
      [{ tag_name: 'bad..name' }, 422],
      [{ tag_name: '-rf' }, 422],
      [{ tag_name: 'sp ace' }, 422],
      [{ tag_name: 'x.lock' }, 422],
      [{ tag_name: 'a/-b' }, 422],
      [{ tag_name: 'ends/' }, 422],
      [{ tag_name: '' }, 422],
      [{ tag_name: 'x'.repeat(300) }, 422],
      [{ tag_name: 'v9', target_commitish: 'no-such-branch' }, 404],
      [{ tag_name: 'v9', target_commitish: '--upload-pack=evil' }, 404],
      [{ tag_name: 'v9', target_commitish: 'deadbeef' }, 404],
      [{ tag_name: 'v9', draft: true, target_commitish: 'nowhere' }, 404],
      // A tag nested under an existing tag's name, or above one: git refuses them.
      [{ tag_name: 'v1.0/sub' }, 409],
      [{ tag_name: 'nested' }, 409],
      [{ name: 'no tag' }, 422],
      [{ tag_name: 'v9', draft: 'yes' }, 422],
    ]
    for (const [body, status] of cases) {
      const res = await s.post('/repos/alice/proj/releases', body, asAlice())
      expect([JSON.stringify(body), res.status]).toEqual([JSON.stringify(body), status])
      expect(typeof res.body.message).toBe('string')
    }
    expect((await s.post('/repos/alice/void/releases', { tag_name: 'v1' }, asAlice())).status).toBe(422)
    expect((await s.post('/repos/alice/proj/releases', { tag_name: 'v9' }, { token: reader.token })).status).toBe(403)
    expect((await s.post('/repos/alice/proj/releases', { tag_name: 'v9' })).status).toBe(401)
    expect((await s.post('/repos/alice/secret/releases', { tag_name: 'v9' }, { token: stranger.token })).status).toBe(404)
    expect(await mark()).toBe(before)
    expect(await remoteTags('proj')).toEqual(tagsBefore)
  })
})

describe('drafts and pre-releases', () => {
  let draftId: number
  test('a draft creates no tag and is seen by writers only (not readers, not anonymous callers), and is not counted', async () => {
    const counter = (await s.get('/repos/alice/proj')).body.release_counter
    const res = await s.post('/repos/alice/proj/releases', { tag_name: 'v3.0', name: 'Upcoming', draft: true, target_commitish: 'dev' }, asAlice())
    expect(res.status).toBe(201)
    expect(res.body.draft).toBe(true)
    draftId = res.body.id
    expect((await remoteTags('proj'))['v3.0']).toBeUndefined()
    expect((await eventsOfRepo(s.deps.db, projId)).some((e) => e.kind.startsWith('release.') && e.payload.releaseId === draftId)).toBe(false)
    const tags = (r: any) => (r.body as any[]).map((x) => x.tag_name)
    expect(tags(await s.get('/repos/alice/proj/releases', { token: writer.token }))).toContain('v3.0')
    for (const who of [{ token: reader.token }, {}]) {
      const list = await s.get('/repos/alice/proj/releases', who)
      expect(list.status).toBe(200)
      expect(tags(list)).not.toContain('v3.0')
      expect(list.headers.get('x-total-count')).toBe(String(list.body.length))
      expect((await s.get(`/repos/alice/proj/releases/${draftId}`, who)).status).toBe(404)
      expect((await s.get('/repos/alice/proj/releases/tags/v3.0', who)).status).toBe(404)
      // Asking for drafts shows a reader none.
      expect((await s.get('/repos/alice/proj/releases?draft=true', who)).body).toEqual([])
    }
    expect(tags(await s.get('/repos/alice/proj/releases?draft=true', { token: writer.token }))).toEqual(['v3.0'])
    expect((await s.get('/repos/alice/proj')).body.release_counter).toBe(counter)
    expect((await s.get('/repos/alice/proj', { token: writer.token })).body.release_counter).toBe(counter)
  })

  test('publishing a draft creates its tag at its target, counts it and records release.published', async () => {
    const counter = (await s.get('/repos/alice/proj')).body.release_counter
    const res = await s.patch(`/repos/alice/proj/releases/${draftId}`, { draft: false }, { token: writer.token })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ draft: false, name: 'Upcoming', tag_name: 'v3.0', target_commitish: 'dev' })
    expect((await remoteTags('proj'))['v3.0']).toBe(dev)
    expect((await s.get('/repos/alice/proj')).body.release_counter).toBe(counter + 1)
    const last = (await eventsOfRepo(s.deps.db, projId)).filter((e) => e.kind.startsWith('release.')).at(-1)!
    expect([last.kind, last.payload.releaseId]).toEqual(['release.published', draftId])
    expect((await s.get(`/repos/alice/proj/releases/${draftId}`, { token: reader.token })).status).toBe(200)
  })

  test('pre-releases are flagged, filtered, counted, and never the latest release', async () => {
    const latestBefore = (await s.get('/repos/alice/proj/releases/latest')).body
    const res = await s.post('/repos/alice/proj/releases', { tag_name: 'v4.0-rc1', prerelease: true }, asAlice())
    expect(res.status).toBe(201)
    expect(res.body.prerelease).toBe(true)
    const pre = await s.get('/repos/alice/proj/releases?pre-release=true', { token: reader.token })
    expect(pre.body.map((r: any) => r.tag_name)).toEqual(['v4.0-rc1'])
    const notPre = await s.get('/repos/alice/proj/releases?pre-release=false', { token: reader.token })
    expect(notPre.body.map((r: any) => r.tag_name)).not.toContain('v4.0-rc1')
    expect(notPre.body.length).toBeGreaterThan(0)
    const latest = await s.get('/repos/alice/proj/releases/latest')
    expect(latest.status).toBe(200)
    expect(latest.body.tag_name).toBe(latestBefore.tag_name)
    expect(latest.body.prerelease).toBe(false)
    // Newest first, paged with Gitea's headers.
    const page = await s.get('/repos/alice/proj/releases?limit=2&page=1')
    expect(page.body.length).toBe(2)
    expect(page.body[0].tag_name).toBe('v4.0-rc1')
    expect(Number(page.headers.get('x-total-count'))).toBeGreaterThan(2)
    expect(page.headers.get('link')).toContain('rel="next"')
  })
})

describe('editing and deleting releases', () => {
  test('edit: given fields change, empty ones do not; a published release records release.updated; a tag rename creates the tag', async () => {
    const created = await s.post('/repos/alice/proj/releases', { tag_name: 'v5.0', name: 'Five', body: 'b' }, asAlice())
    const id = created.body.id
    const res = await s.patch(`/repos/alice/proj/releases/${id}`, { name: 'Five!', body: '', prerelease: true }, { token: writer.token })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ name: 'Five!', body: 'b', prerelease: true, tag_name: 'v5.0' })
    const last = (await eventsOfRepo(s.deps.db, projId)).filter((e) => e.kind.startsWith('release.')).at(-1)!
    expect([last.kind, last.actorId, last.payload]).toEqual(['release.updated', writer.user.id, { releaseId: id, tagName: 'v5.0' }])
    const renamed = await s.patch(`/repos/alice/proj/releases/${id}`, { tag_name: 'v5.1', target_commitish: 'dev' }, asAlice())
    expect(renamed.status).toBe(200)
    expect(renamed.body.tag_name).toBe('v5.1')
    const tags = await remoteTags('proj')
    expect(tags['v5.1']).toBe(dev)
    expect(tags['v5.0']).toBe(master)
    expect((await s.get(`/repos/alice/proj/releases/tags/v5.1`)).body.id).toBe(id)
  })

  test('edit refusals: another release\'s tag (409), a bad tag name (422), readers (403), unknown ids (404); nothing changes', async () => {
    const mark = contentMark(s.deps.db)
    const before = await mark()
    const id = (await s.get('/repos/alice/proj/releases/tags/v5.1')).body.id
    expect((await s.patch(`/repos/alice/proj/releases/${id}`, { tag_name: 'v1.0' }, asAlice())).status).toBe(409)
    expect((await s.patch(`/repos/alice/proj/releases/${id}`, { tag_name: 'a..b' }, asAlice())).status).toBe(422)
    expect((await s.patch(`/repos/alice/proj/releases/${id}`, { tag_name: 'v6', target_commitish: 'nope' }, asAlice())).status).toBe(404)
    expect((await s.patch(`/repos/alice/proj/releases/${id}`, { name: 'x' }, { token: reader.token })).status).toBe(403)
    expect((await s.patch('/repos/alice/proj/releases/99999', { name: 'x' }, asAlice())).status).toBe(404)
    expect((await s.patch('/repos/alice/proj/releases/abc', { name: 'x' }, asAlice())).status).toBe(404)
    expect((await s.del(`/repos/alice/proj/releases/${id}`, undefined, { token: reader.token })).status).toBe(403)
    expect(await mark()).toBe(before)
  })

  test('delete keeps the tag, uncounts the release and records release.deleted with the record as it was', async () => {
    const created = await s.post('/repos/alice/proj/releases', { tag_name: 'v7.0', name: 'Seven' }, asAlice())
    const counter = (await s.get('/repos/alice/proj')).body.release_counter
    const res = await s.del(`/repos/alice/proj/releases/${created.body.id}`, undefined, { token: writer.token })
    expect(res.status).toBe(204)
    expect((await s.get(`/repos/alice/proj/releases/${created.body.id}`)).status).toBe(404)
    expect((await remoteTags('proj'))['v7.0']).toBe(master)
    expect((await s.get('/repos/alice/proj')).body.release_counter).toBe(counter - 1)
    const last = (await eventsOfRepo(s.deps.db, projId)).filter((e) => e.kind.startsWith('release.')).at(-1)!
    expect(last.kind).toBe('release.deleted')
    expect(last.payload).toMatchObject({ releaseId: created.body.id, tagName: 'v7.0', release: { id: created.body.id, name: 'Seven', tag_name: 'v7.0' } })
    // A new release for the kept tag is possible again; and deleting by tag works the same.
    expect((await s.post('/repos/alice/proj/releases', { tag_name: 'v7.0' }, asAlice())).status).toBe(201)
    expect((await s.del('/repos/alice/proj/releases/tags/v7.0', undefined, asAlice())).status).toBe(204)
    expect((await s.get('/repos/alice/proj/releases/tags/v7.0')).status).toBe(404)
    expect((await remoteTags('proj'))['v7.0']).toBe(master)
  })

  test('release_counter is right in repository lists too', async () => {
    const counted = (await s.deps.db.select().from(releases)).filter((r) => r.repoId === projId && !r.isDraft).length
    const mine = await s.get('/user/repos', asAlice())
    expect(mine.body.find((r: any) => r.name === 'proj').release_counter).toBe(counted)
    const search = await s.get('/repos/search?q=proj')
    expect(search.body.data.find((r: any) => r.name === 'proj').release_counter).toBe(counted)
  })
})

describe('assets', () => {
  let releaseId: number
  let big: { file: string; hash: string; size: number }
  let asset: any

  beforeAll(async () => {
    releaseId = (await s.post('/repos/alice/proj/releases', { tag_name: 'v10.0' }, asAlice())).body.id
    const dir = tempDir()
    dirs.push(dir)
    const file = join(dir, 'big.bin')
    const h = createHash('sha256')
    const size = 50 * 1024 * 1024
    const chunk = 1024 * 1024
    const parts: Buffer[] = []
    for (let i = 0; i < size / chunk; i++) {
      const b = randomBytes(chunk)
      h.update(b)
      parts.push(b)
    }
    writeFileSync(file, Buffer.concat(parts))
    big = { file, hash: h.digest('hex'), size }
  })

  test('a 50 MB asset streamed up is stored, listed, and downloads byte-identical (length, type, disposition) at both URLs', async () => {
    const res = await upload(s, `/repos/alice/proj/releases/${releaseId}/assets?name=build.zip`, { file: big.file }, { chunked: true, token: writer.token })
    expect(res.status).toBe(201)
    asset = res.body
    expect(asset).toMatchObject({ name: 'build.zip', size: big.size, download_count: 0, browser_download_url: `${s.url}/attachments/${asset.uuid}` })
    const release = await s.get(`/repos/alice/proj/releases/${releaseId}`)
    expect(release.body.assets).toEqual([asset])
    expect((await s.get(`/repos/alice/proj/releases/${releaseId}/assets`)).body).toEqual([asset])
    expect((await s.get(`/repos/alice/proj/releases/${releaseId}/assets/${asset.id}`)).body).toEqual(asset)
    for (const url of [asset.browser_download_url, `${s.url}/alice/proj/releases/download/v10.0/build.zip`]) {
      const dl = await fetch(url, { headers: { authorization: `token ${reader.token}` } })
      expect(dl.status).toBe(200)
      expect(dl.headers.get('content-length')).toBe(String(big.size))
      expect(dl.headers.get('content-type')).toBe('application/zip')
      expect(dl.headers.get('content-disposition')).toContain('attachment; filename="build.zip"')
      expect(await hashOf(dl)).toEqual({ hash: big.hash, size: big.size })
    }
    expect((await s.get(`/repos/alice/proj/releases/${releaseId}/assets/${asset.id}`)).body.download_count).toBe(2)
  })

  test('a body with a Content-Length, in tiny chunks, with the file name from the part; names are checked; duplicates refused', async () => {
    const data = randomBytes(5000)
    const res = await upload(s, `/repos/alice/proj/releases/${releaseId}/assets`, data, { filename: 'C:\\dist\\notes.txt', chunkSize: 7 })
    expect(res.status).toBe(201)
    expect(res.body.name).toBe('notes.txt')
    const dl = await fetch(res.body.browser_download_url)
    expect(Buffer.from(await dl.arrayBuffer()).equals(data)).toBe(true)
    expect(dl.headers.get('content-type')).toStartWith('text/plain')
    const fixed = await upload(s, `/repos/alice/proj/releases/${releaseId}/assets`, data, { filename: 'plain.txt' })
    expect(fixed.status).toBe(201)

    const files = attachmentFiles(s).length
    const mark = contentMark(s.deps.db)
    const before = await mark()
    expect((await upload(s, `/repos/alice/proj/releases/${releaseId}/assets`, data, { filename: 'notes.txt' })).status).toBe(409)
    expect((await upload(s, `/repos/alice/proj/releases/${releaseId}/assets?name=build.zip`, data)).status).toBe(409)
    expect((await upload(s, `/repos/alice/proj/releases/${releaseId}/assets?name=..`, data)).status).toBe(422)
    expect((await upload(s, `/repos/alice/proj/releases/${releaseId}/assets`, data, { filename: '' })).status).toBe(422)
    expect((await upload(s, `/repos/alice/proj/releases/${releaseId}/assets`, data, { field: 'file' })).status).toBe(400)
    expect((await upload(s, `/repos/alice/proj/releases/99999/assets`, data)).status).toBe(404)
    expect((await upload(s, `/repos/alice/proj/releases/${releaseId}/assets`, data, { token: reader.token })).status).toBe(403)
    expect((await upload(s, `/repos/alice/secret/releases/1/assets`, data, { token: stranger.token })).status).toBe(404)
    const notMultipart = await s.post(`/repos/alice/proj/releases/${releaseId}/assets`, { attachment: 'x' }, asAlice())
    expect(notMultipart.status).toBe(400)
    // A multipart body cut short before its closing boundary.
    const parts = multipartParts('attachment', 'cut.bin')
    const cut = await fetch(`${s.url}/api/v1/repos/alice/proj/releases/${releaseId}/assets`, {
      method: 'POST',
      headers: { 'content-type': parts.contentType, authorization: `token ${alice.token}` },
      body: Buffer.concat([parts.head, data]),
    })
    expect(cut.status).toBe(400)
    expect(await mark()).toBe(before)
    expect(attachmentFiles(s).length).toBe(files)
  })

  test('edit renames (201); delete removes the row and the file', async () => {
    const list = (await s.get(`/repos/alice/proj/releases/${releaseId}/assets`)).body
    const plain = list.find((a: any) => a.name === 'plain.txt')
    const renamed = await s.patch(`/repos/alice/proj/releases/${releaseId}/assets/${plain.id}`, { name: 'renamed.txt' }, { token: writer.token })
    expect(renamed.status).toBe(201)
    expect(renamed.body.name).toBe('renamed.txt')
    expect((await s.patch(`/repos/alice/proj/releases/${releaseId}/assets/${plain.id}`, { name: 'notes.txt' }, asAlice())).status).toBe(409)
    expect((await s.patch(`/repos/alice/proj/releases/${releaseId}/assets/${plain.id}`, { name: 'a/b' }, asAlice())).status).toBe(422)
    expect((await fetch(`${s.url}/alice/proj/releases/download/v10.0/renamed.txt`)).status).toBe(200)
    expect((await fetch(`${s.url}/alice/proj/releases/download/v10.0/plain.txt`)).status).toBe(404)
    const path = join(s.dataDir, 'attachments', String(projId), plain.uuid)
    expect(existsSync(path)).toBe(true)
    expect((await s.del(`/repos/alice/proj/releases/${releaseId}/assets/${plain.id}`, undefined, asAlice())).status).toBe(204)
    expect(existsSync(path)).toBe(false)
    expect((await s.get(`/repos/alice/proj/releases/${releaseId}/assets/${plain.id}`)).status).toBe(404)
    expect((await fetch(plain.browser_download_url)).status).toBe(404)
  })

  test("downloads are for the repository's readers only; a draft's assets for its writers only", async () => {
    const secretRelease = await s.post('/repos/alice/secret/releases', { tag_name: 's1' }, asAlice())
    const up = await upload(s, `/repos/alice/secret/releases/${secretRelease.body.id}/assets`, Buffer.from('classified'), { filename: 's.txt' })
    expect(up.status).toBe(201)
    const urls = [up.body.browser_download_url, `${s.url}/alice/secret/releases/download/s1/s.txt`]
    for (const url of urls) {
      expect((await fetch(url)).status).toBe(404)
      expect((await fetch(url, { headers: { authorization: `token ${stranger.token}` } })).status).toBe(404)
      const ok = await fetch(url, { headers: { authorization: `token ${reader.token}` } })
      expect(ok.status).toBe(200)
      expect(await ok.text()).toBe('classified')
    }
    const draft = await s.post('/repos/alice/proj/releases', { tag_name: 'v11.0', draft: true }, asAlice())
    const draftAsset = await upload(s, `/repos/alice/proj/releases/${draft.body.id}/assets`, Buffer.from('soon'), { filename: 'd.txt' })
    expect(draftAsset.status).toBe(201)
    for (const who of [reader, null]) {
      const headers: Record<string, string> = who ? { authorization: `token ${who.token}` } : {}
      expect((await fetch(draftAsset.body.browser_download_url, { headers })).status).toBe(404)
      expect((await s.get(`/repos/alice/proj/releases/${draft.body.id}/assets`, who ? { token: who.token } : {})).status).toBe(404)
    }
    expect((await fetch(draftAsset.body.browser_download_url, { headers: { authorization: `token ${writer.token}` } })).status).toBe(200)
    expect((await fetch(`${s.url}/attachments/not-a-uuid`)).status).toBe(404)
    expect((await fetch(`${s.url}/attachments/${crypto.randomUUID()}`)).status).toBe(404)
  })

  test('deleting a release removes its assets\' files; deleting a repository removes all of its files', async () => {
    const rel = await s.post('/repos/alice/proj/releases', { tag_name: 'v12.0' }, asAlice())
    const up = await upload(s, `/repos/alice/proj/releases/${rel.body.id}/assets`, Buffer.from('bye'), { filename: 'bye.txt' })
    const path = join(s.dataDir, 'attachments', String(projId), up.body.uuid)
    expect(existsSync(path)).toBe(true)
    expect((await s.del(`/repos/alice/proj/releases/${rel.body.id}`, undefined, asAlice())).status).toBe(204)
    expect(existsSync(path)).toBe(false)
    expect((await s.deps.db.select().from(attachments)).some((a) => a.uuid === up.body.uuid)).toBe(false)

    const made = await s.post('/user/repos', { name: 'doomed', auto_init: true }, asAlice())
    const doomed = await s.post('/repos/alice/doomed/releases', { tag_name: 'd1' }, asAlice())
    expect((await upload(s, `/repos/alice/doomed/releases/${doomed.body.id}/assets`, Buffer.from('x'), { filename: 'x.txt' })).status).toBe(201)
    const folder = join(s.dataDir, 'attachments', String(made.body.id))
    expect(readdirSync(folder).length).toBe(1)
    expect((await s.del('/repos/alice/doomed', undefined, asAlice())).status).toBe(204)
    expect(existsSync(folder)).toBe(false)
  })

  test('the repair (the background sweep\'s) removes temporary files, files without rows and folders of deleted repositories left before the start, and keeps the rest', async () => {
    const root = join(s.dataDir, 'attachments')
    const kept = attachmentFiles(s).sort()
    writeFileSync(join(root, String(projId), `${crypto.randomUUID()}.part`), 'half')
    writeFileSync(join(root, String(projId), crypto.randomUUID()), 'orphan')
    mkdirSync(join(root, '987654'))
    writeFileSync(join(root, '987654', crypto.randomUUID()), 'gone repo')
    // (The kernel's change times come from a coarse clock: a margin on either side of the start.)
    await Bun.sleep(50)
    const startedAt = Date.now()
    await Bun.sleep(50)
    // An upload since the start: its file is in place, its row not yet written.
    const uploading = join(root, String(projId), crypto.randomUUID())
    writeFileSync(uploading, 'arriving')
    const result = await repairAttachments(s.deps, { before: startedAt })
    expect(result.removed.length).toBe(3)
    expect(result.missing).toEqual([])
    expect(attachmentFiles(s).sort()).toEqual([...kept, uploading.split('/').at(-1)!].sort())
    expect((await fetch(asset.browser_download_url)).status).toBe(200)
    // Without `before` (nothing else running): everything unaccounted for goes.
    expect((await repairAttachments(s.deps)).removed).toEqual([`${projId}/${uploading.split('/').at(-1)}`])
    expect(attachmentFiles(s).sort()).toEqual(kept)
  })
})

describe('the asset size limit', () => {
  let small: TestServer
  let owner: TestUser
  beforeAll(async () => {
    small = await startTestServer({ maxAttachmentSize: 4096 })
    owner = await small.user('alice')
    expect((await small.post('/user/repos', { name: 'r', auto_init: true }, { token: owner.token })).status).toBe(201)
    expect((await small.post('/repos/alice/r/releases', { tag_name: 'v1' }, { token: owner.token })).status).toBe(201)
  })
  afterAll(() => small.stop())

  test('an asset above the limit is refused with 413 and nothing is stored, whether its length is declared or not', async () => {
    const mark = contentMark(small.deps.db)
    const before = await mark()
    for (const chunked of [false, true]) {
      const res = await upload(small, '/repos/alice/r/releases/1/assets', randomBytes(4097), { chunked, token: owner.token })
      expect(res.status).toBe(413)
      expect(res.body.message).toContain('4096')
    }
    // Far above it, declared: refused before the body is read.
    const huge = await upload(small, '/repos/alice/r/releases/1/assets', randomBytes(3 * 1024 * 1024), { token: owner.token })
    expect(huge.status).toBe(413)
    expect(await mark()).toBe(before)
    expect(attachmentFiles(small)).toEqual([])
    // At the limit exactly, it is taken.
    const exact = await upload(small, '/repos/alice/r/releases/1/assets', randomBytes(4096), { token: owner.token })
    expect(exact.status).toBe(201)
    expect(exact.body.size).toBe(4096)
  })
})

describe('a real Gitea client (gitea-js)', () => {
  test('creates a release, uploads an asset as its own multipart form, lists, edits and deletes them', async () => {
    const api = giteaApi(s.url, { token: alice.token })
    const created = await api.repos.repoCreateRelease('alice', 'proj', { tag_name: 'sdk-1', name: 'From the SDK', body: 'notes', prerelease: true })
    expect(created.status).toBe(201)
    expect(created.data).toMatchObject({ tag_name: 'sdk-1', name: 'From the SDK', prerelease: true, draft: false })
    expect((await remoteTags('proj'))['sdk-1']).toBe(master)
    const content = randomBytes(70_000)
    const file = new File([content], 'sdk.tar.gz')
    const uploaded = await api.repos.repoCreateReleaseAttachment('alice', 'proj', created.data.id!, { attachment: file })
    expect(uploaded.status).toBe(201)
    expect(uploaded.data).toMatchObject({ name: 'sdk.tar.gz', size: content.length })
    const listed = await api.repos.repoListReleaseAttachments('alice', 'proj', created.data.id!)
    expect(listed.data.map((a) => a.name)).toEqual(['sdk.tar.gz'])
    const dl = await fetch(uploaded.data.browser_download_url!)
    expect(Buffer.from(await dl.arrayBuffer()).equals(content)).toBe(true)
    expect(dl.headers.get('content-type')).toBe('application/gzip')
    const edited = await api.repos.repoEditRelease('alice', 'proj', created.data.id!, { prerelease: false, name: 'Final' })
    expect(edited.data).toMatchObject({ prerelease: false, name: 'Final', body: 'notes' })
    expect((await api.repos.repoGetReleaseByTag('alice', 'proj', 'sdk-1')).data.id).toBe(created.data.id)
    const releasesList = await api.repos.repoListReleases('alice', 'proj', { limit: 50 })
    expect(releasesList.data.some((r) => r.id === created.data.id)).toBe(true)
    expect((await api.repos.repoDeleteReleaseAttachment('alice', 'proj', created.data.id!, uploaded.data.id!)).status).toBe(204)
    expect((await api.repos.repoDeleteRelease('alice', 'proj', created.data.id!)).status).toBe(204)
    expect((await remoteTags('proj'))['sdk-1']).toBe(master)
  })
})

describe('hostile uploads and names', () => {
  let releaseId: number
  beforeAll(async () => {
    releaseId = (await s.post('/repos/alice/proj/releases', { tag_name: 'v-hostile' }, asAlice())).body.id
  })

  test('uploads side by side cannot pass the number of assets a release holds', async () => {
    const tries = MAX_ASSETS_PER_RELEASE + 5
    const results = await Promise.all(
      Array.from({ length: tries }, (_, i) => upload(s, `/repos/alice/proj/releases/${releaseId}/assets?name=a${i}.txt`, Buffer.from(`asset ${i}`))),
    )
    expect(results.filter((r) => r.status === 201).length).toBe(MAX_ASSETS_PER_RELEASE)
    expect(results.filter((r) => r.status === 422).length).toBe(tries - MAX_ASSETS_PER_RELEASE)
    expect((await s.deps.db.select().from(attachments).where(eq(attachments.releaseId, releaseId))).length).toBe(MAX_ASSETS_PER_RELEASE)
    // Every refused upload's file is gone: the release's folder holds exactly the kept ones.
    const kept = new Set((await s.deps.db.select({ uuid: attachments.uuid }).from(attachments)).map((a) => a.uuid))
    expect(attachmentFiles(s).filter((f) => !kept.has(f))).toEqual([])
  })

  test('tag and asset names with a lone surrogate are refused (git would store another name than the one recorded)', async () => {
    const before = await remoteTags('proj')
    const tag = await s.post('/repos/alice/proj/releases', { tag_name: 'v\ud83d' }, asAlice())
    expect(tag.status).toBe(422)
    expect(await remoteTags('proj')).toEqual(before)
    const first = (await s.get(`/repos/alice/proj/releases/${releaseId}/assets?limit=1&page=1`)).body[0]
    const renamed = await s.patch(`/repos/alice/proj/releases/${releaseId}/assets/${first.id}`, { name: 'x\udc00.txt' }, asAlice())
    expect(renamed.status).toBe(422)
    expect((await s.get(`/repos/alice/proj/releases/${releaseId}/assets/${first.id}`)).body.name).toBe(first.name)
  })

  test('a preamble before the first boundary is skipped in small chunks up to its bound, refused past it', async () => {
    const other = (await s.post('/repos/alice/proj/releases', { tag_name: 'v-preamble' }, asAlice())).body.id
    const parts = multipartParts('attachment', 'after-preamble.bin')
    const send = (preamble: Buffer) => {
      const whole = Buffer.concat([preamble, parts.head, Buffer.from('content'), parts.tail])
      return fetch(`${s.url}/api/v1/repos/alice/proj/releases/${other}/assets`, {
        method: 'POST',
        headers: { 'content-type': parts.contentType, authorization: `token ${alice.token}` },
        body: new ReadableStream<Uint8Array>({
          start(controller) {
            for (let i = 0; i < whole.length; i += 16) controller.enqueue(whole.subarray(i, i + 16))
            controller.close()
          },
        }),
      })
    }
    const ok = await send(Buffer.alloc(60 * 1024, 'p'))
    expect(ok.status).toBe(201)
    expect(await (await fetch((await ok.json()).browser_download_url)).text()).toBe('content')
    const tooLong = await send(Buffer.alloc(80 * 1024, 'p'))
    expect(tooLong.status).toBe(400)
    expect((await tooLong.json()).message).toContain('does not start with its multipart boundary')
  })
})

describe('an archived repository', () => {
  test('every release and asset write answers 423 and changes nothing; reads and downloads still work', async () => {
    expect((await s.post('/user/repos', { name: 'shelf' }, asAlice())).status).toBe(201)
    await gitOk(work.dir, 'push', remoteUrl(s.url, 'alice/shelf.git', 'alice', alice.token), 'master')
    const rel = (await s.post('/repos/alice/shelf/releases', { tag_name: 'v1' }, asAlice())).body
    const asset = await upload(s, `/repos/alice/shelf/releases/${rel.id}/assets?name=kept.txt`, Buffer.from('kept'))
    expect(asset.status).toBe(201)
    expect((await s.patch('/repos/alice/shelf', { archived: true }, asAlice())).status).toBe(200)
    const mark = contentMark(s.deps.db)
    const before = await mark()
    const base = '/repos/alice/shelf/releases'
    const writes = [
      await s.post(base, { tag_name: 'v2' }, asAlice()),
      await s.patch(`${base}/${rel.id}`, { name: 'renamed' }, asAlice()),
      await s.del(`${base}/${rel.id}`, undefined, asAlice()),
      await s.del(`${base}/tags/v1`, undefined, asAlice()),
      await upload(s, `${base}/${rel.id}/assets?name=new.txt`, Buffer.from('new')),
      await s.patch(`${base}/${rel.id}/assets/${asset.body.id}`, { name: 'x.txt' }, asAlice()),
      await s.del(`${base}/${rel.id}/assets/${asset.body.id}`, undefined, asAlice()),
    ]
    expect(writes.map((r) => r.status)).toEqual(writes.map(() => 423))
    expect(await mark()).toBe(before)
    expect((await s.get(`${base}/${rel.id}`)).status).toBe(200)
    expect(await (await fetch(asset.body.browser_download_url)).text()).toBe('kept')
    expect(Object.keys(await remoteTags('shelf'))).toEqual(['v1'])
  })
})
