/**
 * git's pre-receive hook of client pushes (src/push/hook.ts): a few lines of sh that hand git's
 * quarantine to the server over the socket receive-pack was started with (fd 3), the server
 * judging in its own process. The hook itself, run by hand: it asks only when the decision left
 * checks, and fails (git then refuses the push) whenever no `accepted` comes back. Through the
 * server: one read of the changed files answers both file rules, and no channel outlives its push.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { closeSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { giteaApi, type Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, sh, tempDir } from './git-fixture'
import { commitOn, pushedRepo } from './pull-fixtures'
import { empty, ok } from './gitea-calls'

let s: TestServer
let alice: TestUser
let bob: TestUser
let asAlice: Api<unknown>
let dir: string
const dirs: string[] = []

const urlOf = (u: TestUser) => remoteUrl(s.url, 'alice/hooked.git', u.name, u.password)
const push = (u: TestUser, ...refspecs: string[]) => sh(['git', 'push', '--porcelain', urlOf(u), ...refspecs], dir)
const tip = async (branch: string) => (await ok(asAlice.repos.repoGetBranch('alice', 'hooked', branch))).commit!.id!
const hookPath = () => join(s.deps.config.dataDir, 'hooks', 'channel-2', 'pre-receive')
const ZERO = '0'.repeat(40)

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  asAlice = giteaApi(s.url, { token: alice.token })
  dir = (await pushedRepo(s, alice, 'hooked', dirs)).dir
  await empty(asAlice.repos.repoAddCollaborator('alice', 'hooked', 'bob', { permission: 'write' }))
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/**
 * Runs the installed hook in a folder of its own (with a repository hook that keeps its stdin),
 * `answer` playing the server on fd 3 (or none: no channel at all). Answers how it ended, what
 * it asked, and what the repository's own hook read.
 */
async function runHook(opts: { marker: boolean; answer?: (ask: string) => string | null }) {
  const cwd = tempDir('warren-hook-')
  dirs.push(cwd)
  mkdirSync(join(cwd, 'hooks'))
  writeFileSync(join(cwd, 'hooks', 'pre-receive'), `#!/bin/sh\ncat > '${join(cwd, 'own-hook-stdin')}'\n`, { mode: 0o755 })
  const marker = join(cwd, 'checks')
  if (opts.marker) writeFileSync(marker, '')
  const stdin = `${ZERO} ${'1'.repeat(40)} refs/heads/main\n`
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', WARREN_PUSH_CHECKS: marker, GIT_OBJECT_DIRECTORY: '/q/incoming', GIT_ALTERNATE_OBJECT_DIRECTORIES: '/q', GIT_QUARANTINE_PATH: '/q/incoming' }
  const proc = Bun.spawn([hookPath()], { cwd, env, stdio: [new Blob([stdin]), 'pipe', 'pipe', ...(opts.answer ? (['pipe'] as const) : [])] })
  let asked = ''
  if (opts.answer) {
    const fd = (proc.stdio as unknown as number[])[3]!
    const reader = Bun.file(fd).stream().getReader()
    // Without checks the hook is over before anything is answered: all it wrote is read to the channel's end.
    if (!opts.marker) await proc.exited
    while (opts.marker ? asked.split('\0').length < 4 : true) {
      const next = await reader.read()
      if (next.done) break
      asked += Buffer.from(next.value).toString()
    }
    const reply = opts.marker ? opts.answer(asked) : null
    if (reply !== null) writeFileSync(fd, reply)
    await reader.cancel()
    closeSync(fd)
  }
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
  const own = join(cwd, 'own-hook-stdin')
  return { code, stderr, asked, ownHookStdin: existsSync(own) ? readFileSync(own, 'utf8') : null, stdin }
}

/** This process's open sockets (the server runs in it). */
const openSockets = () =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith('socket:')
    } catch {
      return false
    }
  }).length

describe('the pre-receive hook', () => {
  test('installed by the first push; with nothing left to judge it asks nothing and runs the repository’s own hook on git’s stdin', async () => {
    await commitOn(dir, 'main', { 'first.txt': 'x\n' }, 'first')
    expect((await push(alice, 'main')).code).toBe(0)
    expect(existsSync(hookPath())).toBe(true)
    const r = await runHook({ marker: false, answer: () => 'accepted\n' })
    expect(r.code).toBe(0)
    expect(r.asked).toBe('')
    expect(r.ownHookStdin).toBe(r.stdin)
  })

  test('with checks left, it hands the quarantine over and follows the verdict; git’s stdin still reaches the repository’s own hook', async () => {
    const accepted = await runHook({ marker: true, answer: () => 'accepted\n' })
    expect(accepted.asked).toBe('/q/incoming\0/q\0/q/incoming\0')
    expect(accepted.code).toBe(0)
    expect(accepted.ownHookStdin).toBe(accepted.stdin)

    const refused = await runHook({ marker: true, answer: () => 'refusing to accept refs/heads/main: branch main is protected from force push\n' })
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('refusing to accept refs/heads/main: branch main is protected from force push')
    expect(refused.ownHookStdin).toBeNull()
  })

  test('it fails closed: no channel, a server gone without answering, or an answer cut short, all refuse', async () => {
    const noChannel = await runHook({ marker: true })
    expect(noChannel.code).toBe(1)
    expect(noChannel.stderr).toContain('the push could not be checked: no channel to the server')

    const gone = await runHook({ marker: true, answer: () => null })
    expect(gone.code).toBe(1)
    expect(gone.stderr).toContain('the push could not be checked: the server did not answer')

    const cut = await runHook({ marker: true, answer: () => 'accepted' })
    expect(cut.code).toBe(1)
    expect(cut.ownHookStdin).toBeNull()
  })
})

