/**
 * Repository transfer (Gitea's POST /repos/{o}/{r}/transfer, /transfer/accept, /transfer/reject)
 * through gitea-js: at once to an organisation the caller may create repositories in (or by a
 * site administrator), pending to another user until they accept; the git folder moves, the old
 * full name redirects, counters and teams follow; Gitea's refusals.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, renameSync } from 'node:fs'
import { dirname } from 'node:path'
import { eq } from 'drizzle-orm'
import { giteaApi, type Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { events, folderMoves, repoTransfers, users } from '../src/db/schema'
import { repairAtStart } from '../src/modules/repos/repair'
import { repoPath, git } from '../src/git/run'

let s: TestServer
let alice: TestUser
let bob: TestUser
let carol: TestUser
let root: TestUser
let asAlice: Api<unknown>
let asBob: Api<unknown>
let asCarol: Api<unknown>

/** A gitea-js call's status, whether it succeeded or not (gitea-js rejects with the response). */
const statusOf = (p: Promise<{ status: number }>) => p.then((r) => r.status, (r: { status: number }) => r.status)
const numRepos = async (id: number) => (await s.deps.db.select({ n: users.numRepos }).from(users).where(eq(users.id, id)))[0]!.n

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  root = await s.user('root', { admin: true })
  asAlice = giteaApi(s.url, { token: alice.token })
  asBob = giteaApi(s.url, { token: bob.token })
  asCarol = giteaApi(s.url, { token: carol.token })
  // alice owns "team-org" (may create repositories there); carol owns "other-org", where alice may not.
  expect((await asAlice.orgs.orgCreate({ username: 'team-org' })).status).toBe(201)
  expect((await asCarol.orgs.orgCreate({ username: 'other-org' })).status).toBe(201)
})
afterAll(() => s.stop())

const make = async (name: string) => {
  expect((await asAlice.user.createCurrentUserRepo({ name, auto_init: true })).status).toBe(201)
}

describe('transfer to an organisation', () => {
  test('one who may create repositories there moves it at once (202): folder, redirect, counters, teams, event', async () => {
    await make('moving')
    const team = (await asAlice.orgs.orgCreateTeam('team-org', { name: 'devs', permission: 'write', units: ['repo.code'] })).data
    const before = await numRepos(alice.user.id)
    const r = await asAlice.repos.repoTransfer('alice', 'moving', { new_owner: 'team-org', team_ids: [team.id!] })
    expect(r.status).toBe(202)
    expect(r.data.full_name).toBe('team-org/moving')
    expect(r.data.owner!.login).toBe('team-org')
    expect(existsSync(repoPath(s.config.dataDir, 'alice', 'moving'))).toBe(false)
    const gitDir = repoPath(s.config.dataDir, 'team-org', 'moving')
    expect((await git(['rev-parse', 'refs/heads/main'], { gitDir })).trim()).toMatch(/^[0-9a-f]{40}$/)
    expect(await numRepos(alice.user.id)).toBe(before - 1)
    const org = (await s.deps.db.select().from(users).where(eq(users.lowerName, 'team-org')))[0]!
    expect(org.numRepos).toBe(1)
    // The named team has it now; the old full name redirects to the new one.
    expect((await asAlice.teams.orgListTeamRepos(team.id!)).data.map((x) => x.full_name)).toEqual(['team-org/moving'])
    const old = await s.get('/repos/alice/moving', { token: alice.token })
    expect(old.status).toBe(307)
    expect(old.headers.get('location')).toBe('/api/v1/repos/team-org/moving')
    expect((await asAlice.repos.repoGet('team-org', 'moving')).data.permissions!.admin).toBe(true)
    const kinds = (await s.deps.db.select({ kind: events.kind, payload: events.payload }).from(events)).filter((e) => e.kind === 'repo.transferred')
    expect(kinds.map((e) => JSON.parse(e.payload))).toContainEqual({ from: 'alice', to: 'team-org', name: 'moving' })
  })

  test('teams only for an organisation, of that organisation (422, 403); an organisation alice may not create in waits for its owner', async () => {
    await make('teams-bad')
    expect(await statusOf(asAlice.repos.repoTransfer('alice', 'teams-bad', { new_owner: 'bob', team_ids: [1] }))).toBe(422)
    expect(await statusOf(asAlice.repos.repoTransfer('alice', 'teams-bad', { new_owner: 'team-org', team_ids: [999_999] }))).toBe(422)
    const carols = (await asCarol.orgs.orgListTeams('other-org')).data[0]!
    expect(await statusOf(asAlice.repos.repoTransfer('alice', 'teams-bad', { new_owner: 'team-org', team_ids: [carols.id!] }))).toBe(403)
    // other-org: alice is no member, so its owner must accept; the record shows the transfer meanwhile.
    const r = await asAlice.repos.repoTransfer('alice', 'teams-bad', { new_owner: 'other-org', team_ids: [carols.id!] })
    expect(r.status).toBe(201)
    expect(r.data.full_name).toBe('alice/teams-bad')
    const pending = { doer: { login: 'alice' }, recipient: { login: 'other-org' }, teams: [{ id: carols.id, name: carols.name, organization: null }] }
    expect(r.data.repo_transfer).toMatchObject(pending)
    expect((await asAlice.repos.repoGet('alice', 'teams-bad')).data.repo_transfer).toMatchObject(pending)
    const listed = (await asAlice.repos.repoSearch({ q: 'teams-bad' })).data.data!.find((x) => x.name === 'teams-bad')!
    expect(listed.repo_transfer).toMatchObject(pending)
    expect(await statusOf(asBob.repos.acceptRepoTransfer('alice', 'teams-bad'))).toBe(403)
    const accepted = await asCarol.repos.acceptRepoTransfer('alice', 'teams-bad')
    expect(accepted.status).toBe(202)
    expect(accepted.data.full_name).toBe('other-org/teams-bad')
    expect(accepted.data.repo_transfer).toBeNull()
    expect((await asCarol.repos.repoGet('other-org', 'teams-bad')).data.repo_transfer).toBeNull()
  })
})

