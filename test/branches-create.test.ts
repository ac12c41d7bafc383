/**
 * Branches made, deleted and renamed through gitea-js (Gitea 1.23's client): each write checked
 * with `git ls-remote`, recorded as a push by the caller (with its create/delete webhook), pull
 * requests following (closed with a deleted branch, renamed with a renamed one), every refusal
 * leaving the refs as they were.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import type { Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { refRepos } from './ref-fixtures'
import { empty, fails, ok } from './gitea-calls'
import { missingGiteaFields } from './gitea-types'
import { startReceiver, until, type Receiver } from './webhook-receiver'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { eventsOfRepo } from '../src/events/outbox'

let s: TestServer
let worker: ReturnType<typeof startWebhookWorker>
let rx: Receiver
let alice: TestUser, writer: TestUser, reader: TestUser
let asAlice: Api<unknown>, asWriter: Api<unknown>, asReader: Api<unknown>, anon: Api<unknown>
let work: string
let master: string, dev: string, feature: string
let projId: number
const dirs: string[] = []

let remote: Awaited<ReturnType<typeof refRepos>>['remote']
const heads = async (repo: string) => Object.fromEntries(Object.entries((await remote(repo)).refs).filter(([r]) => r.startsWith('refs/heads/')).map(([r, id]) => [r.slice(11), id]))

beforeAll(async () => {
  s = await startTestServer({ webhookAllowedHostList: 'loopback', webhookRetryDelay: 0.05, webhookDeliverTimeout: 2 })
  worker = startWebhookWorker(s.deps, { pollMs: 10 })
  rx = await startReceiver()
  const r = await refRepos(s)
  ;({ alice, writer, reader, asAlice, asWriter, asReader, anon, work, projId, master, dev, feature, remote } = r)
  dirs.push(work)
  await ok(asAlice.repos.repoCreateHook('alice', 'proj', { type: 'gitea', config: { url: rx.url('/proj'), content_type: 'json' }, events: ['create', 'delete'], active: true }), 201)
})
afterAll(async () => {
  await worker.stop()
  rx.stop()
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** The delivery of Gitea event `type` about `ref` to the proj hook, once it arrived. */
const delivery = (type: string, ref: string) =>
  until(() => rx.received.find((r) => r.headers['x-gitea-event'] === type && r.payload?.ref === ref), `${type} of ${ref}`)

