// runs in one half: sqlite
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, oneCommitRepo, remoteUrl } from './git-fixture'

/**
 * Housekeeping of a repository's objects after pushes (src/push/sync.ts): receive-pack runs no
 * auto-gc of its own (two git processes a push, most often for nothing); the push's sync runs
 * `git gc --auto` in the background once the store passes git's limits (more than 50 packs, or
 * 6,700 loose objects), or after every push where the repository's config sets gc limits of its
 * own (git then decides by them), and the repository stays whole.
 */

let s: TestServer
let alice: TestUser
beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
})
afterAll(() => s.stop())

const packsOf = (gitDir: string) => readdirSync(join(gitDir, 'objects', 'pack')).filter((f) => f.endsWith('.pack')).length

/** A new repository of alice's, its first commit pushed: the work tree, the remote and the server's folder. */
async function pushedRepository(name: string) {
  expect((await s.post('/user/repos', { name }, { token: alice.token })).status).toBe(201)
  const work = await oneCommitRepo()
  const url = remoteUrl(s.url, `alice/${name}.git`, 'alice', alice.password)
  await gitOk(work, 'push', '-q', url, 'main')
  return { work, url, gitDir: join(s.dataDir, 'repositories', 'alice', `${name}.git`) }
}

/** a.txt set to `text`, committed with `text` as the message, and pushed. */
async function pushChange(work: string, url: string, text: string) {
  writeFileSync(join(work, 'a.txt'), `${text}\n`)
  await gitOk(work, 'commit', '-q', '-am', text)
  await gitOk(work, 'push', '-q', url, 'main')
}

test('past 50 packs a push has the repository consolidated by gc in the background; the refs and history stay whole', async () => {
  const { work, url, gitDir } = await pushedRepository('busy')
  // 55 more packs, as 55 pushes would leave them (receive.unpackLimit is 1).
  const env = { ...process.env, GIT_DIR: gitDir }
  for (let i = 0; i < 55; i++) {
    const id = await new Response(Bun.spawn(['git', 'hash-object', '-w', '--stdin'], { env, stdin: new Blob([`object ${i}\n`]) }).stdout).text()
    await Bun.spawn(['git', 'pack-objects', '-q', join(gitDir, 'objects', 'pack', 'pack')], { env, stdin: new Blob([id]), stdout: 'ignore' }).exited
  }
  expect(packsOf(gitDir)).toBeGreaterThan(50)
  await pushChange(work, url, 'two')
  // gc runs after the push has answered: wait for it to have consolidated the packs.
  for (let i = 0; i < 600 && packsOf(gitDir) > 5; i++) await Bun.sleep(100)
  expect(packsOf(gitDir)).toBeLessThanOrEqual(5)
  expect(await gitOk(gitDir, 'rev-parse', 'refs/heads/main')).toBe(await gitOk(work, 'rev-parse', 'HEAD'))
  await gitOk(gitDir, 'fsck', '--no-dangling')
  const clone = join(work, 'clone')
  await gitOk(work, 'clone', '-q', url, clone)
  expect(await gitOk(clone, 'log', '--format=%s')).toBe('two\none')
  // The size the API shows is the store's after the push (the next sync counts the packed one).
  expect((await s.get('/repos/alice/busy', { token: alice.token })).body.size).toBeGreaterThan(0)
  rmSync(work, { recursive: true, force: true })
})

test('an ordinary push leaves the packs as they are (no gc below the limits)', async () => {
  const { work, url, gitDir } = await pushedRepository('calm')
  await pushChange(work, url, 'two')
  expect(packsOf(gitDir)).toBe(2)
  rmSync(work, { recursive: true, force: true })
})

test('a repository with gc limits of its own in its config is collected by them after a push', async () => {
  const { work, url, gitDir } = await pushedRepository('tidy')
  // Collect from two packs on (git's default is 50).
  await gitOk(gitDir, 'config', 'gc.autoPackLimit', '2')
  await pushChange(work, url, 'two')
  await pushChange(work, url, 'three')
  for (let i = 0; i < 600 && packsOf(gitDir) > 1; i++) await Bun.sleep(100)
  expect(packsOf(gitDir)).toBe(1)
  await gitOk(gitDir, 'fsck', '--no-dangling')
  expect(await gitOk(gitDir, 'log', '--format=%s', 'main')).toBe('three\ntwo\none')
  rmSync(work, { recursive: true, force: true })
})