describe('judged by the server', () => {
  test('protected and unprotected files: a writer outside the whitelist lands a change of unprotected files only, the rest is refused', async () => {
    await ok(
      asAlice.repos.repoCreateBranchProtection('alice', 'hooked', {
        rule_name: 'main',
        enable_push: true,
        enable_push_whitelist: true,
        push_whitelist_usernames: ['alice'],
        protected_file_patterns: 'secret.txt',
        unprotected_file_patterns: 'docs/**',
      }),
      201,
    )
    await gitOk(dir, 'pull', '-q', '--ff-only', urlOf(alice), 'main')
    const start = await tip('main')
    mkdirSync(join(dir, 'docs'), { recursive: true })
    const docs = await commitOn(dir, 'main', { 'docs/guide.md': 'read me\n' }, 'docs only')
    expect((await push(bob, 'main')).code).toBe(0)
    expect(await tip('main')).toBe(docs)

    await commitOn(dir, 'main', { 'docs/more.md': 'more\n', 'code.txt': 'code\n' }, 'docs and code')
    const mixed = await push(bob, 'main')
    expect(mixed.code).not.toBe(0)
    expect(mixed.stdout + mixed.stderr).toContain('Not allowed to push to protected branch main')
    expect(await tip('main')).toBe(docs)

    await gitOk(dir, 'reset', '-q', '--hard', docs)
    await commitOn(dir, 'main', { 'secret.txt': 'key\n' }, 'the secret')
    const secret = await push(alice, 'main')
    expect(secret.code).not.toBe(0)
    expect(secret.stdout + secret.stderr).toContain('branch main is protected from changing file secret.txt')
    expect(await tip('main')).toBe(docs)
    // Two commits: the protected file in the first, not in the last one's own change.
    await commitOn(dir, 'main', { 'docs/after.md': 'after\n' }, 'docs after the secret')
    const twoCommits = await push(alice, 'main')
    expect(twoCommits.code).not.toBe(0)
    expect(twoCommits.stdout + twoCommits.stderr).toContain('branch main is protected from changing file secret.txt')
    expect(await tip('main')).toBe(docs)
    await gitOk(dir, 'reset', '-q', '--hard', docs)
    expect(start).not.toBe(docs)
  })

  test('a merge is judged in the server: changing a protected file it is refused to a writer, allowed to the repository admin', async () => {
    const base = await tip('main')
    await gitOk(dir, 'reset', '-q', '--hard', base)
    await commitOn(dir, 'sec', { 'secret.txt': 'rotated\n' }, 'rotate the secret', base)
    expect((await sh(['git', 'push', '-q', urlOf(alice), 'sec'], dir)).code).toBe(0)
    await gitOk(dir, 'checkout', '-q', 'main')
    const pr = await s.post('/repos/alice/hooked/pulls', { head: 'sec', base: 'main', title: 'Rotate' }, { token: alice.token })
    expect(pr.status).toBe(201)
    const byBob = await s.post(`/repos/alice/hooked/pulls/${pr.body.number}/merge`, { Do: 'merge' }, { token: bob.token })
    expect(byBob.status).toBe(405)
    expect(byBob.body.message).toContain('branch main is protected from changing file secret.txt')
    expect(await tip('main')).toBe(base)
    const byAlice = await s.post(`/repos/alice/hooked/pulls/${pr.body.number}/merge`, { Do: 'merge' }, { token: alice.token })
    expect(byAlice.status).toBe(200)
    const merged = await tip('main')
    expect(merged).not.toBe(base)
    expect(await gitOk(dir, 'fetch', '-q', urlOf(alice), 'main')).toBe('')
    expect(await gitOk(dir, 'rev-parse', `${merged}^1`)).toBe(base)
    await gitOk(dir, 'reset', '-q', '--hard', merged)
  })

  test('no channel outlives its push: the server’s sockets are as many after ten judged pushes as before', async () => {
    const before = openSockets()
    for (let i = 0; i < 10; i++) {
      await commitOn(dir, 'main', { [`docs/n${i}.md`]: `${i}\n` }, `note ${i}`)
      expect((await push(alice, 'main')).code).toBe(0)
    }
    // Keep-alive connections of the test's own clients come and go; a leak would be one a push.
    expect(openSockets() - before).toBeLessThan(5)
  })
})
