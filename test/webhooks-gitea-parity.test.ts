import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, oneCommitRepo, remoteUrl } from './git-fixture'
import { startReceiver, until, type Receiver } from './webhook-receiver'

/*
 * Deliveries as Gitea 1.23 makes them where Warren once differed: which events a ref change
 * announces and in which order (services/repository/push.go pushUpdates), the push payload's
 * compare_url, the repository events of a user's repositories (PrepareWebhooks: the repository's,
 * the owner's and the system hooks), a pull request comment's issue_url.
 */

const ZERO = '0000000000000000000000000000000000000000'

let s: TestServer
let worker: ReturnType<typeof startWebhookWorker>
let rx: Receiver
let alice: TestUser, admin: TestUser
const dirs: string[] = []

beforeAll(async () => {
  s = await startTestServer({ webhookAllowedHostList: 'loopback', webhookRetryDelay: 0.05, webhookDeliverTimeout: 2 })
  worker = startWebhookWorker(s.deps, { pollMs: 10 })
  rx = await startReceiver()
  alice = await s.user('alice')
  admin = await s.user('root', { admin: true })
})
afterAll(async () => {
  await worker.stop()
  rx.stop()
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const as = (u: TestUser) => ({ token: u.token })
const at = (path: string) => rx.received.filter((r) => r.path === path)
const deliveriesAt = (path: string, n: number) => until(() => (at(path).length >= n ? at(path) : null), `${n} deliveries at ${path}`)
/** Each delivery as `event ref` (the ref as the payload names it). */
const seen = (path: string) => at(path).map((r) => `${r.headers['x-gitea-event']} ${r.payload.ref}`)

/** An empty repository of alice's with a hook (push, create, delete) at `/{name}`, and a work tree with one commit on main. */
async function emptyRepoWithHook(name: string) {
  expect((await s.post('/user/repos', { name }, as(alice))).status).toBe(201)
  const hook = { type: 'gitea', config: { url: rx.url(`/${name}`), content_type: 'json' }, events: ['push', 'create', 'delete'], active: true }
  expect((await s.post(`/repos/alice/${name}/hooks`, hook, as(alice))).status).toBe(201)
  const work = await oneCommitRepo()
  dirs.push(work)
  return { work, remote: remoteUrl(s.url, `alice/${name}.git`, 'alice', alice.password) }
}

async function commit(work: string, text: string): Promise<string> {
  writeFileSync(join(work, 'a.txt'), `${text}\n`)
  await gitOk(work, 'commit', '-q', '-am', text)
  return await gitOk(work, 'rev-parse', 'HEAD')
}

describe('ref changes: the events Gitea announces, in its order', () => {
  test('a branch deletion is announced by delete alone, no push of the zero id; the feed still records it', async () => {
    const { work, remote } = await emptyRepoWithHook('prune')
    await gitOk(work, 'push', '-q', remote, 'main', 'main:gone')
    await deliveriesAt('/prune', 4)
    await gitOk(work, 'push', '-q', remote, ':gone')
    // A later change, so a push of the deletion would have arrived before its delivery.
    await commit(work, 'two')
    await gitOk(work, 'push', '-q', remote, 'main')
    await deliveriesAt('/prune', 6)
    expect(seen('/prune').slice(4)).toEqual(['delete gone', 'push refs/heads/main'])
    // Gitea's feed records the deletion as its own action (DeleteRef: delete_branch).
    const feed = await s.get<any[]>('/repos/alice/prune/activities/feeds?limit=50', as(alice))
    expect(feed.body.filter((a) => a.op_type === 'delete_branch').map((a) => a.ref_name)).toEqual(['refs/heads/gone'])
  })

  test('a new branch: create then push; a new tag: push then create; a deleted tag: push then delete', async () => {
    const { work, remote } = await emptyRepoWithHook('order')
    await gitOk(work, 'push', '-q', remote, 'main')
    await deliveriesAt('/order', 2)
    await gitOk(work, 'tag', 'v1')
    await gitOk(work, 'push', '-q', remote, 'v1')
    await deliveriesAt('/order', 4)
    await gitOk(work, 'push', '-q', remote, ':refs/tags/v1')
    await deliveriesAt('/order', 6)
    expect(seen('/order')).toEqual(['create main', 'push refs/heads/main', 'push refs/tags/v1', 'create v1', 'push refs/tags/v1', 'delete v1'])
  })
})

describe('compare_url of a push (services/repository/push.go)', () => {
  test("a new branch compares from the parent of the oldest of its 10 newest commits, else from the default branch; a tag from the zero id; a deletion has the site's root", async () => {
    const { work, remote } = await emptyRepoWithHook('cmp')
    const first = await gitOk(work, 'rev-parse', 'HEAD')
    // The first push: its commits reach the root and it is the default branch: nothing to compare.
    await gitOk(work, 'push', '-q', remote, 'main')
    // A branch of one commit more: the oldest listed is the root, so the default branch is the base.
    await gitOk(work, 'checkout', '-q', '-b', 'side')
    const side = await commit(work, 'side')
    await gitOk(work, 'push', '-q', remote, 'side')
    // A branch of 12 commits: the oldest of the 10 listed is the 3rd, its parent the 2nd.
    await gitOk(work, 'checkout', '-q', '-b', 'long', first)
    const long: string[] = [first]
    for (let i = 2; i <= 12; i++) long.push(await commit(work, `long ${i}`))
    await gitOk(work, 'push', '-q', remote, 'long')
    await gitOk(work, 'tag', 'v2')
    await gitOk(work, 'push', '-q', remote, 'v2')
    await gitOk(work, 'push', '-q', remote, ':refs/tags/v2')
    const pushes = (await deliveriesAt('/cmp', 10)).filter((r) => r.headers['x-gitea-event'] === 'push')
    const base = s.config.baseUrl
    expect(pushes.map((r) => [r.payload.ref, r.payload.compare_url])).toEqual([
      ['refs/heads/main', base],
      ['refs/heads/side', `${base}alice/cmp/compare/main...${side}`],
      ['refs/heads/long', `${base}alice/cmp/compare/${long[1]}...${long[11]}`],
      ['refs/tags/v2', `${base}alice/cmp/compare/${ZERO}...${long[11]}`],
      ['refs/tags/v2', base],
    ])
    expect(pushes[2]!.payload.total_commits).toBe(10)
    expect(pushes[2]!.payload.commits).toHaveLength(5)
  })
})

describe("repository events of a user's repository", () => {
  test("created and deleted reach the owner's hooks and the system hooks; organization is the owner", async () => {
    const mine = { type: 'gitea', config: { url: rx.url('/alice-user'), content_type: 'json' }, events: ['repository'], active: true }
    expect((await s.post('/user/hooks', mine, as(alice))).status).toBe(201)
    const system = { type: 'gitea', config: { url: rx.url('/system'), content_type: 'json' }, events: ['repository'], active: true, is_system_webhook: true }
    expect((await s.post('/admin/hooks', system, as(admin))).status).toBe(201)
    expect((await s.post('/user/repos', { name: 'solo' }, as(alice))).status).toBe(201)
    expect((await s.del('/repos/alice/solo', undefined, as(alice))).status).toBe(204)
    for (const path of ['/alice-user', '/system']) {
      const got = await deliveriesAt(path, 2)
      expect(got.map((r) => `${r.headers['x-gitea-event']}/${r.payload.action}`)).toEqual(['repository/created', 'repository/deleted'])
      for (const r of got)
        expect(r.payload).toMatchObject({
          repository: { full_name: 'alice/solo' },
          organization: { login: 'alice', id: alice.user.id },
          sender: { login: 'alice' },
        })
    }
  })
})

describe("a pull request's comments", () => {
  test('issue_url is empty and pull_request_url set (Comment.IssueURL), in the API and the payload alike', async () => {
    expect((await s.post('/user/repos', { name: 'talk', auto_init: true }, as(alice))).status).toBe(201)
    const hook = { type: 'gitea', config: { url: rx.url('/talk'), content_type: 'json' }, events: ['pull_request_comment', 'issue_comment'], active: true }
    expect((await s.post('/repos/alice/talk/hooks', hook, as(alice))).status).toBe(201)
    const file = await s.post('/repos/alice/talk/contents/b.txt', { content: btoa('b\n'), new_branch: 'feat', message: 'b' }, as(alice))
    expect(file.status).toBe(201)
    const pr = await s.post('/repos/alice/talk/pulls', { head: 'feat', base: 'main', title: 'add b' }, as(alice))
    expect(pr.status).toBe(201)
    const onPull = await s.post(`/repos/alice/talk/issues/${pr.body.number}/comments`, { body: 'on the pull' }, as(alice))
    expect(onPull.status).toBe(201)
    expect([onPull.body.issue_url, onPull.body.pull_request_url]).toEqual(['', pr.body.html_url])
    const read = await s.get(`/repos/alice/talk/issues/comments/${onPull.body.id}`, as(alice))
    expect([read.body.issue_url, read.body.pull_request_url]).toEqual(['', pr.body.html_url])
    const [delivered] = await deliveriesAt('/talk', 1)
    expect(delivered!.headers['x-gitea-event-type']).toBe('pull_request_comment')
    expect([delivered!.payload.comment.issue_url, delivered!.payload.comment.pull_request_url]).toEqual(['', pr.body.html_url])
  })
})

describe("the repository record's permissions", () => {
  test("as Gitea's notifier gives them: the owner's for a push, none for a created ref, the poster's for an opened issue, the actor's for a comment", async () => {
    const { work, remote } = await emptyRepoWithHook('perms')
    const hook = { type: 'gitea', config: { url: rx.url('/perms-issues'), content_type: 'json' }, events: ['issues', 'issue_comment'], active: true }
    expect((await s.post('/repos/alice/perms/hooks', hook, as(alice))).status).toBe(201)
    await gitOk(work, 'push', '-q', remote, 'main')
    const refs = await deliveriesAt('/perms', 2)
    const permsOf = (event: string) => refs.find((r) => r.headers['x-gitea-event'] === event)!.payload.repository.permissions
    expect(permsOf('push')).toEqual({ admin: true, push: true, pull: true })
    expect(permsOf('create')).toEqual({ admin: false, push: false, pull: false })
    // bob reads the public repository, no more: his issue's payloads show his access; alice's comment hers.
    const bob = await s.user('bob-perms')
    const issue = await s.post('/repos/alice/perms/issues', { title: 'from bob' }, as(bob))
    expect(issue.status).toBe(201)
    expect((await s.post(`/repos/alice/perms/issues/${issue.body.number}/comments`, { body: 'thanks' }, as(alice))).status).toBe(201)
    const [opened, commented] = await deliveriesAt('/perms-issues', 2)
    expect([opened!.headers['x-gitea-event'], opened!.payload.repository.permissions]).toEqual(['issues', { admin: false, push: false, pull: true }])
    expect([commented!.headers['x-gitea-event'], commented!.payload.repository.permissions]).toEqual(['issue_comment', { admin: true, push: true, pull: true }])
  })
})
