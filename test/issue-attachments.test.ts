import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { randomBytes } from 'node:crypto'
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { eq } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/bun-sqlite'
import { migrate } from 'drizzle-orm/bun-sqlite/migrator'
import { openDatabase } from '../src/db/client'
import { DIALECT } from '../src/db/dialect'
import { giteaApi } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { attachments, issues } from '../src/db/schema'
import { eventsOfRepo } from '../src/events/outbox'
import { MAX_ATTACHMENTS_PER_HOLDER } from '../src/modules/attachments/files'

let s: TestServer
let alice: TestUser, reader: TestUser, writer: TestUser, stranger: TestUser
let projId: number

/** Uploads `bytes` as the multipart field `attachment` (or `field`) named `filename`. */
async function upload(path: string, bytes: Uint8Array, filename: string, opts: { token?: string; field?: string; query?: string } = {}) {
  const form = new FormData()
  form.append('note', 'not the file')
  form.append(opts.field ?? 'attachment', new File([bytes as Uint8Array<ArrayBuffer>], filename))
  const headers: Record<string, string> = {}
  if (opts.token) headers.authorization = `token ${opts.token}`
  const res = await fetch(`${s.url}/api/v1${path}${opts.query ?? ''}`, { method: 'POST', headers, body: form })
  const text = await res.text()
  let body: any = null
  try {
    body = JSON.parse(text)
  } catch {}
  return { status: res.status, body }
}

/** The attachment files on disk (names are uuids). */
const filesOnDisk = () => {
  const root = join(s.dataDir, 'attachments')
  if (!existsSync(root)) return [] as string[]
  return readdirSync(root, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name)
}

const newIssue = async (repo: string, token: string, title = 'an issue') => {
  const res = await s.post(`/repos/alice/${repo}/issues`, { title, body: 'the body' }, { token })
  expect(res.status).toBe(201)
  return res.body as { number: number; id: number }
}

const newComment = async (repo: string, index: number, token: string) => {
  const res = await s.post(`/repos/alice/${repo}/issues/${index}/comments`, { body: 'a comment' }, { token })
  expect(res.status).toBe(201)
  return res.body as { id: number }
}

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  reader = await s.user('reader')
  writer = await s.user('writer')
  stranger = await s.user('stranger')
  for (const [name, priv] of [['proj', false], ['secret', true]] as const) {
    const res = await s.post('/user/repos', { name, private: priv }, { token: alice.token })
    expect(res.status).toBe(201)
    if (name === 'proj') projId = res.body.id
    for (const [who, permission] of [[reader, 'read'], [writer, 'write']] as const)
      expect((await s.put(`/repos/alice/${name}/collaborators/${who.name}`, { permission }, { token: alice.token })).status).toBe(204)
  }
})
afterAll(async () => {
  await s.stop()
})

