import { afterAll, beforeAll, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { webVisitors } from './web-session'
import { contentMark } from './db-snapshot'
import { gitOk, remoteUrl, tempDir } from './git-fixture'
import { eventsOfRepo } from '../src/events/outbox'

/**
 * The branches and tags pages' forms over plain HTTP (Gitea 1.23's addresses): a branch or tag
 * made from a branch, tag or commit (also from the code page's switcher), a branch renamed,
 * deleted and restored, a tag deleted. Each for a writer, refused for a reader and without the CSRF token
 * (nothing changed, in the database or in git), branch and tag protection and the default branch
 * respected with the refusal said on the page, and what moved seen by the API and `git ls-remote`.
 */

let s: TestServer
let alice: TestUser, bob: TestUser
let mark: () => Promise<string>
let dir: string
const { page, signIn, submit, expectCsrfRefused } = webVisitors(() => s.url, () => mark())

/** The refs git serves, `refs/...` to its id (tags peeled away: the tag refs as they are). */
async function refsNow(): Promise<Record<string, string>> {
  const out = (await gitOk(dir, 'ls-remote', remoteUrl(s.url, 'alice/proj.git', 'alice', alice.token))).trim()
  return Object.fromEntries(
    out
      .split('\n')
      .filter((l) => l && !l.endsWith('^{}'))
      .map((l) => l.split('\t').reverse() as [string, string]),
  )
}
/** The database's content and the refs, together: what a refused form must leave alone. */
const everything = async () => JSON.stringify([await mark(), await refsNow()])
let projId: number
/** The refs named by the outbox's `kind` events with alice as their actor (the events webhooks are sent from). */
const refEvents = async (kind: 'ref.created' | 'ref.deleted') =>
  (await eventsOfRepo(s.deps.db, projId, 0, 1000)).filter((e) => e.kind === kind && e.actorId === alice.user.id).map((e) => (e.payload as { ref: string }).ref)
const asAlice = () => ({ token: alice.token })

/** A form refused without its CSRF token, and for bob, a reader (403): nothing changes, in the database or in git. */
async function writersOnly(path: string, fields: Record<string, string>, from: string) {
  await expectCsrfRefused(alice, path, fields)
  const before = await everything()
  expect((await submit(bob, path, fields, { from })).status).toBe(403)
  expect(await everything()).toBe(before)
}

beforeAll(async () => {
  s = await startTestServer()
  mark = contentMark(s.deps.db)
  dir = tempDir()
  ;[alice, bob] = await Promise.all([s.user('alice'), s.user('bob')])
  const created = await s.post('/user/repos', { name: 'proj', auto_init: true }, asAlice())
  expect(created.status).toBe(201)
  projId = created.body.id
  expect((await s.put('/repos/alice/proj/collaborators/bob', { permission: 'read' }, asAlice())).status).toBe(204)
  expect((await s.post('/repos/alice/proj/branches', { new_branch_name: 'guarded' }, asAlice())).status).toBe(201)
  expect((await s.post('/repos/alice/proj/branch_protections', { rule_name: 'guarded' }, asAlice())).status).toBe(201)
})
afterAll(async () => {
  await s.stop()
  rmSync(dir, { recursive: true, force: true })
})

test('the forms are offered to writers only: on the branches and tags pages and in the code page switcher', async () => {
  const reader = await (await page('/alice/proj/branches', await signIn(bob))).text()
  expect(reader).toContain('href="/alice/proj/src/branch/guarded"')
  expect(reader).not.toContain('New branch or tag from here')
  expect(reader).not.toContain('/branches/delete')
  expect(await (await page('/alice/proj', await signIn(bob))).text()).not.toContain('/branches/_new/')
  const writer = await (await page('/alice/proj/branches', await signIn(alice))).text()
  expect(writer).toContain('action="/alice/proj/branches/_new/branch/main"')
  expect(writer).toContain('action="/alice/proj/branches/delete?name=guarded"')
  expect(writer).not.toContain('action="/alice/proj/branches/delete?name=main"')
  expect(writer).toContain('action="/alice/proj/settings/rename_branch"')
  const code = await (await page('/alice/proj/src/branch/main/README.md', await signIn(alice))).text()
  expect(code).toContain('action="/alice/proj/branches/_new/branch/main"')
  expect(code).toContain('name="current_path" value="README.md"')
})

test('a branch or a tag made from a branch, a tag or a commit; refusals said on the page', async () => {
  const main = (await refsNow())['refs/heads/main']!
  await writersOnly('/alice/proj/branches/_new/branch/main', { new_branch_name: 'feature' }, '/alice/proj/branches')

  const made = await submit(alice, '/alice/proj/branches/_new/branch/main', { new_branch_name: 'feature', current_path: 'README.md' })
  expect(made).toMatchObject({ status: 303, location: '/alice/proj/src/branch/feature/README.md?done=branch-created' })
  expect(await (await page(made.location!, await signIn(alice))).text()).toContain('The branch was created.')
  const tagged = await submit(alice, '/alice/proj/branches/_new/branch/feature', { new_branch_name: 'v1', create_tag: 'on' })
  expect(tagged).toMatchObject({ status: 303, location: '/alice/proj/src/tag/v1?done=tag-created' })
  expect((await submit(alice, '/alice/proj/branches/_new/tag/v1', { new_branch_name: 'from-tag' })).status).toBe(303)
  expect((await submit(alice, `/alice/proj/branches/_new/commit/${main}`, { new_branch_name: 'from-commit' })).status).toBe(303)
  const refs = await refsNow()
  for (const ref of ['heads/feature', 'tags/v1', 'heads/from-tag', 'heads/from-commit']) expect(refs[`refs/${ref}`]).toBe(main)
  expect((await s.get('/repos/alice/proj/branches/from-tag', asAlice())).body.commit.id).toBe(main)
  expect((await s.get('/repos/alice/proj/tags/v1', asAlice())).body.commit.sha).toBe(main)
  expect(await refEvents('ref.created')).toEqual(expect.arrayContaining(['feature', 'v1', 'from-tag', 'from-commit']))

  const unchanged = await everything()
  const invalid = await submit(alice, '/alice/proj/branches/_new/branch/main', { new_branch_name: 'bad..name' })
  expect(invalid.status).toBe(422)
  expect(invalid.html).toContain('role="alert"')
  expect(invalid.html).toContain('invalid branch name')
  const exists = await submit(alice, '/alice/proj/branches/_new/branch/main', { new_branch_name: 'feature' })
  expect(exists.status).toBe(409)
  expect(exists.html).toContain('The branch already exists.')
  const tagExists = await submit(alice, '/alice/proj/branches/_new/branch/main', { new_branch_name: 'v1', create_tag: 'on' })
  expect(tagExists.status).toBe(409)
  expect(tagExists.html).toContain('tag already exists')
  expect((await submit(alice, '/alice/proj/branches/_new/branch/nowhere', { new_branch_name: 'x' })).status).toBe(404)
  expect((await submit(alice, '/alice/proj/branches/_new/blob/main', { new_branch_name: 'x' })).status).toBe(404)
  expect((await submit(alice, '/alice/proj/branches/_new/commit/' + 'f'.repeat(40), { new_branch_name: 'x' })).status).toBe(404)
  expect(await everything()).toBe(unchanged)
})

test('a branch renamed: writers only, the API and git follow; a taken name refused', async () => {
  await writersOnly('/alice/proj/settings/rename_branch', { from: 'from-commit', to: 'renamed' }, '/alice/proj/branches')
  const before = await everything()
  const taken = await submit(alice, '/alice/proj/settings/rename_branch', { from: 'from-commit', to: 'feature' })
  expect(taken.status).toBe(422)
  expect(taken.html).toContain('Branch from-commit was not renamed')
  expect(await everything()).toBe(before)
  const renamed = await submit(alice, '/alice/proj/settings/rename_branch', { from: 'from-commit', to: 'renamed' })
  expect(renamed).toMatchObject({ status: 303, location: '/alice/proj/branches?done=branch-renamed' })
  const refs = await refsNow()
  expect(refs['refs/heads/renamed']).toBeDefined()
  expect(refs['refs/heads/from-commit']).toBeUndefined()
  expect((await s.get('/repos/alice/proj/branches/renamed', asAlice())).status).toBe(200)
})

test('a branch deleted (not the default one nor a protected one, said on the page) and restored', async () => {
  await writersOnly('/alice/proj/branches/delete?name=feature', {}, '/alice/proj/branches')
  const before = await everything()
  const isDefault = await submit(alice, '/alice/proj/branches/delete?name=main', {})
  expect(isDefault.status).toBe(403)
  expect(isDefault.html).toContain('Branch main was not deleted: can not delete default branch')
  const guarded = await submit(alice, '/alice/proj/branches/delete?name=guarded', {})
  expect(guarded.status).toBe(403)
  expect(guarded.html).toContain('protected')
  expect((await submit(alice, '/alice/proj/branches/delete?name=nowhere', {})).status).toBe(404)
  expect(await everything()).toBe(before)

  const feature = (await refsNow())['refs/heads/feature']
  const deleted = await submit(alice, '/alice/proj/branches/delete?name=feature', {})
  expect(deleted.status).toBe(303)
  expect(deleted.location).toMatch(/^\/alice\/proj\/branches\?deleted=\d+&done=branch-deleted$/)
  expect((await refsNow())['refs/heads/feature']).toBeUndefined()
  expect((await s.get('/repos/alice/proj/branches/feature', asAlice())).status).toBe(404)

  // Offered for restoring (to writers), then restored at its last commit through the same path.
  const offer = await (await page(deleted.location!, await signIn(alice))).text()
  expect(offer).toContain('The branch was deleted.')
  expect(offer).toContain('Restore branch feature')
  expect(await (await page(deleted.location!, await signIn(bob))).text()).not.toContain('Restore branch')
  const branchId = /name="branch_id" value="(\d+)"/.exec(offer)![1]!
  await writersOnly('/alice/proj/branches/restore', { branch_id: branchId, name: 'feature' }, '/alice/proj/branches')
  expect((await submit(alice, '/alice/proj/branches/restore', { branch_id: '1', name: 'x' })).status).toBe(404)
  const restored = await submit(alice, '/alice/proj/branches/restore', { branch_id: branchId, name: 'feature' })
  expect(restored).toMatchObject({ status: 303, location: '/alice/proj/branches?done=branch-restored' })
  expect((await refsNow())['refs/heads/feature']).toBe(feature!)
  const again = await submit(alice, '/alice/proj/branches/restore', { branch_id: branchId, name: 'feature' })
  expect(again.status).toBe(409)
  expect(again.html).toContain('Branch feature was not restored: The branch already exists.')
  expect((await submit(alice, '/alice/proj/branches/delete?name=feature', {})).status).toBe(303)
  // The name may come in the form as well as in the query, as Gitea's FormString reads it.
  expect((await submit(alice, '/alice/proj/branches/delete', { name: 'from-tag' })).status).toBe(303)
  expect(await refEvents('ref.deleted')).toEqual(expect.arrayContaining(['feature', 'from-tag']))
})

test('a tag deleted: writers only, not one a release names nor a protected one', async () => {
  expect((await submit(alice, '/alice/proj/branches/_new/branch/main', { new_branch_name: 'v2', create_tag: 'on' })).status).toBe(303)
  expect((await submit(alice, '/alice/proj/branches/_new/branch/main', { new_branch_name: 'keep-1', create_tag: 'on' })).status).toBe(303)
  expect((await s.post('/repos/alice/proj/releases', { tag_name: 'v2', name: 'Two' }, asAlice())).status).toBe(201)
  expect((await s.post('/repos/alice/proj/tag_protections', { name_pattern: 'keep-*', whitelist_usernames: ['bob'] }, asAlice())).status).toBe(201)
  const tags = await (await page('/alice/proj/tags', await signIn(alice))).text()
  expect(tags).toContain('action="/alice/proj/tags/delete?id=v1"')
  expect(tags).toContain('action="/alice/proj/branches/_new/tag/v1"')
  expect(await (await page('/alice/proj/tags', await signIn(bob))).text()).not.toContain('/tags/delete')

  await writersOnly('/alice/proj/tags/delete?id=v1', {}, '/alice/proj/tags')
  const before = await everything()
  const released = await submit(alice, '/alice/proj/tags/delete?id=v2', {})
  expect(released.status).toBe(409)
  expect(released.html).toContain('Tag v2 was not deleted')
  const guarded = await submit(alice, '/alice/proj/tags/delete?id=keep-1', {})
  expect(guarded.status).toBe(403)
  expect(guarded.html).toContain('Tag keep-1 is protected')
  expect(await everything()).toBe(before)

  const deleted = await submit(alice, '/alice/proj/tags/delete?id=v1', {})
  expect(deleted).toMatchObject({ status: 303, location: '/alice/proj/tags?done=tag-deleted' })
  expect((await refsNow())['refs/tags/v1']).toBeUndefined()
  expect((await s.get('/repos/alice/proj/tags/v1', asAlice())).status).toBe(404)
  expect(await refEvents('ref.deleted')).toContain('v1')
})
