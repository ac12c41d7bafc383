/**
 * The git-data API through gitea-js: refs (filtered, the exact one alone), trees (recursive,
 * paged), blobs (base64, the size bound), annotated tags, notes, and the languages of the default
 * branch; each answer checked against git's own view of a clone.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { giteaApi, type Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, tempDir } from './git-fixture'
import { pushedRepo } from './pull-fixtures'
import { missingGiteaFields } from './gitea-types'
import { refAnswerHits } from '../src/git/ref-answers'

let s: TestServer
let alice: TestUser
let anon: Api<unknown>
const dirs: string[] = []
let work: string
let head: string
let clone: string

interface Res<T> {
  status: number
  data: T
  headers: Headers
}
const call = <T>(p: Promise<Res<T>>) => p.catch((e: Res<T>) => e)

const FILES: Record<string, string> = {
  'main.go': 'package main\n\nfunc main() {}\n',
  'lib/x.ts': 'export const x = 1\n',
  'lib/deep/y.ts': 'export const y = 22\n',
  'docs/guide.go': 'package docs\n',
  'vendor/dep/z.go': 'package dep\n',
  '.github/ci.yml': 'on: push\n',
  'notes.md': '# notes\n',
  'big.bin': 'b'.repeat(3000),
}

beforeAll(async () => {
  // A small blob bound, so that big.bin passes it.
  s = await startTestServer({ maxBlobSize: 2000 })
  alice = await s.user('alice')
  anon = giteaApi(s.url, {})
  const repo = await pushedRepo(s, alice, 'data', dirs)
  work = repo.dir
  for (const [path, text] of Object.entries(FILES)) {
    mkdirSync(dirname(join(work, path)), { recursive: true })
    writeFileSync(join(work, path), text)
  }
  await gitOk(work, 'add', '-A')
  await gitOk(work, 'commit', '-q', '-m', 'files')
  head = await gitOk(work, 'rev-parse', 'HEAD')
  await gitOk(work, 'tag', '-a', 'v1', '-m', 'Release one')
  await gitOk(work, 'tag', 'light')
  await gitOk(work, 'notes', 'add', '-m', 'a note', head)
  await gitOk(work, 'push', '-q', 'origin', 'main', 'v1', 'light', 'refs/notes/commits')
  const c = tempDir()
  dirs.push(c)
  await gitOk(c, 'clone', '-q', '--mirror', remoteUrl(s.url, 'alice/data.git'), 'm')
  clone = join(c, 'm')
})
afterAll(async () => {
  await s.stop()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})

describe('git/refs', () => {
  test('every ref, refs by a leading part of their name, the one named exactly alone; 404 when none', async () => {
    const all = await call(anon.repos.repoListAllGitRefs('alice', 'data'))
    expect(all.status).toBe(200)
    const shown = await gitOk(clone, 'for-each-ref', '--format=%(refname) %(objectname) %(objecttype)')
    expect(all.data.map((r) => `${r.ref} ${r.object!.sha} ${r.object!.type}`)).toEqual(shown.split('\n'))
    expect(missingGiteaFields('Reference', all.data[0]!)).toEqual([])
    expect(missingGiteaFields('GitObject', all.data[0]!.object!)).toEqual([])
    const tags = await call(anon.repos.repoListGitRefs('alice', 'data', 'tags'))
    expect(tags.data.map((r) => r.ref)).toEqual(['refs/tags/light', 'refs/tags/v1'])
    const v1 = tags.data[1]!
    expect(v1.object!.type).toBe('tag')
    expect(v1.object!.url).toBe(`${s.url}/api/v1/repos/alice/data/git/tags/${v1.object!.sha}`)
    expect((await call(anon.repos.repoListGitRefs('alice', 'data', 'tags/l'))).data.map((r) => r.ref)).toEqual(['refs/tags/light'])
    const exact = await s.get('/repos/alice/data/git/refs/heads/main')
    expect(exact.body).toMatchObject({ ref: 'refs/heads/main', object: { sha: head, type: 'commit' } })
    expect((await call(anon.repos.repoListGitRefs('alice', 'data', 'heads/nope'))).status).toBe(404)
    expect((await s.get('/repos/alice/data/git/refs/%2E%2E%2Fx')).status).toBe(404)
  })

  test('kept while no ref moves; a new tag is listed at once', async () => {
    const tags = async () => (await call(anon.repos.repoListGitRefs('alice', 'data', 'tags'))).data.map((r) => r.ref)
    expect(await tags()).toEqual(['refs/tags/light', 'refs/tags/v1'])
    const hits = refAnswerHits()
    expect(await tags()).toEqual(['refs/tags/light', 'refs/tags/v1'])
    expect(refAnswerHits()).toBe(hits + 1)
    expect((await s.post('/repos/alice/data/tags', { tag_name: 'later', target: head }, { token: alice.token })).status).toBe(201)
    expect(await tags()).toEqual(['refs/tags/later', 'refs/tags/light', 'refs/tags/v1'])
    expect((await s.del('/repos/alice/data/tags/later', undefined, { token: alice.token })).status).toBe(204)
    expect(await tags()).toEqual(['refs/tags/light', 'refs/tags/v1'])
  })
})

describe('git/trees', () => {
  test('a tree by commit, branch or tree id; recursive; paged with truncated and total_count', async () => {
    const top = await call(anon.repos.getTree('alice', 'data', head))
    expect(top.status).toBe(200)
    expect(missingGiteaFields('GitTreeResponse', top.data)).toEqual([])
    expect(top.data.sha).toBe(head)
    const lsTop = (await gitOk(clone, 'ls-tree', head)).split('\n')
    expect(top.data.tree!.map((e) => `${e.mode} ${e.type} ${e.sha}\t${e.path}`)).toEqual(lsTop)
    expect(missingGiteaFields('GitEntry', top.data.tree![0]!)).toEqual([])
    const lib = top.data.tree!.find((e) => e.path === 'lib')!
    expect(lib.url).toBe(`${s.url}/api/v1/repos/alice/data/git/trees/${lib.sha}`)
    const sub = await call(anon.repos.getTree('alice', 'data', lib.sha!))
    expect(sub.data.sha).toBe(lib.sha)
    expect(sub.data.tree!.map((e) => e.path)).toEqual(['deep', 'x.ts'])

    const rec = await call(anon.repos.getTree('alice', 'data', 'main', { recursive: true }))
    const lsRec = (await gitOk(clone, 'ls-tree', '-r', '-t', '-l', head)).split('\n')
    expect(rec.data.total_count).toBe(lsRec.length)
    expect(rec.data.truncated).toBe(false)
    expect(rec.data.tree!.map((e) => `${e.path} ${e.size}`)).toEqual(lsRec.map((l) => `${l.split('\t')[1]} ${Number(l.split('\t')[0]!.split(/ +/)[3]) || 0}`))
    const p2 = await call(anon.repos.getTree('alice', 'data', head, { recursive: true, per_page: 3, page: 2 }))
    expect(p2.data.page).toBe(2)
    expect(p2.data.truncated).toBe(true)
    expect(p2.data.total_count).toBe(lsRec.length)
    expect(p2.data.tree!.map((e) => e.path)).toEqual(rec.data.tree!.slice(3, 6).map((e) => e.path))
    // The same page again (from the cache of the listing by id).
    expect((await call(anon.repos.getTree('alice', 'data', head, { recursive: true, per_page: 3, page: 2 }))).data).toEqual(p2.data)
    const last = await call(anon.repos.getTree('alice', 'data', head, { recursive: true, per_page: 3, page: Math.ceil(lsRec.length / 3) }))
    expect(last.data.truncated).toBe(false)
    expect((await call(anon.repos.getTree('alice', 'data', 'f'.repeat(40)))).status).toBe(404)
    expect((await call(anon.repos.getTree('alice', 'data', 'nope'))).status).toBe(404)
    expect((await s.get('/repos/alice/data/git/trees/main~1')).status).toBe(404)
  })
})

describe('git/blobs', () => {
  test('base64 content and size; past WARREN_MAX_BLOB_SIZE the size alone; 404 for what is not a blob', async () => {
    const sha = await gitOk(clone, 'rev-parse', `${head}:lib/x.ts`)
    const blob = await call(anon.repos.getBlob('alice', 'data', sha))
    expect(blob.status).toBe(200)
    expect(missingGiteaFields('GitBlobResponse', blob.data)).toEqual([])
    expect(blob.data).toMatchObject({ sha, size: FILES['lib/x.ts']!.length, encoding: 'base64' })
    expect(Buffer.from(blob.data.content!, 'base64').toString()).toBe(FILES['lib/x.ts']!)
    const big = await call(anon.repos.getBlob('alice', 'data', await gitOk(clone, 'rev-parse', `${head}:big.bin`)))
    expect(big.data).toMatchObject({ size: 3000, content: null, encoding: null })
    expect((await call(anon.repos.getBlob('alice', 'data', head))).status).toBe(404)
    expect((await call(anon.repos.getBlob('alice', 'data', 'f'.repeat(40)))).status).toBe(404)
    expect((await call(anon.repos.getBlob('alice', 'data', 'main'))).status).toBe(404)
  })
})

describe('git/tags', () => {
  test('an annotated tag object with its tagger, message, commit and verification; 404 for a lightweight tag', async () => {
    const tagSha = await gitOk(clone, 'rev-parse', 'refs/tags/v1')
    const tag = await call(anon.repos.getAnnotatedTag('alice', 'data', tagSha))
    expect(tag.status).toBe(200)
    expect(missingGiteaFields('AnnotatedTag', tag.data)).toEqual([])
    expect(tag.data).toMatchObject({ tag: 'v1', sha: tagSha, message: 'Release one\n', tagger: { name: 'Alice A', email: 'alice@example.com' } })
    expect(tag.data.object).toEqual({ type: 'commit', sha: head, url: `${s.url}/api/v1/repos/alice/data/git/commits/${head}` })
    expect(tag.data.tagger!.date).toBe(new Date(Number(await gitOk(clone, 'for-each-ref', '--format=%(taggerdate:unix)', 'refs/tags/v1')) * 1000).toISOString().replace('.000Z', 'Z'))
    expect(tag.data.verification).toMatchObject({ verified: false, reason: 'gpg.error.not_signed_commit' })
    expect((await call(anon.repos.getAnnotatedTag('alice', 'data', head))).status).toBe(404)
  })
})

describe('git/notes', () => {
  test("a commit's note and the notes commit that wrote it; 404 without one, 422 for a name no ref can have", async () => {
    const note = await call(anon.repos.repoGetNote('alice', 'data', head))
    expect(note.status).toBe(200)
    expect(missingGiteaFields('Note', note.data)).toEqual([])
    expect(note.data.message).toBe('a note\n')
    expect(note.data.commit!.sha).toBe(await gitOk(clone, 'rev-parse', 'refs/notes/commits'))
    expect(missingGiteaFields('Commit', note.data.commit!)).toEqual([])
    expect((await call(anon.repos.repoGetNote('alice', 'data', 'main'))).data.message).toBe('a note\n')
    const first = await gitOk(clone, 'rev-parse', `${head}^`)
    expect((await call(anon.repos.repoGetNote('alice', 'data', first))).status).toBe(404)
    expect((await s.get('/repos/alice/data/git/notes/a%20b')).status).toBe(422)
  })
})

describe('languages', () => {
  test('bytes per language of the default branch; vendored, documentation, dot and data files left out', async () => {
    const langs = await call(anon.repos.repoGetLanguages('alice', 'data'))
    expect(langs.status).toBe(200)
    expect(langs.data).toEqual({ Go: FILES['main.go']!.length, TypeScript: FILES['lib/x.ts']!.length + FILES['lib/deep/y.ts']!.length })
    expect(readFileSync(join(work, 'main.go'), 'utf8')).toBe(FILES['main.go']!)
    expect((await s.post('/user/repos', { name: 'void' }, { token: alice.token })).status).toBe(201)
    expect((await s.get('/repos/alice/void/languages')).body).toEqual({})
  })
})

describe('replace refs', () => {
  test('a pushed refs/replace/* changes nothing the server shows: an id names its own commit (what the server keeps by id stays true)', async () => {
    const repo = await pushedRepo(s, alice, 'replaced', dirs)
    const first = await gitOk(repo.dir, 'rev-parse', 'HEAD')
    const subject = await gitOk(repo.dir, 'log', '-1', '--format=%s', first)
    await gitOk(repo.dir, 'commit', '-q', '--allow-empty', '-m', 'the stand-in')
    const standIn = await gitOk(repo.dir, 'rev-parse', 'HEAD')
    await gitOk(repo.dir, 'push', '-q', 'origin', `${standIn}:refs/heads/other`, `${standIn}:refs/replace/${first}`)
    expect((await gitOk(repo.dir, 'ls-remote', 'origin', 'refs/replace/*')).split(/\s+/)[0]).toBe(standIn)
    const after = await s.get(`/repos/alice/replaced/git/commits/${first}`)
    expect(after.body.sha).toBe(first)
    expect(after.body.commit.message.trim()).toBe(subject)
    const history = await s.get('/repos/alice/replaced/commits?sha=main&stat=false&files=false')
    expect(history.body.map((c: { sha: string; commit: { message: string } }) => [c.sha, c.commit.message.trim()])).toEqual([[first, subject]])
  })
})
