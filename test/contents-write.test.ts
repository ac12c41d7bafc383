/**
 * The contents API's writes through gitea-js: every commit checked in a real clone (author,
 * committer, dates, message, sign-off, branch, the other files untouched), the push it makes
 * delivered as a webhook, and every refusal leaving the repository's refs as they were.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { giteaApi, type Api } from 'gitea-js'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, oneCommitRepo, remoteUrl, tempDir } from './git-fixture'
import { join } from 'node:path'
import { missingGiteaFields } from './gitea-types'
import { blobIdOf, keptIndexesUsed } from '../src/git/tree-write'
import { startReceiver, until, type Receiver } from './webhook-receiver'

let s: TestServer
let worker: ReturnType<typeof startWebhookWorker>
let rx: Receiver
let alice: TestUser, bob: TestUser
let asAlice: Api<unknown>, asBob: Api<unknown>, anon: Api<unknown>
let clone: string
const dirs: string[] = []

const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64')
const urlOf = (repo: string) => remoteUrl(s.url, `alice/${repo}.git`, 'alice', alice.token)
/** A failing gitea-js call: its status (the call must fail). */
const failure = (call: Promise<unknown>) =>
  call.then(
    () => 200,
    (e: { status: number }) => e.status,
  )

/** The clone, fetched now: `git <args>` in it. */
async function inClone(...args: string[]): Promise<string> {
  await gitOk(clone, 'fetch', '-q', '--prune', 'origin', '+refs/heads/*:refs/remotes/origin/*')
  return (await gitOk(clone, ...args)).trim()
}
const refsNow = async (repo = 'proj') => (await gitOk(clone, 'ls-remote', urlOf(repo))).trim()