describe('creating branches', () => {
  test('from the default branch, a branch, a tag or a commit: in git, recorded as a push by the caller, announced by webhook', async () => {
    const last = (await eventsOfRepo(s.deps.db, projId, 0, 1000)).at(-1)?.id ?? 0
    const made = await ok(asWriter.repos.repoCreateBranch('alice', 'proj', { new_branch_name: 'made' }), 201)
    expect(missingGiteaFields('Branch', made)).toEqual([])
    expect(made).toMatchObject({ name: 'made', commit: { id: master }, user_can_push: true })
    const events = await eventsOfRepo(s.deps.db, projId, last)
    expect(events.map((e) => [e.kind, e.actorId])).toEqual([
      ['ref.created', writer.user.id],
      ['push', writer.user.id],
    ])
    const hook = await delivery('create', 'made')
    expect(hook.payload).toMatchObject({ ref: 'made', ref_type: 'branch', sha: master, sender: { login: 'writer' } })

    expect((await ok(asWriter.repos.repoCreateBranch('alice', 'proj', { new_branch_name: 'from-branch', old_branch_name: 'dev' }), 201)).commit?.id).toBe(dev)
    expect((await ok(asWriter.repos.repoCreateBranch('alice', 'proj', { new_branch_name: 'from/tag', old_ref_name: 'v2.0' }), 201)).commit?.id).toBe(feature)
    expect((await ok(asWriter.repos.repoCreateBranch('alice', 'proj', { new_branch_name: 'from-sha', old_ref_name: dev.slice(0, 10) }), 201)).commit?.id).toBe(dev)
    expect((await ok(asWriter.repos.repoCreateBranch('alice', 'proj', { new_branch_name: 'from-ref', old_ref_name: 'feature/slash' }), 201)).commit?.id).toBe(feature)
    const now = await heads('proj')
    expect([now['made'], now['from-branch'], now['from/tag'], now['from-sha'], now['from-ref']]).toEqual([master, dev, feature, dev, feature])
    expect((await ok(asReader.repos.repoGetBranch('alice', 'proj', 'from/tag'))).commit?.id).toBe(feature)
  })

  test('refusals change nothing: 409 taken, 404 unknown source, 422 bad names, 403 reader, 401 anonymous, 423 archived, 403 mirror, 404 empty', async () => {
    const before = await remote('proj')
    const refused: [Parameters<Api<unknown>['repos']['repoCreateBranch']>[2], number][] = [
      [{ new_branch_name: 'dev' }, 409],
      [{ new_branch_name: 'v1.0' }, 409],
      [{ new_branch_name: 'feature' }, 409],
      [{ new_branch_name: 'feature/slash/deeper' }, 409],
      [{ new_branch_name: 'x', old_ref_name: 'no-such-ref' }, 404],
      [{ new_branch_name: 'x', old_branch_name: 'no-such-branch' }, 404],
      [{ new_branch_name: 'x', old_branch_name: 'v1.0' }, 404],
      [{ new_branch_name: '' }, 422],
      [{ new_branch_name: 'bad..name' }, 422],
      [{ new_branch_name: '-rf' }, 422],
      [{ new_branch_name: 'x'.repeat(101) }, 422],
    ]
    for (const [body, status] of refused) await fails(asWriter.repos.repoCreateBranch('alice', 'proj', body), status)
    await fails(asReader.repos.repoCreateBranch('alice', 'proj', { new_branch_name: 'x' }), 403)
    await fails(anon.repos.repoCreateBranch('alice', 'proj', { new_branch_name: 'x' }), 401)
    expect(await remote('proj')).toEqual(before)
    for (const [repo, status] of [['shelf', 423], ['mirrored', 403], ['void', 404]] as const) {
      const was = await remote(repo)
      await fails(asAlice.repos.repoCreateBranch('alice', repo, { new_branch_name: 'x' }), status)
      await fails(asAlice.repos.repoDeleteBranch('alice', repo, 'dev'), status)
      await fails(asAlice.repos.repoUpdateBranch('alice', repo, 'dev', { name: 'y' }), status)
      expect(await remote(repo)).toEqual(was)
    }
  })
})

describe('deleting branches', () => {
  test('204, gone from git, announced by webhook; its open pull requests are closed by the deleter', async () => {
    await ok(asWriter.repos.repoCreateBranch('alice', 'proj', { new_branch_name: 'doomed', old_branch_name: 'dev' }), 201)
    const pull = await ok(asWriter.repos.repoCreatePullRequest('alice', 'proj', { head: 'doomed', base: 'master', title: 'Doomed work' }), 201)
    const last = (await eventsOfRepo(s.deps.db, projId, 0, 1000)).at(-1)?.id ?? 0
    await empty(asWriter.repos.repoDeleteBranch('alice', 'proj', 'doomed'))
    expect((await heads('proj'))['doomed']).toBeUndefined()
    const events = await eventsOfRepo(s.deps.db, projId, last)
    expect(events.map((e) => [e.kind, e.actorId])).toEqual([
      ['ref.deleted', writer.user.id],
      ['push', writer.user.id],
      ['issue.closed', writer.user.id],
    ])
    expect((await ok(asReader.repos.repoGetPullRequest('alice', 'proj', pull.number!))).state).toBe('closed')
    expect((await delivery('delete', 'doomed')).payload).toMatchObject({ ref: 'doomed', ref_type: 'branch', pusher_type: 'user' })
  })

  test('refusals change nothing: 403 the default branch, 404 unknown, 403 reader', async () => {
    const before = await remote('proj')
    expect((await fails(asAlice.repos.repoDeleteBranch('alice', 'proj', 'master'), 403)).message).toContain('default branch')
    await fails(asWriter.repos.repoDeleteBranch('alice', 'proj', 'no-such-branch'), 404)
    await fails(asReader.repos.repoDeleteBranch('alice', 'proj', 'dev'), 403)
    expect(await remote('proj')).toEqual(before)
  })
})

