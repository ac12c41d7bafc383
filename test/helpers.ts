import { copyFileSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig, type Config } from '../src/config'
import { createDeps, type AppDeps } from '../src/deps'
import { startServer } from '../src/server'
import { createAccessToken, createUser } from '../src/modules/users/service'
import type { UserRow } from '../src/auth/caller'
import { startSshServer } from '../src/ssh/server'
import { closeDatabase, openDatabase } from '../src/db/client'
import { freshTestDatabase } from './test-database'
import { dropInBackground } from './process-helpers'
import { releaseKeptIndexes } from '../src/git/tree-write'

export interface TestUser {
  user: UserRow
  name: string
  password: string
  token: string
  /** `Authorization` header value for Basic with the password. */
  basic: string
}

export interface Auth {
  /** A token (header `Authorization: token ...`). */
  token?: string
  /** Basic credentials as [name, password]. */
  basic?: [string, string]
  /** Extra headers. */
  headers?: Record<string, string>
}

export interface ApiResponse<T = any> {
  status: number
  headers: Headers
  body: T
  text: string
}

let sqliteTemplate: Promise<string> | undefined

/**
 * A SQLite database with every migration applied, made once per test process, of which each test
 * server on SQLite starts with a copy (as on PostgreSQL, test-database.ts): applying the
 * migrations was a third of a test server's start. The servers' own starts on new folders are
 * the `warren` processes' tests (cli, startup, durability), which migrate their databases.
 */
function migratedSqliteFile(): Promise<string> {
  sqliteTemplate ??= (async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-test-template-'))
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }))
    // Closed, its write-ahead log is copied into the file and removed: the file is the whole database.
    await closeDatabase(openDatabase(dir))
    return join(dir, 'warren.db')
  })()
  return sqliteTemplate
}

/**
 * A real Warren on a temp data folder, listening on a free loopback port.
 * Password hashing is made cheap so that tests can create many users quickly; `overrides` change
 * any other setting (e.g. the limits of failed sign-ins, production values by default, or tiny git
 * time limits). `startSshServer: true` also starts the SSH server on a free loopback port (`ssh`),
 * with `ssh_url` pointing at it.
 */
export async function startTestServer(overrides: Partial<Config> = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), 'warren-test-'))
  const database = await freshTestDatabase()
  if (!database.url) copyFileSync(await migratedSqliteFile(), join(dataDir, 'warren.db'))
  // Short passwords and quiet logs unless a test asks (test/password-policy checks the production minimum).
  const config = loadConfig({}, { dataDir, databaseUrl: database.url, port: 0, host: '127.0.0.1', passwordMemoryCost: 64, passwordTimeCost: 1, minPasswordLength: 1, logLevel: 'warn', ...overrides })
  const deps = await createDeps(config)
  const { app, server } = startServer(deps, { hostname: '127.0.0.1', port: 0 })
  config.baseUrl = `http://127.0.0.1:${server.port}/`
  const ssh = config.startSshServer ? await startSshServer(deps, { host: '127.0.0.1', port: 0 }) : null
  if (ssh) Object.assign(config, { sshDomain: '127.0.0.1', sshPort: ssh.port, sshListenHost: '127.0.0.1', sshListenPort: ssh.port })
  const url = config.baseUrl.replace(/\/$/, '')

  async function request<T = any>(method: string, path: string, opts: Auth & { body?: unknown; raw?: BodyInit } = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) }
    if (opts.token) headers.authorization = `token ${opts.token}`
    if (opts.basic) headers.authorization = 'Basic ' + Buffer.from(`${opts.basic[0]}:${opts.basic[1]}`).toString('base64')
    let body: BodyInit | undefined = opts.raw
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body)
      headers['content-type'] ??= 'application/json'
    }
    const res = await fetch(url + (path.startsWith('/api/') || !path.startsWith('/') ? path : '/api/v1' + path), { method, headers, body, redirect: 'manual' })
    const text = await res.text()
    let parsed: any = text
    try {
      parsed = text ? JSON.parse(text) : null
    } catch {}
    return { status: res.status, headers: res.headers, body: parsed, text }
  }

  let counter = 0
  /** Creates a user (and a token for it) straight through the service. */
  async function user(name?: string, opts: { admin?: boolean; email?: string } = {}): Promise<TestUser> {
    const username = name ?? `user${++counter}`
    const password = `pw-${username}-secret`
    const row = await createUser(deps, { username, password, email: opts.email ?? `${username}@example.com`, isAdmin: opts.admin })
    const { secret } = await createAccessToken(deps, row.id, 'test')
    return { user: row, name: username, password, token: secret, basic: 'Basic ' + Buffer.from(`${username}:${password}`).toString('base64') }
  }

  return {
    url,
    config,
    deps,
    app,
    dataDir,
    request,
    get: <T = any>(path: string, auth: Auth = {}) => request<T>('GET', path, auth),
    post: <T = any>(path: string, body?: unknown, auth: Auth = {}) => request<T>('POST', path, { ...auth, body }),
    patch: <T = any>(path: string, body?: unknown, auth: Auth = {}) => request<T>('PATCH', path, { ...auth, body }),
    put: <T = any>(path: string, body?: unknown, auth: Auth = {}) => request<T>('PUT', path, { ...auth, body }),
    del: <T = any>(path: string, body?: unknown, auth: Auth = {}) => request<T>('DELETE', path, { ...auth, body }),
    user,
    ssh,
    async stop() {
      await ssh?.stop()
      server.stop(true)
      await closeDatabase(deps.db)
      // PostgreSQL drops it while the next test starts (one a killed run leaves behind is dropped
      // by the next: test-database.ts).
      dropInBackground(database)
      rmSync(dataDir, { recursive: true, force: true })
      // The index files kept for the next change (bun test runs no exit hook, where a server removes them).
      releaseKeptIndexes()
    },
  }
}

export type TestServer = Awaited<ReturnType<typeof startTestServer>>
export type { AppDeps }

/** Websites the one URL validator refuses, for repositories, organisations and users alike. */
export const BAD_WEBSITES = ['javascript:alert(1)', 'data:text/html,<b>x</b>', 'ftp://example.com/', 'not a url', 'http://']

/**
 * A team of organisation `org` over all its repositories, at `permission` with per-unit modes
 * `units` (Gitea's units_map, e.g. `{ 'repo.code': 'read', 'repo.issues': 'none' }`), made by
 * `owner` (an owner of the organisation) with `members`: for tests of what each unit lets a member see.
 */
export async function unitTeam(s: TestServer, owner: TestUser, org: string, name: string, units: Record<string, string>, members: TestUser[], permission = 'read'): Promise<number> {
  const token = { token: owner.token }
  const made = await s.post(`/orgs/${org}/teams`, { name, permission, includes_all_repositories: true, units_map: units }, token)
  if (made.status !== 201) throw new Error(`the team ${name} of ${org} was not made: ${made.status} ${made.text}`)
  for (const member of members) {
    const added = await s.put(`/teams/${made.body.id}/members/${member.name}`, {}, token)
    if (added.status !== 204) throw new Error(`${member.name} was not added to ${name}: ${added.status} ${added.text}`)
  }
  return made.body.id
}