describe('issue attachments through a real Gitea client (gitea-js)', () => {
  test('upload, list, get, rename, download the bytes back, delete; the Issue record lists them', async () => {
    const issue = await newIssue('proj', reader.token)
    // The poster (a reader) may attach files to their own issue.
    const api = giteaApi(s.url, { token: reader.token })
    const content = randomBytes(50_000)
    const lastEvent = (await eventsOfRepo(s.deps.db, projId, 0, 500)).at(-1)?.id ?? 0
    const created = await api.repos.issueCreateIssueAttachment('alice', 'proj', issue.number, { attachment: new File([content], 'trace.log') })
    expect(created.status).toBe(201)
    expect(created.data).toMatchObject({ name: 'trace.log', size: content.length, download_count: 0 })
    expect(created.data.browser_download_url).toBe(`${s.url}/attachments/${created.data.uuid}`)
    // Announced as Gitea does: the issue's content saved again, an `edited` with the body unchanged.
    const events = await eventsOfRepo(s.deps.db, projId, lastEvent)
    expect(events.map((e) => [e.kind, e.actorId])).toEqual([['issue.edited', reader.user.id]])
    expect(events[0]!.payload).toMatchObject({ index: issue.number, changes: { body: { from: 'the body' } } })

    const listed = await api.repos.issueListIssueAttachments('alice', 'proj', issue.number)
    expect(listed.data).toEqual([created.data])
    expect((await api.repos.issueGetIssueAttachment('alice', 'proj', issue.number, created.data.id!)).data).toEqual(created.data)
    // The Issue record (one and in lists) carries its assets.
    expect((await s.get(`/repos/alice/proj/issues/${issue.number}`)).body.assets).toEqual([created.data])
    const list = await s.get('/repos/alice/proj/issues?state=all&limit=50')
    expect(list.body.find((i: any) => i.number === issue.number).assets).toEqual([created.data])

    const renamed = await api.repos.issueEditIssueAttachment('alice', 'proj', issue.number, created.data.id!, { name: 'renamed.txt' })
    expect(renamed.status).toBe(201)
    expect(renamed.data).toMatchObject({ id: created.data.id, name: 'renamed.txt', uuid: created.data.uuid })
    // An empty name changes nothing (Gitea).
    expect((await api.repos.issueEditIssueAttachment('alice', 'proj', issue.number, created.data.id!, { name: '' })).data.name).toBe('renamed.txt')

    const dl = await fetch(created.data.browser_download_url!)
    expect(dl.status).toBe(200)
    expect(Buffer.from(await dl.arrayBuffer()).equals(content)).toBe(true)
    expect(dl.headers.get('content-disposition')).toContain('renamed.txt')
    expect((await api.repos.issueGetIssueAttachment('alice', 'proj', issue.number, created.data.id!)).data.download_count).toBe(1)

    expect(filesOnDisk()).toContain(created.data.uuid!)
    expect((await api.repos.issueDeleteIssueAttachment('alice', 'proj', issue.number, created.data.id!)).status).toBe(204)
    expect(filesOnDisk()).not.toContain(created.data.uuid!)
    expect((await s.get(`/repos/alice/proj/issues/${issue.number}/assets`)).body).toEqual([])
    expect((await fetch(created.data.browser_download_url!)).status).toBe(404)
  })

  test('comment attachments: upload (with ?name=), list, rename, delete; the Comment record lists them', async () => {
    const issue = await newIssue('proj', writer.token)
    const comment = await newComment('proj', issue.number, writer.token)
    const api = giteaApi(s.url, { token: writer.token })
    const lastEvent = (await eventsOfRepo(s.deps.db, projId, 0, 500)).at(-1)?.id ?? 0
    const content = randomBytes(1234)
    const created = await api.repos.issueCreateIssueCommentAttachment('alice', 'proj', comment.id, { attachment: new File([content], 'x.bin') }, { name: 'shot.png' })
    expect(created.status).toBe(201)
    expect(created.data).toMatchObject({ name: 'shot.png', size: 1234 })
    const events = await eventsOfRepo(s.deps.db, projId, lastEvent)
    expect(events.map((e) => [e.kind, e.actorId, e.commentId])).toEqual([['comment.edited', writer.user.id, comment.id]])
    expect(events[0]!.payload).toMatchObject({ changes: { body: { from: 'a comment' } } })

    expect((await api.repos.issueListIssueCommentAttachments('alice', 'proj', comment.id)).data).toEqual([created.data])
    // The Comment record as an edit answers it, and in the issue's list.
    const record = await s.patch(`/repos/alice/proj/issues/comments/${comment.id}`, { body: 'a comment' }, { token: writer.token })
    expect(record.body.assets).toEqual([created.data])
    const comments = await s.get(`/repos/alice/proj/issues/${issue.number}/comments`)
    expect(comments.body[0].assets).toEqual([created.data])
    // The comment's file is not one of the issue's own.
    expect((await s.get(`/repos/alice/proj/issues/${issue.number}`)).body.assets).toEqual([])
    expect((await s.get(`/repos/alice/proj/issues/${issue.number}/assets/${created.data.id}`)).status).toBe(404)

    const dl = await fetch(created.data.browser_download_url!)
    expect(Buffer.from(await dl.arrayBuffer()).equals(content)).toBe(true)
    expect(dl.headers.get('content-type')).toBe('image/png')

    const renamed = await api.repos.issueEditIssueCommentAttachment('alice', 'proj', comment.id, created.data.id!, { name: 'shot.jpg' })
    expect(renamed.status).toBe(201)
    expect(renamed.data.name).toBe('shot.jpg')
    expect((await api.repos.issueDeleteIssueCommentAttachment('alice', 'proj', comment.id, created.data.id!)).status).toBe(204)
    expect((await api.repos.issueListIssueCommentAttachments('alice', 'proj', comment.id)).data).toEqual([])
    expect(filesOnDisk()).not.toContain(created.data.uuid!)
  })
})

