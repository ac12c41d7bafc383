import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { connect } from 'node:net'
import { join } from 'node:path'
import { rmSync } from 'node:fs'
import { eventsOfRepo, type EventRecord } from '../src/events/outbox'
import { repoPath } from '../src/git/run'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { git, gitOk, oneCommitRepo, remoteUrl, sh } from './git-fixture'
import { statementRecorder } from './query-counter'
import { eq } from 'drizzle-orm'
import { pullRequests } from '../src/db/schema'

let s: TestServer
let alice: TestUser
const dirs: string[] = []
beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
})
afterAll(async () => {
  await s.stop()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})

const ZERO = '0'.repeat(40)
async function newRepo(name: string) {
  const r = await s.post('/user/repos', { name }, { token: alice.token })
  expect(r.status).toBe(201)
  return { id: r.body.id as number, url: remoteUrl(s.url, `alice/${name}.git`, 'alice', alice.password), gitDir: repoPath(s.dataDir, 'alice', name) }
}
async function workRepo() {
  const dir = await oneCommitRepo()
  dirs.push(dir)
  return dir
}
const shape = (list: EventRecord[]) => list.map((e) => [e.kind, e.actorId, e.payload])

describe('push events', () => {
  test('create, update, delete of branches and tags write push and ref events with old and new ids', async () => {
    const repo = await newRepo('pushed')
    const dir = await workRepo()
    const first = await gitOk(dir, 'rev-parse', 'HEAD')
    await gitOk(dir, 'push', '-q', repo.url, 'main')
    let seen = (await eventsOfRepo(s.deps.db, repo.id)).filter((e) => e.kind !== 'repo.created')
    expect(shape(seen)).toEqual([
      ['ref.created', alice.user.id, { ref: 'main', refType: 'branch', sha: first }],
      ['push', alice.user.id, { ref: 'refs/heads/main', before: ZERO, after: first }],
    ])
    const meta = (await s.get('/repos/alice/pushed', { token: alice.token })).body
    expect(meta).toMatchObject({ empty: false, default_branch: 'main' })
    expect(meta.size).toBeGreaterThan(0)

    writeFileSync(join(dir, 'a.txt'), 'two\n')
    await gitOk(dir, 'commit', '-q', '-am', 'two')
    const second = await gitOk(dir, 'rev-parse', 'HEAD')
    await gitOk(dir, 'tag', 'v1')
    await gitOk(dir, 'push', '-q', repo.url, 'main', 'v1', 'main:side')
    const last = seen.at(-1)!.id
    seen = await eventsOfRepo(s.deps.db, repo.id, last)
    expect(shape(seen)).toEqual([
      ['push', alice.user.id, { ref: 'refs/heads/main', before: first, after: second }],
      ['ref.created', alice.user.id, { ref: 'side', refType: 'branch', sha: second }],
      ['push', alice.user.id, { ref: 'refs/heads/side', before: ZERO, after: second }],
      // A tag's push comes before its create, as Gitea announces them.
      ['push', alice.user.id, { ref: 'refs/tags/v1', before: ZERO, after: second }],
      ['ref.created', alice.user.id, { ref: 'v1', refType: 'tag', sha: second }],
    ])
    await gitOk(dir, 'push', '-q', repo.url, ':side')
    expect(shape(await eventsOfRepo(s.deps.db, repo.id, seen.at(-1)!.id))).toEqual([
      ['ref.deleted', alice.user.id, { ref: 'side', refType: 'branch', sha: second }],
      ['push', alice.user.id, { ref: 'refs/heads/side', before: second, after: ZERO }],
    ])
  })

  test('refs the API could not serve are refused at push time, with a message to the client; nothing changes', async () => {
    const repo = await newRepo('guarded')
    const dir = await workRepo()
    for (const ref of ['-x', 'feature/-y']) {
      const r = await git(dir, 'push', repo.url, `main:refs/heads/${ref}`)
      expect(r.code).not.toBe(0)
      expect(r.stderr).toContain('starts with "-"')
      expect(r.stderr).toContain('remote rejected')
    }
    // One bad ref refuses the whole push, the good one included.
    const both = await git(dir, 'push', repo.url, 'main', 'main:refs/tags/-t')
    expect(both.code).not.toBe(0)
    expect(await gitOk(repo.gitDir, 'for-each-ref')).toBe('')
    expect((await s.get('/repos/alice/guarded', { token: alice.token })).body.empty).toBe(true)
    expect((await eventsOfRepo(s.deps.db, repo.id)).map((e) => e.kind)).toEqual(['repo.created'])
    // The same push with good names goes through.
    await gitOk(dir, 'push', '-q', repo.url, 'main')
    expect((await s.get('/repos/alice/guarded', { token: alice.token })).body.empty).toBe(false)
  })

  test('a command list that cannot be read (a push certificate) is refused whole: an unchecked ref never reaches git', async () => {
    const repo = await newRepo('certified')
    const dir = await workRepo()
    const sha = await gitOk(dir, 'rev-parse', 'HEAD')
    const pack = Buffer.from(await new Response(Bun.spawn(['git', 'pack-objects', '--stdout', '--revs', '-q'], { cwd: dir, stdin: new Blob([`${sha}\n`]), stdout: 'pipe' }).stdout).arrayBuffer())
    const pkt = (line: string) => (line.length + 4).toString(16).padStart(4, '0') + line
    const cert = [`push-cert\0report-status\n`, 'certificate version 0.1\n', 'pusher alice\n', '\n', `${ZERO} ${sha} refs/heads/-evil\n`, 'push-cert-end\n']
    const body = Buffer.concat([Buffer.from(cert.map(pkt).join('') + '0000'), pack])
    // Tiny chunks too: reading the list costs time linear in it whatever the framing.
    const chunks = Array.from({ length: Math.ceil(body.length / 7) }, (_, i) => body.subarray(i * 7, i * 7 + 7))
    const res = await fetch(`${s.url}/alice/certified.git/git-receive-pack`, {
      method: 'POST',
      headers: { authorization: 'Basic ' + Buffer.from(`alice:${alice.password}`).toString('base64'), 'content-type': 'application/x-git-receive-pack-request' },
      body: new ReadableStream({ pull: (c) => (chunks.length ? c.enqueue(chunks.shift()!) : c.close()) }),
    })
    expect(res.status).toBe(400)
    expect(await gitOk(repo.gitDir, 'for-each-ref')).toBe('')
    expect((await eventsOfRepo(s.deps.db, repo.id)).map((e) => e.kind)).toEqual(['repo.created'])
  })

  test('a client that hangs up right after sending its pack: git applies it and the API follows', async () => {
    const repo = await newRepo('hangup')
    const dir = await workRepo()
    const sha = await gitOk(dir, 'rev-parse', 'HEAD')
    const pack = Buffer.from(await new Response(Bun.spawn(['git', 'pack-objects', '--stdout', '--revs', '-q'], { cwd: dir, stdin: new Blob([`${sha}\n`]), stdout: 'pipe' }).stdout).arrayBuffer())
    const command = `${ZERO} ${sha} refs/heads/main\0report-status side-band-64k agent=test\n`
    const body = Buffer.concat([Buffer.from((command.length + 4).toString(16).padStart(4, '0') + command), Buffer.from('0000'), pack])
    const { port } = new URL(s.url)
    const auth = Buffer.from(`alice:${alice.password}`).toString('base64')
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(port), '127.0.0.1', () => {
        socket.write(
          `POST /alice/hangup.git/git-receive-pack HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic ${auth}\r\n` +
            `Content-Type: application/x-git-receive-pack-request\r\nContent-Length: ${body.length}\r\n\r\n`,
        )
        // Everything sent, then gone without reading a byte of the answer.
        socket.end(body, () => {
          socket.destroy()
          resolve()
        })
      })
      socket.on('error', reject)
    })
    let meta: any
    for (let i = 0; i < 100; i++) {
      meta = (await s.get('/repos/alice/hangup', { token: alice.token })).body
      if (!meta.empty) break
      await Bun.sleep(50)
    }
    expect(await gitOk(repo.gitDir, 'rev-parse', 'refs/heads/main')).toBe(sha)
    expect(meta).toMatchObject({ empty: false, default_branch: 'main' })
    expect(meta.size).toBeGreaterThan(0)
    expect((await s.get('/repos/alice/hangup/branches', { token: alice.token })).body.map((b: any) => b.name)).toEqual(['main'])
    const raw = await fetch(`${s.url}/alice/hangup/raw/branch/main/a.txt`)
    expect(await raw.text()).toBe('one\n')
    expect(shape((await eventsOfRepo(s.deps.db, repo.id)).filter((e) => e.kind === 'push'))).toEqual([
      ['push', alice.user.id, { ref: 'refs/heads/main', before: ZERO, after: sha }],
    ])
  })
})

