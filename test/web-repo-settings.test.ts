import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { repoPath, wikiPathOf } from '../src/git/run'
import { mirrorUpdatesSettled } from '../src/modules/migrations/mirrors'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { csrfIn, webVisitors } from './web-session'
import { contentMark } from './db-snapshot'
import { gitOk, oneCommitRepo, remoteUrl } from './git-fixture'
import { eq } from 'drizzle-orm'
import { mirrors } from '../src/db/schema'

/**
 * The repository options page's actions over plain HTTP (Gitea 1.23's SettingsPost): transfer
 * with its pending offer, its cancellation and the recipient's accept / reject from the
 * repository's home; fork conversion; the wiki's deletion; renaming with the old name's redirect;
 * pull-mirror settings and sync; push mirrors that really push; the teams of an organisation's
 * repository; the repository's avatar. Each action's success, its refusals (who may, the typed
 * confirmation, bad input, archived repositories) changing nothing, and the CSRF check.
 */

let s: TestServer
let alice: TestUser // owns alice/* and the organisation acme
let bob: TestUser // administers alice/opts as a collaborator: not its owner
let carol: TestUser // a recipient of transfers; owns the mirrors' sources and targets
let dave: TestUser // reads alice/opts
let mark: () => Promise<string>
let work: string
const { page, signIn, submit, expectCsrfRefused } = webVisitors(() => s.url, () => mark())
const PNG_1X1 = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=', 'base64')

beforeAll(async () => {
  s = await startTestServer({ migrationsAllowLocalNetworks: true, mirrorWorkers: 1 })
  mark = contentMark(s.deps.db)
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  dave = await s.user('dave')
  expect((await s.post('/user/repos', { name: 'opts', auto_init: true }, { token: alice.token })).status).toBe(201)
  expect((await s.put('/repos/alice/opts/collaborators/bob', { permission: 'admin' }, { token: alice.token })).status).toBe(204)
  expect((await s.put('/repos/alice/opts/collaborators/dave', { permission: 'read' }, { token: alice.token })).status).toBe(204)
  expect((await s.post('/orgs', { username: 'acme' }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'src' }, { token: carol.token })).status).toBe(201)
  work = await oneCommitRepo()
  await gitOk(work, 'tag', 'v1')
  await gitOk(work, 'push', '-q', carolUrl('src'), 'main', 'v1')
  // Signed in before any content mark: a sign-in writes its session.
  for (const user of [alice, bob, carol, dave]) await signIn(user)
})
afterAll(async () => {
  await s?.stop()
  if (work) rmSync(work, { recursive: true, force: true })
})

const carolUrl = (name: string) => remoteUrl(s.url, `carol/${name}.git`, carol.name, carol.password)
const settingsOf = (full: string) => `/${full}/settings`
const act = (user: TestUser, full: string, fields: Record<string, string>) => submit(user, settingsOf(full), fields, { from: settingsOf(full) })
const html = async (path: string, user?: TestUser) => (await page(path, user ? await signIn(user) : undefined)).text()

