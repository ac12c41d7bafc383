// runs in one half: sqlite
import { afterAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { repoPath } from '../src/git/run'
import { gitOk, tempDir } from './git-fixture'
import { basic, freePort, runCli, SOURCES, startServe, tempDirs } from './process-helpers'

const temp = tempDirs()
afterAll(temp.cleanup)
const ADMIN = { WARREN_ADMIN_USER: 'root', WARREN_ADMIN_PASSWORD: 'root-password', WARREN_ADMIN_EMAIL: 'root@example.com' }
const auth = basic('root', 'root-password')

/** A commit with a large random file, and the push body that creates refs/heads/main from it. */
async function pushBody() {
  const dir = tempDir()
  await gitOk(dir, 'init', '-q', '--initial-branch=main')
  writeFileSync(join(dir, 'big.bin'), randomBytes(3 * 1024 * 1024))
  await gitOk(dir, 'add', 'big.bin')
  await gitOk(dir, 'commit', '-q', '-m', 'big')
  const sha = await gitOk(dir, 'rev-parse', 'HEAD')
  const packer = Bun.spawn(['git', 'pack-objects', '--stdout', '--revs', '-q'], { cwd: dir, stdin: new Blob([`${sha}\n`]), stdout: 'pipe' })
  const pack = new Uint8Array(await new Response(packer.stdout).arrayBuffer())
  expect(await packer.exited).toBe(0)
  const command = `${'0'.repeat(40)} ${sha} refs/heads/main\0report-status\n`
  const head = new TextEncoder().encode((command.length + 4).toString(16).padStart(4, '0') + command + '0000')
  return { sha, head, pack }
}

/**
 * The push as a slow client sends it: the command list, then the pack in small pieces with a
 * pause between them; `onPiece(n)` is told as each piece is taken. `stallAfter` pieces: the
 * body never ends (a client that stopped sending).
 */
function slowBody(body: { head: Uint8Array; pack: Uint8Array }, pieces: number, onPiece: (n: number) => void, stallAfter?: number) {
  const size = Math.ceil(body.pack.length / pieces)
  let n = 0
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (n === 0) controller.enqueue(body.head)
      if (stallAfter !== undefined && n >= stallAfter) return new Promise<void>(() => {})
      if (n * size >= body.pack.length) return controller.close()
      await Bun.sleep(40)
      controller.enqueue(body.pack.subarray(n * size, (n + 1) * size))
      onPiece(++n)
    },
  })
}

const receivePack = (url: string, body: ReadableStream<Uint8Array>) =>
  fetch(`${url}/root/slow.git/git-receive-pack`, {
    method: 'POST',
    headers: { authorization: auth, 'content-type': 'application/x-git-receive-pack-request' },
    body,
    // @ts-expect-error Bun streams request bodies
    duplex: 'half',
  })

async function createRepo(url: string) {
  const r = await fetch(`${url}/api/v1/user/repos`, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'slow' }) })
  expect(r.status).toBe(201)
}

