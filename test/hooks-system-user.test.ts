import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { hookTasks } from '../src/db/schema'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { createAccessToken } from '../src/modules/users/service'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { startReceiver, until, type Receiver } from './webhook-receiver'

/**
 * The site's hooks (`/admin/hooks`: system hooks, fired for every repository; default hooks,
 * copied into each repository made after them) and a user's own (`/user/hooks`: fired for the
 * repositories the user owns), through the API and a real receiver.
 */

let s: TestServer
let worker: ReturnType<typeof startWebhookWorker>
let rx: Receiver
let root: TestUser, alice: TestUser, bob: TestUser

beforeAll(async () => {
  s = await startTestServer({ webhookAllowedHostList: 'loopback', webhookRetryDelay: 0.05, webhookDeliverTimeout: 2 })
  worker = startWebhookWorker(s.deps, { pollMs: 10 })
  rx = await startReceiver()
  root = await s.user('root', { admin: true })
  alice = await s.user('alice')
  bob = await s.user('bob')
})
afterAll(async () => {
  await worker.stop()
  rx.stop()
  await s.stop()
})

const as = (u: TestUser) => ({ token: u.token })
const hookBody = (path: string, extra: Record<string, unknown> = {}, config: Record<string, string> = {}) => ({
  type: 'gitea',
  config: { url: rx.url(path), content_type: 'json', ...config },
  send_everything: true,
  active: true,
  ...extra,
})
const at = (path: string) => rx.received.filter((r) => r.path === path)
const newRepo = async (user: TestUser, name: string, owner = '') => {
  const r = await s.post(owner ? `/orgs/${owner}/repos` : '/user/repos', { name, auto_init: true }, as(user))
  expect(r.status).toBe(201)
  return r.body as { id: number; full_name: string }
}
const openIssue = async (user: TestUser, fullName: string, title: string) => expect((await s.post(`/repos/${fullName}/issues`, { title }, as(user))).status).toBe(201)
/** Waits for a delivery at `path` of an issue with `title`, and answers it. */
const issueDelivered = (path: string, title: string) => until(() => at(path).find((r) => r.payload?.issue?.title === title), `the issue "${title}" at ${path}`)
/** The repositories a hook was given tasks for (every task, delivered or not). */
const taskRepos = async (hookId: number) => [...new Set((await s.deps.db.select({ repoId: hookTasks.repoId }).from(hookTasks).where(eq(hookTasks.hookId, hookId))).map((t) => t.repoId))].sort()

