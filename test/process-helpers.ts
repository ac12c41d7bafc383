/**
 * Warren as an operator runs it: `warren ...` as its own process (the sources through bun, or
 * the compiled binary), on a data folder of its own, with only the environment given here.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { freshPostgresDatabase, TEST_POSTGRES_URL } from './test-database'

export const root = resolve(import.meta.dir, '..')

/**
 * Drops a test database without waiting for it: nothing uses it any more, and PostgreSQL 15's
 * DROP DATABASE waits for a checkpoint it asks for (seconds on a busy machine; 3.7 s measured),
 * which a test need not sit through. The server finishes a drop it was sent even if this process
 * ends meanwhile.
 */
export const dropInBackground = (database: { drop(): Promise<void> }) => void database.drop().catch(() => {})

/** The command line that runs Warren from the sources. */
export const SOURCES = [process.execPath, join(root, 'src/cli.ts')]

/** Temp folders, removed by `cleanup`. */
export function tempDirs() {
  const dirs: string[] = []
  return {
    make(prefix = 'warren-cli-') {
      const dir = mkdtempSync(join(tmpdir(), prefix))
      dirs.push(dir)
      return dir
    },
    cleanup: () => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })),
  }
}

/** Only what the CLI needs: no WARREN_* leaking in from the caller's environment. */
export const envFor = (dataDir: string, extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  WARREN_DATA: dataDir,
  ...extra,
})

export async function runCli(command: string[], dataDir: string, args: string[], opts: { cwd?: string; env?: Record<string, string> } = {}) {
  const proc = Bun.spawn([...command, ...args], { cwd: opts.cwd ?? root, env: envFor(dataDir, opts.env), stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

export function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
  const port = probe.port!
  probe.stop(true)
  return port
}

export const basic = (name: string, password: string) => 'Basic ' + Buffer.from(`${name}:${password}`).toString('base64')

/** A call to a served process's API with the `authorization` header given: its status and JSON body. */
export async function apiCall(server: Served, authorization: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${server.url}/api/v1${path}`, {
    method,
    headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : null }
}

export interface Served {
  url: string
  port: number
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>
  /** Everything the server wrote so far (stdout and stderr), read as it comes. */
  output: () => string
  stop: () => Promise<number>
}

/** Starts `warren serve` and waits until /api/v1/version answers. */
/** How long startServe waits for a process that neither answers nor ends (a hang, not a slow start). */
const START_HANG_MS = 90_000

export async function startServe(
  command: string[],
  dataDir: string,
  extra: Record<string, string> = {},
  opts: { cwd?: string; port?: number; args?: string[] } = {},
): Promise<Served> {
  const port = opts.port ?? freePort()
  const proc = Bun.spawn([...command, ...(opts.args ?? ['serve'])], {
    cwd: opts.cwd ?? root,
    env: envFor(dataDir, { WARREN_PORT: String(port), WARREN_HOST: '127.0.0.1', ...extra }),
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let output = ''
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder()
    const reader = stream.getReader()
    for (let r = await reader.read(); !r.done; r = await reader.read()) output += decoder.decode(r.value, { stream: true })
  }
  const collected = Promise.all([collect(proc.stdout), collect(proc.stderr)])
  const url = `http://127.0.0.1:${port}`
  const stop = async () => {
    if (proc.exitCode === null) proc.kill('SIGTERM')
    const code = await proc.exited
    await collected
    return code
  }
  // Until it answers or ends: a start on a machine whose cores are busy may take many seconds. The
  // bound only catches a hang (a test's own limit is longer), then the process is killed, not leaked.
  for (const giveUp = Date.now() + START_HANG_MS; Date.now() < giveUp; ) {
    const ok = await fetch(`${url}/api/v1/version`).then((r) => r.ok, () => false)
    if (ok) return { url, port, proc, output: () => output, stop }
    if (proc.exitCode !== null) break
    await Bun.sleep(50)
  }
  proc.kill('SIGKILL')
  await proc.exited
  await collected
  throw new Error(`warren serve did not start: ${output}`)
}

/** The site administrator the process tests' `warren serve` makes on its first start, and its Basic credentials. */
export const ROOT_PASSWORD = 'root-password-1'
export const rootEnv = { WARREN_ADMIN_USER: 'root', WARREN_ADMIN_PASSWORD: ROOT_PASSWORD, WARREN_ADMIN_EMAIL: 'root@example.com' }
export const rootAuth = basic('root', ROOT_PASSWORD)

/**
 * `count` `warren serve` processes (as behind a load balancer) on one fresh PostgreSQL database
 * (named after `prefix`) and one data folder, root their site administrator, `extra` added to
 * their environment. `env` and `data` start more of them (a restart); `stop` stops those given
 * here, drops the database and removes the folder.
 */
export async function servedOnPostgres(prefix: string, count: number, extra: Record<string, string> = {}) {
  const dirs = tempDirs()
  const database = await freshPostgresDatabase(TEST_POSTGRES_URL, prefix)
  const data = dirs.make(`${prefix}-`)
  const env = { WARREN_DATABASE_URL: database.url, ...rootEnv, ...extra }
  const servers: Served[] = []
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop()))
    dropInBackground(database)
    dirs.cleanup()
  }
  try {
    for (let i = 0; i < count; i++) servers.push(await startServe(SOURCES, data, env))
  } catch (e) {
    await stop()
    throw e
  }
  return { database, data, env, servers, stop }
}