describe('shutdown', () => {
  test('SIGTERM: new connections are refused, the push in flight completes, then the server exits', async () => {
    const data = temp.make()
    const server = await startServe(SOURCES, data, ADMIN)
    await createRepo(server.url)
    const body = await pushBody()
    let signalled = false
    const answer = receivePack(
      server.url,
      slowBody(body, 40, (n) => {
        // The server is reading the pack: now it is told to stop.
        if (n === 5 && !signalled) {
          signalled = true
          server.proc.kill('SIGTERM')
        }
      }),
    )
    // Once shutting down, the server takes no new connection.
    while (!server.output().includes('shutting down')) await Bun.sleep(20)
    expect(await fetch(`${server.url}/api/v1/version`).then(() => 'answered', () => 'refused')).toBe('refused')
    const res = await answer
    expect(res.status).toBe(200)
    const report = await res.text()
    expect(report).toContain('unpack ok')
    expect(report).toContain('ok refs/heads/main')
    expect(await server.proc.exited).toBe(0)
    expect(server.output()).toContain('stopped cut=false')

    // The push was recorded: a new server shows the branch, and the repository is no longer empty.
    const again = await startServe(SOURCES, data)
    try {
      const branch = await fetch(`${again.url}/api/v1/repos/root/slow/branches/main`, { headers: { authorization: auth } })
      expect(branch.status).toBe(200)
      expect(((await branch.json()) as any).commit.id).toBe(body.sha)
      const repo = (await (await fetch(`${again.url}/api/v1/repos/root/slow`, { headers: { authorization: auth } })).json()) as any
      expect(repo.empty).toBe(false)
    } finally {
      await again.stop()
    }
  }, 240_000)

  test('past the grace period a stalled push is cut off: no ref moves, its temporary objects are removed', async () => {
    const data = temp.make()
    const server = await startServe(SOURCES, data, { ...ADMIN, WARREN_SHUTDOWN_GRACE: '1' })
    await createRepo(server.url)
    const body = await pushBody()
    const gitDir = repoPath(data, 'root', 'slow')
    let sent = 0
    const answer = receivePack(server.url, slowBody(body, 40, (n) => (sent = n), 10)).then(
      (r) => r.text(),
      () => 'connection closed',
    )
    while (sent < 10) await Bun.sleep(20)
    server.proc.kill('SIGTERM')
    expect(await server.proc.exited).toBe(0)
    await answer
    expect(server.output()).toContain('grace period over')
    expect(server.output()).toContain('stopped cut=true')
    const objects = readdirSync(join(gitDir, 'objects'))
    expect(objects.filter((n) => n.startsWith('tmp_objdir') || n.startsWith('incoming-'))).toEqual([])
    expect(existsSync(join(gitDir, 'refs', 'heads', 'main'))).toBe(false)
    const again = await startServe(SOURCES, data)
    try {
      expect((await fetch(`${again.url}/api/v1/repos/root/slow/branches/main`, { headers: { authorization: auth } })).status).toBe(404)
    } finally {
      await again.stop()
    }
  }, 240_000)

  test('a second Warren on a port in use stops with a clear error; the first one keeps serving', async () => {
    const first = await startServe(SOURCES, temp.make())
    try {
      const second = await runCli(SOURCES, temp.make(), ['serve'], { env: { WARREN_PORT: String(first.port), WARREN_HOST: '127.0.0.1' } })
      expect(second.code).toBe(1)
      expect(second.stderr).toContain(`port ${first.port} on 127.0.0.1 is already in use`)
      for (let i = 0; i < 5; i++) expect((await fetch(`${first.url}/api/v1/version`)).status).toBe(200)
    } finally {
      await first.stop()
    }
  }, 240_000)

  test('a second Warren on the same data folder stops before its start-up repairs touch it', async () => {
    const data = temp.make()
    const first = await startServe(SOURCES, data)
    try {
      // A repository being created by the first server (its row still 'creating'): the second
      // server's repairs would delete it.
      const creating = join(data, 'repositories', 'root', 'in-progress.git')
      mkdirSync(creating, { recursive: true })
      const second = await runCli(SOURCES, data, ['serve'], { env: { WARREN_PORT: String(freePort()), WARREN_HOST: '127.0.0.1' } })
      expect(second.code).toBe(1)
      expect(second.stderr).toContain(`already holds ${data}`)
      expect(existsSync(creating)).toBe(true)
      expect((await fetch(`${first.url}/api/v1/version`)).status).toBe(200)
    } finally {
      await first.stop()
    }
  }, 240_000)

  test('npm start hands SIGTERM to the server, which shuts down in order', async () => {
    const data = temp.make()
    const served = await startServe(['npm', 'start', '--silent'], data, {}, { args: [] })
    // `npm start` runs `bun run build && exec bun dist/bin/cli.js serve`: the server is npm's child.
    served.proc.kill('SIGTERM')
    expect(await served.proc.exited).toBe(0)
    expect(served.output()).toContain('signal received signal=SIGTERM')
    expect(served.output()).toContain('stopped cut=false')
    expect(await fetch(`${served.url}/api/v1/version`).then(() => 'answered', () => 'refused')).toBe('refused')
  }, 240_000)
})