describe('/admin/hooks', () => {
  test('site administrators only: 401 anonymous, 403 for others, a token needs the admin scope', async () => {
    expect((await s.get('/admin/hooks')).status).toBe(401)
    expect((await s.get('/admin/hooks', as(alice))).status).toBe(403)
    expect((await s.post('/admin/hooks', hookBody('/nope'), as(alice))).status).toBe(403)
    expect((await s.get('/admin/hooks/1', as(alice))).status).toBe(403)
    expect((await s.patch('/admin/hooks/1', { active: false }, as(alice))).status).toBe(403)
    expect((await s.del('/admin/hooks/1', undefined, as(alice))).status).toBe(403)
    const { secret } = await createAccessToken(s.deps, root.user.id, 'no-admin', ['write:user', 'write:repository'])
    expect((await s.get('/admin/hooks', { token: secret })).status).toBe(403)
  })

  test('create, read, edit and delete; is_system_webhook read from config (Gitea 1.23) or beside it', async () => {
    const system = await s.post('/admin/hooks', hookBody('/crud-system', {}, { is_system_webhook: 'true', secret: 'x' }), as(root))
    expect(system.status).toBe(201)
    expect(system.body).toMatchObject({ type: 'gitea', active: true, config: { url: rx.url('/crud-system'), content_type: 'json', is_system_webhook: 'true' } })
    expect(system.body.config.secret).toBeUndefined()
    const plain = await s.post('/admin/hooks', { ...hookBody('/crud-default'), active: false, events: ['push', 'issues'], send_everything: undefined }, as(root))
    expect(plain.status).toBe(201)
    expect(plain.body.config.is_system_webhook).toBe('false')
    expect(plain.body.events).toEqual(expect.arrayContaining(['issues', 'push']))
    expect(plain.body.events).not.toContain('release')
    const flagged = await s.post('/admin/hooks', hookBody('/crud-flag', { is_system_webhook: true }), as(root))
    expect(flagged.body.config.is_system_webhook).toBe('true')

    const list = await s.get('/admin/hooks', as(root))
    expect(list.status).toBe(200)
    expect(list.body.map((h: any) => h.id)).toEqual([system.body.id, plain.body.id, flagged.body.id])
    expect((await s.get(`/admin/hooks/${plain.body.id}`, as(root))).body).toEqual(plain.body)

    const edited = await s.patch(`/admin/hooks/${plain.body.id}`, { active: true, events: ['release'], config: { is_system_webhook: '1' } }, as(root))
    expect(edited.status).toBe(200)
    expect(edited.body).toMatchObject({ active: true, events: ['release'], config: { is_system_webhook: 'true', url: rx.url('/crud-default') } })
    expect((await s.patch(`/admin/hooks/${plain.body.id}`, { is_system_webhook: false }, as(root))).body.config.is_system_webhook).toBe('false')

    for (const id of [system.body.id, plain.body.id, flagged.body.id]) expect((await s.del(`/admin/hooks/${id}`, undefined, as(root))).status).toBe(204)
    expect((await s.get(`/admin/hooks/${plain.body.id}`, as(root))).status).toBe(404)
    expect((await s.del(`/admin/hooks/${plain.body.id}`, undefined, as(root))).status).toBe(404)
    expect((await s.get('/admin/hooks', as(root))).body).toEqual([])
  })

  test("the same checks as every hook's, and Gitea's message for a bad is_system_webhook", async () => {
    const bad = await s.post('/admin/hooks', hookBody('/x', {}, { is_system_webhook: 'maybe' }), as(root))
    expect(bad.status).toBe(422)
    expect(bad.body.message).toContain('Invalid is_system_webhook value')
    expect((await s.post('/admin/hooks', { type: 'gitea', config: { url: 'ftp://example.com/', content_type: 'json' } }, as(root))).status).toBe(422)
    expect((await s.post('/admin/hooks', { type: 'nope', config: { url: rx.url('/x'), content_type: 'json' } }, as(root))).status).toBe(422)
    expect((await s.post('/admin/hooks', { type: 'gitea', config: { url: rx.url('/x') } }, as(root))).status).toBe(422)
    expect((await s.get('/admin/hooks', as(root))).body).toEqual([])
  })

  test("a repository's or a user's hook is not the site's: 404", async () => {
    await newRepo(alice, 'own-hooks')
    const repoHook = await s.post('/repos/alice/own-hooks/hooks', hookBody('/own'), as(alice))
    const userHook = await s.post('/user/hooks', hookBody('/own-user'), as(alice))
    for (const id of [repoHook.body.id, userHook.body.id]) {
      expect((await s.get(`/admin/hooks/${id}`, as(root))).status).toBe(404)
      expect((await s.patch(`/admin/hooks/${id}`, { active: false }, as(root))).status).toBe(404)
      expect((await s.del(`/admin/hooks/${id}`, undefined, as(root))).status).toBe(404)
    }
    expect((await s.get('/admin/hooks', as(root))).body).toEqual([])
    expect((await s.del(`/user/hooks/${userHook.body.id}`, undefined, as(alice))).status).toBe(204)
  })
})

describe('/user/hooks', () => {
  test("signed-in callers only, each sees and changes only their own (404 for another's)", async () => {
    expect((await s.get('/user/hooks')).status).toBe(401)
    expect((await s.post('/user/hooks', hookBody('/anon'))).status).toBe(401)
    const mine = await s.post('/user/hooks', hookBody('/alice-own'), as(alice))
    expect(mine.status).toBe(201)
    expect(mine.body.config.is_system_webhook).toBeUndefined()
    expect((await s.get('/user/hooks', as(alice))).body.map((h: any) => h.id)).toEqual([mine.body.id])
    expect((await s.get('/user/hooks', as(bob))).body).toEqual([])
    expect((await s.get(`/user/hooks/${mine.body.id}`, as(alice))).body).toEqual(mine.body)
    expect((await s.get(`/user/hooks/${mine.body.id}`, as(bob))).status).toBe(404)
    expect((await s.patch(`/user/hooks/${mine.body.id}`, { active: false }, as(bob))).status).toBe(404)
    expect((await s.del(`/user/hooks/${mine.body.id}`, undefined, as(bob))).status).toBe(404)
    expect((await s.get(`/user/hooks/${mine.body.id}`, as(alice))).body.active).toBe(true)
    // A user's hook is not a repository's either.
    expect((await s.get(`/repos/alice/own-hooks/hooks/${mine.body.id}`, as(alice))).status).toBe(404)

    const edited = await s.patch(`/user/hooks/${mine.body.id}`, { events: ['release'], branch_filter: 'main' }, as(alice))
    expect(edited.status).toBe(200)
    expect(edited.body).toMatchObject({ events: ['release'], branch_filter: 'main' })
    expect((await s.patch(`/user/hooks/${mine.body.id}`, { config: { content_type: 'xml' } }, as(alice))).status).toBe(422)
    // A user hook stays a user hook, whatever is_system_webhook says.
    expect((await s.patch(`/user/hooks/${mine.body.id}`, { is_system_webhook: true }, as(alice))).status).toBe(200)
    expect((await s.get('/admin/hooks', as(root))).body).toEqual([])

    const { secret } = await createAccessToken(s.deps, alice.user.id, 'repo-only', ['write:repository'])
    expect((await s.get('/user/hooks', { token: secret })).status).toBe(403)
    expect((await s.del(`/user/hooks/${mine.body.id}`, undefined, as(alice))).status).toBe(204)
    expect((await s.get(`/user/hooks/${mine.body.id}`, as(alice))).status).toBe(404)
  })
})

