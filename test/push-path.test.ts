import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { and, eq } from 'drizzle-orm'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { git, gitOk, refsOf, remoteUrl, sh, tempDir } from './git-fixture'
import { commitOn, pushedRepo } from './pull-fixtures'
import { eventsOfRepo } from '../src/events/outbox'
import { ZERO_ID } from '../src/events/push-events'
import { pendingPushes, pullRequests } from '../src/db/schema'
import { findRepoByName } from '../src/auth/repo-context'
import { moveRef } from '../src/push'
import { ApiError } from '../src/lib/errors'

/**
 * The one push path (src/push): the same refusals through git over HTTP and over SSH with the
 * real git client (git shows why, exits non-zero, no ref moves, nothing is recorded), the same
 * allowed push recorded alike by both, and the server-side entry point (moveRef) recorded like a
 * push, or refused with nothing changed.
 */

let s: TestServer
let alice: TestUser
let rita: TestUser
let keysDir: string
const keys: Record<string, string> = {}
const dirs: string[] = []
const temp = () => {
  const d = tempDir()
  dirs.push(d)
  return d
}

/** A new ed25519 key made by ssh-keygen: its private key file and public line. */
async function newKey(name: string): Promise<{ path: string; pub: string }> {
  const path = join(keysDir, name)
  const r = await sh(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', path], keysDir)
  if (r.code !== 0) throw new Error(r.stderr)
  return { path, pub: readFileSync(path + '.pub', 'utf8').trim() }
}

/** git over SSH with `key`, checking the server's host key. */
const sshGit = (cwd: string, key: string, args: string[]) =>
  sh(['git', ...args], cwd, {
    GIT_SSH_COMMAND: `ssh -F /dev/null -i ${key} -o IdentitiesOnly=yes -o UserKnownHostsFile=${join(keysDir, 'known_hosts')} -o StrictHostKeyChecking=yes -o BatchMode=yes -p ${s.ssh!.port}`,
  })

const gitDirOf = (path: string) => join(s.dataDir, 'repositories', `${path.toLowerCase()}.git`)

/** The refs of a repository but those the server keeps for pull requests (the checker job may update them at any time). */
const branchesAndTags = async (path: string) => Object.fromEntries(Object.entries(await refsOf(gitDirOf(path))).filter(([ref]) => !ref.startsWith('refs/pull/')))

/** Who pushes: a user by name (HTTP password / SSH key), anonymous (HTTP only), or a deploy key (SSH only). */
type Who = 'alice' | 'rita' | 'anonymous' | 'deploy-read'

/** Pushes `refspecs` from `dir` to `path` over `transport` as `who`. */
async function push(transport: 'http' | 'ssh', who: Who, dir: string, path: string, refspecs: string[]) {
  if (transport === 'ssh') return sshGit(dir, keys[who]!, ['push', `ssh://git@127.0.0.1:${s.ssh!.port}/${path}.git`, ...refspecs])
  const user = who === 'alice' ? alice : who === 'rita' ? rita : null
  return git(dir, 'push', remoteUrl(s.url, `${path}.git`, user?.name, user?.password), ...refspecs)
}

/** What the database recorded of pushes to a repository: its events and pending pushes. */
async function recorded(repoId: number) {
  return {
    events: (await eventsOfRepo(s.deps.db, repoId, 0, 1000)).length,
    pending: (await s.deps.db.select().from(pendingPushes).where(eq(pendingPushes.repoId, repoId))).length,
  }
}

let work: string
let open: { id: number; dir: string }
let frozenId: number
let copyId: number

beforeAll(async () => {
  s = await startTestServer({ startSshServer: true, migrationsAllowLocalNetworks: true })
  alice = await s.user('alice')
  rita = await s.user('rita')
  keysDir = temp()
  writeFileSync(join(keysDir, 'known_hosts'), `[127.0.0.1]:${s.ssh!.port} ${s.ssh!.hostKey.publicKey}\n`)
  const [aliceKey, ritaKey, deployKey] = await Promise.all(['alice', 'rita', 'deploy-read'].map(newKey))
  keys.alice = aliceKey!.path
  keys.rita = ritaKey!.path
  keys['deploy-read'] = deployKey!.path
  expect((await s.post('/user/keys', { title: 'alice', key: aliceKey!.pub }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/user/keys', { title: 'rita', key: ritaKey!.pub }, { token: rita.token })).status).toBe(201)

  // alice/open: main pushed; rita reads it; a read-only deploy key opens it.
  open = await pushedRepo(s, alice, 'open', dirs)
  expect((await s.put('/repos/alice/open/collaborators/rita', { permission: 'read' }, { token: alice.token })).status).toBe(204)
  expect((await s.post('/repos/alice/open/keys', { title: 'ci', key: deployKey!.pub, read_only: true }, { token: alice.token })).status).toBe(201)
  // alice/frozen: archived; alice/copy: a mirror of alice/open.
  const frozen = await pushedRepo(s, alice, 'frozen', dirs)
  frozenId = frozen.id
  expect((await s.patch('/repos/alice/frozen', { archived: true }, { token: alice.token })).status).toBe(200)
  const mirror = await s.post('/repos/migrate', { clone_addr: `${s.url}/alice/open.git`, uid: alice.user.id, repo_name: 'copy', mirror: true }, { token: alice.token })
  expect(mirror.status).toBe(201)
  copyId = mirror.body.id

  // A working copy with a commit none of them has.
  work = open.dir
  await commitOn(work, 'main', { 'b.txt': 'two\n' }, 'two')
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/**
 * One refusal: where and as whom, what is pushed, and what git shows over each transport (null:
 * the transport has no such pusher). Over HTTP an access refusal is an HTTP status (git shows the
 * status; the body, JSON, carries the message, checked on the same request git made first).
 */
interface Refusal {
  name: string
  path: string
  who: Who
  refspecs: string[]
  /** Refused by the push decision per ref (receive-pack's report), rather than before git starts. */
  perRef?: boolean
  http: { shows: string; status?: number; message?: string } | null
  ssh: { shows: string } | null
}

const REFUSALS: Refusal[] = [
  {
    name: 'an archived repository',
    path: 'alice/frozen',
    who: 'alice',
    refspecs: ['main:main'],
    http: { shows: 'The requested URL returned error: 403', status: 403, message: 'repo is archived' },
    ssh: { shows: 'Warren: repository alice/frozen.git is archived (read-only)' },
  },
  {
    name: 'a mirror',
    path: 'alice/copy',
    who: 'alice',
    refspecs: ['main:main'],
    http: { shows: 'The requested URL returned error: 403', status: 403, message: 'mirror repository is read-only' },
    ssh: { shows: 'Warren: mirror repository alice/copy.git is read-only' },
  },
  {
    name: 'a reader',
    path: 'alice/open',
    who: 'rita',
    refspecs: ['main:main'],
    http: { shows: 'The requested URL returned error: 403', status: 403, message: 'User permission denied' },
    ssh: { shows: 'Warren: you do not have permission to push to alice/open.git' },
  },
  {
    name: 'an anonymous pusher',
    path: 'alice/open',
    who: 'anonymous',
    refspecs: ['main:main'],
    // git asks for credentials (none here: it may not prompt).
    http: { shows: 'could not read Username', status: 401, message: 'authentication required' },
    ssh: null,
  },
  {
    name: 'a deploy key without write access',
    path: 'alice/open',
    who: 'deploy-read',
    refspecs: ['main:main'],
    http: null,
    ssh: { shows: 'Warren: the deploy key is read-only: it may not push to alice/open.git' },
  },
  {
    name: 'a ref under refs/pull/',
    path: 'alice/open',
    who: 'alice',
    refspecs: ['main:refs/heads/fine', 'main:refs/pull/1/head'],
    perRef: true,
    http: { shows: 'refs/pull/ is kept by the server for pull requests: no push may change it' },
    ssh: { shows: 'refs/pull/ is kept by the server for pull requests: no push may change it' },
  },
  {
    name: 'the default branch deleted',
    path: 'alice/open',
    who: 'alice',
    refspecs: ['main:refs/heads/fine', ':refs/heads/main'],
    perRef: true,
    http: { shows: 'branch main is the default branch and cannot be deleted' },
    ssh: { shows: 'branch main is the default branch and cannot be deleted' },
  },
  {
    name: 'an unsafe ref name',
    path: 'alice/open',
    who: 'alice',
    refspecs: ['main:refs/heads/fine', 'main:refs/heads/x/-bad'],
    perRef: true,
    http: { shows: 'ref name component starts with "-" (the API could not serve it)' },
    ssh: { shows: 'ref name component starts with "-" (the API could not serve it)' },
  },
]

describe('the same refusals through git over HTTP and over SSH', () => {
  for (const refusal of REFUSALS)
    for (const transport of ['http', 'ssh'] as const) {
      const expected = refusal[transport]
      if (!expected) continue
      test(`${refusal.name} (${transport}): git shows why, exits non-zero, nothing moves`, async () => {
        const repoId = refusal.path === 'alice/frozen' ? frozenId : refusal.path === 'alice/copy' ? copyId : open.id
        const gitDir = gitDirOf(refusal.path)
        const before = { refs: await refsOf(gitDir), recorded: await recorded(repoId) }
        const pushed = await push(transport, refusal.who, work, refusal.path, refusal.refspecs)
        expect(pushed.code).not.toBe(0)
        expect(pushed.stderr).toContain(expected.shows)
        // A ref the decision refuses is reported per ref by receive-pack (the good ref with it).
        if (refusal.perRef) {
          // A deletion (`:ref`) is reported by the ref's name alone.
          const [from, to] = refusal.refspecs[1]!.split(':') as [string, string]
          const name = to.replace(/^refs\/heads\//, '')
          expect(pushed.stderr).toContain(`[remote rejected] ${from ? `${from} -> ${name}` : name} (${expected.shows})`)
          expect(pushed.stderr).toContain('[remote rejected] main -> fine (another ref of this push was refused)')
        }
        expect({ refs: await refsOf(gitDir), recorded: await recorded(repoId) }).toEqual(before)
        if (transport === 'http' && !refusal.perRef) {
          const answer = refusal.http!
          // The request git made first (the ref advertisement for a push) answers why.
          const user = refusal.who === 'alice' ? alice : refusal.who === 'rita' ? rita : null
          const advert = await fetch(`${s.url}/${refusal.path}.git/info/refs?service=git-receive-pack`, { headers: user ? { authorization: user.basic } : {} })
          expect([advert.status, (await advert.json()).message]).toEqual([answer.status, answer.message])
        }
      })
    }
})

describe('the same allowed push through both', () => {
  test('creating a branch and a tag and moving main record the same events, pusher included, over HTTP and SSH', async () => {
    const http = await pushedRepo(s, alice, 'same-http', dirs)
    const ssh = await pushedRepo(s, alice, 'same-ssh', dirs)
    // Both start from the same commit (pushedRepo makes the same tree, author and time may differ).
    const base = await gitOk(http.dir, 'rev-parse', 'HEAD')
    await gitOk(ssh.dir, 'fetch', '-q', http.dir, 'main')
    await gitOk(ssh.dir, 'reset', '-q', '--hard', 'FETCH_HEAD')
    expect((await sshGit(ssh.dir, keys.alice!, ['push', '-q', '--force', `ssh://git@127.0.0.1:${s.ssh!.port}/alice/same-ssh.git`, 'main'])).code).toBe(0)
    const next = await commitOn(http.dir, 'main', { 'c.txt': 'three\n' }, 'three')
    await gitOk(http.dir, 'tag', 'v1', next)
    await gitOk(ssh.dir, 'fetch', '-q', http.dir, 'main', '--tags')
    const marks = { http: (await eventsOfRepo(s.deps.db, http.id, 0, 1000)).at(-1)?.id ?? 0, ssh: (await eventsOfRepo(s.deps.db, ssh.id, 0, 1000)).at(-1)?.id ?? 0 }
    const refspecs = [`${next}:refs/heads/main`, `${next}:refs/heads/topic`, 'refs/tags/v1:refs/tags/v1']
    const viaHttp = await push('http', 'alice', http.dir, 'alice/same-http', refspecs)
    const viaSsh = await push('ssh', 'alice', ssh.dir, 'alice/same-ssh', refspecs)
    expect([viaHttp.code, viaSsh.code]).toEqual([0, 0])
    const shape = async (repoId: number, after: number) => (await eventsOfRepo(s.deps.db, repoId, after, 1000)).map((e) => [e.kind, e.actorId, e.payload])
    const httpEvents = await shape(http.id, marks.http)
    expect(httpEvents).toEqual(await shape(ssh.id, marks.ssh))
    expect(httpEvents).toEqual([
      ['push', alice.user.id, { ref: 'refs/heads/main', before: base, after: next }],
      ['ref.created', alice.user.id, { ref: 'topic', refType: 'branch', sha: next }],
      ['push', alice.user.id, { ref: 'refs/heads/topic', before: ZERO_ID, after: next }],
      // A tag's push comes before its create (Gitea's pushUpdates), a branch's after.
      ['push', alice.user.id, { ref: 'refs/tags/v1', before: ZERO_ID, after: next }],
      ['ref.created', alice.user.id, { ref: 'v1', refType: 'tag', sha: next }],
    ])
    expect(await refsOf(gitDirOf('alice/same-http'))).toEqual(await refsOf(gitDirOf('alice/same-ssh')))
    expect([await recorded(http.id), await recorded(ssh.id)].map((r) => r.pending)).toEqual([0, 0])
  })
})

describe('the server-side entry point (moveRef)', () => {
  test('a ref it creates, moves or deletes is recorded with its events and re-checks pull requests; a stale one changes nothing', async () => {
    const repo = await pushedRepo(s, alice, 'moves', dirs)
    const main = await gitOk(repo.dir, 'rev-parse', 'HEAD')
    const feature = await commitOn(repo.dir, 'feature', { 'f.txt': 'feature\n' }, 'feature', 'main')
    await gitOk(repo.dir, 'push', '-q', 'origin', 'feature')
    const opened = await s.post('/repos/alice/moves/pulls', { head: 'feature', base: 'main', title: 'Feature' }, { token: alice.token })
    expect(opened.status).toBe(201)
    const pullRow = async () => (await s.deps.db.select().from(pullRequests).where(and(eq(pullRequests.baseRepoId, repo.id), eq(pullRequests.index, opened.body.number))))[0]!
    const found = (await findRepoByName(s.deps, 'alice', 'moves'))!
    const mark = (await eventsOfRepo(s.deps.db, repo.id, 0, 1000)).at(-1)!.id
    const shape = async () => (await eventsOfRepo(s.deps.db, repo.id, mark, 1000)).map((e) => [e.kind, e.actorId, e.payload])

    // Created, then main moved to it (the pull request's base: its check is queued again), then deleted.
    expect(await moveRef(s.deps, found, alice.user, { ref: 'refs/heads/made', old: ZERO_ID, new: feature })).toBe(true)
    const queued = (await pullRow()).checkSeq
    expect(await moveRef(s.deps, found, alice.user, { ref: 'refs/heads/main', old: main, new: feature })).toBe(true)
    expect((await pullRow()).checkSeq).toBe(queued + 1)
    expect(await moveRef(s.deps, found, alice.user, { ref: 'refs/heads/made', old: feature, new: ZERO_ID })).toBe(true)
    expect(await shape()).toEqual([
      ['ref.created', alice.user.id, { ref: 'made', refType: 'branch', sha: feature }],
      ['push', alice.user.id, { ref: 'refs/heads/made', before: ZERO_ID, after: feature }],
      ['push', alice.user.id, { ref: 'refs/heads/main', before: main, after: feature }],
      ['ref.deleted', alice.user.id, { ref: 'made', refType: 'branch', sha: feature }],
      ['push', alice.user.id, { ref: 'refs/heads/made', before: feature, after: ZERO_ID }],
    ])
    const refs = await branchesAndTags('alice/moves')
    expect([refs['refs/heads/main'], 'refs/heads/made' in refs]).toEqual([feature, false])
    expect((await s.get('/repos/alice/moves/branches/main', { token: alice.token })).body.commit.id).toBe(feature)

    // A compare-and-swap from a value the ref no longer holds: nothing moves, nothing is recorded.
    const settled: boolean[] = []
    const before = { refs: await branchesAndTags('alice/moves'), recorded: await recorded(repo.id), checkSeq: (await pullRow()).checkSeq }
    expect(await moveRef(s.deps, found, alice.user, { ref: 'refs/heads/main', old: main, new: main }, async (moved) => void settled.push(moved))).toBe(false)
    expect(await moveRef(s.deps, found, alice.user, { ref: 'refs/heads/feature', old: ZERO_ID, new: main })).toBe(false)
    expect(settled).toEqual([false])
    expect({ refs: await branchesAndTags('alice/moves'), recorded: await recorded(repo.id), checkSeq: (await pullRow()).checkSeq }).toEqual(before)
  })

  test('a refused move (refs/pull/, an unsafe name, a reader, an archived repository) throws why and changes nothing; a mirror takes it', async () => {
    const found = (await findRepoByName(s.deps, 'alice', 'open'))!
    const frozen = (await findRepoByName(s.deps, 'alice', 'frozen'))!
    const main = (await refsOf(gitDirOf('alice/open')))['refs/heads/main']!
    const cases = [
      { repo: found, actor: alice.user, ref: 'refs/pull/1/head', status: 403, message: 'refs/pull/ is kept by the server for pull requests' },
      { repo: found, actor: alice.user, ref: 'refs/heads/x/-bad', status: 422, message: 'ref name component starts with "-"' },
      { repo: found, actor: alice.user, ref: 'refs/heads/a..b', status: 422, message: 'invalid ref name' },
      { repo: found, actor: rita.user, ref: 'refs/heads/made', status: 403, message: 'permission denied' },
      { repo: frozen, actor: alice.user, ref: 'refs/heads/made', status: 423, message: 'repo is archived' },
    ]
    for (const c of cases) {
      const gitDir = gitDirOf(`alice/${c.repo.repo.name}`)
      const before = { refs: await refsOf(gitDir), recorded: await recorded(c.repo.repo.id) }
      const settled: boolean[] = []
      const error = await moveRef(s.deps, c.repo, c.actor, { ref: c.ref, old: ZERO_ID, new: main }, async (moved) => void settled.push(moved)).then(
        () => null,
        (e: unknown) => e,
      )
      expect(error).toBeInstanceOf(ApiError)
      expect([c.ref, (error as ApiError).status]).toEqual([c.ref, c.status])
      expect((error as ApiError).message).toContain(c.message)
      expect(settled).toEqual([false])
      expect({ refs: await refsOf(gitDir), recorded: await recorded(c.repo.repo.id) }).toEqual(before)
    }
    // A mirror is read-only to git clients only: the server's own move for a writer (a release's
    // tag, as Gitea) goes through, recorded as that writer's.
    const copy = (await findRepoByName(s.deps, 'alice', 'copy'))!
    const mark = (await eventsOfRepo(s.deps.db, copyId, 0, 1000)).at(-1)?.id ?? 0
    const tip = (await refsOf(gitDirOf('alice/copy')))['refs/heads/main']!
    expect(await moveRef(s.deps, copy, alice.user, { ref: 'refs/tags/r1', old: ZERO_ID, new: tip })).toBe(true)
    expect((await eventsOfRepo(s.deps.db, copyId, mark, 1000)).map((e) => [e.kind, e.actorId])).toEqual([['push', alice.user.id], ['ref.created', alice.user.id]])
  })
})