describe('who may', () => {
  let issueNo: number
  let secretIssue: number
  let assetId: number
  let secretUuid: string
  beforeAll(async () => {
    issueNo = (await newIssue('proj', writer.token)).number
    const up = await upload(`/repos/alice/proj/issues/${issueNo}/assets`, randomBytes(10), 'a.txt', { token: writer.token })
    expect(up.status).toBe(201)
    assetId = up.body.id
    secretIssue = (await newIssue('secret', alice.token)).number
    const sec = await upload(`/repos/alice/secret/issues/${secretIssue}/assets`, randomBytes(10), 'b.txt', { token: alice.token })
    expect(sec.status).toBe(201)
    secretUuid = sec.body.uuid
  })

  test('readers list and get; others than the poster and writers get 403; nothing is stored', async () => {
    expect((await s.get(`/repos/alice/proj/issues/${issueNo}/assets`)).body.map((a: any) => a.id)).toEqual([assetId])
    expect((await s.get(`/repos/alice/proj/issues/${issueNo}/assets/${assetId}`, { token: reader.token })).status).toBe(200)
    const before = filesOnDisk().length
    expect((await upload(`/repos/alice/proj/issues/${issueNo}/assets`, randomBytes(10), 'c.txt', { token: reader.token })).status).toBe(403)
    expect((await upload(`/repos/alice/proj/issues/${issueNo}/assets`, randomBytes(10), 'c.txt', { token: stranger.token })).status).toBe(403)
    expect((await upload(`/repos/alice/proj/issues/${issueNo}/assets`, randomBytes(10), 'c.txt')).status).toBe(401)
    expect(filesOnDisk().length).toBe(before)
    expect((await s.patch(`/repos/alice/proj/issues/${issueNo}/assets/${assetId}`, { name: 'z.txt' }, { token: reader.token })).status).toBe(403)
    expect((await s.del(`/repos/alice/proj/issues/${issueNo}/assets/${assetId}`, undefined, { token: stranger.token })).status).toBe(403)
    expect((await s.get(`/repos/alice/proj/issues/${issueNo}/assets/${assetId}`)).body.name).toBe('a.txt')
  })

  test('a private repository: 404 for those who cannot read it, the listing and the download alike', async () => {
    expect((await s.get(`/repos/alice/secret/issues/${secretIssue}/assets`, { token: stranger.token })).status).toBe(404)
    expect((await upload(`/repos/alice/secret/issues/${secretIssue}/assets`, randomBytes(10), 'c.txt', { token: stranger.token })).status).toBe(404)
    expect((await fetch(`${s.url}/attachments/${secretUuid}`)).status).toBe(404)
    expect((await fetch(`${s.url}/attachments/${secretUuid}`, { headers: { authorization: `token ${stranger.token}` } })).status).toBe(404)
    expect((await fetch(`${s.url}/attachments/${secretUuid}`, { headers: { authorization: `token ${reader.token}` } })).status).toBe(200)
  })

  test('404s: an issue, a comment or an attachment that is not there, or not of that issue', async () => {
    expect((await s.get('/repos/alice/proj/issues/9999/assets')).status).toBe(404)
    expect((await upload('/repos/alice/proj/issues/9999/assets', randomBytes(10), 'c.txt', { token: writer.token })).status).toBe(404)
    expect((await s.get(`/repos/alice/proj/issues/${issueNo}/assets/999999`)).status).toBe(404)
    expect((await s.get(`/repos/alice/proj/issues/${issueNo}/assets/nope`)).status).toBe(404)
    const other = await newIssue('proj', writer.token)
    expect((await s.get(`/repos/alice/proj/issues/${other.number}/assets/${assetId}`)).status).toBe(404)
    expect((await s.del(`/repos/alice/proj/issues/${other.number}/assets/${assetId}`, undefined, { token: writer.token })).status).toBe(404)
    // The secret repository's issue attachment, asked for through the public one.
    expect((await s.get('/repos/alice/proj/issues/comments/999999/assets')).status).toBe(404)
    const secretComment = await newComment('secret', secretIssue, alice.token)
    expect((await s.get(`/repos/alice/proj/issues/comments/${secretComment.id}/assets`, { token: alice.token })).status).toBe(404)
  })

  test("a locked issue: its poster, if not a writer, may no longer change its files", async () => {
    const issue = await newIssue('proj', reader.token)
    expect((await upload(`/repos/alice/proj/issues/${issue.number}/assets`, randomBytes(10), 'c.txt', { token: reader.token })).status).toBe(201)
    await s.deps.db.update(issues).set({ isLocked: true }).where(eq(issues.id, issue.id))
    const refused = await upload(`/repos/alice/proj/issues/${issue.number}/assets`, randomBytes(10), 'd.txt', { token: reader.token })
    expect(refused.status).toBe(403)
    expect(refused.body.message).toBeString()
    expect((await upload(`/repos/alice/proj/issues/${issue.number}/assets`, randomBytes(10), 'd.txt', { token: writer.token })).status).toBe(201)
  })

  test("a comment's files: writers who posted it, or administer the repository (Gitea's rule)", async () => {
    const issue = await newIssue('proj', reader.token)
    const readersComment = await newComment('proj', issue.number, reader.token)
    const writersComment = await newComment('proj', issue.number, writer.token)
    // A reader, even the comment's poster: 403 (Gitea asks write access too).
    expect((await upload(`/repos/alice/proj/issues/comments/${readersComment.id}/assets`, randomBytes(10), 'c.txt', { token: reader.token })).status).toBe(403)
    // A writer on someone else's comment: 403.
    expect((await upload(`/repos/alice/proj/issues/comments/${readersComment.id}/assets`, randomBytes(10), 'c.txt', { token: writer.token })).status).toBe(403)
    // The owner (an admin of the repository) on anyone's: 201.
    const byOwner = await upload(`/repos/alice/proj/issues/comments/${readersComment.id}/assets`, randomBytes(10), 'c.txt', { token: alice.token })
    expect(byOwner.status).toBe(201)
    expect((await upload(`/repos/alice/proj/issues/comments/${writersComment.id}/assets`, randomBytes(10), 'c.txt', { token: writer.token })).status).toBe(201)
    // Readers list and get them; the comment's poster without write access may not delete them.
    expect((await s.get(`/repos/alice/proj/issues/comments/${readersComment.id}/assets/${byOwner.body.id}`, { token: reader.token })).status).toBe(200)
    expect((await s.del(`/repos/alice/proj/issues/comments/${readersComment.id}/assets/${byOwner.body.id}`, undefined, { token: reader.token })).status).toBe(403)
    // An attachment of another comment: 404.
    expect((await s.get(`/repos/alice/proj/issues/comments/${writersComment.id}/assets/${byOwner.body.id}`)).status).toBe(404)
  })
})

