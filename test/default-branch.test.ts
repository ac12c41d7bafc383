/**
 * New repositories' default branch (WARREN_DEFAULT_BRANCH, Gitea 1.23's [repository]
 * DEFAULT_BRANCH): `main` unless configured; auto_init commits to it and HEAD names it; an empty
 * repository's first push makes the pushed branch its default, as Gitea does; markdown rendered
 * for a repository of this server links into that repository's default branch.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { gitOk, remoteUrl, tempDir } from './git-fixture'
import { startTestServer, type TestServer, type TestUser } from './helpers'

let plain: TestServer
let trunk: TestServer
let alice: TestUser
let carol: TestUser

beforeAll(async () => {
  plain = await startTestServer()
  trunk = await startTestServer({ defaultBranch: loadConfig({ WARREN_DEFAULT_BRANCH: ' trunk ' }).defaultBranch })
  alice = await plain.user('alice')
  carol = await trunk.user('carol')
})
afterAll(async () => {
  await plain?.stop()
  await trunk?.stop()
})

/** The branch HEAD names in the repository's git folder, as a clone sees it. */
const headOf = async (s: TestServer, path: string, token: string) =>
  (await gitOk(tempDir(), 'ls-remote', '--symref', remoteUrl(s.url, path, 'x', token), 'HEAD')).split('\n')[0]

describe('the default branch of a new repository', () => {
  test('main by default: auto_init commits to it, HEAD names it; an empty one waits for its first push, which sets it', async () => {
    const made = await plain.post('/user/repos', { name: 'fresh', auto_init: true }, { token: alice.token })
    expect(made.status).toBe(201)
    expect(made.body.default_branch).toBe('main')
    expect((await plain.get('/repos/alice/fresh/branches', { token: alice.token })).body.map((b: { name: string }) => b.name)).toEqual(['main'])
    expect(await headOf(plain, 'alice/fresh.git', alice.token)).toBe('ref: refs/heads/main\tHEAD')
    // A name the request gives wins.
    expect((await plain.post('/user/repos', { name: 'named', auto_init: true, default_branch: 'develop' }, { token: alice.token })).body.default_branch).toBe('develop')

    const empty = await plain.post('/user/repos', { name: 'blank' }, { token: alice.token })
    expect([empty.body.empty, empty.body.default_branch]).toEqual([true, 'main'])
    const work = tempDir()
    await gitOk(work, 'init', '-q', '-b', 'master')
    writeFileSync(join(work, 'a.txt'), 'a\n')
    await gitOk(work, 'add', '.')
    await gitOk(work, '-c', 'user.name=A', '-c', 'user.email=a@example.com', 'commit', '-q', '-m', 'first')
    await gitOk(work, 'push', '-q', remoteUrl(plain.url, 'alice/blank.git', 'alice', alice.token), 'master')
    const pushed = (await plain.get('/repos/alice/blank', { token: alice.token })).body
    expect([pushed.empty, pushed.default_branch]).toEqual([false, 'master'])
  })

  test('WARREN_DEFAULT_BRANCH=trunk is honoured; a name that is no branch name stops the start', async () => {
    const made = await trunk.post('/user/repos', { name: 'tree', auto_init: true }, { token: carol.token })
    expect(made.body.default_branch).toBe('trunk')
    expect(await headOf(trunk, 'carol/tree.git', carol.token)).toBe('ref: refs/heads/trunk\tHEAD')
    expect((await trunk.get('/repos/carol/tree/contents/README.md?ref=trunk', { token: carol.token })).status).toBe(200)
    expect(loadConfig({}).defaultBranch).toBe('main')
    for (const bad of ['a..b', '-x', 'has space', 'end/', 'x.lock', '@'])
      expect(() => loadConfig({ WARREN_DEFAULT_BRANCH: bad })).toThrow('WARREN_DEFAULT_BRANCH')
  })

  test("markdown in a repository's context links into its default branch; elsewhere, or unreadable, into master", async () => {
    await trunk.post('/user/repos', { name: 'hidden', auto_init: true, private: true, default_branch: 'secret-branch' }, { token: carol.token })
    const render = async (context: string, token?: string) =>
      (await trunk.post('/markdown', { Mode: 'gfm', Context: context, Text: '[doc](docs/a.md) ![pic](img/p.png)' }, token ? { token } : {})).body as string
    const own = await render('carol/tree')
    expect(own).toContain(`href="${trunk.url}/carol/tree/src/branch/trunk/docs/a.md"`)
    expect(own).toContain(`src="${trunk.url}/carol/tree/raw/branch/trunk/img/p.png"`)
    // Its URL names it too.
    expect(await render(`${trunk.url}/carol/tree`)).toContain('/carol/tree/src/branch/trunk/docs/a.md')
    // A private repository's branch only for those who may read it.
    expect(await render('carol/hidden')).toContain('/carol/hidden/src/branch/master/docs/a.md')
    expect(await render('carol/hidden', carol.token)).toContain('/carol/hidden/src/branch/secret-branch/docs/a.md')
    expect(await render('https://other.example/o/r')).toContain('https://other.example/o/r/src/branch/master/docs/a.md')
    // The repository's README on its home page, rendered the same way.
    expect((await trunk.put('/repos/carol/tree/contents/README.md', { content: Buffer.from('![pic](img/p.png)\n').toString('base64'), sha: (await trunk.get('/repos/carol/tree/contents/README.md', { token: carol.token })).body.sha, message: 'pic' }, { token: carol.token })).status).toBe(200)
    const home = await (await fetch(`${trunk.url}/carol/tree`, { headers: { accept: 'text/html' } })).text()
    expect(home).toContain(`src="${trunk.url}/carol/tree/raw/branch/trunk/img/p.png"`)
  })
})