describe('transfer to another user', () => {
  test('waits for the recipient (201, pending, read access meanwhile); accept moves it; the doer alone may not accept', async () => {
    await make('gift')
    const r = await asAlice.repos.repoTransfer('alice', 'gift', { new_owner: 'bob' })
    expect(r.status).toBe(201)
    expect(r.data.full_name).toBe('alice/gift')
    expect((await s.deps.db.select().from(repoTransfers)).some((t) => t.recipientId === bob.user.id)).toBe(true)
    // A second transfer while one is pending: 409.
    expect(await statusOf(asAlice.repos.repoTransfer('alice', 'gift', { new_owner: 'carol' }))).toBe(409)
    // bob may read it meanwhile; alice (the doer) may not accept for him.
    expect((await asBob.repos.repoGet('alice', 'gift')).status).toBe(200)
    expect(await statusOf(asAlice.repos.acceptRepoTransfer('alice', 'gift'))).toBe(403)
    const accepted = await asBob.repos.acceptRepoTransfer('alice', 'gift')
    expect(accepted.status).toBe(202)
    expect(accepted.data.full_name).toBe('bob/gift')
    expect(accepted.data.permissions!.admin).toBe(true)
    expect(existsSync(repoPath(s.config.dataDir, 'bob', 'gift'))).toBe(true)
    expect((await asBob.repos.repoGet('bob', 'gift')).status).toBe(200)
    // Nothing pending any more.
    expect(await statusOf(asBob.repos.acceptRepoTransfer('bob', 'gift'))).toBe(404)
  })

  test('reject leaves it where it was (200) and ends the pending transfer', async () => {
    await make('declined')
    expect((await asAlice.repos.repoTransfer('alice', 'declined', { new_owner: 'carol' })).status).toBe(201)
    expect(await statusOf(asBob.repos.rejectRepoTransfer('alice', 'declined'))).toBe(403)
    const r = await asCarol.repos.rejectRepoTransfer('alice', 'declined')
    expect(r.status).toBe(200)
    expect(r.data.full_name).toBe('alice/declined')
    expect(await statusOf(asCarol.repos.acceptRepoTransfer('alice', 'declined'))).toBe(404)
    expect(existsSync(repoPath(s.config.dataDir, 'alice', 'declined'))).toBe(true)
  })

  test('a site administrator moves it at once; a name the recipient has is 422; unknown owner 404; non-owners 403', async () => {
    await make('by-admin')
    const asRoot = giteaApi(s.url, { token: root.token })
    const r = await asRoot.repos.repoTransfer('alice', 'by-admin', { new_owner: 'carol' })
    expect(r.status).toBe(202)
    expect(r.data.full_name).toBe('carol/by-admin')
    await make('by-admin')
    expect(await statusOf(asRoot.repos.repoTransfer('alice', 'by-admin', { new_owner: 'carol' }))).toBe(422)
    expect(await statusOf(asAlice.repos.repoTransfer('alice', 'by-admin', { new_owner: 'nobody-here' }))).toBe(404)
    expect(await statusOf(asAlice.repos.repoTransfer('alice', 'by-admin', { new_owner: 'alice' }))).toBe(422)
    await asAlice.repos.repoAddCollaborator('alice', 'by-admin', 'bob', { permission: 'admin' })
    expect(await statusOf(asBob.repos.repoTransfer('alice', 'by-admin', { new_owner: 'bob' }))).toBe(403)
    const bad = await s.post('/repos/alice/by-admin/transfer', { new_owner: 5 }, { token: alice.token })
    expect(bad.status).toBe(422)
  })
})

