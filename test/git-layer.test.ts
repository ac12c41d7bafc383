// runs in one half: postgresql
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { appendFileSync, existsSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, tempDir } from './git-fixture'
import { GitError, git, repoPath, runGit, safeGitMessage } from '../src/git/run'

/** Process ids whose full command line contains `pattern` (pgrep -f). */
function pidsMatching(pattern: string): number[] {
  const r = Bun.spawnSync(['pgrep', '-f', '--', pattern])
  return r.stdout.toString().split('\n').filter(Boolean).map(Number).filter((p) => p !== process.pid)
}

/** Process ids in process group `pgid` (git leads a group of its own, its children included). */
function groupMembers(pgid: number): number[] {
  const r = Bun.spawnSync(['pgrep', '-g', String(pgid)])
  return r.stdout.toString().split('\n').filter(Boolean).map(Number)
}

async function waitFor<T>(what: string, probe: () => T | null | undefined | false, ms = 60_000): Promise<T> {
  const until = Date.now() + ms
  for (;;) {
    const v = probe()
    if (v) return v
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(20)
  }
}

const unique = () => randomBytes(6).toString('hex')
const never = () => new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) })
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('runGit', () => {
  test('a git past its limit (stdin that never ends) is killed: timeout GitError, no process left', async () => {
    const marker = `warren.layer${unique()}`
    const started = Date.now()
    const run = runGit(['-c', `${marker}=1`, 'hash-object', '--stdin'], { input: never(), limits: { quick: 0.3, long: 600 } })
    const pid = await waitFor('git to start', () => pidsMatching(marker)[0])
    const error = await run.then(
      () => null,
      (e) => e,
    )
    expect(Date.now() - started).toBeGreaterThanOrEqual(250)
    expect(error).toBeInstanceOf(GitError)
    expect(error.kind).toBe('timeout')
    expect(error.message).toBe('git took longer than 0.3 s')
    await waitFor('the process to go', () => pidsMatching(marker).length === 0 && groupMembers(pid).length === 0, 5000)
  })

  test('the long limit applies when asked for, and an abort signal kills git at once', async () => {
    const marker = `warren.layer${unique()}`
    const abort = new AbortController()
    const run = runGit(['-c', `${marker}=1`, 'hash-object', '--stdin'], {
      input: never(),
      budget: 'long',
      limits: { quick: 0.05, long: 600 },
      signal: abort.signal,
    })
    await waitFor('git to start', () => pidsMatching(marker)[0])
    await Bun.sleep(200) // past the quick limit: the long one is the one that counts
    expect(pidsMatching(marker).length).toBe(1)
    abort.abort()
    const error = await run.catch((e) => e)
    expect(error).toBeInstanceOf(GitError)
    expect(error.kind).toBe('aborted')
    await waitFor('the process to go', () => pidsMatching(marker).length === 0, 5000)
    // An already aborted signal starts nothing.
    expect((await runGit(['version'], { signal: abort.signal }).catch((e) => e)).kind).toBe('aborted')
  })

  test('values go after --end-of-options: an option-like value is never read as an option', async () => {
    const repo = tempDir('warren-layer-')
    dirs.push(repo)
    await git(['init', '--bare', '--quiet'], { values: [repo] })
    const out = join(tempDir('warren-marker-'), 'pwned')
    dirs.push(join(out, '..'))
    for (const args of [['archive'], ['cat-file', '-t'], ['for-each-ref'], ['rev-parse', '--verify', '--quiet']]) {
      const r = await runGit(args, { gitDir: repo, values: [`--output=${out}`] })
      expect(r.code === 0 && args[0] !== 'for-each-ref').toBe(false)
    }
    expect(existsSync(out)).toBe(false)
    // A failure's message is git's first error line without server paths.
    const failed = await git(['cat-file', '-t'], { gitDir: repo, values: ['--output=x'] }).catch((e) => e)
    expect(failed).toBeInstanceOf(GitError)
    expect(failed.kind).toBe('failed')
    expect(failed.message).toStartWith('git cat-file failed: fatal:')
    expect(failed.message).not.toContain(repo)
    expect(safeGitMessage(`hint: x\nfatal: not a git repository: '${repo}'\n`)).toBe("fatal: not a git repository: '<path>'")
  })
})

