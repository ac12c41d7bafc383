import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startPullChecker } from '../src/jobs/pull-checker'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, oneCommitRepo, remoteUrl, sh } from './git-fixture'
import { startReceiver, until, type Receiver } from './webhook-receiver'

/*
 * Webhook payloads carry the records the API answers, made by the same converters (src/convert):
 * a payload's `repository`, `sender` / `pusher`, `issue` and `pull_request` equal, field by field,
 * what the API shows an anonymous caller of the same objects. The one field that differs, as
 * Gitea's payloads do: `permissions` of a Repository record (and of its parent), which a payload
 * gives as seen by nobody in particular (all false) while an anonymous caller of the API may pull
 * a public repository. (A pull request's branch repositories are made as for an anonymous caller,
 * as Gitea makes them, so there the two agree.)
 *
 * And a commit names the account owning its author's or committer's address only when that
 * address is verified (Gitea's GetUsersByEmails), in push payloads and API records alike.
 */

let s: TestServer
let worker: ReturnType<typeof startWebhookWorker>
let checker: ReturnType<typeof startPullChecker>
let rx: Receiver
let alice: TestUser, bob: TestUser
const dirs: string[] = []

beforeAll(async () => {
  s = await startTestServer({ webhookAllowedHostList: 'loopback', webhookRetryDelay: 0.05, webhookDeliverTimeout: 2 })
  worker = startWebhookWorker(s.deps, { pollMs: 10 })
  checker = startPullChecker(s.deps)
  rx = await startReceiver()
  alice = await s.user('alice')
  bob = await s.user('bob')
})
afterAll(async () => {
  await checker.stop()
  await worker.stop()
  rx.stop()
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const as = (u: TestUser) => ({ token: u.token })

/** Deliveries to `path` so far (in arrival order). */
const at = (path: string) => rx.received.filter((r) => r.path === path)
/** The first delivery of `type` (and `action`, when given) at `path` after the first `seen` ones. */
const nextOf = (path: string, seen: number, type: string, action?: string) =>
  until(
    () => at(path).slice(seen).find((r) => r.headers['x-gitea-event-type'] === type && (action === undefined || r.payload.action === action)),
    `a ${type}${action ? ` ${action}` : ''} delivery at ${path}`,
  )

async function hookOn(repo: string, path: string, user: TestUser) {
  const created = await s.post(`/repos/${repo}/hooks`, { type: 'gitea', config: { url: rx.url(path), content_type: 'json' }, send_everything: true, active: true }, as(user))
  expect(created.status).toBe(201)
}

/** A Repository record without its permissions (nor its parent's): what payload and API both show. */
function withoutPermissions(repo: any): any {
  const { permissions, parent, ...rest } = repo
  return { ...rest, parent: parent ? withoutPermissions(parent) : parent }
}

/** Commits `file` in `dir` with this author and committer e-mail; answers the commit id. */
async function commitAs(dir: string, file: string, authorEmail: string, committerEmail: string): Promise<string> {
  writeFileSync(join(dir, file), `${file}\n`)
  await gitOk(dir, 'add', '-A')
  const r = await sh(['git', 'commit', '-q', '-m', `add ${file}`], dir, { GIT_AUTHOR_EMAIL: authorEmail, GIT_COMMITTER_EMAIL: committerEmail })
  expect(r.code).toBe(0)
  return await gitOk(dir, 'rev-parse', 'HEAD')
}

describe('one e-mail → user lookup, verified addresses only', () => {
  test('an unverified address names nobody in push payloads, branch and commit records; a verified one names its owner', async () => {
    // bob adds an address he has not verified: it must not make him the author of anything.
    const added = await s.post('/user/emails', { emails: ['bob-unverified@example.org'] }, as(bob))
    expect(added.status).toBe(201)
    expect(added.body).toEqual([{ email: 'bob-unverified@example.org', verified: false, primary: false }])

    expect((await s.post('/user/repos', { name: 'authors' }, as(alice))).status).toBe(201)
    await hookOn('alice/authors', '/authors', alice)
    const dir = await oneCommitRepo()
    dirs.push(dir)
    await gitOk(dir, 'remote', 'add', 'origin', remoteUrl(s.url, 'alice/authors.git', alice.name, alice.password))
    await gitOk(dir, 'push', '-q', 'origin', 'main')
    await nextOf('/authors', 0, 'push')

    // A branch whose commits: one authored with bob's unverified address, one with his verified one.
    await gitOk(dir, 'checkout', '-q', '-b', 'topic')
    const unverified = await commitAs(dir, 'u.txt', 'bob-unverified@example.org', 'alice@example.com')
    const seen = at('/authors').length
    await gitOk(dir, 'push', '-q', 'origin', 'topic')
    const push = (await nextOf('/authors', seen, 'push')).payload
    const commit = push.commits.find((c: any) => c.id === unverified)
    expect(commit.author).toEqual({ name: 'Alice A', email: 'bob-unverified@example.org', username: '' })
    expect(commit.committer).toEqual({ name: 'Alice A', email: 'alice@example.com', username: 'alice' })
    expect(push.head_commit.author.username).toBe('')

    const branch = await s.get('/repos/alice/authors/branches/topic')
    expect(branch.status).toBe(200)
    expect(branch.body.commit.author).toEqual({ name: 'Alice A', email: 'bob-unverified@example.org', username: '' })
    expect(branch.body.commit.committer.username).toBe('alice')

    const verified = await commitAs(dir, 'v.txt', 'bob@example.com', 'alice@example.com')
    const seen2 = at('/authors').length
    await gitOk(dir, 'push', '-q', 'origin', 'topic')
    const push2 = (await nextOf('/authors', seen2, 'push')).payload
    expect(push2.commits.find((c: any) => c.id === verified).author).toEqual({ name: 'Alice A', email: 'bob@example.com', username: 'bob' })
    expect((await s.get('/repos/alice/authors/branches/topic')).body.commit.author.username).toBe('bob')

    // The Commit records of a pull request: `author` is the User record of the verified owner, or null.
    const pull = await s.post('/repos/alice/authors/pulls', { head: 'topic', base: 'main', title: 'topic' }, as(alice))
    expect(pull.status).toBe(201)
    const commits = await until(async () => {
      const r = await s.get(`/repos/alice/authors/pulls/${pull.body.number}/commits`)
      return r.status === 200 && r.body.length === 2 ? r.body : null
    }, 'the pull request checked')
    const byId = new Map(commits.map((c: any) => [c.sha, c]))
    expect((byId.get(unverified) as any).author).toBeNull()
    expect((byId.get(unverified) as any).committer.login).toBe('alice')
    expect((byId.get(verified) as any).author.login).toBe('bob')
  })
})

describe('payload records are the API records', () => {
  test('push: repository, pusher and sender equal the anonymous API records (but the repository permissions: the owner\'s)', async () => {
    // Its default branch is not the one pushed below: the push makes a branch of its own.
    expect((await s.post('/user/repos', { name: 'same', auto_init: true, default_branch: 'master', description: 'the same record' }, as(alice))).status).toBe(201)
    await hookOn('alice/same', '/same', alice)
    const dir = await oneCommitRepo()
    dirs.push(dir)
    await gitOk(dir, 'remote', 'add', 'origin', remoteUrl(s.url, 'alice/same.git', alice.name, alice.password))
    await gitOk(dir, 'push', '-q', 'origin', 'main')
    const push = (await nextOf('/same', 0, 'push')).payload
    const api = await s.get('/repos/alice/same')
    expect(api.status).toBe(200)
    // A push's record shows the owner's access (Gitea's PushCommits notifier), the rest as an anonymous caller sees it.
    expect(push.repository.permissions).toEqual({ admin: true, push: true, pull: true })
    expect(api.body.permissions).toEqual({ admin: false, push: false, pull: true })
    expect(withoutPermissions(push.repository)).toEqual(withoutPermissions(api.body))
    const user = await s.get('/users/alice')
    expect(push.pusher).toEqual(user.body)
    expect(push.sender).toEqual(user.body)
  })

  test('issues and pull requests: `issue` and `pull_request` equal the anonymous API records', async () => {
    const seen = at('/same').length
    const issue = await s.post('/repos/alice/same/issues', { title: 'an issue', body: 'text' }, as(alice))
    expect(issue.status).toBe(201)
    const opened = (await nextOf('/same', seen, 'issues')).payload
    expect(opened.issue).toEqual((await s.get(`/repos/alice/same/issues/${issue.body.number}`)).body)
    expect(opened.sender).toEqual((await s.get('/users/alice')).body)
    expect(withoutPermissions(opened.repository)).toEqual(withoutPermissions((await s.get('/repos/alice/same')).body))

    // A pull request, compared once its mergeability is known (the payload of a later edit).
    const dir = await oneCommitRepo()
    dirs.push(dir)
    await gitOk(dir, 'remote', 'add', 'origin', remoteUrl(s.url, 'alice/same.git', alice.name, alice.password))
    await gitOk(dir, 'fetch', '-q', 'origin')
    await gitOk(dir, 'checkout', '-q', '-b', 'change', 'origin/main')
    await commitAs(dir, 'change.txt', 'alice@example.com', 'alice@example.com')
    await gitOk(dir, 'push', '-q', 'origin', 'change')
    const pull = await s.post('/repos/alice/same/pulls', { head: 'change', base: 'main', title: 'a change' }, as(alice))
    expect(pull.status).toBe(201)
    await until(async () => (await s.get(`/repos/alice/same/pulls/${pull.body.number}`)).body.mergeable === true, 'the pull request checked')
    const seen2 = at('/same').length
    expect((await s.patch(`/repos/alice/same/pulls/${pull.body.number}`, { title: 'a better change' }, as(alice))).status).toBe(201)
    const edited = (await nextOf('/same', seen2, 'pull_request', 'edited')).payload
    expect(edited.action).toBe('edited')
    const api = await s.get(`/repos/alice/same/pulls/${pull.body.number}`)
    expect(edited.pull_request).toEqual(api.body)
    // The pull request's branch repositories carry an anonymous caller's access, as Gitea's payloads (a record made for no one).
    expect(edited.pull_request.base.repo.permissions).toEqual({ admin: false, push: false, pull: true })
    expect(withoutPermissions(edited.repository)).toEqual(withoutPermissions((await s.get('/repos/alice/same')).body))
  })

  test("fork: the fork's record, parent included, is the API's; a parent an anonymous caller may not read is null in both", async () => {
    let seen = at('/same').length
    expect((await s.post('/repos/alice/same/forks', {}, as(bob))).status).toBe(202)
    const fork = (await nextOf('/same', seen, 'fork')).payload
    const api = await s.get('/repos/bob/same')
    expect(api.body.parent.full_name).toBe('alice/same')
    expect(withoutPermissions(fork.repository)).toEqual(withoutPermissions(api.body))
    expect(withoutPermissions(fork.forkee)).toEqual(withoutPermissions((await s.get('/repos/alice/same')).body))

    // The source belongs to an organisation only signed-in users may see (limited): anonymous
    // callers of the API see the fork without its parent, and so does the payload.
    expect((await s.post('/orgs', { username: 'insiders', visibility: 'limited' }, as(alice))).status).toBe(201)
    expect((await s.post('/orgs/insiders/repos', { name: 'tool', auto_init: true }, as(alice))).status).toBe(201)
    await hookOn('insiders/tool', '/tool', alice)
    seen = at('/tool').length
    expect((await s.post('/repos/insiders/tool/forks', {}, as(bob))).status).toBe(202)
    const hidden = (await nextOf('/tool', seen, 'fork')).payload
    const anonymous = await s.get('/repos/bob/tool')
    expect(anonymous.body.parent).toBeNull()
    expect((await s.get('/repos/bob/tool', as(bob))).body.parent.full_name).toBe('insiders/tool')
    expect(hidden.repository.parent).toBeNull()
    expect(withoutPermissions(hidden.repository)).toEqual(withoutPermissions(anonymous.body))
  })
})