beforeAll(async () => {
  s = await startTestServer({ webhookAllowedHostList: 'loopback', webhookRetryDelay: 0.05, maxBlobSize: 1024 })
  worker = startWebhookWorker(s.deps, { pollMs: 10 })
  rx = await startReceiver()
  alice = await s.user('alice')
  bob = await s.user('bob')
  asAlice = giteaApi(s.url, { token: alice.token })
  asBob = giteaApi(s.url, { token: bob.token })
  anon = giteaApi(s.url, {})
  for (const name of ['proj', 'void', 'frozen'])
    expect((await s.post('/user/repos', { name, default_branch: 'main' }, { token: alice.token })).status).toBe(201)
  const work = await oneCommitRepo()
  dirs.push(work)
  for (const name of ['proj', 'frozen']) await gitOk(work, 'push', '-q', urlOf(name), 'main')
  expect((await s.patch('/repos/alice/frozen', { archived: true }, { token: alice.token })).status).toBe(200)
  expect((await s.put('/repos/alice/proj/collaborators/bob', { permission: 'read' }, { token: alice.token })).status).toBe(204)
  expect((await s.post('/repos/alice/proj/hooks', { type: 'gitea', config: { url: rx.url('/proj'), content_type: 'json' }, events: ['push'], active: true }, { token: alice.token })).status).toBe(201)
  clone = tempDir('warren-clone-')
  dirs.push(clone)
  await gitOk(clone, 'clone', '-q', urlOf('proj'), '.')
})
afterAll(async () => {
  await worker.stop()
  rx.stop()
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('single-file writes', () => {
  test('create: the commit in a clone has the given people, dates, message and sign-off; the push is delivered', async () => {
    const before = await inClone('rev-parse', 'origin/main')
    const res = await asAlice.repos.repoCreateFile('alice', 'proj', 'docs/new file.txt', {
      content: b64('hello\n'),
      message: 'Add the notes',
      author: { name: 'Ann Author', email: 'ann@example.com' },
      committer: { name: 'Carl Committer', email: 'carl@example.com' },
      dates: { author: '2020-01-02T03:04:05Z', committer: '2021-02-03T04:05:06Z' },
      signoff: true,
    })
    expect(res.status).toBe(201)
    const { content, commit } = res.data
    expect(missingGiteaFields('FileResponse', res.data)).toEqual([])
    expect(missingGiteaFields('ContentsResponse', content!)).toEqual([])
    expect(missingGiteaFields('FileCommitResponse', commit!)).toEqual([])
    expect(content).toMatchObject({ path: 'docs/new file.txt', type: 'file', content: b64('hello\n'), size: 6, last_commit_sha: commit!.sha })
    expect(commit!.author).toEqual({ name: 'Ann Author', email: 'ann@example.com', date: '2020-01-02T03:04:05Z' })
    expect(commit!.parents!.map((p) => p.sha)).toEqual([before])

    expect(await inClone('rev-parse', 'origin/main')).toBe(commit!.sha!)
    expect(await inClone('log', '-1', '--format=%an|%ae|%aI|%cn|%ce|%cI', 'origin/main')).toBe(
      'Ann Author|ann@example.com|2020-01-02T03:04:05+00:00|Carl Committer|carl@example.com|2021-02-03T04:05:06+00:00',
    )
    expect(await inClone('log', '-1', '--format=%B', 'origin/main')).toBe('Add the notes\n\nSigned-off-by: Carl Committer <carl@example.com>')
    expect(await inClone('show', 'origin/main:docs/new file.txt')).toBe('hello')
    // Only the new file changed.
    expect(await inClone('diff', '--name-only', before, 'origin/main')).toBe('docs/new file.txt')
    expect(await inClone('show', 'origin/main:a.txt')).toBe('one')

    const push = await until(() => rx.received.find((r) => r.headers['x-gitea-event'] === 'push' && r.payload.after === commit!.sha), 'the push delivery')
    expect(push.payload.ref).toBe('refs/heads/main')
    expect(push.payload.before).toBe(before)
    expect(push.payload.pusher.login).toBe('alice')
  })

  test('update with the blob sha (the caller as author and committer, the default message); a stale sha is refused', async () => {
    const sha = await inClone('rev-parse', 'origin/main:a.txt')
    const res = await asAlice.repos.repoUpdateFile('alice', 'proj', 'a.txt', { content: b64('two\n'), sha })
    expect(res.status).toBe(200)
    expect(await inClone('log', '-1', '--format=%an|%ae|%cn|%B', 'origin/main')).toBe('alice|alice@example.com|alice|Update a.txt')
    expect(await inClone('show', 'origin/main:a.txt')).toBe('two')
    const refs = await refsNow()
    expect(await failure(asAlice.repos.repoUpdateFile('alice', 'proj', 'a.txt', { content: b64('three\n'), sha }))).toBe(422)
    expect(await failure(asAlice.repos.repoUpdateFile('alice', 'proj', 'missing.txt', { content: b64('x'), sha }))).toBe(404)
    expect(await refsNow()).toBe(refs)
  })

  test('update with from_path moves the file; delete with the sha', async () => {
    const sha = await inClone('rev-parse', 'origin/main:a.txt')
    const moved = await asAlice.repos.repoUpdateFile('alice', 'proj', 'moved/b.txt', { content: b64('two\n'), sha, from_path: 'a.txt' })
    expect(moved.data.content!.path).toBe('moved/b.txt')
    expect(await inClone('ls-tree', '-r', '--name-only', 'origin/main')).toBe('docs/new file.txt\nmoved/b.txt')
    const del = await asAlice.repos.repoDeleteFile('alice', 'proj', 'moved/b.txt', { sha })
    expect(del.status).toBe(200)
    expect(del.data.content).toBeNull()
    expect(missingGiteaFields('FileDeleteResponse', del.data)).toEqual([])
    expect(await inClone('log', '-1', '--format=%B', 'origin/main')).toBe('Delete moved/b.txt')
    expect(await inClone('ls-tree', '-r', '--name-only', 'origin/main')).toBe('docs/new file.txt')
    expect(await failure(asAlice.repos.repoDeleteFile('alice', 'proj', 'moved/b.txt', { sha }))).toBe(404)
  })

  test('new_branch: made from branch; an existing one or a missing base branch is refused', async () => {
    const main = await inClone('rev-parse', 'origin/main')
    const res = await asAlice.repos.repoCreateFile('alice', 'proj', 'feature.txt', { content: b64('f\n'), new_branch: 'topic/one' })
    expect(res.data.content!.html_url).toBe(`${s.url}/alice/proj/src/branch/topic/one/feature.txt`)
    expect(await inClone('rev-parse', 'origin/topic/one^')).toBe(main)
    expect(await inClone('rev-parse', 'origin/main')).toBe(main)
    const refs = await refsNow()
    expect(await failure(asAlice.repos.repoCreateFile('alice', 'proj', 'g.txt', { content: b64('g'), new_branch: 'topic/one' }))).toBe(422)
    expect(await failure(asAlice.repos.repoCreateFile('alice', 'proj', 'g.txt', { content: b64('g'), branch: 'nope' }))).toBe(404)
    expect(await failure(asAlice.repos.repoCreateFile('alice', 'proj', 'g.txt', { content: b64('g'), new_branch: 'bad..name' }))).toBe(422)
    expect(await refsNow()).toBe(refs)
  })

  test('refusals change nothing: readers, anonymous, archived, bad paths, not base64, too large, existing files', async () => {
    const refs = await refsNow()
    const body = { content: b64('x') }
    expect(await failure(asBob.repos.repoCreateFile('alice', 'proj', 'x.txt', body))).toBe(403)
    expect(await failure(anon.repos.repoCreateFile('alice', 'proj', 'x.txt', body))).toBe(401)
    expect(await failure(asAlice.repos.repoCreateFile('alice', 'frozen', 'x.txt', body))).toBe(423)
    for (const bad of ['a%2F..%2F..%2Fx', '.git/hooks/pre-receive', 'sub/.GIT/config', '%2Fabs.txt'])
      expect((await s.post(`/repos/alice/proj/contents/${bad}`, body, { token: alice.token })).status).toBe(422)
    expect((await s.post('/repos/alice/proj/contents', { files: [{ operation: 'create', path: '../x', content: b64('x') }] }, { token: alice.token })).status).toBe(422)
    expect((await s.post('/repos/alice/proj/contents', { files: [{ operation: 'create', path: 'x\u0001y', content: b64('x') }] }, { token: alice.token })).status).toBe(422)
    expect(await failure(asAlice.repos.repoCreateFile('alice', 'proj', 'x.txt', { content: 'not base64!' }))).toBe(422)
    expect(await failure(asAlice.repos.repoCreateFile('alice', 'proj', 'x.txt', { content: b64(Buffer.alloc(2000)) }))).toBe(413)
    // A 50 MiB file: past the API body bound before anything is decoded (413 in the error shape).
    const huge = await s.post('/repos/alice/proj/contents/huge.bin', { content: b64(Buffer.alloc(50 * 1024 * 1024, 7)) }, { token: alice.token })
    expect([huge.status, typeof huge.body?.message]).toEqual([413, 'string'])
    expect(await failure(asAlice.repos.repoCreateFile('alice', 'proj', 'docs/new file.txt', body))).toBe(422)
    // A file where a folder would have to be, and a folder where the file would be.
    expect(await failure(asAlice.repos.repoCreateFile('alice', 'proj', 'docs/new file.txt/inner', body))).toBe(422)
    expect(await failure(asAlice.repos.repoCreateFile('alice', 'proj', 'docs', body))).toBe(422)
    expect(await failure(asAlice.repos.repoUpdateFile('alice', 'proj', 'docs/new file.txt', { content: b64('y'), sha: 'f'.repeat(40), from_path: '../etc' }))).toBe(422)
    expect(await refsNow()).toBe(refs)
  })
})

describe('several files in one commit', () => {
  test('create, update and delete together; one commit, a record per file (null when deleted)', async () => {
    const before = await inClone('rev-parse', 'origin/main')
    const sha = await inClone('rev-parse', 'origin/main:docs/new file.txt')
    const res = await asAlice.repos.repoChangeFiles('alice', 'proj', {
      files: [
        { operation: 'create', path: 'one.txt', content: b64('1\n') },
        { operation: 'create', path: 'dir/two.txt', content: b64('2\n') },
        { operation: 'delete', path: 'docs/new file.txt', sha },
      ],
    })
    expect(res.status).toBe(201)
    expect(missingGiteaFields('FilesResponse', res.data)).toEqual([])
    expect(res.data.files!.map((f) => f?.path ?? null)).toEqual(['one.txt', 'dir/two.txt', null])
    expect(await inClone('rev-parse', 'origin/main^')).toBe(before)
    expect(await inClone('log', '-1', '--format=%B', 'origin/main')).toBe('Add one.txt, dir/two.txt\nDelete docs/new file.txt')
    expect(await inClone('ls-tree', '-r', '--name-only', 'origin/main')).toBe('dir/two.txt\none.txt')
    // One bad change refuses them all.
    const refs = await refsNow()
    const bad = asAlice.repos.repoChangeFiles('alice', 'proj', {
      files: [
        { operation: 'create', path: 'three.txt', content: b64('3') },
        { operation: 'update', path: 'one.txt', content: b64('1b'), sha: '0'.repeat(40) },
      ],
    })
    expect(await failure(bad)).toBe(422)
    expect(await refsNow()).toBe(refs)
  })
})

describe('the index a change leaves, kept for the next', () => {
  test('the same branch edited again starts from it; another base never does; every tree is the change on its own base', async () => {
    expect((await s.post('/user/repos', { name: 'indexed', default_branch: 'main', auto_init: true }, { token: alice.token })).status).toBe(201)
    const write = async (files: { operation: string; path: string; content?: string }[], extra: Record<string, unknown> = {}) => {
      const r = await s.post('/repos/alice/indexed/contents', { branch: 'main', message: 'change', files, ...extra }, { token: alice.token })
      expect(r.status).toBe(201)
      return r.body.commit.sha as string
    }
    // Names with a space take the index's way (git/tree-write.ts: plain names are built folder by folder, test/tree-write.test.ts).
    const paths = async (ref: string) =>
      (await s.get(`/repos/alice/indexed/git/trees/${ref}?recursive=1`)).body.tree.filter((e: { type: string }) => e.type === 'blob').map((e: { path: string }) => e.path)
    await write([{ operation: 'create', path: 'a/one 1.txt', content: b64('1\n') }])
    const used = keptIndexesUsed()
    await write([{ operation: 'create', path: 'a/two 2.txt', content: b64('2\n') }, { operation: 'create', path: 'b b.txt', content: b64('b\n') }])
    expect(keptIndexesUsed()).toBe(used + 1)
    expect(await paths('main')).toEqual(['README.md', 'a/one 1.txt', 'a/two 2.txt', 'b b.txt'])
    // A branch made from main's head: the same base tree, the kept index taken again.
    const side = await write([{ operation: 'create', path: 'side s.txt', content: b64('s\n') }], { branch: 'main', new_branch: 'side' })
    expect(keptIndexesUsed()).toBe(used + 2)
    expect(await paths(side)).toEqual(['README.md', 'a/one 1.txt', 'a/two 2.txt', 'b b.txt', 'side s.txt'])
    // Back on main: the kept index holds side's tree, not main's: main's is read afresh, without side's file.
    await write([{ operation: 'create', path: 'c c.txt', content: b64('c\n') }])
    expect(keptIndexesUsed()).toBe(used + 2)
    expect(await paths('main')).toEqual(['README.md', 'a/one 1.txt', 'a/two 2.txt', 'b b.txt', 'c c.txt'])
    // A change refused after the index was taken (a file inside a file): the next change is still its base's own.
    const refused = await s.post('/repos/alice/indexed/contents', { branch: 'main', message: 'x', files: [{ operation: 'create', path: 'd', content: b64('d') }, { operation: 'create', path: 'd/e', content: b64('e') }] }, { token: alice.token })
    expect(refused.status).toBe(422)
    await write([{ operation: 'create', path: 'f f.txt', content: b64('f\n') }])
    expect(await paths('main')).toEqual(['README.md', 'a/one 1.txt', 'a/two 2.txt', 'b b.txt', 'c c.txt', 'f f.txt'])
  })
})

describe('blob ids made before git writes the blob', () => {
  test("blobIdOf is git's own id in SHA-1 and SHA-256 repositories; past 1 MiB, and for an id of another length, git is asked", async () => {
    const dir = tempDir('warren-blob-ids-')
    dirs.push(dir)
    for (const format of ['sha1', 'sha256']) {
      const gitDir = join(dir, `${format}.git`)
      await gitOk(dir, 'init', '-q', '--bare', `--object-format=${format}`, gitDir)
      const sample = (await gitOk(gitDir, 'hash-object', '-t', 'blob', '/dev/null')).trim()
      for (const bytes of [Buffer.alloc(0), Buffer.from('one\n'), Buffer.from([0, 255, 10, 13, 0]), Buffer.alloc(1024 * 1024, 'x')]) {
        const path = join(dir, 'blob')
        await Bun.write(path, bytes)
        expect(blobIdOf(sample, bytes)).toBe((await gitOk(gitDir, 'hash-object', '--no-filters', path)).trim())
      }
      expect(blobIdOf(sample, Buffer.alloc(1024 * 1024 + 1))).toBeNull()
    }
    expect(blobIdOf('abc', Buffer.from('x'))).toBeNull()
  })
})

describe('empty repository and patches', () => {
  test('the first commit of an empty repository creates its branch', async () => {
    const res = await asAlice.repos.repoCreateFile('alice', 'void', 'README.md', { content: b64('# void\n') })
    expect(res.status).toBe(201)
    expect(res.data.commit!.parents).toEqual([])
    const heads = await gitOk(clone, 'ls-remote', '--heads', urlOf('void'))
    expect(heads.trim()).toBe(`${res.data.commit!.sha}\trefs/heads/main`)
    const repo = await asAlice.repos.repoGet('alice', 'void')
    expect(repo.data.empty).toBe(false)
    expect(repo.data.default_branch).toBe('main')
  })

  test('diffpatch applies a patch as one commit; one that does not apply is refused', async () => {
    const before = await inClone('rev-parse', 'origin/main')
    const patch = ['diff --git a/one.txt b/one.txt', '--- a/one.txt', '+++ b/one.txt', '@@ -1 +1 @@', '-1', '+uno', ''].join('\n')
    const res = await asAlice.repos.repoApplyDiffPatch('alice', 'proj', { content: patch, message: 'Patch one', sha: '' } as any)
    expect(res.status).toBe(200)
    expect(await inClone('rev-parse', 'origin/main^')).toBe(before)
    expect(await inClone('show', 'origin/main:one.txt')).toBe('uno')
    expect(await inClone('log', '-1', '--format=%B', 'origin/main')).toBe('Patch one')
    const refs = await refsNow()
    expect(await failure(asAlice.repos.repoApplyDiffPatch('alice', 'proj', { content: patch, sha: '' } as any))).toBe(422)
    const escape = patch.replaceAll('one.txt', '../x.txt')
    expect(await failure(asAlice.repos.repoApplyDiffPatch('alice', 'proj', { content: escape, sha: '' } as any))).toBe(422)
    expect(await refsNow()).toBe(refs)
  })
})