/** Every branch and tag of a repository on the server: ref → object id. */
async function refsIn(owner: string, name: string): Promise<Record<string, string>> {
  const out = await gitOk(repoPath(s.dataDir, owner, name), 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/heads', 'refs/tags')
  return Object.fromEntries(out.split('\n').filter(Boolean).map((line) => line.split(' ') as [string, string]))
}

/** A refusal shown on the options page: its status, the message in the alert, nothing changed. */
async function expectRefused(user: TestUser, full: string, fields: Record<string, string>, status: number, message?: string) {
  const before = await mark()
  const res = await act(user, full, fields)
  expect(res.status).toBe(status)
  if (message) expect(res.html).toContain(message)
  expect(await mark()).toBe(before)
  return res
}

describe('who may', () => {
  test('an administrator opens the page; the owner-only actions are refused to them with 403, nothing changed; a reader is refused every action', async () => {
    expect((await page('/alice/opts/settings', await signIn(bob))).status).toBe(200)
    const shown = await html('/alice/opts/settings', bob)
    expect(shown).not.toContain('name="new_owner_name"')
    expect(shown).toContain('Only the repository')
    for (const action of ['transfer', 'delete', 'convert_fork', 'delete-wiki', 'cancel_transfer'])
      await expectRefused(bob, 'alice/opts', { action, repo_name: 'opts', confirm: 'alice/opts', new_owner_name: 'carol' }, 403, 'Only the repository owner')
    for (const action of ['update', 'mirror-sync', 'push-mirror-add', 'transfer']) await expectRefused(dave, 'alice/opts', { action, repo_name: 'opts' }, 403)
    await expectRefused(alice, 'alice/opts', { action: 'nonsense' }, 422, 'Unknown action')
  })

  test('every new action is refused without its CSRF token', async () => {
    const forms: Record<string, string>[] = [
      { action: 'transfer', repo_name: 'opts', new_owner_name: 'carol' },
      { action: 'cancel_transfer' },
      { action: 'convert_fork', repo_name: 'opts' },
      { action: 'delete-wiki', repo_name: 'opts' },
      { action: 'push-mirror-add', push_mirror_address: `${s.url}/carol/src.git` },
      { action: 'mirror-sync' },
    ]
    for (const fields of forms)
      await expectCsrfRefused(alice, '/alice/opts/settings', fields)
    await expectCsrfRefused(alice, '/alice/opts/settings/collaboration/team', { team: 'Owners' })
    await expectCsrfRefused(alice, '/alice/opts/settings/collaboration/team/delete', { id: '1' })
    await expectCsrfRefused(alice, '/alice/opts/settings/avatar/delete', {})
    await expectCsrfRefused(carol, '/alice/opts/action/accept_transfer', {})
  })
})

describe('rename and visibility', () => {
  test('the name field renames as the API does: the old name redirects; the private box hides it from strangers', async () => {
    expect((await s.post('/user/repos', { name: 'named', auto_init: true }, { token: alice.token })).status).toBe(201)
    const fields = { action: 'update', repo_name: 'renamed', private: 'on', has_issues: 'on', has_pull_requests: 'on' }
    // A taken or bad name changes nothing.
    await expectRefused(alice, 'alice/named', { ...fields, repo_name: 'opts' }, 422, 'already exists')
    await expectRefused(alice, 'alice/named', { ...fields, repo_name: 'bad name!' }, 422)
    const res = await act(alice, 'alice/named', fields)
    expect(res.status).toBe(303)
    expect(res.location).toBe('/alice/renamed/settings?done=saved')
    const repo = (await s.get('/repos/alice/renamed', { token: alice.token })).body
    expect([repo.name, repo.private]).toEqual(['renamed', true])
    // The old name leads to the new one, on the pages as on the API.
    const old = await page('/alice/named', await signIn(alice))
    expect(old.status).toBe(307)
    expect(old.headers.get('location')).toBe('/alice/renamed')
    expect((await s.get('/repos/alice/named', { token: alice.token })).status).toBe(307)
    expect((await page('/alice/renamed', await signIn(carol))).status).toBe(404)
  })
})

describe('transfer', () => {
  test('to a user: refusals first, then a pending offer the owner cancels, the recipient rejects, then accepts from the home page', async () => {
    expect((await s.post('/user/repos', { name: 'moving', auto_init: true }, { token: alice.token })).status).toBe(201)
    await expectRefused(alice, 'alice/moving', { action: 'transfer', repo_name: 'wrong', new_owner_name: 'carol' }, 422, 'Type the repository')
    await expectRefused(alice, 'alice/moving', { action: 'transfer', repo_name: 'moving', new_owner_name: 'nobody-here' }, 404, 'does not exist')
    await expectRefused(alice, 'alice/moving', { action: 'transfer', repo_name: 'moving', new_owner_name: 'alice' }, 422, 'already belongs')
    await expectRefused(alice, 'alice/moving', { action: 'cancel_transfer' }, 404, 'not being transferred')

    const offer = async () => {
      const res = await act(alice, 'alice/moving', { action: 'transfer', repo_name: 'moving', new_owner_name: 'carol' })
      expect(res.status).toBe(303)
      expect(res.location).toBe('/alice/moving/settings?done=transfer-started')
    }
    await offer()
    expect(await html('/alice/moving/settings', alice)).toContain('being transferred to <a href="/carol">carol</a>')
    await expectRefused(alice, 'alice/moving', { action: 'transfer', repo_name: 'moving', new_owner_name: 'dave' }, 409, 'already being transferred')
    // The banner: for the recipient, not for the owner nor another reader.
    expect(await html('/alice/moving', carol)).toContain('action="/alice/moving/action/accept_transfer"')
    expect(await html('/alice/moving', alice)).not.toContain('accept_transfer')
    expect(await html('/alice/moving', dave)).not.toContain('accept_transfer')
    // Another user may not answer it.
    const before = await mark()
    expect((await submit(dave, '/alice/moving/action/accept_transfer', {}, { from: '/alice/moving' })).status).toBe(403)
    expect(await mark()).toBe(before)

    const cancelled = await act(alice, 'alice/moving', { action: 'cancel_transfer' })
    expect(cancelled.location).toBe('/alice/moving/settings?done=transfer-cancelled')
    expect(await html('/alice/moving', carol)).not.toContain('accept_transfer')

    await offer()
    const rejected = await submit(carol, '/alice/moving/action/reject_transfer', {}, { from: '/alice/moving' })
    expect(rejected.status).toBe(303)
    expect(rejected.location).toBe('/alice/moving?done=transfer-rejected')
    expect((await s.get('/repos/alice/moving', { token: alice.token })).body.owner.login).toBe('alice')

    await offer()
    const accepted = await submit(carol, '/alice/moving/action/accept_transfer', {}, { from: '/alice/moving' })
    expect(accepted.status).toBe(303)
    expect(accepted.location).toBe('/carol/moving?done=transfer-accepted')
    expect((await s.get('/repos/carol/moving', { token: carol.token })).body.owner.login).toBe('carol')
    expect(await html('/carol/moving?done=transfer-accepted', carol)).toContain('the repository is yours now')
    // The old full name leads to the new one.
    const old = await page('/alice/moving', await signIn(carol))
    expect(old.status).toBe(307)
    expect(old.headers.get('location')).toBe('/carol/moving')
    // Nothing pending any more.
    expect((await submit(carol, '/carol/moving/action/accept_transfer', {}, { from: '/carol/moving' })).status).toBe(404)
  })

  test('to an organisation the owner may create repositories in: moved at once, on to its new home', async () => {
    expect((await s.post('/user/repos', { name: 'to-org' }, { token: alice.token })).status).toBe(201)
    const res = await act(alice, 'alice/to-org', { action: 'transfer', repo_name: 'to-org', new_owner_name: 'acme' })
    expect(res.status).toBe(303)
    expect(res.location).toBe('/acme/to-org?done=transferred')
    expect((await s.get('/repos/acme/to-org', { token: alice.token })).status).toBe(200)
  })
})

describe('fork and wiki', () => {
  test('convert_fork: the owner makes a fork a regular repository, the parent counts one fork fewer; a repository that is no fork 404', async () => {
    expect((await s.post('/repos/carol/src/forks', {}, { token: alice.token })).status).toBe(202)
    expect((await s.get('/repos/carol/src')).body.forks_count).toBe(1)
    expect(await html('/alice/src/settings', alice)).toContain('value="convert_fork"')
    await expectRefused(alice, 'alice/src', { action: 'convert_fork', repo_name: 'nope' }, 422, 'Type the repository')
    const res = await act(alice, 'alice/src', { action: 'convert_fork', repo_name: 'src' })
    expect(res.location).toBe('/alice/src/settings?done=fork-converted')
    const repo = (await s.get('/repos/alice/src', { token: alice.token })).body
    expect([repo.fork, repo.parent ?? null]).toEqual([false, null])
    expect((await s.get('/repos/carol/src')).body.forks_count).toBe(0)
    expect(await html('/alice/src/settings', alice)).not.toContain('value="convert_fork"')
    await expectRefused(alice, 'alice/src', { action: 'convert_fork', repo_name: 'src' }, 404, 'not a fork')
  })

  test('delete-wiki: its pages and folder gone, the wiki turned off; refused while archived', async () => {
    expect((await s.post('/user/repos', { name: 'wikied' }, { token: alice.token })).status).toBe(201)
    expect((await s.post('/repos/alice/wikied/wiki/new', { title: 'Home', content_base64: btoa('hello') }, { token: alice.token })).status).toBe(201)
    const wikiDir = wikiPathOf(repoPath(s.dataDir, 'alice', 'wikied'))
    expect(existsSync(wikiDir)).toBe(true)
    await expectRefused(alice, 'alice/wikied', { action: 'delete-wiki', repo_name: 'wikie' }, 422)
    expect((await s.patch('/repos/alice/wikied', { archived: true }, { token: alice.token })).status).toBe(200)
    await expectRefused(alice, 'alice/wikied', { action: 'delete-wiki', repo_name: 'wikied' }, 423)
    expect((await s.patch('/repos/alice/wikied', { archived: false }, { token: alice.token })).status).toBe(200)
    const res = await act(alice, 'alice/wikied', { action: 'delete-wiki', repo_name: 'wikied' })
    expect(res.location).toBe('/alice/wikied/settings?done=wiki-deleted')
    expect(existsSync(wikiDir)).toBe(false)
    expect((await s.get('/repos/alice/wikied', { token: alice.token })).body.has_wiki).toBe(false)
    expect((await s.get('/repos/alice/wikied/wiki/page/Home', { token: alice.token })).status).toBe(404)
  })

  test('delete: the owner only, with the name typed (Gitea\'s repo_name, or the full name)', async () => {
    expect((await s.post('/user/repos', { name: 'doomed' }, { token: alice.token })).status).toBe(201)
    await expectRefused(alice, 'alice/doomed', { action: 'delete', repo_name: 'doome' }, 422)
    const res = await act(alice, 'alice/doomed', { action: 'delete', repo_name: 'doomed' })
    expect(res.location).toBe('/alice')
    expect((await s.get('/repos/alice/doomed', { token: alice.token })).status).toBe(404)
  })
})

describe('mirrors', () => {
  test('a pull mirror: interval and address changed, bad input refused, the password never shown; sync now fetches', async () => {
    const migrated = await s.post(
      '/repos/migrate',
      { clone_addr: `${s.url}/carol/src.git`, auth_username: carol.name, auth_password: carol.password, repo_owner: 'alice', repo_name: 'mirror', mirror: true, mirror_interval: '8h' },
      { token: alice.token },
    )
    expect(migrated.status).toBe(201)
    const shown = await html('/alice/mirror/settings', alice)
    expect(shown).toContain('value="mirror-sync"')
    expect(shown).not.toContain(carol.password)
    await expectRefused(alice, 'alice/mirror', { action: 'mirror', interval: '1s', mirror_address: `${s.url}/carol/src.git` }, 422, 'invalid mirror interval')
    await expectRefused(alice, 'alice/mirror', { action: 'mirror', interval: '1h', mirror_address: 'ftp://example.com/x' }, 422, 'Invalid url')
    await expectRefused(alice, 'alice/mirror', { action: 'mirror', interval: '1h', mirror_address: '/etc' }, 422, 'not allowed to import local')
    await expectRefused(alice, 'alice/opts', { action: 'mirror', interval: '1h', mirror_address: `${s.url}/carol/src.git` }, 404, 'not a mirror')
    await expectRefused(alice, 'alice/opts', { action: 'mirror-sync' }, 400, 'not a mirror')
    // The interval changed, the address and its stored credentials kept (blank fields).
    const saved = await act(alice, 'alice/mirror', { action: 'mirror', interval: '1h', mirror_address: `${s.url}/carol/src.git` })
    expect(saved.status).toBe(303)
    expect((await s.get('/repos/alice/mirror', { token: alice.token })).body.mirror_interval).toBe('1h0m0s')

    // A new commit at the source; sync now fetches it (with the kept credentials: carol's repository is public, her tag too).
    writeFileSync(join(work, 'more.txt'), 'more\n')
    await gitOk(work, 'add', 'more.txt')
    await gitOk(work, 'commit', '-q', '-m', 'more')
    await gitOk(work, 'push', '-q', carolUrl('src'), 'main')
    const synced = await act(alice, 'alice/mirror', { action: 'mirror-sync' })
    expect(synced.location).toBe('/alice/mirror/settings?done=mirror-sync-queued')
    await mirrorUpdatesSettled(s.deps)
    expect(await refsIn('alice', 'mirror')).toEqual(await refsIn('carol', 'src'))

    // A new address with credentials in its user-info: kept apart from the address, never shown.
    expect((await s.patch('/repos/carol/src', { private: true }, { token: carol.token })).status).toBe(200)
    const moved = await act(alice, 'alice/mirror', { action: 'mirror', interval: '2h', mirror_address: `${s.url}/carol/src.git`, mirror_username: carol.name, mirror_password: carol.password })
    expect(moved.status).toBe(303)
    const again = await html('/alice/mirror/settings', alice)
    expect(again).not.toContain(carol.password)
    writeFileSync(join(work, 'private.txt'), 'private\n')
    await gitOk(work, 'add', 'private.txt')
    await gitOk(work, 'commit', '-q', '-m', 'private')
    await gitOk(work, 'push', '-q', carolUrl('src'), 'main')
    await act(alice, 'alice/mirror', { action: 'mirror-sync' })
    await mirrorUpdatesSettled(s.deps)
    expect(await refsIn('alice', 'mirror')).toEqual(await refsIn('carol', 'src'))
    expect((await s.patch('/repos/carol/src', { private: false }, { token: carol.token })).status).toBe(200)

    // The stored credentials stay with their server: the same origin keeps them, another drops them.
    const stored = async () => (await s.deps.db.select().from(mirrors).where(eq(mirrors.repoId, (await s.get('/repos/alice/mirror', { token: alice.token })).body.id)))[0]!
    expect((await stored()).authUsername).toBe(carol.name)
    expect((await act(alice, 'alice/mirror', { action: 'mirror', interval: '2h', mirror_address: `${s.url}/carol/src` })).status).toBe(303)
    expect(await stored()).toMatchObject({ remoteAddress: `${s.url}/carol/src`, authUsername: carol.name })
    expect((await stored()).authPasswordSealed).not.toBe('')
    const elsewhere = s.url.replace('127.0.0.1', 'localhost')
    expect((await act(alice, 'alice/mirror', { action: 'mirror', interval: '2h', mirror_address: `${elsewhere}/carol/src.git` })).status).toBe(303)
    expect(await stored()).toMatchObject({ remoteAddress: `${elsewhere}/carol/src.git`, authUsername: '', authPasswordSealed: '' })
  })

  test('push mirrors: added (credentials never shown), refused on bad input, pushed now for real, interval changed, removed', async () => {
    expect((await s.post('/user/repos', { name: 'target', private: true }, { token: carol.token })).status).toBe(201)
    expect((await s.post('/user/repos', { name: 'pushing' }, { token: alice.token })).status).toBe(201)
    const aliceWork = await oneCommitRepo()
    try {
      await gitOk(aliceWork, 'tag', 'v7')
      await gitOk(aliceWork, 'push', '-q', remoteUrl(s.url, 'alice/pushing.git', alice.name, alice.password), 'main', 'v7')
    } finally {
      rmSync(aliceWork, { recursive: true, force: true })
    }
    const address = `${s.url}/carol/target.git`
    const add = { action: 'push-mirror-add', push_mirror_address: address, push_mirror_username: carol.name, push_mirror_password: carol.password, push_mirror_interval: '8h' }
    const bad = await expectRefused(alice, 'alice/pushing', { ...add, push_mirror_interval: 'soon' }, 400, 'invalid mirror interval')
    expect(bad.html).not.toContain(carol.password)
    expect(bad.html).toContain('value="soon"')
    await expectRefused(alice, 'alice/pushing', { ...add, push_mirror_address: '/tmp' }, 400, 'not a local path')
    await expectRefused(bob, 'alice/opts', { ...add, push_mirror_address: 'file:///tmp' }, 400)
    const added = await act(alice, 'alice/pushing', add)
    expect(added.location).toBe('/alice/pushing/settings?done=push-mirror-added')
    const listed = (await s.get('/repos/alice/pushing/push_mirrors', { token: alice.token })).body
    expect(listed.map((m: any) => [m.remote_address, m.interval])).toEqual([[address, '8h0m0s']])
    const shown = await html('/alice/pushing/settings', alice)
    expect(shown).toContain(address)
    expect(shown).not.toContain(carol.password)
    const id = /name="push_mirror_id" value="(\d+)"/.exec(shown)![1]!

    // Pushed now: carol's repository gets every branch and tag.
    const synced = await act(alice, 'alice/pushing', { action: 'push-mirror-sync', push_mirror_id: id })
    expect(synced.location).toBe('/alice/pushing/settings?done=push-mirror-sync-queued')
    await mirrorUpdatesSettled(s.deps)
    const pushed = await refsIn('carol', 'target')
    expect(pushed).toEqual(await refsIn('alice', 'pushing'))
    expect(Object.keys(pushed).sort()).toEqual(['refs/heads/main', 'refs/tags/v7'])

    await expectRefused(alice, 'alice/pushing', { action: 'push-mirror-update', push_mirror_id: id, push_mirror_interval: '1s' }, 400, 'invalid mirror interval')
    await expectRefused(alice, 'alice/pushing', { action: 'push-mirror-sync', push_mirror_id: '999999' }, 404)
    await expectRefused(alice, 'alice/pushing', { action: 'push-mirror-remove', push_mirror_id: 'x' }, 404)
    // Another repository's mirror is not this one's.
    await expectRefused(alice, 'alice/opts', { action: 'push-mirror-remove', push_mirror_id: id }, 404)
    const updated = await act(alice, 'alice/pushing', { action: 'push-mirror-update', push_mirror_id: id, push_mirror_interval: '2h', push_mirror_defer_sync: 'true' })
    expect(updated.status).toBe(303)
    expect((await s.get('/repos/alice/pushing/push_mirrors', { token: alice.token })).body[0].interval).toBe('2h0m0s')

    // Archived: the mirror actions are refused as the API's routes refuse them (423).
    expect((await s.patch('/repos/alice/pushing', { archived: true }, { token: alice.token })).status).toBe(200)
    for (const action of ['push-mirror-sync', 'push-mirror-remove', 'push-mirror-add']) await expectRefused(alice, 'alice/pushing', { ...add, action, push_mirror_id: id }, 423)
    expect((await s.patch('/repos/alice/pushing', { archived: false }, { token: alice.token })).status).toBe(200)

    const removed = await act(alice, 'alice/pushing', { action: 'push-mirror-remove', push_mirror_id: id })
    expect(removed.location).toBe('/alice/pushing/settings?done=push-mirror-removed')
    expect((await s.get('/repos/alice/pushing/push_mirrors', { token: alice.token })).body).toEqual([])
  })
})

describe('teams and avatar', () => {
  test("an organisation's repository: a team added by name and removed by id through the teams service; its refusals", async () => {
    expect((await s.post('/orgs/acme/repos', { name: 'shared' }, { token: alice.token })).status).toBe(201)
    const devs = (await s.post('/orgs/acme/teams', { name: 'devs', permission: 'write', units: ['repo.code'] }, { token: alice.token })).body
    const collab = '/acme/shared/settings/collaboration'
    expect(await html(collab, alice)).toContain('aria-label="Teams"')
    expect(await html('/alice/opts/settings/collaboration', alice)).not.toContain('aria-label="Teams"')
    const add = (team: string) => submit(alice, `${collab}/team`, { team }, { from: collab })
    let before = await mark()
    expect((await add('nobody')).status).toBe(404)
    expect((await add('Owners')).status).toBe(422)
    expect((await submit(alice, '/alice/opts/settings/collaboration/team', { team: 'devs' }, { from: '/alice/opts/settings/collaboration' })).status).toBe(405)
    expect(await mark()).toBe(before)
    const res = await add('devs')
    expect(res.status).toBe(303)
    expect(res.location).toBe(`${collab}?done=team-added`)
    expect((await s.get('/repos/acme/shared/teams/devs', { token: alice.token })).status).toBe(200)
    expect((await add('devs')).html).toContain('already added')
    before = await mark()
    expect((await submit(alice, `${collab}/team/delete`, { id: 'x' }, { from: collab })).status).toBe(404)
    expect(await mark()).toBe(before)
    const gone = await submit(alice, `${collab}/team/delete`, { id: String(devs.id) }, { from: collab })
    expect(gone.location).toBe(`${collab}?done=team-removed`)
    expect((await s.get('/repos/acme/shared/teams/devs', { token: alice.token })).status).toBe(404)
  })

  test("the repository's avatar: uploaded and deleted; a file that is no image refused", async () => {
    const post = async (path: string, file?: Blob) => {
      const cookie = await signIn(alice)
      const body = new FormData()
      body.append('_csrf', csrfIn(await (await page('/alice/opts/settings', cookie)).text())!)
      if (file) body.append('avatar', file, 'avatar.png')
      const res = await fetch(s.url + path, { method: 'POST', headers: { cookie }, body, redirect: 'manual' })
      return { status: res.status, location: res.headers.get('location'), html: await res.text() }
    }
    const before = await mark()
    const bad = await post('/alice/opts/settings/avatar', new Blob(['not an image']))
    expect(bad.status).toBe(422)
    expect(bad.html).toContain('role="alert"')
    expect(await mark()).toBe(before)
    const up = await post('/alice/opts/settings/avatar', new Blob([PNG_1X1], { type: 'image/png' }))
    expect(up.location).toBe('/alice/opts/settings?done=repo-avatar-saved')
    const url = (await s.get('/repos/alice/opts', { token: alice.token })).body.avatar_url
    expect(url).toContain('/repo-avatars/')
    expect(await html('/alice/opts/settings', alice)).toContain(url)
    const gone = await post('/alice/opts/settings/avatar/delete')
    expect(gone.location).toBe('/alice/opts/settings?done=repo-avatar-deleted')
    expect((await s.get('/repos/alice/opts', { token: alice.token })).body.avatar_url).toBe('')
  })
})