describe('renaming branches', () => {
  test('the ref moves in one push; unmerged pull requests follow it as head and as base', async () => {
    await ok(asWriter.repos.repoCreateBranch('alice', 'proj', { new_branch_name: 'topic', old_branch_name: 'dev' }), 201)
    await ok(asWriter.repos.repoCreateBranch('alice', 'proj', { new_branch_name: 'target' }), 201)
    const asHead = await ok(asWriter.repos.repoCreatePullRequest('alice', 'proj', { head: 'topic', base: 'master', title: 'Topic' }), 201)
    const asBase = await ok(asWriter.repos.repoCreatePullRequest('alice', 'proj', { head: 'dev', base: 'target', title: 'Into target' }), 201)
    const last = (await eventsOfRepo(s.deps.db, projId, 0, 1000)).at(-1)?.id ?? 0
    await empty(asWriter.repos.repoUpdateBranch('alice', 'proj', 'topic', { name: 'topic/renamed' }))
    await empty(asWriter.repos.repoUpdateBranch('alice', 'proj', 'target', { name: 'goal' }))
    const now = await heads('proj')
    expect([now['topic'], now['target'], now['topic/renamed'], now['goal']] as unknown[]).toEqual([undefined, undefined, dev, master])
    const events = await eventsOfRepo(s.deps.db, projId, last)
    expect(events.filter((e) => e.kind.startsWith('ref.')).map((e) => [e.kind, e.payload.ref, e.actorId])).toEqual([
      ['ref.deleted', 'topic', writer.user.id],
      ['ref.created', 'topic/renamed', writer.user.id],
      ['ref.created', 'goal', writer.user.id],
      ['ref.deleted', 'target', writer.user.id],
    ])
    expect((await ok(asReader.repos.repoGetPullRequest('alice', 'proj', asHead.number!))).head?.ref).toBe('topic/renamed')
    expect((await ok(asReader.repos.repoGetPullRequest('alice', 'proj', asBase.number!))).base?.ref).toBe('goal')
    // And back out of the folder it made.
    await empty(asWriter.repos.repoUpdateBranch('alice', 'proj', 'topic/renamed', { name: 'topic' }))
    expect((await heads('proj'))['topic']).toBe(dev)
    expect((await ok(asReader.repos.repoGetPullRequest('alice', 'proj', asHead.number!))).head?.ref).toBe('topic')
  })

  test('the default branch: repository admins only; the default branch and HEAD follow', async () => {
    const before = await remote('proj')
    await fails(asWriter.repos.repoUpdateBranch('alice', 'proj', 'master', { name: 'main' }), 403)
    expect(await remote('proj')).toEqual(before)
    await empty(asAlice.repos.repoUpdateBranch('alice', 'proj', 'master', { name: 'main' }))
    const after = await remote('proj')
    expect(after.head).toBe('refs/heads/main')
    expect(after.refs['refs/heads/main']).toBe(master)
    expect(after.refs['refs/heads/master']).toBeUndefined()
    expect((await ok(asReader.repos.repoGet('alice', 'proj'))).default_branch).toBe('main')
  })

  test('refusals change nothing: 422 same name, existing branch or bad name; 404 unknown; 403 reader', async () => {
    const before = await remote('proj')
    await fails(asWriter.repos.repoUpdateBranch('alice', 'proj', 'dev', { name: 'dev' }), 422)
    await fails(asWriter.repos.repoUpdateBranch('alice', 'proj', 'dev', { name: 'goal' }), 422)
    await fails(asWriter.repos.repoUpdateBranch('alice', 'proj', 'dev', { name: 'bad..name' }), 422)
    await fails(asWriter.repos.repoUpdateBranch('alice', 'proj', 'no-such-branch', { name: 'fresh' }), 404)
    await fails(asReader.repos.repoUpdateBranch('alice', 'proj', 'dev', { name: 'fresh' }), 403)
    expect(await remote('proj')).toEqual(before)
  })
})
