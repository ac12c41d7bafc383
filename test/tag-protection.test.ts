/**
 * Tag protection (Gitea's tag_protections) through gitea-js: a tag matching a protected pattern
 * may be created or deleted only by the whitelist, by git push (the reason shown by git) and
 * through the API alike.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { giteaApi, type Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, sh } from './git-fixture'
import { pushedRepo } from './pull-fixtures'
import { empty, fails, ok } from './gitea-calls'
import { missingGiteaFields } from './gitea-types'

let s: TestServer
let alice: TestUser
let bob: TestUser
let asAlice: Api<unknown>
let asBob: Api<unknown>
let dir: string
const dirs: string[] = []
const urlOf = (u: TestUser) => remoteUrl(s.url, 'alice/tagged.git', u.name, u.password)
const serverTags = async () => (await ok(asAlice.repos.repoListTags('alice', 'tagged'))).map((t) => t.name).sort()

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  asAlice = giteaApi(s.url, { token: alice.token })
  asBob = giteaApi(s.url, { token: bob.token })
  dir = (await pushedRepo(s, alice, 'tagged', dirs)).dir
  await empty(asAlice.repos.repoAddCollaborator('alice', 'tagged', 'bob', { permission: 'write' }))
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('tag_protections', () => {
  test('create, get, list, edit, delete; bad patterns refused', async () => {
    const rule = await ok(asAlice.repos.repoCreateTagProtection('alice', 'tagged', { name_pattern: 'v*', whitelist_usernames: ['alice'] }), 201)
    expect(missingGiteaFields('TagProtection', rule)).toEqual([])
    expect(rule).toMatchObject({ name_pattern: 'v*', whitelist_usernames: ['alice'], whitelist_teams: [] })
    expect((await ok(asAlice.repos.repoGetTagProtection('alice', 'tagged', rule.id!))).name_pattern).toBe('v*')
    await fails(asAlice.repos.repoCreateTagProtection('alice', 'tagged', { name_pattern: 'v*' }), 403)
    await fails(asAlice.repos.repoCreateTagProtection('alice', 'tagged', { name_pattern: '  ' }), 400)
    await fails(asAlice.repos.repoCreateTagProtection('alice', 'tagged', { name_pattern: '/(a+)+$/' }), 422)
    await fails(asAlice.repos.repoCreateTagProtection('alice', 'tagged', { name_pattern: 'x', whitelist_usernames: ['nobody'] }), 422)
    await fails(asBob.repos.repoListTagProtection('alice', 'tagged'), 403)
    const regex = await ok(asAlice.repos.repoCreateTagProtection('alice', 'tagged', { name_pattern: '/^rel-[0-9]+$/' }), 201)
    expect((await ok(asAlice.repos.repoEditTagProtection('alice', 'tagged', regex.id!, { whitelist_usernames: ['bob'] }))).whitelist_usernames).toEqual(['bob'])
    expect((await ok(asAlice.repos.repoListTagProtection('alice', 'tagged'))).map((r) => r.name_pattern)).toEqual(['v*', '/^rel-[0-9]+$/'])
  })

  test('a protected tag push from outside the whitelist is refused with the reason; the whitelist pushes it', async () => {
    await gitOk(dir, 'tag', 'v1')
    const byBob = await sh(['git', 'push', '--porcelain', urlOf(bob), 'v1'], dir)
    expect(byBob.code).not.toBe(0)
    expect(byBob.stdout + byBob.stderr).toContain('Tag v1 is protected')
    expect(await serverTags()).toEqual([])
    // Bob is on the regex rule's list; an unprotected tag is free to anyone who writes.
    await gitOk(dir, 'tag', 'rel-7')
    await gitOk(dir, 'tag', 'free')
    expect((await sh(['git', 'push', urlOf(bob), 'rel-7', 'free'], dir)).code).toBe(0)
    expect((await sh(['git', 'push', urlOf(alice), 'v1'], dir)).code).toBe(0)
    expect(await serverTags()).toEqual(['free', 'rel-7', 'v1'])
    const deleting = await sh(['git', 'push', urlOf(bob), ':refs/tags/v1'], dir)
    expect(deleting.code).not.toBe(0)
    expect(await serverTags()).toEqual(['free', 'rel-7', 'v1'])
  })

  test('the API obeys the same rules', async () => {
    const refused = await fails(asBob.repos.repoCreateTag('alice', 'tagged', { tag_name: 'v2', target: 'main' }), 403)
    expect(refused.message).toContain('Tag v2 is protected')
    await fails(asBob.repos.repoDeleteTag('alice', 'tagged', 'v1'), 403)
    await ok(asAlice.repos.repoCreateTag('alice', 'tagged', { tag_name: 'v2', target: 'main' }), 201)
    expect(await serverTags()).toEqual(['free', 'rel-7', 'v1', 'v2'])
    const rules = await ok(asAlice.repos.repoListTagProtection('alice', 'tagged'))
    for (const r of rules) await empty(asAlice.repos.repoDeleteTagProtection('alice', 'tagged', r.id!))
    await fails(asAlice.repos.repoGetTagProtection('alice', 'tagged', rules[0]!.id!), 404)
    await empty(asBob.repos.repoDeleteTag('alice', 'tagged', 'v1'))
  })
})