describe('bounds: size, type, name, count', () => {
  let issueNo: number
  beforeAll(async () => {
    issueNo = (await newIssue('proj', writer.token)).number
  })

  test('past WARREN_MAX_ATTACHMENT_SIZE: 413, nothing kept', async () => {
    const limit = s.config.maxAttachmentSize
    s.config.maxAttachmentSize = 4096
    try {
      const before = filesOnDisk().length
      const res = await upload(`/repos/alice/proj/issues/${issueNo}/assets`, randomBytes(5000), 'big.txt', { token: writer.token })
      expect(res.status).toBe(413)
      expect(res.body.message).toContain('4096')
      expect(filesOnDisk().length).toBe(before)
      expect((await upload(`/repos/alice/proj/issues/${issueNo}/assets`, randomBytes(4096), 'exact.txt', { token: writer.token })).status).toBe(201)
    } finally {
      s.config.maxAttachmentSize = limit
    }
  })

  test('a type not allowed: 422 on upload (file name or ?name=) and on rename; nothing kept', async () => {
    const before = filesOnDisk().length
    const exe = await upload(`/repos/alice/proj/issues/${issueNo}/assets`, randomBytes(100), 'tool.exe', { token: writer.token })
    expect(exe.status).toBe(422)
    expect(exe.body.message).toContain('forbidden file extension or type')
    expect((await upload(`/repos/alice/proj/issues/${issueNo}/assets`, randomBytes(100), 'ok.txt', { token: writer.token, query: '?name=run.sh' })).status).toBe(422)
    expect(filesOnDisk().length).toBe(before)
    const ok = await upload(`/repos/alice/proj/issues/${issueNo}/assets`, randomBytes(100), 'Notes.TXT', { token: writer.token })
    expect(ok.status).toBe(201)
    const renamed = await s.patch(`/repos/alice/proj/issues/${issueNo}/assets/${ok.body.id}`, { name: 'notes.exe' }, { token: writer.token })
    expect(renamed.status).toBe(422)
    expect((await s.get(`/repos/alice/proj/issues/${issueNo}/assets/${ok.body.id}`)).body.name).toBe('Notes.TXT')
    // A MIME wildcard in the setting, which the settings API shows.
    const allowed = s.config.attachmentAllowedTypes
    s.config.attachmentAllowedTypes = ['image/*', '.log']
    try {
      expect((await s.get('/settings/attachment')).body.allowed_types).toBe('image/*,.log')
      expect((await upload(`/repos/alice/proj/issues/${issueNo}/assets`, randomBytes(10), 'pic.webp', { token: writer.token })).status).toBe(201)
      expect((await upload(`/repos/alice/proj/issues/${issueNo}/assets`, randomBytes(10), 'x.log', { token: writer.token })).status).toBe(201)
      expect((await upload(`/repos/alice/proj/issues/${issueNo}/assets`, randomBytes(10), 'x.txt', { token: writer.token })).status).toBe(422)
    } finally {
      s.config.attachmentAllowedTypes = allowed
    }
    expect((await s.get('/settings/attachment')).body.allowed_types).toContain('.png')
  })

  test('bad bodies and names: 400 and 422', async () => {
    const notMultipart = await s.post(`/repos/alice/proj/issues/${issueNo}/assets`, { attachment: 'x' }, { token: writer.token })
    expect(notMultipart.status).toBe(400)
    expect((await upload(`/repos/alice/proj/issues/${issueNo}/assets`, randomBytes(10), 'a.txt', { token: writer.token, field: 'file' })).status).toBe(400)
    expect((await upload(`/repos/alice/proj/issues/${issueNo}/assets`, randomBytes(10), 'a.txt', { token: writer.token, query: '?name=..' })).status).toBe(422)
  })

  test(`an issue holds at most ${MAX_ATTACHMENTS_PER_HOLDER} files`, async () => {
    const issue = await newIssue('proj', writer.token)
    const rows = Array.from({ length: MAX_ATTACHMENTS_PER_HOLDER }, (_, i) => ({
      uuid: crypto.randomUUID(),
      repoId: projId,
      issueId: issue.id,
      uploaderId: writer.user.id,
      name: `f${i}.txt`,
      size: 0,
      createdUnix: 0,
    }))
    await s.deps.db.insert(attachments).values(rows)
    const res = await upload(`/repos/alice/proj/issues/${issue.number}/assets`, randomBytes(10), 'one-more.txt', { token: writer.token })
    expect(res.status).toBe(422)
    await s.deps.db.delete(attachments).where(eq(attachments.issueId, issue.id))
  })
})

