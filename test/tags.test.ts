/**
 * Tags through gitea-js (Gitea 1.23's client): listed newest first with paging headers, read by
 * name, created (lightweight, or annotated with the caller as tagger) and deleted through the one
 * push path, every write checked with `git ls-remote` and in a clone, every refusal leaving the
 * refs as they were.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, tempDir } from './git-fixture'
import { refRepos } from './ref-fixtures'
import { empty, fails, ok } from './gitea-calls'
import { missingGiteaFields } from './gitea-types'
import { eventsOfRepo } from '../src/events/outbox'
import { refAnswerHits } from '../src/git/ref-answers'
import { listTags } from '../src/git/tags'
import { gitOfRow } from '../src/auth/repo-context'

let s: TestServer
let alice: TestUser, writer: TestUser, reader: TestUser
let asAlice: Api<unknown>, asWriter: Api<unknown>, asReader: Api<unknown>, anon: Api<unknown>
let work: string
let master: string, dev: string, feature: string
let projId: number
const dirs: string[] = []

let remote: Awaited<ReturnType<typeof refRepos>>['remote']

/** `git ls-remote` of a repository's tags: name → what the ref holds. */
async function remoteTags(repo: string): Promise<Record<string, string>> {
  const { refs } = await remote(repo)
  return Object.fromEntries(Object.entries(refs).filter(([r]) => r.startsWith('refs/tags/')).map(([r, id]) => [r.slice('refs/tags/'.length), id]))
}