describe('through the API', () => {
  let s: TestServer
  let alice: TestUser
  let work: string
  const big = `big${unique()}`

  beforeAll(async () => {
    // Default limits (600 s): whatever dies here dies because its client went away.
    s = await startTestServer()
    alice = await s.user('alice')
    for (const name of ['slow', big]) expect((await s.post('/user/repos', { name }, { token: alice.token })).status).toBe(201)
    work = tempDir('warren-work-')
    dirs.push(work)
    await gitOk(work, 'init', '-q', '--initial-branch=master')
    writeFileSync(join(work, 'README.md'), '# hi\n')
    await gitOk(work, 'add', '-A')
    await gitOk(work, 'commit', '-q', '-m', 'first')
    await gitOk(work, 'push', '-q', remoteUrl(s.url, 'alice/slow.git', 'alice', alice.token), 'master')
    // 24 MiB that does not compress: packs and archives of it take a while to stream.
    writeFileSync(join(work, 'noise.bin'), randomBytes(24 << 20))
    await gitOk(work, 'add', '-A')
    await gitOk(work, 'commit', '-q', '-m', 'noise')
    await gitOk(work, 'push', '-q', remoteUrl(s.url, `alice/${big}.git`, 'alice', alice.token), 'master')
  }, 240_000)
  afterAll(() => s.stop())

  test('an archive past the limit is 504 "git took longer than N s", and git and its children are gone', async () => {
    const slow = await startTestServer({ gitTimeout: 1.5 })
    try {
      const carol = await slow.user('carol')
      expect((await slow.post('/user/repos', { name: 'slow', auto_init: true }, { token: carol.token })).status).toBe(201)
      // The tar.gz filter (git's own config) never finishes: git archive waits on a child process.
      const sleeper = `1000.${Date.now() % 1_000_000}`
      appendFileSync(join(repoPath(slow.dataDir, 'carol', 'slow'), 'config'), `[tar "tar.gz"]\n\tcommand = sleep ${sleeper}\n`)
      const started = Date.now()
      const r = await slow.get('/repos/carol/slow/archive/main.tar.gz', { token: carol.token })
      expect(r.status).toBe(504)
      expect(r.body).toEqual({ message: 'git took longer than 1.5 s', url: expect.any(String) })
      expect(Date.now() - started).toBeGreaterThanOrEqual(1400)
      await waitFor('the filter to die', () => pidsMatching(`sleep ${sleeper}`).length === 0, 5000)
      // The web URL answers the same, as an error page (Gitea's archive link is a page's).
      const web = await fetch(`${slow.url}/carol/slow/archive/main.tar.gz`)
      expect(web.status).toBe(504)
      expect(web.headers.get('content-type')).toStartWith('text/html')
      expect(await web.text()).toContain('504')
      await waitFor('the filter to die', () => pidsMatching(`sleep ${sleeper}`).length === 0, 5000)
      // A zip (no filter) is unaffected.
      expect((await slow.get('/repos/carol/slow/archive/main.zip', { token: carol.token })).status).toBe(200)
    } finally {
      await slow.stop()
    }
  }, 240_000)

  test('option-like refs through raw, archive and branch routes change nothing and create no file', async () => {
    const out = join(tempDir('warren-marker-'), `pwned-${unique()}`)
    dirs.push(join(out, '..'))
    const before = await gitOk(repoPath(s.dataDir, 'alice', 'slow'), 'for-each-ref')
    for (const ref of [`--output=${out}`, `--exec=touch ${out}`, `-o${out}`]) {
      const e = encodeURIComponent(ref)
      for (const path of [
        `/repos/alice/slow/archive/${e}.zip`,
        `/repos/alice/slow/raw/README.md?ref=${e}`,
        `/repos/alice/slow/raw/${e}/README.md`,
        `/repos/alice/slow/branches/${e}`,
        `/repos/alice/slow/editorconfig/${e}`,
      ]) {
        const r = await s.get(path, { token: alice.token })
        expect([path, r.status]).toEqual([path, 404])
      }
    }
    expect(existsSync(out)).toBe(false)
    expect(await gitOk(repoPath(s.dataDir, 'alice', 'slow'), 'for-each-ref')).toBe(before)
  })

  test('a request aborted while git has written nothing yet kills git and its children', async () => {
    // git archive waits on a filter that never ends: nothing is written, so only the abort can stop it.
    expect((await s.post('/user/repos', { name: 'hang', auto_init: true }, { token: alice.token })).status).toBe(201)
    const sleeper = `2000.${Date.now() % 1_000_000}`
    appendFileSync(join(repoPath(s.dataDir, 'alice', 'hang'), 'config'), `[tar "tar.gz"]\n\tcommand = sleep ${sleeper}\n`)
    const abort = new AbortController()
    const res = fetch(`${s.url}/api/v1/repos/alice/hang/archive/main.tar.gz`, {
      headers: { authorization: `token ${alice.token}` },
      signal: abort.signal,
    }).catch((e) => e)
    const pid = await waitFor('git archive', () => pidsMatching('--prefix=hang/')[0])
    await waitFor('the filter', () => pidsMatching(`sleep ${sleeper}`).length > 0)
    abort.abort()
    expect((await res).name).toBe('AbortError')
    await waitFor('git archive and the filter to die', () => groupMembers(pid).length === 0 && pidsMatching(`sleep ${sleeper}`).length === 0, 5000)
  }, 240_000)

  test('aborting a large archive download stops git archive', async () => {
    const abort = new AbortController()
    const res = await fetch(`${s.url}/api/v1/repos/alice/${big}/archive/master.zip`, {
      headers: { authorization: `token ${alice.token}` },
      signal: abort.signal,
    })
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    expect((await reader.read()).done).toBe(false)
    const pid = await waitFor('git archive', () => pidsMatching(`--prefix=${big}/`)[0])
    abort.abort()
    await reader.cancel().catch(() => {})
    await waitFor('git archive to die', () => pidsMatching(`--prefix=${big}/`).length === 0 && groupMembers(pid).length === 0, 5000)
  }, 240_000)

  test('a clone whose client is killed mid-transfer leaves no upload-pack or pack-objects behind', async () => {
    const target = tempDir('warren-clone-')
    dirs.push(target)
    const gitDir = repoPath(s.dataDir, 'alice', big)
    const client = Bun.spawn(['git', 'clone', '-q', remoteUrl(s.url, `alice/${big}.git`), join(target, 'c')], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: target, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
      stdout: 'ignore',
      stderr: 'ignore',
      detached: true,
    })
    // The fetch's upload-pack, once it has started pack-objects (a second member of its group).
    const pgid = await waitFor('upload-pack with pack-objects', () =>
      pidsMatching(`upload-pack --stateless-rpc ${gitDir}`).find((pid) => groupMembers(pid).length > 1),
    )
    process.kill(-client.pid, 'SIGKILL')
    await client.exited
    await waitFor('upload-pack and pack-objects to die', () => groupMembers(pgid).length === 0, 5000)
    expect(pidsMatching(`upload-pack --stateless-rpc ${gitDir}`)).toEqual([])
  }, 240_000)
})