describe('deleting what holds them', () => {
  test("deleting a comment removes its attachments' rows and files", async () => {
    const issue = await newIssue('proj', writer.token)
    const comment = await newComment('proj', issue.number, writer.token)
    const up = await upload(`/repos/alice/proj/issues/comments/${comment.id}/assets`, randomBytes(10), 'c.txt', { token: writer.token })
    expect(up.status).toBe(201)
    expect(filesOnDisk()).toContain(up.body.uuid)
    expect((await s.del(`/repos/alice/proj/issues/comments/${comment.id}`, undefined, { token: writer.token })).status).toBe(204)
    expect(await s.deps.db.select().from(attachments).where(eq(attachments.id, up.body.id))).toEqual([])
    expect(filesOnDisk()).not.toContain(up.body.uuid)
  })

  test("deleting an issue removes its own and its comments' attachments, rows and files", async () => {
    const issue = await newIssue('proj', writer.token)
    const comment = await newComment('proj', issue.number, writer.token)
    const own = await upload(`/repos/alice/proj/issues/${issue.number}/assets`, randomBytes(10), 'i.txt', { token: writer.token })
    const ofComment = await upload(`/repos/alice/proj/issues/comments/${comment.id}/assets`, randomBytes(10), 'c.txt', { token: writer.token })
    expect([own.status, ofComment.status]).toEqual([201, 201])
    expect((await s.del(`/repos/alice/proj/issues/${issue.number}`, undefined, { token: alice.token })).status).toBe(204)
    expect(await s.deps.db.select().from(attachments).where(eq(attachments.issueId, issue.id))).toEqual([])
    expect(filesOnDisk()).not.toContain(own.body.uuid)
    expect(filesOnDisk()).not.toContain(ofComment.body.uuid)
    expect((await fetch(own.body.browser_download_url)).status).toBe(404)
  })
})

