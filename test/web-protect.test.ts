import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { webVisitors } from './web-session'
import { contentMark } from './db-snapshot'

/**
 * The branch and tag protection settings pages over plain HTTP: who may see and post them (the
 * API's rule: repository administrators), every form refused without its CSRF token, the rules
 * the forms make, edit and delete read back through the API, and the API's refusals shown on the
 * form again with its status, nothing changed.
 */

let s: TestServer
let alice: TestUser, bob: TestUser, stranger: TestUser
let mark: () => Promise<string>
const { page, signIn, submit, expectCsrfRefused } = webVisitors(() => s.url, () => mark())
const asAlice = () => ({ token: alice.token })

/** A refused form: its status, the page again with an alert holding `message`, and nothing changed. */
async function expectRefused(user: TestUser, path: string, fields: Record<string, string | string[]>, status: number, message: string) {
  const before = await mark()
  const res = await submit(user, path, fields, { from: path.replace(/\/(delete|edit|priority)$/, '') })
  expect(res.status).toBe(status)
  expect(res.html).toContain('role="alert"')
  expect(res.html).toContain(message)
  expect(await mark()).toBe(before)
  return res
}

beforeAll(async () => {
  s = await startTestServer()
  mark = contentMark(s.deps.db)
  alice = await s.user('alice')
  bob = await s.user('bob')
  stranger = await s.user('stranger')
  expect((await s.post('/user/repos', { name: 'guarded', auto_init: true }, asAlice())).status).toBe(201)
  expect((await s.post('/repos/alice/guarded/branches', { new_branch_name: 'develop' }, asAlice())).status).toBe(201)
  expect((await s.put('/repos/alice/guarded/collaborators/bob', { permission: 'write' }, asAlice())).status).toBe(204)
  expect((await s.post('/user/repos', { name: 'hidden', private: true, auto_init: true }, asAlice())).status).toBe(201)
})
afterAll(async () => {
  await s.stop()
})

const B = '/alice/guarded/settings/branches'
const T = '/alice/guarded/settings/tags'

describe('access', () => {
  test('administrators 200, linked from the settings menu; a writer 403; anonymous asked to sign in; a private one 404 to strangers', async () => {
    for (const p of [B, `${B}/edit`, `${B}/edit?rule_name=main`, T]) {
      expect((await page(p, await signIn(alice))).status).toBe(200)
      expect((await page(p, await signIn(bob))).status).toBe(403)
      const anon = await page(p)
      expect(anon.status).toBe(303)
      expect(anon.headers.get('location')).toStartWith('/user/login?redirect_to=')
      const hidden = p.replace('guarded', 'hidden')
      expect((await page(hidden, await signIn(stranger))).status).toBe(404)
      expect((await page(hidden)).status).toBe(404)
    }
    const settings = await (await page('/alice/guarded/settings', await signIn(alice))).text()
    expect(settings).toContain(`href="${B}"`)
    expect(settings).toContain(`href="${T}"`)
    // A writer's POST is refused by the pipeline, and changes nothing.
    const before = await mark()
    expect((await submit(bob, `${B}/edit`, { rule_name: 'main', enable_push: 'all' }, { from: '/alice/guarded' })).status).toBe(403)
    expect((await submit(bob, T, { name_pattern: 'v*' }, { from: '/alice/guarded' })).status).toBe(403)
    expect(await mark()).toBe(before)
  })
})