beforeAll(async () => {
  s = await startTestServer()
  const r = await refRepos(s)
  ;({ alice, writer, reader, asAlice, asWriter, asReader, anon, work, projId, master, dev, feature, remote } = r)
  dirs.push(work)
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('reading tags', () => {
  test('the list: Gitea records, newest first, annotated tags peeled, paged with X-Total-Count and Link', async () => {
    const all = await ok(asReader.repos.repoListTags('alice', 'proj'))
    expect(all.map((t) => t.name)).toEqual(['v2.0', 'v1.0'])
    const [v2, v1] = all as [any, any]
    expect(missingGiteaFields('Tag', v2)).toEqual([])
    expect(missingGiteaFields('CommitMeta', v2.commit)).toEqual([])
    // Annotated: the ref holds the tag object, the commit is the one it names, the message is the tag's.
    expect(v2.id).not.toBe(feature)
    expect(v2.commit.sha).toBe(feature)
    expect(v2.message).toBe('Release 2.0')
    // Lightweight: the ref holds the commit, the message is the commit's.
    expect(v1).toMatchObject({ id: master, message: 'First commit\n\nWith a body.', commit: { sha: master } })
    expect(v1.commit.url).toBe(`${s.url}/api/v1/repos/alice/proj/git/commits/${master}`)
    expect(v1.zipball_url).toBe(`${s.url}/alice/proj/archive/v1.0.zip`)
    expect(v1.tarball_url).toBe(`${s.url}/alice/proj/archive/v1.0.tar.gz`)
    expect(Number.isNaN(Date.parse(v1.commit.created))).toBe(false)

    const page = await asReader.repos.repoListTags('alice', 'proj', { page: 2, limit: 1 })
    expect(page.data.map((t) => t.name)).toEqual(['v1.0'])
    expect(page.headers.get('x-total-count')).toBe('2')
    expect(page.headers.get('link')).toContain('rel="first"')
  })

  test('the list is kept while the refs hold, and follows them at once: a tag pushed, packed, deleted', async () => {
    const names = async () => (await ok(asReader.repos.repoListTags('alice', 'proj'))).map((t) => t.name)
    expect(await names()).toEqual(['v2.0', 'v1.0'])
    const before = refAnswerHits()
    expect(await names()).toEqual(['v2.0', 'v1.0'])
    expect(refAnswerHits()).toBe(before + 1)
    // The kept records are shared by every answer, and frozen: a reader that changed one would fail, not change the next answer.
    const git = gitOfRow(s.deps, { ownerName: 'alice', name: 'proj' })
    const [a, b] = [await listTags(git, { offset: 0, limit: 10 }), await listTags(git, { offset: 0, limit: 10 })]
    expect(b.tags[0]).toBe(a.tags[0]!)
    expect(Object.isFrozen(a.tags[0])).toBe(true)
    expect(() => ((a.tags[0] as { name: string }).name = 'changed')).toThrow(TypeError)
    const url = remoteUrl(s.url, 'alice/proj.git', 'alice', alice.password)
    await gitOk(work, 'tag', 'v0.9', master)
    await gitOk(work, 'push', '-q', url, 'refs/tags/v0.9')
    expect(await names()).toEqual(['v2.0', 'v0.9', 'v1.0'])
    expect((await ok(anon.repos.repoGetTag('alice', 'proj', 'v0.9'))).commit?.sha).toBe(master)
    // Packed by git (the loose file goes, packed-refs holds it): the same list.
    await gitOk(join(s.dataDir, 'repositories', 'alice', 'proj.git'), 'pack-refs', '--all')
    expect(await names()).toEqual(['v2.0', 'v0.9', 'v1.0'])
    await gitOk(work, 'push', '-q', url, ':refs/tags/v0.9')
    await gitOk(work, 'tag', '-d', 'v0.9')
    expect(await names()).toEqual(['v2.0', 'v1.0'])
    await fails(anon.repos.repoGetTag('alice', 'proj', 'v0.9'), 404)
  })

  test('one tag by name; 404 for one that does not exist', async () => {
    expect((await ok(anon.repos.repoGetTag('alice', 'proj', 'v2.0'))).commit?.sha).toBe(feature)
    await fails(asReader.repos.repoGetTag('alice', 'proj', 'nope'), 404)
  })
})

describe('creating tags', () => {
  test('lightweight at the default branch: in git, recorded as a push by the caller', async () => {
    const last = (await eventsOfRepo(s.deps.db, projId, 0, 1000)).at(-1)?.id ?? 0
    const tag = await ok(asWriter.repos.repoCreateTag('alice', 'proj', { tag_name: 'light' }), 201)
    expect(tag).toMatchObject({ name: 'light', id: master, commit: { sha: master } })
    expect((await remoteTags('proj'))['light']).toBe(master)
    const events = await eventsOfRepo(s.deps.db, projId, last)
    expect(events.map((e) => [e.kind, e.actorId])).toEqual([
      ['push', writer.user.id],
      ['ref.created', writer.user.id],
    ])
    expect(events[1]!.payload).toEqual({ ref: 'light', refType: 'tag', sha: master })
  })

  test('annotated with a message, at a branch, a tag or a commit id; the caller is the tagger', async () => {
    const tag = await ok(asWriter.repos.repoCreateTag('alice', 'proj', { tag_name: 'rel/one', target: 'dev', message: 'The first one\n\nnotes' }), 201)
    expect(tag.commit?.sha).toBe(dev)
    expect(tag.id).not.toBe(dev)
    expect(tag.message).toBe('The first one\n\nnotes')
    expect((await remoteTags('proj'))['rel/one']).toBe(tag.id!)
    expect((await ok(asReader.repos.repoGetTag('alice', 'proj', 'rel/one'))).id).toBe(tag.id!)
    const clone = tempDir()
    dirs.push(clone)
    await gitOk(clone, 'clone', '-q', remoteUrl(s.url, 'alice/proj.git', 'alice', alice.token), 'c')
    const object = await gitOk(join(clone, 'c'), 'cat-file', '-p', 'rel/one')
    expect(object).toContain(`object ${dev}\ntype commit\ntag rel/one\ntagger writer <writer@example.com> `)
    expect(await gitOk(join(clone, 'c'), 'rev-parse', 'rel/one^{commit}')).toBe(dev)

    expect((await ok(asWriter.repos.repoCreateTag('alice', 'proj', { tag_name: 'from-tag', target: 'v2.0' }), 201)).commit?.sha).toBe(feature)
    expect((await ok(asWriter.repos.repoCreateTag('alice', 'proj', { tag_name: 'from-sha', target: dev.slice(0, 12) }), 201)).id).toBe(dev)
    const tags = await remoteTags('proj')
    expect([tags['from-tag'], tags['from-sha']]).toEqual([feature, dev])
  })

  test('refusals change nothing: 409 exists, 404 unknown target, 422 bad names, 403 reader, 401 anonymous, 423 archived', async () => {
    const before = await remoteTags('proj')
    await fails(asWriter.repos.repoCreateTag('alice', 'proj', { tag_name: 'v1.0' }), 409)
    await fails(asWriter.repos.repoCreateTag('alice', 'proj', { tag_name: 'rel' }), 409)
    await fails(asWriter.repos.repoCreateTag('alice', 'proj', { tag_name: 'new', target: 'no-such-branch' }), 404)
    for (const bad of ['', 'bad..name', '-rf', 'a b', 'x.lock', 'trailing/'])
      await fails(asWriter.repos.repoCreateTag('alice', 'proj', { tag_name: bad }), 422)
    await fails(asReader.repos.repoCreateTag('alice', 'proj', { tag_name: 'new' }), 403)
    await fails(anon.repos.repoCreateTag('alice', 'proj', { tag_name: 'new' }), 401)
    expect(await remoteTags('proj')).toEqual(before)
    const shelf = await remoteTags('shelf')
    await fails(asAlice.repos.repoCreateTag('alice', 'shelf', { tag_name: 'new' }), 423)
    await fails(asAlice.repos.repoDeleteTag('alice', 'shelf', 'v1.0'), 423)
    expect(await remoteTags('shelf')).toEqual(shelf)
  })

  test("a mirror takes the server's own tags, as its releases do", async () => {
    await ok(asWriter.repos.repoCreateTag('alice', 'mirrored', { tag_name: 'mirror-tag' }), 201)
    expect((await remoteTags('mirrored'))['mirror-tag']).toBe(master)
  })
})

describe('deleting tags', () => {
  test('204, gone from git, recorded as ref.deleted by the caller', async () => {
    const last = (await eventsOfRepo(s.deps.db, projId, 0, 1000)).at(-1)?.id ?? 0
    await empty(asWriter.repos.repoDeleteTag('alice', 'proj', 'rel/one'))
    await empty(asWriter.repos.repoDeleteTag('alice', 'proj', 'light'))
    const tags = await remoteTags('proj')
    expect(tags['rel/one']).toBeUndefined()
    expect(tags['light']).toBeUndefined()
    const events = await eventsOfRepo(s.deps.db, projId, last)
    expect(events.filter((e) => e.kind === 'ref.deleted').map((e) => [e.payload.ref, e.actorId])).toEqual([
      ['rel/one', writer.user.id],
      ['light', writer.user.id],
    ])
  })

  test('refusals change nothing: 404 unknown, 409 while a release names it, 403 reader', async () => {
    await ok(asAlice.repos.repoCreateRelease('alice', 'proj', { tag_name: 'from-sha', name: 'R' }), 201)
    const before = await remoteTags('proj')
    await fails(asWriter.repos.repoDeleteTag('alice', 'proj', 'nope'), 404)
    expect((await fails(asWriter.repos.repoDeleteTag('alice', 'proj', 'from-sha'), 409)).message).toContain('release')
    await fails(asReader.repos.repoDeleteTag('alice', 'proj', 'v1.0'), 403)
    expect(await remoteTags('proj')).toEqual(before)
  })
})