describe('the web issue page', () => {
  test("lists the issue's and each comment's attachments as download links under them", async () => {
    const issue = await newIssue('proj', writer.token, 'with files')
    const comment = await newComment('proj', issue.number, writer.token)
    const own = await upload(`/repos/alice/proj/issues/${issue.number}/assets`, randomBytes(2048), 'report <1>.txt', { token: writer.token })
    const ofComment = await upload(`/repos/alice/proj/issues/comments/${comment.id}/assets`, randomBytes(10), 'shot.png', { token: writer.token })
    expect([own.status, ofComment.status]).toEqual([201, 201])
    const res = await fetch(`${s.url}/alice/proj/issues/${issue.number}`)
    expect(res.status).toBe(200)
    const html = await res.text()
    const body = html.slice(html.indexOf('id="issue-body"'), html.indexOf(`id="issuecomment-${comment.id}"`))
    expect(body).toContain(`href="${own.body.browser_download_url}"`)
    expect(body).toContain('report &lt;1&gt;.txt')
    expect(body).toContain('2.0 KiB')
    const commentPart = html.slice(html.indexOf(`id="issuecomment-${comment.id}"`))
    expect(commentPart).toContain(`href="${ofComment.body.browser_download_url}"`)
    expect(commentPart).not.toContain(own.body.browser_download_url)
  })
})

// Upgrading a SQLite data folder made before issues had attachments: SQLite's table rebuild of
// `attachments` (release_id made nullable). PostgreSQL alters its column in place (drizzle-pg).
describe.skipIf(DIALECT === 'postgres')('upgrading a data folder made before issue attachments', () => {
  test("release assets survive the attachments table's rebuild, with their indexes and cascade", () => {
    const migrationsFolder = resolve(import.meta.dir, '../drizzle')
    const oldMigrations = mkdtempSync(join(tmpdir(), 'warren-attach-old-migrations-'))
    const dataDir = mkdtempSync(join(tmpdir(), 'warren-attach-old-data-'))
    try {
      const journal = JSON.parse(readFileSync(join(migrationsFolder, 'meta/_journal.json'), 'utf8'))
      // The journal cut before this change's migration (whatever number it ends up with).
      const at = journal.entries.findIndex((e: any) => String(e.tag).endsWith('_issue_attachments'))
      expect(at).toBeGreaterThan(0)
      journal.entries = journal.entries.slice(0, at)
      mkdirSync(join(oldMigrations, 'meta'))
      writeFileSync(join(oldMigrations, 'meta/_journal.json'), JSON.stringify(journal))
      for (const e of journal.entries) copyFileSync(join(migrationsFolder, `${e.tag}.sql`), join(oldMigrations, `${e.tag}.sql`))
      const old = new Database(join(dataDir, 'warren.db'), { create: true, strict: true })
      old.exec('PRAGMA journal_mode = WAL')
      migrate(drizzle({ client: old }), { migrationsFolder: oldMigrations })
      old.exec(`
        INSERT INTO users (id, name, lower_name, created_unix, updated_unix) VALUES (1, 'ann', 'ann', 1, 1);
        INSERT INTO repositories (id, owner_id, owner_name, name, lower_name, created_unix, updated_unix) VALUES (1, 1, 'ann', 'r', 'r', 1, 1);
        INSERT INTO releases (id, repo_id, publisher_id, tag_name, lower_tag_name, created_unix, updated_unix) VALUES (5, 1, 1, 'v1', 'v1', 1, 1);
        INSERT INTO attachments (id, uuid, repo_id, release_id, uploader_id, name, size, download_count, created_unix) VALUES (3, 'u-1', 1, 5, 1, 'a.bin', 42, 7, 2);
      `)
      old.close()

      const db = openDatabase(dataDir)
      const c = db.$client
      expect(c.prepare('SELECT id, uuid, repo_id, release_id, issue_id, comment_id, name, size, download_count FROM attachments').all()).toEqual([
        { id: 3, uuid: 'u-1', repo_id: 1, release_id: 5, issue_id: null, comment_id: null, name: 'a.bin', size: 42, download_count: 7 },
      ])
      const indexes = (c.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'attachments'").all() as any[]).map((r) => r.name)
      expect(indexes).toEqual(
        expect.arrayContaining(['attachments_uuid_uq', 'attachments_release_name_uq', 'attachments_repo_idx', 'attachments_issue_idx', 'attachments_comment_idx']),
      )
      expect(c.prepare('PRAGMA foreign_keys').get()).toEqual({ foreign_keys: 1 })
      c.exec('DELETE FROM releases WHERE id = 5')
      expect(c.prepare('SELECT count(*) AS n FROM attachments').get()).toEqual({ n: 0 })
      c.close()
    } finally {
      rmSync(oldMigrations, { recursive: true, force: true })
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
