import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { count, eq, inArray } from 'drizzle-orm'
import { hookPayloads, hooks, hookTasks } from '../src/db/schema'
import { sweepPayloads } from '../src/webhooks/task-rows'
import { startPullChecker } from '../src/jobs/pull-checker'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { compileGlob } from '../src/lib/glob'
import { parseHostAllowList } from '../src/lib/host-allow-list'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, oneCommitRepo, remoteUrl } from './git-fixture'
import { commitOn, pushedRepo } from './pull-fixtures'
import { hmacHex, startReceiver, until, type Receiver, type Received } from './webhook-receiver'

const ZERO = '0000000000000000000000000000000000000000'
const SECRET = 's3cr3t-key'

let s: TestServer
let worker: ReturnType<typeof startWebhookWorker>
let checker: ReturnType<typeof startPullChecker>
let rx: Receiver
let alice: TestUser, bob: TestUser, carol: TestUser
const dirs: string[] = []

beforeAll(async () => {
  s = await startTestServer({ webhookAllowedHostList: 'loopback', webhookRetryDelay: 0.05, webhookDeliverTimeout: 2 })
  worker = startWebhookWorker(s.deps, { pollMs: 10 })
  checker = startPullChecker(s.deps)
  rx = await startReceiver()
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
})
afterAll(async () => {
  await checker.stop()
  await worker.stop()
  rx.stop()
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const as = (u: TestUser) => ({ token: u.token })
const hookCount = async () => (await s.deps.db.select({ n: count() }).from(hooks))[0]!.n

async function repoWithHook(name: string, hook: Record<string, unknown> = {}, user = alice) {
  expect((await s.post('/user/repos', { name, auto_init: true }, as(user))).status).toBe(201)
  const created = await s.post(
    `/repos/${user.name}/${name}/hooks`,
    { type: 'gitea', config: { url: rx.url(`/${name}`), content_type: 'json', secret: SECRET }, send_everything: true, active: true, ...hook },
    as(user),
  )
  expect(created.status).toBe(201)
  return created.body
}

/** Deliveries to `path` so far (in arrival order). */
const at = (path: string) => rx.received.filter((r) => r.path === path)

/** Waits for the `n`-th delivery to `path` and returns the deliveries there. */
const deliveriesAt = (path: string, n: number) => until(() => (at(path).length >= n ? at(path) : null), `${n} deliveries at ${path}`)

/**
 * Makes changes one at a time, each waiting for its delivery at `path`. Payloads show the rows as
 * the worker finds them when it handles the event (normally within a poll interval), so each
 * step waits for its delivery, as changes made by people do.
 */
function stepsAt(path: string) {
  let n = at(path).length
  return async <T extends { status: number }>(change: () => Promise<T>): Promise<T> => {
    const r = await change()
    expect(r.status).toBeLessThan(300)
    await deliveriesAt(path, ++n)
    return r
  }
}

/** The headers and signature every delivery carries. */
function expectHeaders(r: Received, event: string, type: string, secret = SECRET) {
  const id = r.headers['x-gitea-delivery']!
  expect(id).toMatch(/^[0-9a-f-]{36}$/)
  const sig = secret ? hmacHex(secret, r.text) : ''
  expect(r.headers).toMatchObject({
    'x-gitea-event': event,
    'x-gitea-event-type': type,
    'x-gitea-signature': sig,
    'x-gogs-delivery': id,
    'x-gogs-event': event,
    'x-gogs-signature': sig,
    'x-github-delivery': id,
    'x-github-event': event,
    'x-github-event-type': type,
    'x-hub-signature-256': `sha256=${sig}`,
    'x-hub-signature': `sha1=${secret ? hmacHex(secret, r.text, 'sha1') : ''}`,
  })
}

const userShape = (name: string) => expect.objectContaining({ login: name, username: name, id: expect.any(Number) })
/**
 * A payload's repository record. The top-level `repository` carries no permissions (Gitea builds it
 * with AccessModeNone); a pull request's head and base repositories carry an anonymous caller's
 * (Gitea's ToAPIPullRequest with no doer): read on a public repository.
 */
/** A Repository record of a payload; `permissions` as Gitea's notifier gives them for the event (a boolean: a reader's `pull` alone). */
const repoShape = (fullName: string, permissions: boolean | { admin: boolean; push: boolean; pull: boolean } = false) =>
  expect.objectContaining({
    full_name: fullName,
    permissions: typeof permissions === 'boolean' ? { admin: false, push: false, pull: permissions } : permissions,
    owner: expect.objectContaining({ login: fullName.split('/')[0] }),
  })
/** The owner's access: the permissions of a push's, a deletion's, a repository's payload, or of an owner's own action. */
const OWNER = { admin: true, push: true, pull: true }

describe('hook management', () => {
  test('create, read, list, edit, delete: the Hook record, secret never returned', async () => {
    expect((await s.post('/user/repos', { name: 'managed' }, as(alice))).status).toBe(201)
    const created = await s.post(
      '/repos/alice/managed/hooks',
      { type: 'gitea', config: { url: 'http://127.0.0.1:9/x', content_type: 'form', secret: 'hidden' }, events: ['push', 'issues'] },
      as(alice),
    )
    expect(created.status).toBe(201)
    expect(created.body).toEqual({
      id: expect.any(Number),
      type: 'gitea',
      config: { url: 'http://127.0.0.1:9/x', content_type: 'form' },
      events: ['push', 'issues', 'issue_assign', 'issue_label', 'issue_milestone', 'issue_comment'],
      active: false,
      branch_filter: '',
      created_at: expect.stringMatching(/Z$/),
      updated_at: expect.stringMatching(/Z$/),
    })
    expect(created.text).not.toContain('hidden')
    const id = created.body.id
    expect((await s.get(`/repos/alice/managed/hooks/${id}`, as(alice))).body).toEqual(created.body)
    const list = await s.get('/repos/alice/managed/hooks', as(alice))
    expect(list.body).toEqual([created.body])
    // Absent fields stay; present events replace; empty events = push.
    const edited = await s.patch(`/repos/alice/managed/hooks/${id}`, { active: true, config: { content_type: 'json' } }, as(alice))
    expect(edited.status).toBe(200)
    expect(edited.body).toMatchObject({ active: true, config: { content_type: 'json', url: 'http://127.0.0.1:9/x' }, events: created.body.events })
    expect((await s.patch(`/repos/alice/managed/hooks/${id}`, { events: [] }, as(alice))).body.events).toEqual(['push'])
    expect((await s.patch(`/repos/alice/managed/hooks/${id}`, { send_everything: true }, as(alice))).body.events).toContain('release')
    expect((await s.patch(`/repos/alice/managed/hooks/${id}`, { push_only: true, branch_filter: '{main,release/*}' }, as(alice))).body).toMatchObject({
      events: ['push'],
      branch_filter: '{main,release/*}',
    })
    // Slack keeps its settings in config.
    const slack = await s.post('/repos/alice/managed/hooks', { type: 'slack', config: { url: 'https://hooks.example.com/x', content_type: 'json', channel: '#dev', username: 'bot' } }, as(alice))
    expect(slack.status).toBe(201)
    expect(slack.body.config).toEqual({ url: 'https://hooks.example.com/x', content_type: 'json', channel: '#dev', username: 'bot', icon_url: '', color: '' })
    // Only admins manage hooks.
    expect((await s.put('/repos/alice/managed/collaborators/bob', { permission: 'write' }, as(alice))).status).toBe(204)
    expect((await s.get('/repos/alice/managed/hooks', as(bob))).status).toBe(403)
    expect((await s.del(`/repos/alice/managed/hooks/${id}`, undefined, as(alice))).status).toBe(204)
    expect((await s.get(`/repos/alice/managed/hooks/${id}`, as(alice))).status).toBe(404)
  })

  test('organisation hooks: owners only, the seed\'s trailing-slash path too', async () => {
    expect((await s.post('/orgs', { username: 'hookorg' }, as(alice))).status).toBe(201)
    const body = { type: 'gogs', config: { url: 'http://127.0.0.1:9/o', content_type: 'json' }, active: true }
    const plain = await s.post('/orgs/hookorg/hooks', body, as(alice))
    const slashed = await s.post('/orgs/hookorg/hooks/', body, as(alice))
    expect([plain.status, slashed.status]).toEqual([201, 201])
    expect((await s.get('/orgs/hookorg/hooks', as(alice))).body.map((h: any) => h.id)).toEqual([plain.body.id, slashed.body.id])
    expect((await s.post('/orgs/hookorg/hooks', body, as(bob))).status).toBe(403)
    expect((await s.patch(`/orgs/hookorg/hooks/${plain.body.id}`, { events: ['create', 'repository'] }, as(alice))).body.events).toEqual(['create', 'repository'])
    expect((await s.del(`/orgs/hookorg/hooks/${slashed.body.id}`, undefined, as(alice))).status).toBe(204)
    expect((await s.del(`/orgs/hookorg/hooks/${plain.body.id}`, undefined, as(alice))).status).toBe(204)
  })

  test('bad input: clear 4xx, nothing stored', async () => {
    expect((await s.post('/user/repos', { name: 'strict' }, as(alice))).status).toBe(201)
    expect((await s.post('/user/repos', { name: 'other' }, as(alice))).status).toBe(201)
    const good = { type: 'gitea', config: { url: 'http://127.0.0.1:9/x', content_type: 'json' } }
    const before = await hookCount()
    const cases: [unknown, number, RegExp][] = [
      [{ ...good, type: 'carrier-pigeon' }, 422, /Invalid hook type/],
      [{ ...good, config: { content_type: 'json' } }, 422, /Missing config option: url/],
      [{ ...good, config: { url: 'http://x.example' } }, 422, /Missing config option: content_type/],
      [{ ...good, config: { url: 'http://x.example', content_type: 'xml' } }, 422, /Invalid content type/],
      [{ ...good, config: { url: 'not a url', content_type: 'json' } }, 422, /Invalid url/],
      [{ ...good, config: { url: 'ftp://x.example/', content_type: 'json' } }, 422, /Invalid url/],
      [{ ...good, events: ['push', 'teleport'] }, 422, /Unknown event: teleport/],
      [{ ...good, branch_filter: '{main,dev' }, 422, /Invalid branch filter/],
      [{ ...good, branch_filter: '[a-' }, 422, /Invalid branch filter/],
      [{ ...good, push_only: true, send_everything: true }, 422, /Only one of/],
      [{ type: 'slack', config: { url: 'http://x.example', content_type: 'json' } }, 422, /Missing config option: channel/],
      [{ type: 'slack', config: { url: 'http://x.example', content_type: 'json', channel: '#' } }, 400, /Invalid slack channel/],
      [{ ...good, config: { ...good.config, url: 'http://x.example/' + 'a'.repeat(5000) } }, 422, /url/],
      [{ ...good, events: 'push' }, 422, /events/],
    ]
    for (const [body, status, message] of cases) {
      const res = await s.post('/repos/alice/strict/hooks', body, as(alice))
      expect({ body, status: res.status, message: res.body?.message }).toEqual({ body, status, message: expect.stringMatching(message) })
    }
    expect(await hookCount()).toBe(before)
    // A hook id of another repository is unknown here.
    const theirs = (await s.post('/repos/alice/other/hooks', good, as(alice))).body.id
    expect((await s.get(`/repos/alice/strict/hooks/${theirs}`, as(alice))).status).toBe(404)
    expect((await s.patch(`/repos/alice/strict/hooks/${theirs}`, { active: true }, as(alice))).status).toBe(404)
    expect((await s.del(`/repos/alice/strict/hooks/${theirs}`, undefined, as(alice))).status).toBe(404)
    expect((await s.post(`/repos/alice/strict/hooks/${theirs}/tests`, undefined, as(alice))).status).toBe(404)
    expect((await s.get(`/repos/alice/strict/hooks/${theirs}/deliveries`, as(alice))).status).toBe(404)
    expect((await s.get(`/repos/alice/other/hooks/${theirs}`, as(alice))).body.active).toBe(false)
    // A bad edit changes nothing.
    for (const body of [{ config: { url: '::' } }, { events: ['nope'] }, { branch_filter: '[' }, { config: { content_type: 'yaml' } }])
      expect((await s.patch(`/repos/alice/other/hooks/${theirs}`, body, as(alice))).status).toBe(422)
    expect((await s.get(`/repos/alice/other/hooks/${theirs}`, as(alice))).body).toMatchObject({ config: good.config, events: ['push'], branch_filter: '' })
  })
})

describe('deliveries for every event kind', () => {
  test('push, create and delete: payloads, headers, signature; branch filter', async () => {
    await repoWithHook('pushy', { send_everything: false, events: ['push', 'create', 'delete'], branch_filter: '{main,feature/*}' })
    const work = await oneCommitRepo()
    dirs.push(work)
    const remote = remoteUrl(s.url, 'alice/pushy.git', 'alice', alice.password)
    writeFileSync(join(work, 'b.txt'), 'two\n')
    await gitOk(work, 'add', 'b.txt')
    await gitOk(work, 'rm', '-q', 'a.txt')
    await gitOk(work, 'commit', '-q', '-m', 'second\n\nwith a body')
    const head = await gitOk(work, 'rev-parse', 'HEAD')
    await gitOk(work, 'push', '-q', remote, 'main:feature/x', 'main:skipped')
    const got = await deliveriesAt('/pushy', 2)
    await Bun.sleep(200)
    // Only the filtered branch: create then push (skipped/* matches nothing).
    expect(at('/pushy').map((r) => r.headers['x-gitea-event'])).toEqual(['create', 'push'])
    const [create, push] = got as [Received, Received]
    expectHeaders(create, 'create', 'create')
    expect(create.payload).toEqual({ sha: head, ref: 'feature/x', ref_type: 'branch', repository: repoShape('alice/pushy'), sender: userShape('alice') })
    expectHeaders(push, 'push', 'push')
    expect(Object.keys(push.payload)).toEqual(['ref', 'before', 'after', 'compare_url', 'commits', 'total_commits', 'head_commit', 'repository', 'pusher', 'sender'])
    // A new branch whose commits reach the root: compared with the default branch (Gitea's pushUpdates).
    expect(push.payload).toMatchObject({ ref: 'refs/heads/feature/x', before: ZERO, after: head, compare_url: `${s.config.baseUrl}alice/pushy/compare/main...${head}`, total_commits: 2 })
    expect(push.payload.commits.map((c: any) => c.message)).toEqual(['second\n\nwith a body\n', 'one\n'])
    expect(push.payload.commits[0]).toMatchObject({
      id: head,
      url: `${s.config.baseUrl}alice/pushy/commit/${head}`,
      author: { name: expect.any(String), email: expect.any(String), username: expect.any(String) },
      committer: expect.any(Object),
      verification: null,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      added: ['b.txt'],
      removed: ['a.txt'],
      modified: [],
    })
    expect(push.payload.head_commit).toEqual(push.payload.commits[0])
    expect(push.payload.pusher).toEqual(push.payload.sender)
    // An update of the branch: compare URL and only the new commit.
    writeFileSync(join(work, 'b.txt'), 'three\n')
    await gitOk(work, 'commit', '-q', '-am', 'third')
    const third = await gitOk(work, 'rev-parse', 'HEAD')
    await gitOk(work, 'push', '-q', remote, 'main:feature/x')
    const update = (await deliveriesAt('/pushy', 3))[2]!
    expect(update.payload).toMatchObject({
      before: head,
      after: third,
      compare_url: `${s.config.baseUrl}alice/pushy/compare/${head}...${third}`,
      total_commits: 1,
      commits: [expect.objectContaining({ id: third, modified: ['b.txt'], added: [], removed: [] })],
    })
    // A deletion: delete alone (Gitea sends no push of the zero id for a branch).
    await gitOk(work, 'push', '-q', remote, ':feature/x')
    const [del] = (await deliveriesAt('/pushy', 4)).slice(3) as [Received]
    expectHeaders(del, 'delete', 'delete')
    expect(del.payload).toEqual({ ref: 'feature/x', ref_type: 'branch', pusher_type: 'user', repository: repoShape('alice/pushy', OWNER), sender: userShape('alice') })
    // Tags are not branches: the filter does not apply. Push then create, as Gitea.
    await gitOk(work, 'tag', 'v1.0')
    await gitOk(work, 'push', '-q', remote, 'v1.0')
    const [tagPush, tagCreate] = (await deliveriesAt('/pushy', 6)).slice(4) as [Received, Received]
    expect(tagCreate.payload).toMatchObject({ ref: 'v1.0', ref_type: 'tag', sha: third })
    expect(tagPush.payload).toMatchObject({ ref: 'refs/tags/v1.0', commits: [], head_commit: expect.objectContaining({ id: third }), compare_url: `${s.config.baseUrl}alice/pushy/compare/${ZERO}...${third}` })
  })

  test('issues and issue comments: every action, with changes', async () => {
    await repoWithHook('tracker')
    const path = '/repos/alice/tracker'
    const label = (await s.post(`${path}/labels`, { name: 'bug', color: '#ee0701' }, as(alice))).body
    const ms = (await s.post(`${path}/milestones`, { title: 'v1' }, as(alice))).body
    expect((await s.put(`${path}/collaborators/carol`, { permission: 'write' }, as(alice))).status).toBe(204)
    const step = stepsAt('/tracker')
    await step(() => s.post(`${path}/issues`, { title: 'Broken', body: 'It breaks.' }, as(alice)))
    await step(() => s.patch(`${path}/issues/1`, { title: 'Really broken' }, as(alice)))
    await step(() => s.patch(`${path}/issues/1`, { state: 'closed' }, as(alice)))
    await step(() => s.patch(`${path}/issues/1`, { state: 'open' }, as(alice)))
    await step(() => s.post(`${path}/issues/1/labels`, { labels: [label.id] }, as(alice)))
    await step(() => s.patch(`${path}/issues/1`, { assignees: ['carol'] }, as(alice)))
    await step(() => s.patch(`${path}/issues/1`, { milestone: ms.id }, as(alice)))
    const posted = await s.post(`${path}/issues/1/comments`, { body: 'first words' }, as(bob))
    const comment = posted.body
    await step(async () => posted)
    await step(() => s.patch(`${path}/issues/comments/${comment.id}`, { body: 'second words' }, as(bob)))
    await step(() => s.del(`${path}/issues/comments/${comment.id}`, undefined, as(bob)))
    const got = at('/tracker')
    expect(got.length).toBe(10)
    expect(got.map((r) => `${r.headers['x-gitea-event']}/${r.headers['x-gitea-event-type']}/${r.payload.action}`)).toEqual([
      'issues/issues/opened',
      'issues/issues/edited',
      'issues/issues/closed',
      'issues/issues/reopened',
      'issues/issue_label/label_updated',
      'issues/issue_assign/assigned',
      'issues/issue_milestone/milestoned',
      'issue_comment/issue_comment/created',
      'issue_comment/issue_comment/edited',
      'issue_comment/issue_comment/deleted',
    ])
    for (const r of got) expectHeaders(r, r.headers['x-gitea-event']!, r.headers['x-gitea-event-type']!)
    const [open, edit, , , labelled, assigned, milestoned, created, editedComment, deleted] = got.map((r) => r.payload)
    expect(Object.keys(open)).toEqual(['action', 'number', 'issue', 'repository', 'sender', 'commit_id'])
    expect(open).toMatchObject({ number: 1, issue: { number: 1, title: 'Broken', body: 'It breaks.', state: 'open', user: userShape('alice') }, repository: repoShape('alice/tracker', OWNER), sender: userShape('alice') })
    expect(edit).toMatchObject({ action: 'edited', changes: { title: { from: 'Broken' } }, issue: { title: 'Really broken' } })
    expect(labelled.issue.labels.map((l: any) => l.name)).toEqual(['bug'])
    expect(assigned.issue.assignees.map((u: any) => u.login)).toEqual(['carol'])
    expect(milestoned.issue.milestone).toMatchObject({ id: ms.id, title: 'v1' })
    expect(Object.keys(created)).toEqual(['action', 'issue', 'comment', 'repository', 'sender', 'is_pull'])
    expect(created).toMatchObject({ comment: { id: comment.id, body: 'first words', user: userShape('bob') }, issue: { number: 1 }, sender: userShape('bob'), is_pull: false })
    expect(editedComment).toMatchObject({ changes: { body: { from: 'first words' } }, comment: { body: 'second words' } })
    expect(deleted).toMatchObject({ comment: { id: comment.id, body: 'second words' } })
  })

  test('fork (to the source\'s hooks), repository (organisation hooks), status', async () => {
    await repoWithHook('forkme')
    const forked = await s.post('/repos/alice/forkme/forks', {}, as(bob))
    expect(forked.status).toBe(202)
    const fork = (await deliveriesAt('/forkme', 1))[0]!
    expectHeaders(fork, 'fork', 'fork')
    expect(fork.payload).toMatchObject({ forkee: repoShape('alice/forkme', true), repository: { full_name: 'bob/forkme', fork: true, parent: { full_name: 'alice/forkme' } }, sender: userShape('bob') })

    expect((await s.post('/orgs', { username: 'acme' }, as(alice))).status).toBe(201)
    const orgHook = await s.post('/orgs/acme/hooks/', { type: 'gitea', config: { url: rx.url('/acme'), content_type: 'form', secret: SECRET }, events: ['repository', 'issues'], active: true }, as(alice))
    expect(orgHook.status).toBe(201)
    expect((await s.post('/orgs/acme/repos', { name: 'widget' }, as(alice))).status).toBe(201)
    await s.post('/repos/acme/widget/issues', { title: 'org issue' }, as(alice))
    // (An issue's payload needs its rows: announced before the repository goes.)
    await deliveriesAt('/acme', 2)
    expect((await s.del('/repos/acme/widget', undefined, as(alice))).status).toBe(204)
    const got = await deliveriesAt('/acme', 3)
    expect(got.map((r) => `${r.headers['x-gitea-event']}/${r.payload.action}`)).toEqual(['repository/created', 'issues/opened', 'repository/deleted'])
    for (const r of got) {
      expect(r.headers['content-type']).toBe('application/x-www-form-urlencoded')
      expectHeaders(r, r.headers['x-gitea-event']!, r.headers['x-gitea-event-type']!)
    }
    expect(got[0]!.payload).toMatchObject({ repository: repoShape('acme/widget', OWNER), organization: userShape('acme'), sender: userShape('alice') })
    expect(got[2]!.payload).toMatchObject({ action: 'deleted', repository: { full_name: 'acme/widget' }, organization: userShape('acme') })

    const status = await s.post(`/repos/alice/forkme/statuses/${await headOf('alice', 'forkme')}`, { state: 'success', context: 'ci', target_url: 'https://ci.example/1', description: 'ok' }, as(alice))
    expect(status.status).toBe(201)
    const st = (await deliveriesAt('/forkme', 2))[1]!
    expectHeaders(st, 'status', 'status')
    expect(st.payload).toMatchObject({ state: 'success', context: 'ci', target_url: 'https://ci.example/1', description: 'ok', id: status.body.id, sha: await headOf('alice', 'forkme'), commit: { id: await headOf('alice', 'forkme') } })
  }, 240_000)

  test('chat hooks get their service\'s message; gitea payloads can leave the secret out', async () => {
    await repoWithHook('chatty', { type: 'slack', config: { url: rx.url('/slack'), content_type: 'json', channel: '#dev', username: 'warren' } })
    await s.post('/repos/alice/chatty/hooks', { type: 'discord', config: { url: rx.url('/discord'), content_type: 'json' }, active: true, events: ['issues'] }, as(alice))
    await s.post('/repos/alice/chatty/hooks', { type: 'dingtalk', config: { url: rx.url('/dingtalk'), content_type: 'json' }, active: true, events: ['issues'] }, as(alice))
    await s.post('/repos/alice/chatty/issues', { title: 'Chat about it' }, as(alice))
    const slack = (await deliveriesAt('/slack', 1))[0]!
    expect(slack.payload).toMatchObject({ channel: '#dev', username: 'warren', text: expect.stringContaining('Chat about it') })
    expect(slack.payload.secret).toBeUndefined()
    // No secret: the signature headers are there, empty (as Gitea).
    expectHeaders(slack, 'issues', 'issues', '')
    expect((await deliveriesAt('/discord', 1))[0]!.payload.embeds[0]).toMatchObject({ title: expect.stringContaining('Chat about it'), url: expect.stringContaining('/alice/chatty/issues/1') })
    expect((await deliveriesAt('/dingtalk', 1))[0]!.payload).toMatchObject({ msgtype: 'actionCard', actionCard: { title: expect.stringContaining('Chat about it') } })
  })
})

async function headOf(owner: string, repo: string): Promise<string> {
  const branches = (await s.get(`/repos/${owner}/${repo}/branches`, as(alice))).body
  return branches[0].commit.id
}

describe('delivery history, tests, retries, the network guard', () => {
  test('test delivery, the history with request and response, redelivery under a new id', async () => {
    const hook = await repoWithHook('history', { send_everything: false, events: ['issues'] })
    expect((await s.post(`/repos/alice/history/hooks/${hook.id}/tests`, undefined, as(alice))).status).toBe(204)
    const test = (await deliveriesAt('/history', 1))[0]!
    const head = await headOf('alice', 'history')
    expectHeaders(test, 'push', 'push')
    expect(test.payload).toMatchObject({ ref: 'refs/heads/main', before: head, after: head, commits: [expect.objectContaining({ id: head })], head_commit: expect.objectContaining({ id: head }) })
    const list = await until(async () => {
      const r = await s.get(`/repos/alice/history/hooks/${hook.id}/deliveries`, as(alice))
      return r.body[0]?.delivered ? r : null
    }, 'the delivery recorded')
    expect(list.headers.get('x-total-count')).toBe('1')
    const [d] = list.body
    expect(d).toMatchObject({
      uuid: test.headers['x-gitea-delivery'],
      event: 'push',
      event_type: 'push',
      delivered: true,
      success: true,
      attempts: 1,
      status_code: 200,
      request: { url: rx.url('/history'), http_method: 'POST', headers: expect.objectContaining({ 'X-Gitea-Signature': test.headers['x-gitea-signature'] }), body: test.body },
      response: { status: 200, body: 'ok', headers: expect.any(Object) },
    })
    expect(d.duration_ms).toBeGreaterThanOrEqual(0)
    expect((await s.get(`/repos/alice/history/hooks/${hook.id}/deliveries/${d.uuid}`, as(alice))).body.id).toBe(d.id)
    const again = await s.post(`/repos/alice/history/hooks/${hook.id}/deliveries/${d.id}/attempts`, undefined, as(alice))
    expect(again.status).toBe(202)
    expect(again.body.uuid).not.toBe(d.uuid)
    const replay = (await deliveriesAt('/history', 2))[1]!
    expect(replay.headers['x-gitea-delivery']).toBe(again.body.uuid)
    expect(replay.body).toBe(test.body)
    expect((await s.get(`/repos/alice/history/hooks/${hook.id}/deliveries/999999`, as(alice))).status).toBe(404)
  })

  test("an event's text is stored once for the hooks sent it; a deleted hook's own text is swept; an older task keeps its own text", async () => {
    const a = await repoWithHook('shared', { send_everything: false, events: ['issues'] })
    const b = (await s.post(
      '/repos/alice/shared/hooks',
      { type: 'gitea', config: { url: rx.url('/shared-b'), content_type: 'form', secret: SECRET }, events: ['issues'], active: true },
      as(alice),
    )).body
    expect((await s.post('/repos/alice/shared/issues', { title: 'told twice' }, as(alice))).status).toBe(201)
    const [toA] = await deliveriesAt('/shared', 1)
    await deliveriesAt('/shared-b', 1)
    const tasks = await s.deps.db.select().from(hookTasks).where(inArray(hookTasks.hookId, [a.id, b.id]))
    expect(tasks.length).toBe(2)
    // One payload row for both (a form hook sends the same text, encoded), none in the tasks.
    expect(tasks[0]!.payloadId).not.toBeNull()
    expect(tasks[1]!.payloadId).toBe(tasks[0]!.payloadId)
    expect(tasks.map((t) => t.payload)).toEqual(['', ''])
    const [stored] = await s.deps.db.select().from(hookPayloads).where(eq(hookPayloads.id, tasks[0]!.payloadId!))
    expect(stored!.text).toBe(toA!.text)
    // Each hook's delivery history shows that text as its request body.
    const shown = await until(async () => {
      const r = await s.get(`/repos/alice/shared/hooks/${b.id}/deliveries`, as(alice))
      return r.body[0]?.delivered ? r.body[0] : null
    }, 'the form delivery recorded')
    expect(shown.request.body).toBe(new URLSearchParams({ payload: toA!.text }).toString())

    // A hook of its own repository, deleted with its tasks: its text is no one's any more.
    const lone = await repoWithHook('lone', { send_everything: false, events: ['issues'] })
    expect((await s.post('/repos/alice/lone/issues', { title: 'told once' }, as(alice))).status).toBe(201)
    await deliveriesAt('/lone', 1)
    const [loneTask] = await s.deps.db.select().from(hookTasks).where(eq(hookTasks.hookId, lone.id))
    await until(async () => (await s.get(`/repos/alice/lone/hooks/${lone.id}/deliveries`, as(alice))).body[0]?.delivered, 'the lone delivery recorded')
    expect((await s.del(`/repos/alice/lone/hooks/${lone.id}`, undefined, as(alice))).status).toBe(204)
    expect((await s.del(`/repos/alice/shared/hooks/${b.id}`, undefined, as(alice))).status).toBe(204)
    let from = 0
    do from = await sweepPayloads(s.deps.db, from)
    while (from !== 0)
    const left = new Set((await s.deps.db.select({ id: hookPayloads.id }).from(hookPayloads)).map((r) => r.id))
    expect(left.has(loneTask!.payloadId!)).toBe(false)
    // Still hook a's: kept.
    expect(left.has(tasks[0]!.payloadId!)).toBe(true)

    // A task written before hook_payloads holds its text itself: shown and redelivered as it is.
    const oldText = JSON.stringify({ action: 'opened', written: 'before hook_payloads' })
    const [old] = await s.deps.db
      .insert(hookTasks)
      .values({ hookId: a.id, repoId: tasks[0]!.repoId, uuid: crypto.randomUUID(), eventType: 'issues', payload: oldText, isDelivered: true, isSucceed: true, attempts: 1, createdUnix: 1 })
      .returning()
    const got = await s.get(`/repos/alice/shared/hooks/${a.id}/deliveries/${old!.id}`, as(alice))
    expect(got.body.request.body).toBe(oldText)
    const again = await s.post(`/repos/alice/shared/hooks/${a.id}/deliveries/${old!.id}/attempts`, undefined, as(alice))
    expect(again.status).toBe(202)
    expect(again.body.request.body).toBe(oldText)
    const replay = (await deliveriesAt('/shared', 2))[1]!
    expect(replay.headers['x-gitea-delivery']).toBe(again.body.uuid)
    expect(replay.text).toBe(oldText)
    expectHeaders(replay, 'issues', 'issues')
  })

  test('a receiver that fails (5xx, then down) gets the delivery when it recovers; a 4xx is not retried', async () => {
    const flaky = await startReceiver({ status: (n) => (n <= 2 ? 503 : 200) })
    try {
      expect((await s.post('/user/repos', { name: 'flaky' }, as(alice))).status).toBe(201)
      await s.post('/repos/alice/flaky/hooks', { type: 'gitea', config: { url: flaky.url(), content_type: 'json' }, events: ['issues'], active: true }, as(alice))
      await s.post('/repos/alice/flaky/issues', { title: 'retry me' }, as(alice))
      await until(() => flaky.accepted().length === 1, 'delivery after two 503s')
      expect(flaky.received.map((r) => r.answered)).toEqual([503, 503, 200])
      expect(new Set(flaky.received.map((r) => r.headers['x-gitea-delivery'])).size).toBe(1)
      // Down, then up: connection refused is retried too.
      flaky.down()
      await s.post('/repos/alice/flaky/issues', { title: 'while down' }, as(alice))
      await until(async () => (await s.deps.db.select().from(hookTasks)).some((t) => t.attempts >= 1 && !t.isDelivered), 'a failed attempt')
      flaky.up()
      await until(() => flaky.accepted().length === 2, 'delivery after the receiver came back')
      expect(flaky.accepted()[1]!.payload.issue.title).toBe('while down')
      // A 4xx is an answer: recorded, not retried.
      flaky.setStatus(() => 404)
      await s.post('/repos/alice/flaky/issues', { title: 'refused' }, as(alice))
      await until(() => flaky.received.length === 5, 'the 404')
      await Bun.sleep(300)
      expect(flaky.received.map((r) => r.answered)).toEqual([503, 503, 200, 200, 404])
    } finally {
      flaky.stop()
    }
  })

  test('the default allow-list (external) refuses loopback at delivery time, and says so on the delivery', async () => {
    const guarded = await startTestServer()
    const guardedWorker = startWebhookWorker(guarded.deps, { pollMs: 10 })
    const probe = await startReceiver()
    try {
      const owner = await guarded.user('dave')
      await guarded.post('/user/repos', { name: 'guarded' }, { token: owner.token })
      for (const url of [probe.url(), `http://localhost:${probe.port}/`, `http://[::1]:${probe.port}/`]) {
        const hook = await guarded.post('/repos/dave/guarded/hooks', { type: 'gitea', config: { url, content_type: 'json' }, events: ['issues'], active: true }, { token: owner.token })
        expect(hook.status).toBe(201)
      }
      await guarded.post('/repos/dave/guarded/issues', { title: 'to nowhere' }, { token: owner.token })
      const tasks = await until(async () => {
        const all = await guarded.deps.db.select().from(hookTasks)
        return all.length === 3 && all.every((t) => t.isDelivered) ? all : null
      }, 'refused deliveries')
      for (const t of tasks) {
        expect(t.isSucceed).toBe(false)
        expect(t.attempts).toBe(1)
        expect(JSON.parse(t.responseContent).body).toMatch(/WARREN_WEBHOOK_ALLOWED_HOST_LIST/)
      }
      expect(probe.received).toEqual([])
    } finally {
      await guardedWorker.stop()
      probe.stop()
      await guarded.stop()
    }
  })
})

// ---- pull requests and releases ---------------------------------------

const kindOf = (r: Received) => `${r.headers['x-gitea-event']}/${r.headers['x-gitea-event-type']}/${r.payload.action}`

async function addHook(repo: string, path: string, hook: Record<string, unknown>) {
  const created = await s.post(`/repos/alice/${repo}/hooks`, { type: 'gitea', config: { url: rx.url(path), content_type: 'json', secret: SECRET }, active: true, ...hook }, as(alice))
  expect(created.status).toBe(201)
}

describe('pull request webhooks', () => {
  test('every action of a pull request, as Gitea sends it; a pull_request_only hook hears the base kind alone', async () => {
    const repo = await pushedRepo(s, alice, 'prs', dirs)
    await addHook('prs', '/prs', { events: ['pull_request', 'release'] })
    await addHook('prs', '/prs-only', { events: ['pull_request_only'], config: { url: rx.url('/prs-only'), content_type: 'form', secret: SECRET } })
    const path = '/repos/alice/prs'
    expect((await s.put(`${path}/collaborators/carol`, { permission: 'write' }, as(alice))).status).toBe(204)
    expect((await s.put(`${path}/collaborators/bob`, { permission: 'write' }, as(alice))).status).toBe(204)
    const label = (await s.post(`${path}/labels`, { name: 'review', color: '#00aabb' }, as(alice))).body
    const ms = (await s.post(`${path}/milestones`, { title: 'v2' }, as(alice))).body
    const first = await commitOn(repo.dir, 'feature', { 'f.txt': 'feature\n' }, 'add f', 'main')
    await gitOk(repo.dir, 'push', '-q', 'origin', 'feature')

    const step = stepsAt('/prs')
    await step(() => s.post(`${path}/pulls`, { head: 'feature', base: 'main', title: 'Feature', body: 'please' }, as(alice)))
    await step(() => s.patch(`${path}/pulls/1`, { title: 'Feature F' }, as(alice)))
    await step(() => s.post(`${path}/issues/1/labels`, { labels: [label.id] }, as(alice)))
    await step(() => s.del(`${path}/issues/1/labels`, undefined, as(alice)))
    await step(() => s.patch(`${path}/pulls/1`, { assignees: ['carol'] }, as(alice)))
    await step(() => s.patch(`${path}/pulls/1`, { assignees: [] }, as(alice)))
    await step(() => s.patch(`${path}/pulls/1`, { milestone: ms.id }, as(alice)))
    await step(() => s.patch(`${path}/pulls/1`, { milestone: 0 }, as(alice)))
    const comment = await step(() => s.post(`${path}/issues/1/comments`, { body: 'looks good' }, as(carol)))
    // A push to the head: the background checker notices, synchronized by the pusher.
    const second = await commitOn(repo.dir, 'feature', { 'g.txt': 'more\n' }, 'add g')
    await step(() => gitOk(repo.dir, 'push', '-q', 'origin', 'feature').then(() => ({ status: 200 })))
    await step(() => s.patch(`${path}/pulls/1`, { state: 'closed' }, as(alice)))
    await step(() => s.patch(`${path}/pulls/1`, { state: 'open' }, as(alice)))
    await until(async () => (await s.get(`${path}/pulls/1`)).body.mergeable, 'the reopened pull request checked')
    await step(() => s.post(`${path}/pulls/1/merge`, { Do: 'merge' }, as(bob)))

    const got = at('/prs')
    expect(got.map(kindOf)).toEqual([
      'pull_request/pull_request/opened',
      'pull_request/pull_request/edited',
      'pull_request/pull_request_label/label_updated',
      'pull_request/pull_request_label/label_cleared',
      'pull_request/pull_request_assign/assigned',
      'pull_request/pull_request_assign/unassigned',
      'pull_request/pull_request_milestone/milestoned',
      'pull_request/pull_request_milestone/demilestoned',
      'issue_comment/pull_request_comment/created',
      'pull_request/pull_request_sync/synchronized',
      'pull_request/pull_request/closed',
      'pull_request/pull_request/reopened',
      'pull_request/pull_request/closed',
    ])
    for (const r of got) {
      expectHeaders(r, r.headers['x-gitea-event']!, r.headers['x-gitea-event-type']!)
      expect(r.headers['content-type']).toBe('application/json')
    }
    const [opened, edited, labelled, unlabelled, assigned, unassigned, milestoned, demilestoned, commented, synced, closed, reopened, merged] = got.map((r) => r.payload)

    // PullRequestPayload: modern Gitea's fields in its order; `changes` only for edited.
    expect(Object.keys(opened)).toEqual(['action', 'number', 'pull_request', 'requested_reviewer', 'repository', 'sender', 'commit_id', 'review'])
    expect(opened).toMatchObject({
      number: 1,
      requested_reviewer: null,
      review: null,
      repository: repoShape('alice/prs', OWNER),
      sender: userShape('alice'),
      pull_request: {
        number: 1,
        title: 'Feature',
        body: 'please',
        state: 'open',
        merged: false,
        user: userShape('alice'),
        head: { ref: 'feature', sha: first, repo: repoShape('alice/prs', true) },
        base: { ref: 'main', repo: repoShape('alice/prs', true) },
        html_url: `${s.config.baseUrl}alice/prs/pulls/1`,
      },
    })
    expect(Object.keys(edited)).toEqual(['action', 'number', 'changes', 'pull_request', 'requested_reviewer', 'repository', 'sender', 'commit_id', 'review'])
    expect(edited).toMatchObject({ changes: { title: { from: 'Feature' } }, pull_request: { title: 'Feature F' } })
    expect(labelled.pull_request.labels.map((l: any) => l.name)).toEqual(['review'])
    expect(unlabelled.pull_request.labels).toEqual([])
    expect(assigned.pull_request.assignees.map((u: any) => u.login)).toEqual(['carol'])
    expect(unassigned.pull_request.assignees ?? []).toEqual([])
    expect(milestoned.pull_request.milestone).toMatchObject({ id: ms.id, title: 'v2' })
    expect(demilestoned.pull_request.milestone).toBeNull()
    // A comment on a pull request: IssueCommentPayload with is_pull, the issue showing pull_request.
    expect(Object.keys(commented)).toEqual(['action', 'issue', 'comment', 'repository', 'sender', 'is_pull'])
    expect(commented).toMatchObject({ is_pull: true, comment: { id: comment.body.id, body: 'looks good' }, issue: { number: 1, pull_request: { merged: false } }, sender: userShape('carol') })
    expect(synced).toMatchObject({ number: 1, sender: userShape('alice'), pull_request: { head: { sha: second } } })
    expect(closed).toMatchObject({ pull_request: { state: 'closed', merged: false } })
    expect(reopened).toMatchObject({ pull_request: { state: 'open' } })
    // Merged: closed with merged true, the merge commit and the merger.
    const mergeSha = await gitOk(repo.dir, 'ls-remote', 'origin', 'refs/heads/main').then((line) => line.split(/\s/)[0]!)
    expect(merged).toMatchObject({
      action: 'closed',
      sender: userShape('bob'),
      pull_request: { state: 'closed', merged: true, merged_by: userShape('bob'), merge_commit_sha: mergeSha, merged_at: expect.stringMatching(/Z$/) },
    })
    // The record is the API's, as an anonymous reader sees it (its repositories as they were
    // then: the merge's push changed their size afterwards).
    const withoutRepos = (pr: any) => ({ ...pr, base: { ...pr.base, repo: pr.base.repo.full_name }, head: { ...pr.head, repo: pr.head.repo.full_name } })
    expect(withoutRepos(JSON.parse(got[12]!.text).pull_request)).toEqual(withoutRepos((await s.get(`${path}/pulls/1`)).body))

    // The pull_request_only hook (a form hook): opened, edited, closed, reopened, merged, nothing else.
    const only = await deliveriesAt('/prs-only', 5)
    await Bun.sleep(200)
    expect(at('/prs-only').map(kindOf)).toEqual([
      'pull_request/pull_request/opened',
      'pull_request/pull_request/edited',
      'pull_request/pull_request/closed',
      'pull_request/pull_request/reopened',
      'pull_request/pull_request/closed',
    ])
    for (const r of only) {
      expect(r.headers['content-type']).toBe('application/x-www-form-urlencoded')
      expectHeaders(r, 'pull_request', 'pull_request')
    }
    expect(only[4]!.payload.pull_request.merged).toBe(true)
  }, 240_000)
})

describe('release webhooks', () => {
  test('published, updated, deleted (the record as it was); drafts announce nothing until published', async () => {
    await pushedRepo(s, alice, 'rel', dirs)
    await addHook('rel', '/rel', { events: ['release'] })
    const path = '/repos/alice/rel'
    const step = stepsAt('/rel')
    const v1 = (await step(() => s.post(`${path}/releases`, { tag_name: 'v1.0', name: 'One', body: 'notes' }, as(alice)))).body
    await step(() => s.patch(`${path}/releases/${v1.id}`, { name: 'One point oh' }, as(alice)))
    const draft = await s.post(`${path}/releases`, { tag_name: 'v2.0', name: 'Two', draft: true }, as(alice))
    expect(draft.status).toBe(201)
    await step(() => s.patch(`${path}/releases/${draft.body.id}`, { draft: false }, as(alice)))
    const before = (await s.get(`${path}/releases/${v1.id}`)).body
    await step(() => s.del(`${path}/releases/${v1.id}`, undefined, as(alice)))
    await Bun.sleep(200)
    const got = at('/rel')
    expect(got.map(kindOf)).toEqual(['release/release/published', 'release/release/updated', 'release/release/published', 'release/release/deleted'])
    for (const r of got) expectHeaders(r, 'release', 'release')
    const [published, updated, fromDraft, deleted] = got.map((r) => r.payload)
    expect(Object.keys(published)).toEqual(['action', 'release', 'repository', 'sender'])
    expect(published).toMatchObject({
      release: { id: v1.id, tag_name: 'v1.0', name: 'One', body: 'notes', draft: false, author: userShape('alice') },
      repository: repoShape('alice/rel', OWNER),
      sender: userShape('alice'),
    })
    expect(updated.release).toEqual(before)
    expect(fromDraft.release).toMatchObject({ id: draft.body.id, tag_name: 'v2.0', draft: false })
    expect(fromDraft.release).toEqual((await s.get(`${path}/releases/${draft.body.id}`)).body)
    expect(deleted).toMatchObject({ action: 'deleted', release: before, sender: userShape('alice') })
  }, 240_000)
})

describe('building blocks', () => {
  test('branch filter globs: gobwas syntax, linear time, bounded', () => {
    const cases: [string, string, boolean][] = [
      ['main', 'main', true],
      ['main', 'mainx', false],
      ['*', 'feature/a/b', true],
      ['feature/*', 'feature/a/b', true],
      ['{main,dev}', 'dev', true],
      ['{main,dev}', 'devel', false],
      ['release/{v1,v2}.?', 'release/v2.3', true],
      ['v[0-9]*', 'v12', true],
      ['v[!0-9]*', 'v1', false],
      ['\\*', '*', true],
      ['{a,{b,c}x}', 'cx', true],
    ]
    for (const [pattern, text, expected] of cases) expect({ pattern, text, r: compileGlob(pattern).matches(text) }).toEqual({ pattern, text, r: expected })
    // A pattern that makes backtracking matchers explode answers at once here.
    expect(compileGlob('*a'.repeat(100) + 'b').matches('a'.repeat(300))).toBe(false)
    expect(() => compileGlob('a'.repeat(2000))).toThrow(/longer than/)
  })

  test("ALLOWED_HOST_LIST: Gitea's keywords, CIDR ranges, host name globs", () => {
    const external = parseHostAllowList('')
    expect([external.allows('a', '8.8.8.8'), external.allows('a', '127.0.0.1'), external.allows('a', '10.1.2.3'), external.allows('a', '169.254.169.254'), external.allows('a', '::1')]).toEqual([
      true,
      false,
      false,
      false,
      false,
    ])
    const list = parseHostAllowList('loopback, 10.0.0.0/8, fd00::/8, *.corp.example')
    expect([list.allows('x', '127.0.0.2'), list.allows('x', '10.9.9.9'), list.allows('x', '11.0.0.1'), list.allows('x', 'fd12::1'), list.allows('ci.corp.example', '192.168.1.1'), list.allows('corp.example', '192.168.1.1')]).toEqual([
      true,
      true,
      false,
      true,
      true,
      false,
    ])
    expect(parseHostAllowList('private').allows('x', '192.168.0.1')).toBe(true)
    expect(parseHostAllowList('*').allows('x', '169.254.169.254')).toBe(true)
    expect(() => parseHostAllowList('10.0.0.0/99')).toThrow()
  })
})
