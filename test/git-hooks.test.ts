/**
 * Gitea's Git hooks API (`/repos/{o}/{r}/hooks/git`, src/modules/git-hooks): the repository's
 * pre-receive, update and post-receive programs, kept at Gitea's `hooks/{name}.d/{name}` and run
 * by real pushes after Warren's own checks (src/push/hook.ts). Editing them is running code as the
 * server: off by default (WARREN_DISABLE_GIT_HOOKS), then for site administrators and users
 * given `allow_git_hook`, in repositories they administer.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { remoteUrl, sh, tempDir } from './git-fixture'
import { commitOn, pushedRepo } from './pull-fixtures'
import { repoPath } from '../src/git/run'
import { webVisitors } from './web-session'

let s: TestServer
let root: TestUser, alice: TestUser, bob: TestUser, carol: TestUser
let dir: string
const dirs: string[] = []
const gitDir = () => repoPath(s.deps.config.dataDir, 'alice', 'hooked')
const HOOKS = '/repos/alice/hooked/hooks/git'
const push = (...refspecs: string[]) => sh(['git', 'push', remoteUrl(s.url, 'alice/hooked.git', 'alice', alice.password), ...refspecs], dir)

beforeAll(async () => {
  s = await startTestServer({ disableGitHooks: false })
  root = await s.user('root', { admin: true })
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  dir = (await pushedRepo(s, alice, 'hooked', dirs)).dir
  // bob administers the repository; carol writes to it.
  expect((await s.put('/repos/alice/hooked/collaborators/bob', { permission: 'admin' }, { token: alice.token })).status).toBe(204)
  expect((await s.put('/repos/alice/hooked/collaborators/carol', { permission: 'write' }, { token: alice.token })).status).toBe(204)
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('who may edit', () => {
  test('nobody while WARREN_DISABLE_GIT_HOOKS is on (the default): 403, Gitea\'s message, even for a site administrator', async () => {
    s.deps.config.disableGitHooks = true
    try {
      const refused = await s.get(HOOKS, { token: root.token })
      expect(refused.status).toBe(403)
      expect(refused.body.message).toBe('must be allowed to edit Git hooks')
      expect((await s.patch(`${HOOKS}/pre-receive`, { content: '#!/bin/sh\nexit 1\n' }, { token: root.token })).status).toBe(403)
    } finally {
      s.deps.config.disableGitHooks = false
    }
    expect(existsSync(join(gitDir(), 'hooks', 'pre-receive.d'))).toBe(false)
  })

  test('on: site administrators, and repository administrators given allow_git_hook; not the owner without it, nor a writer', async () => {
    expect((await s.get(HOOKS, { token: root.token })).status).toBe(200)
    expect((await s.get(HOOKS, { token: alice.token })).status).toBe(403)
    expect((await s.get(HOOKS)).status).toBe(401)
    // The site administrator gives bob and carol the right (Gitea's admin EditUserOption).
    for (const who of ['bob', 'carol']) expect((await s.patch(`/admin/users/${who}`, { login_name: who, source_id: 0, allow_git_hook: true }, { token: root.token })).status).toBe(200)
    expect((await s.get(HOOKS, { token: bob.token })).status).toBe(200)
    // carol may edit hooks, but writes without administering this repository.
    expect((await s.get(HOOKS, { token: carol.token })).status).toBe(403)
    // A stranger to a private repository is told nothing of it.
    expect((await s.post('/user/repos', { name: 'secret', private: true }, { token: alice.token })).status).toBe(201)
    expect((await s.get('/repos/alice/secret/hooks/git', { token: carol.token })).status).toBe(404)
  })
})

describe('the hooks', () => {
  test('listed in Gitea\'s order, inactive at first; an unknown name is 404; bad input 422 and nothing written', async () => {
    const listed = await s.get(HOOKS, { token: root.token })
    expect(listed.body).toEqual([
      { name: 'pre-receive', is_active: false, content: '' },
      { name: 'update', is_active: false, content: '' },
      { name: 'post-receive', is_active: false, content: '' },
    ])
    expect((await s.get(`${HOOKS}/post-update`, { token: root.token })).status).toBe(404)
    expect((await s.patch(`${HOOKS}/..%2F..%2Fconfig`, { content: 'x' }, { token: root.token })).status).toBe(404)
    expect((await s.patch(`${HOOKS}/update`, { content: 'x'.repeat(1024 * 1024 + 1) }, { token: root.token })).status).toBe(422)
    expect((await s.patch(`${HOOKS}/update`, { content: 42 }, { token: root.token })).status).toBe(422)
    expect(existsSync(join(gitDir(), 'hooks', 'update.d'))).toBe(false)
  })

  test('a pre-receive that refuses refuses real pushes, with its words; deleted, pushes go through again', async () => {
    const script = '#!/bin/sh\r\necho "pushes are frozen" >&2\r\nexit 1\r\n'
    const set = await s.patch(`${HOOKS}/pre-receive`, { content: script }, { token: bob.token })
    expect(set.status).toBe(200)
    expect(set.body).toEqual({ name: 'pre-receive', is_active: true, content: script.replace(/\r/g, '') })
    const file = join(gitDir(), 'hooks', 'pre-receive.d', 'pre-receive')
    expect(readFileSync(file, 'utf8')).toBe(script.replace(/\r/g, ''))
    expect(statSync(file).mode & 0o777).toBe(0o755)
    expect((await s.get(`${HOOKS}/pre-receive`, { token: root.token })).body.is_active).toBe(true)

    const sha = await commitOn(dir, 'main', { 'frozen.txt': 'x\n' }, 'Frozen')
    const refused = await push('main')
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain('pushes are frozen')
    expect((await s.get('/repos/alice/hooked/branches/main', { token: alice.token })).body.commit.id).not.toBe(sha)

    expect((await s.del(`${HOOKS}/pre-receive`, undefined, { token: bob.token })).status).toBe(204)
    expect(existsSync(file)).toBe(false)
    expect((await s.get(`${HOOKS}/pre-receive`, { token: root.token })).body).toEqual({ name: 'pre-receive', is_active: false, content: '' })
    expect((await push('main')).code).toBe(0)
    expect((await s.get('/repos/alice/hooked/branches/main', { token: alice.token })).body.commit.id).toBe(sha)
    // A repository without an update or post-receive of its own runs none: no process a ref.
    expect(existsSync(join(s.deps.config.dataDir, 'hooks', 'channel-2', 'pre-receive'))).toBe(true)
    expect(existsSync(join(s.deps.config.dataDir, 'hooks', 'channel-2', 'update'))).toBe(false)
  })

  test('update is asked once a ref, with its name and ids; post-receive hears every ref moved and speaks to the pusher', async () => {
    const logDir = tempDir('warren-hook-log-')
    dirs.push(logDir)
    const log = join(logDir, 'post-receive.log')
    expect(
      (await s.patch(`${HOOKS}/update`, { content: '#!/bin/sh\nif [ "$1" = refs/heads/blocked ]; then echo "no pushes to $1" >&2; exit 1; fi\nexit 0\n' }, { token: root.token })).status,
    ).toBe(200)
    // Blank text removes a hook, as Gitea's Update does.
    expect((await s.patch(`${HOOKS}/post-receive`, { content: '  \n' }, { token: root.token })).body.is_active).toBe(false)
    expect((await s.patch(`${HOOKS}/post-receive`, { content: `#!/bin/sh\ncat >> '${log}'\necho "thanks for pushing"\n` }, { token: root.token })).body.is_active).toBe(true)

    const main = await commitOn(dir, 'main', { 'one.txt': '1\n' }, 'One')
    const blocked = await commitOn(dir, 'blocked', { 'two.txt': '2\n' }, 'Two', 'main')
    const pushed = await push('main', 'blocked')
    // git reports the refused ref and pushes the other.
    expect(pushed.stderr).toContain('no pushes to refs/heads/blocked')
    expect(pushed.stderr).toContain('remote: thanks for pushing')
    expect((await s.get('/repos/alice/hooked/branches/main', { token: alice.token })).body.commit.id).toBe(main)
    expect((await s.get('/repos/alice/hooked/branches/blocked', { token: alice.token })).status).toBe(404)
    const heard = readFileSync(log, 'utf8').trim().split('\n')
    expect(heard).toHaveLength(1)
    expect(heard[0]).toEndWith(`${main} refs/heads/main`)
    expect(blocked).not.toBe(main)
    for (const name of ['update', 'post-receive']) expect((await s.del(`${HOOKS}/${name}`, undefined, { token: root.token })).status).toBe(204)
  })
})

describe('the settings pages', () => {
  const { page, signIn, submit } = webVisitors(() => s.url, async () => '')
  const PAGES = '/alice/hooked/settings/hooks/git'

  test("Gitea's Git hooks tab: offered in the settings to those who may edit, refused to the others", async () => {
    const rootHtml = await (await page('/alice/hooked/settings/hooks', await signIn(root))).text()
    expect(rootHtml).toContain(`href="${PAGES}"`)
    const list = await (await page(PAGES, await signIn(root))).text()
    expect(list).toContain('aria-label="Git hooks"')
    for (const name of ['pre-receive', 'update', 'post-receive']) expect(list).toContain(`href="${PAGES}/${name}"`)
    // alice owns the repository but may not edit hooks: no tab, and the page is refused.
    const aliceHtml = await (await page('/alice/hooked/settings/hooks', await signIn(alice))).text()
    expect(aliceHtml).toContain('Webhooks')
    expect(aliceHtml).not.toContain(`href="${PAGES}"`)
    expect((await page(PAGES, await signIn(alice))).status).toBe(403)
    expect((await page(`${PAGES}/nonsense`, await signIn(root))).status).toBe(404)
  })

  test('a hook saved from its page is the one pushes run; emptied, it is removed; a form without its token changes nothing', async () => {
    const path = `${PAGES}/pre-receive`
    const file = join(gitDir(), 'hooks', 'pre-receive.d', 'pre-receive')
    const refused = await submit(root, path, { content: '#!/bin/sh\necho x\n' }, { from: path, csrf: 'f'.repeat(64) })
    expect(refused.status).toBe(403)
    expect(existsSync(file)).toBe(false)
    const saved = await submit(root, path, { content: '#!/bin/sh\r\necho "closed by the page" >&2\r\nexit 1\r\n' }, { from: path })
    expect(saved.status).toBe(303)
    expect(saved.location).toBe(`${path}?done=saved`)
    expect(readFileSync(file, 'utf8')).toBe('#!/bin/sh\necho "closed by the page" >&2\nexit 1\n')
    expect(await (await page(path, await signIn(root))).text()).toContain('closed by the page')
    await commitOn(dir, 'main', { 'page.txt': 'x\n' }, 'From the page')
    const pushed = await push('main')
    expect(pushed.code).not.toBe(0)
    expect(pushed.stderr).toContain('closed by the page')
    expect((await submit(root, path, { content: '' }, { from: path })).status).toBe(303)
    expect(existsSync(file)).toBe(false)
    expect((await push('main')).code).toBe(0)
  })
})