describe('branch protection rules', () => {
  test('made, edited and deleted through the forms, read back through the API', async () => {
    const fields = {
      rule_name: 'main',
      enable_push: 'whitelist',
      push_whitelist_users: 'alice, bob',
      enable_force_push: 'none',
      enable_merge_whitelist: 'on',
      merge_whitelist_users: 'alice',
      required_approvals: '2',
      enable_status_check: 'on',
      status_check_contexts: 'ci/build\nlint-*\n',
      block_on_rejected_reviews: 'on',
      dismiss_stale_approvals: 'on',
      protected_file_patterns: '*.lock;docs/**',
    }
    await expectCsrfRefused(alice, `${B}/edit`, fields)
    const made = await submit(alice, `${B}/edit`, fields, { from: `${B}/edit` })
    expect(made.status).toBe(303)
    expect(made.location).toBe(`${B}?done=branch-rule-saved`)
    const [rule] = (await s.get('/repos/alice/guarded/branch_protections', asAlice())).body
    expect(rule).toMatchObject({
      rule_name: 'main',
      enable_push: true,
      enable_push_whitelist: true,
      push_whitelist_usernames: ['alice', 'bob'],
      enable_force_push: false,
      enable_merge_whitelist: true,
      merge_whitelist_usernames: ['alice'],
      required_approvals: 2,
      enable_status_check: true,
      status_check_contexts: ['ci/build', 'lint-*'],
      block_on_rejected_reviews: true,
      dismiss_stale_approvals: true,
      block_on_outdated_branch: false,
      protected_file_patterns: '*.lock;docs/**',
    })
    const listed = await (await page(`${B}?done=branch-rule-saved`, await signIn(alice))).text()
    expect(listed).toContain('The branch protection rule was saved.')
    expect(listed).toContain(`href="${B}/edit?rule_name=main"`)

    // The rule's page shows it as saved; its form edits it (the name stays).
    const shown = await (await page(`${B}/edit?rule_name=main`, await signIn(alice))).text()
    expect(shown).toContain('value="alice, bob"')
    expect(shown).toContain('name="rule_id"')
    const id = /name="rule_id" value="(\d+)"/.exec(shown)![1]!
    const edited = await submit(alice, `${B}/edit`, { rule_id: id, rule_name: 'main', enable_push: 'all', required_approvals: '0', block_on_outdated_branch: 'on' }, { from: `${B}/edit?rule_name=main` })
    expect(edited.status).toBe(303)
    const [after] = (await s.get('/repos/alice/guarded/branch_protections', asAlice())).body
    expect(after).toMatchObject({ rule_name: 'main', enable_push: true, enable_push_whitelist: false, required_approvals: 0, block_on_outdated_branch: true, enable_status_check: false, dismiss_stale_approvals: false })

    // A glob rule needs no branch; a plain name must name one (the API's 404), shown on the form.
    expect((await submit(alice, `${B}/edit`, { rule_name: 'release/*', enable_push: 'none' }, { from: `${B}/edit` })).status).toBe(303)
    await expectRefused(alice, `${B}/edit`, { rule_name: 'nowhere', enable_push: 'all' }, 404, 'the branch does not exist')
    // Reordered with a rule's "move up" button (the API's priorities), an unknown id refused.
    const order = async () => (await s.get('/repos/alice/guarded/branch_protections', asAlice())).body.map((r: any) => r.rule_name)
    expect(await order()).toEqual(['main', 'release/*'])
    const rows = await (await page(B, await signIn(alice))).text()
    const ids = /name="ids" value="([0-9,]+)"/.exec(rows)![1]!
    await expectCsrfRefused(alice, `${B}/priority`, { ids })
    const moved = await submit(alice, `${B}/priority`, { ids }, { from: B })
    expect(moved.location).toBe(`${B}?done=branch-rules-ordered`)
    expect(await order()).toEqual(['release/*', 'main'])
    await expectRefused(alice, `${B}/priority`, { ids: '999999' }, 422, 'does not belong to this repository')
    await expectRefused(alice, `${B}/priority`, { ids: '1,x' }, 422, 'ids')
    // The API's refusals, on the form again with what was typed: a duplicate name, an unknown user, a bad number, too many names.
    await expectRefused(alice, `${B}/edit`, { rule_name: 'main' }, 403, 'Branch protection already exist')
    const unknown = await expectRefused(alice, `${B}/edit`, { rule_name: 'develop', enable_push: 'whitelist', push_whitelist_users: 'nobody-here' }, 422, 'user does not exist [name: nobody-here]')
    expect(unknown.html).toContain('value="nobody-here"')
    await expectRefused(alice, `${B}/edit`, { rule_name: 'develop', required_approvals: 'many' }, 422, 'required_approvals')
    await expectRefused(alice, `${B}/edit`, { rule_name: 'develop', push_whitelist_users: Array.from({ length: 101 }, (_, i) => `u${i}`).join(',') }, 422, 'push_whitelist_usernames')
    await expectRefused(alice, `${B}/edit`, { rule_id: '999999', rule_name: 'main' }, 404, 'does not exist')

    // Deleted through its button.
    await expectCsrfRefused(alice, `${B}/${id}/delete`, {})
    const deleted = await submit(alice, `${B}/${id}/delete`, {}, { from: B })
    expect(deleted.status).toBe(303)
    expect(deleted.location).toBe(`${B}?done=branch-rule-deleted`)
    expect(await order()).toEqual(['release/*'])
    expect((await submit(alice, `${B}/${id}/delete`, {}, { from: B })).status).toBe(404)
    expect((await submit(alice, `${B}/not-a-number/delete`, {}, { from: B })).status).toBe(404)
  })

  test('an archived repository answers 423 to the forms, as the API, and changes nothing', async () => {
    expect((await s.post('/user/repos', { name: 'frozen', auto_init: true }, asAlice())).status).toBe(201)
    expect((await s.patch('/repos/alice/frozen', { archived: true }, asAlice())).status).toBe(200)
    const before = await mark()
    expect((await submit(alice, '/alice/frozen/settings/branches/edit', { rule_name: 'main' }, { from: '/alice/frozen/settings/branches' })).status).toBe(423)
    expect((await submit(alice, '/alice/frozen/settings/tags', { name_pattern: 'v*' }, { from: '/alice/frozen/settings/tags' })).status).toBe(423)
    expect(await mark()).toBe(before)
    expect((await page('/alice/frozen/settings/branches', await signIn(alice))).status).toBe(200)
  })
})

