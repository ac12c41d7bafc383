import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { git, gitOk, makeWorkRepo, refsOf, remoteUrl, tempDir } from './git-fixture'

let s: TestServer
let alice: TestUser
let bob: TestUser
let work: Awaited<ReturnType<typeof makeWorkRepo>>
const dirs: string[] = []
const temp = () => {
  const d = tempDir()
  dirs.push(d)
  return d
}

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  expect((await s.post('/user/repos', { name: 'proj' }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'secret', private: true }, { token: alice.token })).status).toBe(201)
  work = await makeWorkRepo()
  dirs.push(work.dir)
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('git smart HTTP', () => {
  test('info/refs answers the advertisement with pkt-line header and no-cache headers', async () => {
    const res = await fetch(`${s.url}/alice/proj.git/info/refs?service=git-upload-pack`)
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/x-git-upload-pack-advertisement')
    expect(res.headers.get('cache-control')).toBe('no-cache, max-age=0, must-revalidate')
    expect(res.headers.get('expires')).toBe('Fri, 01 Jan 1980 00:00:00 GMT')
    const body = await res.text()
    expect(body.startsWith('001e# service=git-upload-pack\n0000')).toBe(true)
    const v2 = await fetch(`${s.url}/alice/proj/info/refs?service=git-upload-pack`, { headers: { 'Git-Protocol': 'version=2' } })
    const advert = await v2.text()
    expect(advert).toContain('version 2')
    expect(advert).toContain('filter')
    // The v2 advertisement is cached per repository until its config changes.
    const gitDir = join(s.dataDir, 'repositories', 'alice', 'proj.git')
    await gitOk(gitDir, 'config', '--file', join(gitDir, 'config'), 'uploadpack.allowFilter', 'false')
    const again = await fetch(`${s.url}/alice/proj/info/refs?service=git-upload-pack`, { headers: { 'Git-Protocol': 'version=2' } })
    expect(await again.text()).not.toContain('filter')
    await gitOk(gitDir, 'config', '--file', join(gitDir, 'config'), 'uploadpack.allowFilter', 'true')
    // A name no repository has answers as a private repository does: anonymous callers are asked to
    // sign in (so a name's existence shows to no one), signed-in ones are told it is not found.
    const unknown = await fetch(`${s.url}/alice/nope.git/info/refs?service=git-upload-pack`)
    expect([unknown.status, unknown.headers.get('www-authenticate')]).toEqual([401, 'Basic realm="."'])
    expect((await fetch(`${s.url}/alice/nope.git/info/refs?service=git-upload-pack`, { headers: { authorization: alice.basic } })).status).toBe(404)
    // Credentials are checked first: wrong or malformed ones are 401 whether or not the name exists.
    for (const name of ['nope', 'secret', 'proj'])
      for (const authorization of ['Basic !!!', `Basic ${Buffer.from('alice:wrong-password').toString('base64')}`]) {
        const res = await fetch(`${s.url}/alice/${name}.git/info/refs?service=git-upload-pack`, { headers: { authorization } })
        expect([name, res.status]).toEqual([name, 401])
      }
    expect((await s.post('/user/repos', { name: 'hidden', private: true }, { token: alice.token })).status).toBe(201)
    expect((await fetch(`${s.url}/alice/hidden.git/info/refs?service=git-upload-pack`)).status).toBe(401)
  })

  test('push needs credentials (401 + WWW-Authenticate) and write access (403)', async () => {
    const anon = await fetch(`${s.url}/alice/proj.git/info/refs?service=git-receive-pack`)
    expect(anon.status).toBe(401)
    expect(anon.headers.get('www-authenticate')).toBe('Basic realm="."')
    const wrong = await fetch(`${s.url}/alice/proj.git/info/refs?service=git-receive-pack`, {
      headers: { authorization: 'Basic ' + Buffer.from('alice:wrong').toString('base64') },
    })
    expect(wrong.status).toBe(401)
    expect(wrong.headers.get('www-authenticate')).toBe('Basic realm="."')
    const pushAnon = await git(work.dir, 'push', remoteUrl(s.url, 'alice/proj.git'), 'master')
    expect(pushAnon.code).not.toBe(0)
    expect(pushAnon.stderr).toMatch(/401|Authentication failed|could not read Username/i)
    const pushBob = await git(work.dir, 'push', remoteUrl(s.url, 'alice/proj.git', 'bob', bob.password), 'master')
    expect(pushBob.code).not.toBe(0)
    expect(pushBob.stderr).toContain('403')
    expect((await s.get('/repos/alice/proj')).body.empty).toBe(true)
  })

  test('push branches (one with a slash) and tags; metadata follows', async () => {
    const url = remoteUrl(s.url, 'alice/proj.git', 'alice', alice.token)
    // The repository's default branch (main) does not exist yet: the first pushed branch wins.
    await gitOk(work.dir, 'push', url, 'dev')
    let repo = (await s.get('/repos/alice/proj')).body
    expect(repo.empty).toBe(false)
    expect(repo.default_branch).toBe('dev')
    expect(repo.size).toBeGreaterThan(0)
    await gitOk(work.dir, 'push', url, '--all')
    await gitOk(work.dir, 'push', url, '--tags')
    repo = (await s.get('/repos/alice/proj')).body
    expect(repo.default_branch).toBe('dev')
    const remote = await gitOk(work.dir, 'ls-remote', remoteUrl(s.url, 'alice/proj.git'))
    expect(remote).toContain('refs/heads/feature/slash')
    expect(remote).toContain('refs/tags/v2.0^{}')
  })

  test('branch deletion by push; the default branch cannot be deleted (as in Gitea)', async () => {
    expect((await s.post('/user/repos', { name: 'scratch' }, { token: alice.token })).status).toBe(201)
    const url = remoteUrl(s.url, 'alice/scratch.git', 'alice', alice.token)
    await gitOk(work.dir, 'push', url, 'master', 'dev')
    expect((await s.get('/repos/alice/scratch/branches')).body.map((b: any) => b.name)).toEqual(['dev', 'master'])
    await gitOk(work.dir, 'push', url, ':dev')
    expect((await s.get('/repos/alice/scratch/branches')).body.map((b: any) => b.name)).toEqual(['master'])
    const refused = await git(work.dir, 'push', url, ':master')
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain('branch master is the default branch and cannot be deleted')
    const repo = (await s.get('/repos/alice/scratch')).body
    expect([repo.empty, repo.default_branch]).toEqual([false, 'master'])
  })

  test('a push of tags only makes the repository non-empty and keeps its default branch; a later branch push moves it', async () => {
    expect((await s.post('/user/repos', { name: 'tagsfirst' }, { token: alice.token })).status).toBe(201)
    const url = remoteUrl(s.url, 'alice/tagsfirst.git', 'alice', alice.token)
    await gitOk(work.dir, 'push', url, 'v1.0')
    let repo = (await s.get('/repos/alice/tagsfirst')).body
    expect([repo.empty, repo.default_branch]).toEqual([false, 'main'])
    expect(repo.size).toBeGreaterThan(0)
    expect((await s.get('/repos/alice/tagsfirst/branches')).body).toEqual([])
    await gitOk(work.dir, 'push', url, 'feature/slash')
    repo = (await s.get('/repos/alice/tagsfirst')).body
    expect([repo.empty, repo.default_branch]).toEqual([false, 'feature/slash'])
    const head = await gitOk(temp(), 'ls-remote', '--symref', remoteUrl(s.url, 'alice/tagsfirst.git'), 'HEAD')
    expect(head).toContain('ref: refs/heads/feature/slash\tHEAD')
  })

  test('clone returns every ref and the same files; fetch sees a second push', async () => {
    const mirror = join(temp(), 'mirror.git')
    await gitOk(temp(), 'clone', '-q', '--mirror', remoteUrl(s.url, 'alice/proj.git'), mirror)
    const theirs = await refsOf(mirror)
    const ours = await refsOf(work.dir)
    for (const [ref, id] of Object.entries(ours)) expect(theirs[ref]).toBe(id)
    expect(Object.keys(theirs).sort()).toEqual(Object.keys(ours).sort())

    const clone = join(temp(), 'clone')
    await gitOk(temp(), 'clone', '-q', '-b', 'master', remoteUrl(s.url, 'alice/proj'), clone)
    for (const [path, data] of Object.entries(work.files)) expect(readFileSync(join(clone, path)).equals(data)).toBe(true)

    writeFileSync(join(work.dir, 'second.txt'), 'second push\n')
    await gitOk(work.dir, 'add', 'second.txt')
    await gitOk(work.dir, 'commit', '-q', '-m', 'Second')
    await gitOk(work.dir, 'push', remoteUrl(s.url, 'alice/proj.git', 'alice', alice.password), 'master')
    await gitOk(clone, 'fetch', '-q', 'origin')
    expect(await gitOk(clone, 'rev-parse', 'origin/master')).toBe(await gitOk(work.dir, 'rev-parse', 'master'))
    // protocol v0 over HTTP works as well as v2
    const v0 = await sh0(clone)
    expect(v0).toContain(await gitOk(work.dir, 'rev-parse', 'master'))
  })

  test('gzip-encoded upload-pack requests are accepted', async () => {
    const head = await gitOk(work.dir, 'rev-parse', 'master')
    const pkt = (t: string) => (t.length + 4).toString(16).padStart(4, '0') + t
    const req = pkt(`want ${head} ofs-delta\n`) + '0000' + pkt('done\n')
    const res = await fetch(`${s.url}/alice/proj.git/git-upload-pack`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-git-upload-pack-request', 'content-encoding': 'gzip' },
      body: gzipSync(Buffer.from(req)),
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/x-git-upload-pack-result')
    const body = Buffer.from(await res.arrayBuffer())
    expect(body.subarray(0, 8).toString()).toBe('0008NAK\n')
    expect(body.indexOf('PACK')).toBeGreaterThan(0)
  })

  test('private repository: 401 without credentials, 404 for others, token as password or user name works', async () => {
    await gitOk(work.dir, 'push', remoteUrl(s.url, 'alice/secret.git', alice.token, 'x-oauth-basic'), 'master')
    const anon = await fetch(`${s.url}/alice/secret.git/info/refs?service=git-upload-pack`)
    expect(anon.status).toBe(401)
    expect(anon.headers.get('www-authenticate')).toBe('Basic realm="."')
    const denied = await git(temp(), 'clone', '-q', remoteUrl(s.url, 'alice/secret.git'), 'x')
    expect(denied.code).not.toBe(0)
    const other = await fetch(`${s.url}/alice/secret.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: 'Basic ' + Buffer.from(`bob:${bob.password}`).toString('base64') },
    })
    expect(other.status).toBe(404)
    const master = await gitOk(work.dir, 'rev-parse', 'master')
    for (const [user, secret] of [
      ['alice', alice.token],
      [alice.token, ''],
      [alice.token, 'x-oauth-basic'],
    ] as const) {
      const dir = join(temp(), 'c')
      await gitOk(temp(), 'clone', '-q', remoteUrl(s.url, 'alice/secret.git', user, secret), dir)
      expect(await gitOk(dir, 'rev-parse', 'HEAD')).toBe(master)
    }
    const repo = (await s.get('/repos/alice/secret', { token: alice.token })).body
    expect(repo.empty).toBe(false)
    expect(repo.default_branch).toBe('master')
  })

  test('rename: the repository clones and takes pushes under its new name; the old name redirects (301)', async () => {
    expect((await s.post('/user/repos', { name: 'before', auto_init: true }, { token: alice.token })).status).toBe(201)
    const r = await s.patch('/repos/alice/before', { name: 'After' }, { token: alice.token })
    expect(r.status).toBe(200)
    expect(r.body.full_name).toBe('alice/After')
    const old = await fetch(`${s.url}/alice/before.git/info/refs?service=git-upload-pack`, { redirect: 'manual' })
    expect(old.status).toBe(301)
    expect(old.headers.get('location')).toBe('/alice/After.git/info/refs?service=git-upload-pack')
    const dir = join(temp(), 'renamed')
    await gitOk(temp(), 'clone', '-q', remoteUrl(s.url, 'alice/After.git'), dir)
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain('before')
    writeFileSync(join(dir, 'new.txt'), 'after rename\n')
    await gitOk(dir, 'add', 'new.txt')
    await gitOk(dir, 'commit', '-q', '-m', 'After rename')
    await gitOk(dir, 'push', '-q', remoteUrl(s.url, 'alice/after', 'alice', alice.password), 'HEAD:main')
    const head = await gitOk(dir, 'rev-parse', 'HEAD')
    expect((await s.get('/repos/alice/After/branches/main')).body.commit.id).toBe(head)
  })

  test('archived repository: clones still work, pushes are refused with 403', async () => {
    expect((await s.post('/user/repos', { name: 'frozen', auto_init: true }, { token: alice.token })).status).toBe(201)
    expect((await s.patch('/repos/alice/frozen', { archived: true }, { token: alice.token })).body.archived).toBe(true)
    const dir = join(temp(), 'frozen')
    await gitOk(temp(), 'clone', '-q', remoteUrl(s.url, 'alice/frozen.git'), dir)
    const before = await gitOk(dir, 'rev-parse', 'HEAD')
    const advert = await fetch(`${s.url}/alice/frozen.git/info/refs?service=git-receive-pack`, {
      headers: { authorization: 'Basic ' + Buffer.from(`alice:${alice.password}`).toString('base64') },
    })
    expect(advert.status).toBe(403)
    expect((await advert.json()).message).toBe('repo is archived')
    await gitOk(dir, 'commit', '-q', '--allow-empty', '-m', 'Too late')
    const push = await git(dir, 'push', remoteUrl(s.url, 'alice/frozen.git', 'alice', alice.password), 'HEAD:main')
    expect(push.code).not.toBe(0)
    expect(push.stderr).toContain('403')
    const post = await fetch(`${s.url}/alice/frozen.git/git-receive-pack`, {
      method: 'POST',
      headers: {
        authorization: 'Basic ' + Buffer.from(`alice:${alice.password}`).toString('base64'),
        'content-type': 'application/x-git-receive-pack-request',
      },
      body: '0000',
    })
    expect(post.status).toBe(403)
    const branch = (await s.get('/repos/alice/frozen/branches/main', { token: alice.token })).body
    expect(branch.commit.id).toBe(before)
    expect([branch.user_can_push, branch.user_can_merge]).toEqual([false, false])
    // Unarchived, the same push goes through.
    await s.patch('/repos/alice/frozen', { archived: false }, { token: alice.token })
    await gitOk(dir, 'push', '-q', remoteUrl(s.url, 'alice/frozen.git', 'alice', alice.password), 'HEAD:main')
    expect((await s.get('/repos/alice/frozen/branches/main', { token: alice.token })).body.user_can_push).toBe(true)
  })
})

/** ls-remote forcing protocol v0. */
async function sh0(cwd: string) {
  return gitOk(cwd, '-c', 'protocol.version=0', 'ls-remote', 'origin')
}