describe('which hooks an event reaches', () => {
  test("a system hook receives every repository's events: users' and organisations'", async () => {
    const hook = await s.post('/admin/hooks', hookBody('/system', {}, { is_system_webhook: 'true' }), as(root))
    expect(hook.status).toBe(201)
    expect((await s.post('/orgs', { username: 'sysorg' }, as(bob))).status).toBe(201)
    const bobs = await newRepo(bob, 'sys-bob')
    const orgs = await newRepo(bob, 'sys-org', 'sysorg')
    await openIssue(bob, bobs.full_name, 'system one')
    await openIssue(bob, orgs.full_name, 'system two')
    const one = await issueDelivered('/system', 'system one')
    const two = await issueDelivered('/system', 'system two')
    expect(one.payload.repository.full_name).toBe('bob/sys-bob')
    expect(two.payload.repository.full_name).toBe('sysorg/sys-org')
    // The organisation's repository's creation (an owner's event) reaches it too.
    await until(() => at('/system').find((r) => r.headers['x-gitea-event'] === 'repository' && r.payload?.repository?.full_name === 'sysorg/sys-org'), 'the repository event')
    // A system hook is never copied into a new repository.
    expect((await s.get('/repos/bob/sys-bob/hooks', as(bob))).body).toEqual([])
    expect((await s.del(`/admin/hooks/${hook.body.id}`, undefined, as(root))).status).toBe(204)
  })

  test('a default hook is copied into the repositories made after it, not older ones, and fires only through its copies', async () => {
    const older = await newRepo(alice, 'def-older')
    const hook = await s.post('/admin/hooks', hookBody('/default', {}, { secret: 'kept' }), as(root))
    expect(hook.status).toBe(201)
    expect(hook.body.config.is_system_webhook).toBe('false')
    const newer = await newRepo(alice, 'def-newer')
    const forked = await s.post('/repos/alice/def-newer/forks', {}, as(bob))
    expect(forked.status).toBe(202)

    expect((await s.get('/repos/alice/def-older/hooks', as(alice))).body).toEqual([])
    const copies = (await s.get('/repos/alice/def-newer/hooks', as(alice))).body
    expect(copies).toHaveLength(1)
    expect(copies[0].id).not.toBe(hook.body.id)
    expect(copies[0]).toMatchObject({ type: 'gitea', active: true, config: { url: rx.url('/default'), content_type: 'json' }, events: hook.body.events })
    expect(copies[0].config.is_system_webhook).toBeUndefined()
    expect((await s.get(`/repos/bob/def-newer/hooks`, as(bob))).body).toHaveLength(1)

    // The older repository's event first, the newer's after: once the newer's is delivered, the older's was handled.
    await openIssue(alice, older.full_name, 'default older')
    await openIssue(alice, newer.full_name, 'default newer')
    const got = await issueDelivered('/default', 'default newer')
    expect(got.payload.repository.full_name).toBe('alice/def-newer')
    expect(await taskRepos(hook.body.id)).toEqual([])
    expect(await taskRepos(copies[0].id)).toEqual([newer.id])

    // The copy is the repository's own: deleting the default hook leaves it; later repositories get none.
    expect((await s.del(`/admin/hooks/${hook.body.id}`, undefined, as(root))).status).toBe(204)
    expect((await s.get('/repos/alice/def-newer/hooks', as(alice))).body).toHaveLength(1)
    await newRepo(alice, 'def-latest')
    expect((await s.get('/repos/alice/def-latest/hooks', as(alice))).body).toEqual([])
  })

  test("a user's hook receives the events of the user's repositories, not an organisation's nor another user's", async () => {
    // Issues only: a send-everything hook also takes a repository's creation (of alice's own
    // repositories too), the previous test's in the same second as this hook's among them.
    const hook = await s.post('/user/hooks', hookBody('/user-alice', { send_everything: false, events: ['issues'] }), as(alice))
    expect(hook.status).toBe(201)
    expect((await s.post('/orgs', { username: 'aliceorg' }, as(alice))).status).toBe(201)
    const orgRepo = await newRepo(alice, 'u-org', 'aliceorg')
    const bobRepo = await newRepo(bob, 'u-bob')
    const own = await newRepo(alice, 'u-own')
    await openIssue(alice, orgRepo.full_name, 'user org')
    await openIssue(alice, bobRepo.full_name, 'user bob')
    await openIssue(alice, own.full_name, 'user own')
    const got = await issueDelivered('/user-alice', 'user own')
    expect(got.payload.repository.full_name).toBe('alice/u-own')
    expect(await taskRepos(hook.body.id)).toEqual([own.id])
    expect(at('/user-alice').every((r) => r.payload?.repository?.owner?.login === 'alice')).toBe(true)
  })
})