describe('an organisation\'s repository', () => {
  test('its teams are offered and kept in the rules; a team of no such name is refused', async () => {
    expect((await s.post('/orgs', { username: 'acme' }, asAlice())).status).toBe(201)
    expect((await s.post('/orgs/acme/teams', { name: 'devs', permission: 'write', units: ['repo.code'] }, asAlice())).status).toBe(201)
    expect((await s.post('/orgs/acme/repos', { name: 'tools', auto_init: true }, asAlice())).status).toBe(201)
    const OB = '/acme/tools/settings/branches'
    const form = await (await page(`${OB}/edit?rule_name=main`, await signIn(alice))).text()
    expect(form).toContain('name="push_whitelist_teams"')
    expect((await submit(alice, `${OB}/edit`, { rule_name: 'main', enable_push: 'whitelist', push_whitelist_teams: 'devs', merge_whitelist_teams: 'Devs', enable_merge_whitelist: 'on' }, { from: OB })).status).toBe(303)
    expect((await s.get('/repos/acme/tools/branch_protections/main', asAlice())).body).toMatchObject({ push_whitelist_teams: ['devs'], merge_whitelist_teams: ['devs'], enable_merge_whitelist: true })
    await expectRefused(alice, '/acme/tools/settings/tags', { name_pattern: 'v*', allowlist_teams: 'nobody-team' }, 422, 'team does not exist')
    expect((await submit(alice, '/acme/tools/settings/tags', { name_pattern: 'v*', allowlist_teams: 'devs' }, { from: '/acme/tools/settings/tags' })).status).toBe(303)
    expect((await s.get('/repos/acme/tools/tag_protections', asAlice())).body).toMatchObject([{ name_pattern: 'v*', whitelist_teams: ['devs'] }])
    // A user's repository has no teams: the form offers none.
    expect(await (await page(`${B}/edit`, await signIn(alice))).text()).not.toContain('name="push_whitelist_teams"')
  })
})

describe('tag protection rules', () => {
  test('added, edited and deleted through the forms, read back through the API; a bad pattern is a clear error', async () => {
    await expectCsrfRefused(alice, T, { name_pattern: 'v*', allowlist_users: 'alice' })
    const added = await submit(alice, T, { name_pattern: 'v*', allowlist_users: 'alice bob' }, { from: T })
    expect(added.status).toBe(303)
    expect(added.location).toBe(`${T}?done=tag-rule-added`)
    const [rule] = (await s.get('/repos/alice/guarded/tag_protections', asAlice())).body
    expect(rule).toMatchObject({ name_pattern: 'v*', whitelist_usernames: ['alice', 'bob'], whitelist_teams: [] })
    const listed = await (await page(`${T}?done=tag-rule-added`, await signIn(alice))).text()
    expect(listed).toContain('The tag protection rule was added.')
    expect(listed).toContain(`href="${T}/${rule.id}"`)

    await expectRefused(alice, T, { name_pattern: 'v*' }, 403, 'Tag protection already exist')
    await expectRefused(alice, T, { name_pattern: '/[/' }, 422, 'name_pattern')
    await expectRefused(alice, T, { name_pattern: 'x*', allowlist_users: 'ghost-of-nobody' }, 422, 'user does not exist')

    expect((await page(`${T}/${rule.id}`, await signIn(alice))).status).toBe(200)
    expect((await page(`${T}/999999`, await signIn(alice))).status).toBe(404)
    await expectCsrfRefused(alice, `${T}/${rule.id}`, { name_pattern: 'release-*' })
    const edited = await submit(alice, `${T}/${rule.id}`, { name_pattern: 'release-*', allowlist_users: '' }, { from: `${T}/${rule.id}` })
    expect(edited.status).toBe(303)
    expect(edited.location).toBe(`${T}?done=tag-rule-saved`)
    expect((await s.get(`/repos/alice/guarded/tag_protections/${rule.id}`, asAlice())).body).toMatchObject({ name_pattern: 'release-*', whitelist_usernames: [] })
    await expectRefused(alice, `${T}/${rule.id}`, { name_pattern: '   ' }, 400, 'name_pattern are empty')

    await expectCsrfRefused(alice, `${T}/delete`, { id: String(rule.id) })
    const deleted = await submit(alice, `${T}/delete`, { id: String(rule.id) }, { from: T })
    expect(deleted.status).toBe(303)
    expect(deleted.location).toBe(`${T}?done=tag-rule-deleted`)
    expect((await s.get('/repos/alice/guarded/tag_protections', asAlice())).body).toEqual([])
    expect((await submit(alice, `${T}/delete`, { id: String(rule.id) }, { from: T })).status).toBe(404)
  })
})