describe('a push of many refs', () => {
  test('its events and the checks of the pull requests it moves are written a batch a statement, not a few statements a ref', async () => {
    const repo = await newRepo('many-refs')
    const dir = await workRepo()
    const sent = statementRecorder(s.deps.db)
    await gitOk(dir, 'push', '-q', repo.url, 'HEAD:refs/heads/main', 'HEAD:refs/heads/b0000')
    expect((await s.post('/repos/alice/many-refs/pulls', { head: 'b0000', base: 'main', title: 'B' }, { token: alice.token })).status).toBe(201)
    const pullRow = async () => (await s.deps.db.select().from(pullRequests).where(eq(pullRequests.headRepoId, repo.id)))[0]!
    const queued = (await pullRow()).checkSeq
    // b0000 moves to a new commit; 1,200 new branches.
    await gitOk(dir, 'commit', '-q', '--allow-empty', '-m', 'next')
    const next = await gitOk(dir, 'rev-parse', 'HEAD')
    const N = 1200
    writeFileSync(join(dir, '.refs'), Array.from({ length: N }, (_, i) => `create refs/heads/n${String(i).padStart(4, '0')} ${next}\n`).join(''))
    await sh(['sh', '-c', 'git update-ref --stdin < .refs'], dir)
    const mark = (await eventsOfRepo(s.deps.db, repo.id, 0, 1000)).at(-1)!.id
    const statements = await sent.during(async () => {
      const pushed = await git(dir, 'push', '-q', repo.url, 'refs/heads/n*:refs/heads/n*', 'HEAD:refs/heads/b0000')
      expect(pushed.code).toBe(0)
    })
    const events: EventRecord[] = []
    for (let page = await eventsOfRepo(s.deps.db, repo.id, mark, 500); page.length; page = await eventsOfRepo(s.deps.db, repo.id, page.at(-1)!.id, 500)) events.push(...page)
    expect(events).toHaveLength(2 * N + 1)
    // Each new branch's create, then its push, in ref order; b0000's push.
    expect(events.filter((e) => e.kind === 'ref.created')).toHaveLength(N)
    for (let i = 0; i + 1 < events.length; i++) if (events[i]!.kind === 'ref.created') expect([events[i + 1]!.kind, events[i + 1]!.payload.ref]).toEqual(['push', `refs/heads/${events[i]!.payload.ref}`])
    expect(events.find((e) => e.payload.ref === 'refs/heads/b0000')!.payload).toEqual({ ref: 'refs/heads/b0000', before: expect.any(String), after: next })
    expect((await pullRow()).checkSeq).toBe(queued + 1)
    // A bounded number of writes (batches of 500), where it was three statements a ref.
    const writes = statements.filter((text) => /^\s*(insert into "events"|update "pull_requests")/i.test(text))
    expect(writes.length).toBeLessThanOrEqual(Math.ceil((2 * N + 1) / 500) + Math.ceil((N + 1) / 500) + 2)
  })
})
