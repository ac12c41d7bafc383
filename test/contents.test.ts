/**
 * The contents API's reads, through gitea-js as Gitea's clients call them: a file with its
 * base64 content and every field of Gitea's ContentsResponse, folders, symlinks, executables,
 * submodules, refs (branch, tag, commit), the media route, the listing bound, and the refusals.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs'
import { join } from 'node:path'
import { giteaApi, type Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, makeWorkRepo, remoteUrl } from './git-fixture'
import { missingGiteaFields } from './gitea-types'

let s: TestServer
let alice: TestUser
let asAlice: Api<unknown>
let anon: Api<unknown>
let work: Awaited<ReturnType<typeof makeWorkRepo>>
let master: string

/** A failing gitea-js call's status. */
const statusOf = (call: Promise<unknown>) => call.then(() => 200, (e: { status: number }) => e.status)

beforeAll(async () => {
  // A listing bound of 6 entries, so the cut is visible on the fixture's root.
  s = await startTestServer({ maxContentsListEntries: 6, maxBlobSize: 2048 })
  alice = await s.user('alice')
  asAlice = giteaApi(s.url, { token: alice.token })
  anon = giteaApi(s.url, {})
  for (const [name, priv] of [['proj', false], ['hidden', true], ['void', false]] as const)
    expect((await s.post('/user/repos', { name, private: priv, default_branch: 'master' }, { token: alice.token })).status).toBe(201)
  work = await makeWorkRepo()
  // A symlink, an executable and a submodule (with its .gitmodules) on master.
  symlinkSync('docs/deep/note.txt', join(work.dir, 'link'))
  writeFileSync(join(work.dir, 'run.sh'), '#!/bin/sh\necho hi\n')
  chmodSync(join(work.dir, 'run.sh'), 0o755)
  writeFileSync(join(work.dir, '.gitmodules'), '[submodule "vendor/lib"]\n\tpath = vendor/lib\n\turl = https://example.com/lib.git\n')
  await gitOk(work.dir, 'add', 'link', 'run.sh', '.gitmodules')
  await gitOk(work.dir, 'update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},vendor/lib`)
  await gitOk(work.dir, 'commit', '-q', '-m', 'Links and modules')
  master = (await gitOk(work.dir, 'rev-parse', 'master')).trim()
  for (const repo of ['proj', 'hidden']) {
    const url = remoteUrl(s.url, `alice/${repo}.git`, 'alice', alice.token)
    await gitOk(work.dir, 'push', '-q', url, '--all')
    await gitOk(work.dir, 'push', '-q', url, '--tags')
  }
})
afterAll(async () => {
  await s.stop()
  rmSync(work.dir, { recursive: true, force: true })
})

describe('GET contents', () => {
  test('a file: base64 content, Gitea fields and links, last commit', async () => {
    const { data } = await anon.repos.repoGetContents('alice', 'proj', 'README.md')
    expect(missingGiteaFields('ContentsResponse', data)).toEqual([])
    const first = (await gitOk(work.dir, 'rev-list', '-1', 'master', '--', 'README.md')).trim()
    const blob = (await gitOk(work.dir, 'rev-parse', 'master:README.md')).trim()
    expect(data as object).toEqual({
      name: 'README.md',
      path: 'README.md',
      sha: blob,
      last_commit_sha: first,
      type: 'file',
      size: work.files['README.md']!.length,
      encoding: 'base64',
      content: work.files['README.md']!.toString('base64'),
      target: null,
      url: `${s.url}/api/v1/repos/alice/proj/contents/README.md?ref=master`,
      html_url: `${s.url}/alice/proj/src/branch/master/README.md`,
      git_url: `${s.url}/api/v1/repos/alice/proj/git/blobs/${blob}`,
      download_url: `${s.url}/alice/proj/raw/branch/master/README.md`,
      submodule_git_url: null,
      _links: {
        self: `${s.url}/api/v1/repos/alice/proj/contents/README.md?ref=master`,
        git: `${s.url}/api/v1/repos/alice/proj/git/blobs/${blob}`,
        html: `${s.url}/alice/proj/src/branch/master/README.md`,
      },
    })
    // The download URL serves the same bytes.
    const raw = await fetch(data.download_url!)
    expect(Buffer.from(await raw.arrayBuffer()).equals(work.files['README.md']!)).toBe(true)
  })

  test('nested and binary files; past the size bound the content is null', async () => {
    const { data: note } = await anon.repos.repoGetContents('alice', 'proj', 'docs/deep/note.txt')
    expect(Buffer.from(note.content!, 'base64').toString()).toBe('nested note\n')
    expect(note.name).toBe('note.txt')
    // bin/data.bin is 3005 bytes, past the test's 2048-byte bound.
    const { data: bin } = await anon.repos.repoGetContents('alice', 'proj', 'bin/data.bin')
    expect(bin.size).toBe(work.files['bin/data.bin']!.length)
    expect(bin.content).toBeNull()
    expect(bin.encoding).toBeNull()
    const { data: png } = await anon.repos.repoGetContents('alice', 'proj', 'image.png')
    expect(Buffer.from(png.content!, 'base64').equals(work.files['image.png']!)).toBe(true)
  })

  test('symlink, executable, submodule', async () => {
    const { data: link } = await anon.repos.repoGetContents('alice', 'proj', 'link')
    expect(link).toMatchObject({ type: 'symlink', target: 'docs/deep/note.txt', content: null, encoding: null, size: 18 })
    expect(link.download_url).toBe(`${s.url}/alice/proj/raw/branch/master/link`)
    const { data: exe } = await anon.repos.repoGetContents('alice', 'proj', 'run.sh')
    expect(exe).toMatchObject({ type: 'file', encoding: 'base64' })
    const { data: sub } = await anon.repos.repoGetContents('alice', 'proj', 'vendor/lib')
    expect(sub).toMatchObject({ type: 'submodule', sha: '1'.repeat(40), submodule_git_url: 'https://example.com/lib.git', html_url: null, git_url: null, download_url: null, content: null })
  })

  test('a folder lists its entries without content, each with its last commit', async () => {
    const { data } = (await anon.repos.repoGetContents('alice', 'proj', 'docs')) as unknown as { data: any[] }
    expect(data.map((e) => [e.name, e.type, e.path])).toEqual([['deep', 'dir', 'docs/deep']])
    expect(data[0].content).toBeNull()
    expect(data[0].download_url).toBeNull()
    const first = (await gitOk(work.dir, 'rev-list', '-1', 'master', '--', 'docs')).trim()
    expect(data[0].last_commit_sha).toBe(first)
  })

  test('the root, with ref forms: branch, tag (annotated), commit id, default branch; the listing bound', async () => {
    const root = (await anon.repos.repoGetContentsList('alice', 'proj')).data
    // 9 entries at master's root, cut at the bound (6), in git's order.
    const names = (await gitOk(work.dir, 'ls-tree', '--name-only', 'master')).trim().split('\n')
    expect(root.map((e) => e.name)).toEqual(names.slice(0, 6))
    const linkCommit = (await gitOk(work.dir, 'rev-list', '-1', 'master', '--', '.gitmodules')).trim()
    expect(root.find((e) => e.name === '.gitmodules')!.last_commit_sha).toBe(linkCommit)
    expect(root.find((e) => e.name === 'bin')!.type).toBe('dir')

    const onDev = (await anon.repos.repoGetContents('alice', 'proj', 'dev.txt', { ref: 'dev' })).data
    expect(Buffer.from(onDev.content!, 'base64').toString()).toBe('dev only\n')
    expect(onDev.html_url).toBe(`${s.url}/alice/proj/src/branch/dev/dev.txt`)
    const onTag = (await anon.repos.repoGetContents('alice', 'proj', 'feature.txt', { ref: 'v2.0' })).data
    expect(onTag.download_url).toBe(`${s.url}/alice/proj/raw/tag/v2.0/feature.txt`)
    const short = master.slice(0, 10)
    const onCommit = (await anon.repos.repoGetContents('alice', 'proj', 'run.sh', { ref: short })).data
    expect(onCommit.url).toBe(`${s.url}/api/v1/repos/alice/proj/contents/run.sh?ref=${short}`)
    expect(onCommit.html_url).toBe(`${s.url}/alice/proj/src/commit/${master}/run.sh`)
    // A path with a space and a slash-named branch.
    expect((await anon.repos.repoGetContents('alice', 'proj', 'feature.txt', { ref: 'feature/slash' })).data.name).toBe('feature.txt')
  })

  test('refusals: missing path, missing ref, bad paths, hidden repository, empty repository', async () => {
    expect(await statusOf(anon.repos.repoGetContents('alice', 'proj', 'nope.txt'))).toBe(404)
    expect(await statusOf(anon.repos.repoGetContents('alice', 'proj', 'README.md', { ref: 'no-such' }))).toBe(404)
    expect(await statusOf(anon.repos.repoGetContents('alice', 'proj', 'README.md/inside'))).toBe(404)
    expect((await s.get('/repos/alice/proj/contents/a%2F..%2F..%2Fetc')).status).toBe(422)
    expect((await s.get('/repos/alice/proj/contents/.git/config')).status).toBe(422)
    expect((await s.get('/repos/alice/proj/contents/%2Fetc%2Fpasswd')).status).toBe(422)
    expect((await s.get('/repos/alice/proj/contents/a%00b')).status).toBeGreaterThanOrEqual(400)
    expect(await statusOf(anon.repos.repoGetContents('alice', 'hidden', 'README.md'))).toBe(404)
    expect((await asAlice.repos.repoGetContents('alice', 'hidden', 'README.md')).data.type).toBe('file')
    expect((await anon.repos.repoGetContentsList('alice', 'void')).data).toEqual([])
    expect(await statusOf(anon.repos.repoGetContents('alice', 'void', 'README.md'))).toBe(404)
  })
})

describe('GET media', () => {
  test('serves the raw bytes, by ?ref= or by a leading ref', async () => {
    const a = await fetch(`${s.url}/api/v1/repos/alice/proj/media/image.png`)
    expect(Buffer.from(await a.arrayBuffer()).equals(work.files['image.png']!)).toBe(true)
    const b = await fetch(`${s.url}/api/v1/repos/alice/proj/media/dev.txt?ref=dev`)
    expect(await b.text()).toBe('dev only\n')
    const c = await fetch(`${s.url}/api/v1/repos/alice/proj/media/dev/dev.txt`)
    expect(await c.text()).toBe('dev only\n')
    expect((await fetch(`${s.url}/api/v1/repos/alice/proj/media/missing.txt`)).status).toBe(404)
    expect((await fetch(`${s.url}/api/v1/repos/alice/hidden/media/README.md`)).status).toBe(404)
  })
})
