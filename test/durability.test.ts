// runs in one half: sqlite
/**
 * Acknowledged writes survive a crash while an operator reads the database with the `sqlite3`
 * tool beside a running server. SQLite keeps its write-ahead log only while some connection holds
 * a lock on `warren.db`; the server's locks are POSIX locks, which the kernel drops, all of them,
 * as soon as the process closes any descriptor of that file. If the server ever did (an open and
 * close outside SQLite, e.g. when its webhook thread opens its own connection), the outside
 * client would find the file unlocked when it closes, take itself for the last user, checkpoint
 * and delete the log the server is still writing to: every write after that lives in a deleted
 * file and is gone at the next kill -9.
 *
 * The server here always runs on SQLite (a data folder of its own; no WARREN_DATABASE_URL reaches
 * it), whatever database the test run uses. The `sqlite3` tool must be installed (Debian package
 * `sqlite3`): without it the test fails, it never skips.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { readdirSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import { basic, SOURCES, startServe, tempDirs, type Served } from './process-helpers'

const dirs = tempDirs()
/** Real processes on a busy machine: a bound that catches a hang, never a timing (as every process test here). */
const PROCESS_TEST_TIMEOUT = 120_000
afterAll(dirs.cleanup)

const ADMIN = { WARREN_ADMIN_USER: 'root', WARREN_ADMIN_PASSWORD: 'change-me-now', WARREN_ADMIN_EMAIL: 'root@example.com' }

/** The `sqlite3` command line tool, required (see above). */
function sqlite3(): string {
  const path = Bun.which('sqlite3')
  if (!path) throw new Error('the sqlite3 command line tool is missing: install the Debian package sqlite3 (apt-get install -y sqlite3)')
  return path
}

/** Runs one `sqlite3` invocation on the file (it opens, reads and closes it, as an operator's query does). */
async function operatorQuery(file: string, sql: string): Promise<string> {
  const proc = Bun.spawn([sqlite3(), file, sql], { stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  expect({ code, err }).toEqual({ code: 0, err: '' })
  return out.trim()
}

/** Descriptors the process holds open on `file` (Linux /proc). */
function descriptorsOn(pid: number, file: string): number {
  let n = 0
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) === file) n++
    } catch {
      // closed meanwhile
    }
  }
  return n
}

/**
 * Starts the server's webhook thread (it starts when the outbox has work: a repository made
 * records an event) and waits until it has opened its own connection (a second descriptor of the
 * file): from then on everything the server does at start has been done.
 */
async function untilWebhookThreadConnected(server: Served, file: string, token: string): Promise<void> {
  const made = await fetch(`${server.url}/api/v1/user/repos`, {
    method: 'POST',
    headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `wake${Date.now()}` }),
  })
  expect(made.status).toBe(201)
  for (let i = 0; i < 600 && descriptorsOn(server.proc.pid, file) < 2; i++) await Bun.sleep(50)
  expect(descriptorsOn(server.proc.pid, file)).toBeGreaterThanOrEqual(2)
}

async function tokenOf(server: Served): Promise<string> {
  const res = await fetch(`${server.url}/api/v1/users/root/tokens`, {
    method: 'POST',
    headers: { authorization: basic('root', 'change-me-now'), 'content-type': 'application/json' },
    body: JSON.stringify({ name: `t${Date.now()}`, scopes: ["all"] }),
  })
  expect(res.status).toBe(201)
  return ((await res.json()) as { sha1: string }).sha1
}

/** Creates organisations by name; each must be answered 201. */
async function createOrgs(server: Served, token: string, names: string[]): Promise<void> {
  for (const name of names) {
    const res = await fetch(`${server.url}/api/v1/orgs`, {
      method: 'POST',
      headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ username: name }),
    })
    expect([name, res.status]).toEqual([name, 201])
  }
}

/** Which of the organisations the server knows. */
async function known(server: Served, token: string, names: string[]): Promise<string[]> {
  const found: string[] = []
  for (const name of names) {
    const res = await fetch(`${server.url}/api/v1/orgs/${name}`, { headers: { authorization: `token ${token}` } })
    if (res.status === 200) found.push(name)
  }
  return found
}

const names = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`)

async function killHard(server: Served): Promise<void> {
  server.proc.kill('SIGKILL')
  await server.proc.exited
}

describe('an outside sqlite3 reader and kill -9', () => {
  test('writes acknowledged after an operator queried the database with sqlite3 survive kill -9', async () => {
    const data = dirs.make('warren-durable-')
    const file = join(data, 'warren.db')
    const first = await startServe(SOURCES, data, ADMIN)
    const token = await tokenOf(first)
    try {
      await untilWebhookThreadConnected(first, file, token)
      await createOrgs(first, token, names('before', 4))
      // The operator looks: sqlite3 opens the file, reads, and closes it.
      expect(await operatorQuery(file, "SELECT count(*) FROM users WHERE name LIKE 'before%'")).toBe('4')
      await createOrgs(first, token, names('after', 4))
      expect(await operatorQuery(file, 'PRAGMA quick_check')).toBe('ok')
      await createOrgs(first, token, names('later', 4))
    } finally {
      await killHard(first)
    }
    const second = await startServe(SOURCES, data)
    try {
      const all = [...names('before', 4), ...names('after', 4), ...names('later', 4)]
      expect(await known(second, token, all)).toEqual(all)
    } finally {
      await second.stop()
    }
  }, PROCESS_TEST_TIMEOUT)

  test('a sqlite3 session kept open across writes, then closed, loses nothing at kill -9', async () => {
    const data = dirs.make('warren-durable-')
    const file = join(data, 'warren.db')
    const first = await startServe(SOURCES, data, ADMIN)
    const token = await tokenOf(first)
    try {
      await untilWebhookThreadConnected(first, file, token)
      await createOrgs(first, token, names('one', 3))
      // An interactive session: open, read, stay open while the server writes, read again, quit.
      const session = Bun.spawn([sqlite3(), file], { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' })
      session.stdin.write("SELECT 'seen', count(*) FROM users WHERE name LIKE 'one%';\n")
      session.stdin.flush()
      await createOrgs(first, token, names('two', 3))
      session.stdin.write("SELECT 'seen', count(*) FROM users WHERE name LIKE 'two%';\n.quit\n")
      session.stdin.end()
      const [out, err, code] = await Promise.all([new Response(session.stdout).text(), new Response(session.stderr).text(), session.exited])
      expect({ code, err, out: out.trim().split('\n') }).toEqual({ code: 0, err: '', out: ['seen|3', 'seen|3'] })
      await createOrgs(first, token, names('three', 3))
    } finally {
      await killHard(first)
    }
    const second = await startServe(SOURCES, data)
    try {
      const all = [...names('one', 3), ...names('two', 3), ...names('three', 3)]
      expect(await known(second, token, all)).toEqual(all)
    } finally {
      await second.stop()
    }
  }, PROCESS_TEST_TIMEOUT)
})