describe('the folder moves with its rows, or comes back', () => {
  test('a transfer leaves no intent behind; one a crash left makes the start-up repair move the folder back', async () => {
    await make('homing')
    expect((await asAlice.repos.repoTransfer('alice', 'homing', { new_owner: 'team-org' })).status).toBe(202)
    expect(existsSync(repoPath(s.config.dataDir, 'team-org', 'homing'))).toBe(true)
    expect(await s.deps.db.select().from(folderMoves)).toEqual([])
    // What a crash after the folder's move leaves: the intent, the folder at the new place, the row at the old.
    const at = repoPath(s.config.dataDir, 'team-org', 'homing')
    const away = repoPath(s.config.dataDir, 'bob', 'homing')
    await s.deps.db.insert(folderMoves).values({ fromPath: 'team-org/homing.git', toPath: 'bob/homing.git', createdUnix: 1 })
    mkdirSync(dirname(away), { recursive: true })
    renameSync(at, away)
    await repairAtStart(s.deps)
    expect(existsSync(at)).toBe(true)
    expect(existsSync(away)).toBe(false)
    expect(await s.deps.db.select().from(folderMoves)).toEqual([])
    expect((await asAlice.repos.repoGetContents('team-org', 'homing', 'README.md')).status).toBe(200)
  })

  test('a second move of a folder while one is under way (its intent written) is 409 by the intents\' unique index; nothing moves', async () => {
    await make('busy')
    const at = repoPath(s.config.dataDir, 'alice', 'busy')
    // Another move of it is under way: its intent is written, its folder not yet moved.
    await s.deps.db.insert(folderMoves).values({ fromPath: 'alice/busy.git', toPath: 'alice/elsewhere.git', createdUnix: 1 })
    expect(await statusOf(asAlice.repos.repoEdit('alice', 'busy', { name: 'renamed' }))).toBe(409)
    expect(await statusOf(asAlice.repos.repoTransfer('alice', 'busy', { new_owner: 'team-org' }))).toBe(409)
    expect(existsSync(at)).toBe(true)
    expect((await s.deps.db.select({ toPath: folderMoves.toPath }).from(folderMoves)).map((m) => m.toPath)).toEqual(['alice/elsewhere.git'])
    expect((await asAlice.repos.repoGet('alice', 'busy')).status).toBe(200)
    // Also when the folder is gone (moved by that other move): the rows are not written for a place it never reaches.
    const away = repoPath(s.config.dataDir, 'alice', 'elsewhere')
    renameSync(at, away)
    expect(await statusOf(asAlice.repos.repoEdit('alice', 'busy', { name: 'renamed' }))).toBe(409)
    // That move ends (its folder back, its intent gone): the rename works.
    renameSync(away, at)
    await s.deps.db.delete(folderMoves)
    expect((await asAlice.repos.repoEdit('alice', 'busy', { name: 'renamed' })).status).toBe(200)
    expect(existsSync(repoPath(s.config.dataDir, 'alice', 'renamed'))).toBe(true)
    expect(await s.deps.db.select().from(folderMoves)).toEqual([])
  })
})
