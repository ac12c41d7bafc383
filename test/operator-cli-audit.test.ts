// runs in one half: sqlite
/**
 * The operator's commands as an operator runs them, against what an audit found: `warren dump`
 * losing owners and repositories named `*.lock` or a linked repositories folder, a restore moving
 * every repository's updated_at, a dump or a database of a newer Warren restored or served, and
 * `warren doctor --fix` beside a server it could not see (PostgreSQL) or a second server's start.
 * The `warren` processes run on SQLite in data folders of their own, and on PostgreSQL where the
 * test says so, whatever the half.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { dump, restore } from '../src/ops/dump'
import { readTar, TarWriter } from '../src/ops/tar'
import { repoPath } from '../src/git/run'
import { besideServers, releaseServeMark, runningServer, takeServeMark } from '../src/ops/serve-mark'
import { gitOk, oneCommitRepo, remoteUrl } from './git-fixture'
import { apiCall, basic, rootAuth, rootEnv, runCli, servedOnPostgres, SOURCES, startServe, tempDirs } from './process-helpers'

const temp = tempDirs()
afterAll(temp.cleanup)
const cli = (dataDir: string, ...args: string[]) => runCli(SOURCES, dataDir, args)

/** The paths a dump holds. */
function pathsOf(archive: string): string[] {
  const paths: string[] = []
  readTar(archive, (entry, read) => {
    paths.push(entry.path)
    if (entry.type !== 'directory') read(() => {})
  })
  return paths
}

/** A data folder with a database and `repositories/{owner}/{name}.git/HEAD` for each of `repos`. */
function dataWith(root: string, repos: string[], repositories = join(root, 'data', 'repositories')) {
  const data = join(root, 'data')
  mkdirSync(data, { recursive: true })
  new Database(join(data, 'warren.db')).close()
  for (const r of repos) {
    mkdirSync(join(repositories, `${r}.git`, 'refs', 'heads'), { recursive: true })
    writeFileSync(join(repositories, `${r}.git`, 'HEAD'), 'ref: refs/heads/main\n')
  }
  return data
}

describe('warren dump', () => {
  test('owners and repositories named *.lock are dumped; only git’s lock files are left out', async () => {
    const root = temp.make('warren-dump-lock-')
    const data = dataWith(root, ['team.lock/app', 'alice/data.lock'])
    writeFileSync(join(data, 'repositories', 'alice', 'data.lock.git', 'refs', 'heads', 'main.lock'), 'being written')
    const archive = await dump(loadConfig({}, { dataDir: data }), join(root, 'dump.tar'))
    const paths = pathsOf(archive)
    expect(paths).toContain('repositories/team.lock/app.git/HEAD')
    expect(paths).toContain('repositories/alice/data.lock.git/HEAD')
    expect(paths).not.toContain('repositories/alice/data.lock.git/refs/heads/main.lock')
  })

  test('a repositories folder that is a symbolic link is followed; a linked folder inside it fails the dump', async () => {
    const root = temp.make('warren-dump-link-')
    const elsewhere = join(root, 'disk', 'repositories')
    const data = dataWith(root, ['alice/app'], elsewhere)
    symlinkSync(elsewhere, join(data, 'repositories'))
    const archive = await dump(loadConfig({}, { dataDir: data }), join(root, 'dump.tar'))
    expect(pathsOf(archive)).toContain('repositories/alice/app.git/HEAD')

    const root2 = temp.make('warren-dump-link-')
    const data2 = dataWith(root2, ['alice/app'])
    const owner = join(root2, 'disk', 'bob')
    mkdirSync(join(owner, 'x.git'), { recursive: true })
    writeFileSync(join(owner, 'x.git', 'HEAD'), 'ref: refs/heads/main\n')
    symlinkSync(owner, join(data2, 'repositories', 'bob'))
    const failed = await dump(loadConfig({}, { dataDir: data2 }), join(root2, 'dump.tar')).then(() => null, (e: Error) => e.message)
    expect(failed).toContain('is a symbolic link to a folder')
    expect(existsSync(join(root2, 'dump.tar'))).toBe(false)
  })
})

describe('warren restore of a newer Warren’s dump', () => {
  test('a manifest of a newer version, or a database migrated past this version, is refused and leaves the folder empty', async () => {
    const root = temp.make('warren-restore-newer-')
    const db = join(root, 'warren.db')
    const sqlite = new Database(db)
    sqlite.run('create table __drizzle_migrations (id integer primary key, hash text not null, created_at numeric)')
    sqlite.run(`insert into __drizzle_migrations (hash, created_at) values ('from-the-future', ${Date.UTC(2099, 0, 1)})`)
    sqlite.close()
    const archiveOf = (file: string, warren: string) => {
      const w = new TarWriter(join(root, file))
      w.addBytes('warren-dump.json', Buffer.from(JSON.stringify({ format: 1, warren, gitea: '1.23.0', created: '2026-01-01T00:00:00Z' })))
      w.addBytes('warren.db', readFileSync(db), 0o600)
      w.finish()
      return join(root, file)
    }
    const newer = join(root, 'a')
    const byVersion = await restore(loadConfig({}, { dataDir: newer }), archiveOf('newer.tar', '999.0.0')).then(() => null, (e: Error) => e.message)
    expect(byVersion).toContain('written by Warren 999.0.0, newer than this one')
    expect(readdirSync(newer)).toEqual([])
    const ahead = join(root, 'b')
    const byHistory = await restore(loadConfig({}, { dataDir: ahead }), archiveOf('ahead.tar', '0.0.1')).then(() => null, (e: Error) => e.message)
    expect(byHistory).toContain('migrated by a newer Warren')
    expect(readdirSync(ahead)).toEqual([])
  })
})

describe('warren serve and doctor on data a server holds', () => {
  test('two servers started at once on one SQLite folder: one serves, its mark stays until it stops', async () => {
    const data = temp.make('warren-two-')
    // The database made first: both starts run side by side from the first step. A mark a crashed
    // server left (a process no longer alive): both find it stale at once, yet one serves.
    expect((await cli(data, 'admin', 'user', 'list')).code).toBe(0)
    writeFileSync(join(data, 'warren.pid'), '999999\n')
    const started = await Promise.allSettled([startServe(SOURCES, data), startServe(SOURCES, data)])
    const serving = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
    try {
      expect(serving.length).toBe(1)
      expect(Number(readFileSync(join(data, 'warren.pid'), 'utf8'))).toBe(serving[0]!.proc.pid)
    } finally {
      for (const s of serving) await s.stop()
    }
    expect(existsSync(join(data, 'warren.pid'))).toBe(false)
  }, 240_000)

  test('the folder is held by a lock the kernel frees: a process that leaves never removes the holder\'s mark; a crashed holder\'s mark stops nobody', async () => {
    const data = temp.make('warren-mark-')
    const holderCode = `const { takeServeMark } = await import(${JSON.stringify(join(import.meta.dir, '../src/ops/serve-mark.ts'))}); if (takeServeMark(${JSON.stringify(data)}) !== undefined) process.exit(3); await Bun.sleep(60_000)`
    const other = Bun.spawn([process.execPath, '-e', holderCode], { stdout: 'ignore', stderr: 'inherit' })
    try {
      for (let i = 0; i < 400 && !existsSync(join(data, 'warren.pid')); i++) await Bun.sleep(25)
      expect(takeServeMark(data)).toBe(other.pid)
      expect(runningServer(data)).toBe(other.pid)
      releaseServeMark(data)
      expect(readFileSync(join(data, 'warren.pid'), 'utf8')).toBe(`${other.pid}\n`)
      // Killed: its mark stays behind, its lock goes with it.
      other.kill('SIGKILL')
      await other.exited
      expect(readFileSync(join(data, 'warren.pid'), 'utf8')).toBe(`${other.pid}\n`)
      expect(runningServer(data)).toBeUndefined()
      expect(takeServeMark(data)).toBeUndefined()
      expect(readFileSync(join(data, 'warren.pid'), 'utf8')).toBe(`${process.pid}\n`)
      releaseServeMark(data)
      expect(existsSync(join(data, 'warren.pid'))).toBe(false)
    } finally {
      other.kill('SIGKILL')
    }
  })

  test('doctor --fix on SQLite holds the folder while it repairs: a server starting then is refused; after, one starts', async () => {
    const data = temp.make('warren-doctor-hold-')
    const tryFromAnother = async () => {
      const code = `const { takeServeMark } = await import(${JSON.stringify(join(import.meta.dir, '../src/ops/serve-mark.ts'))}); console.log(String(takeServeMark(${JSON.stringify(data)})))`
      const child = Bun.spawn([process.execPath, '-e', code], { stdout: 'pipe', stderr: 'inherit' })
      return (await new Response(child.stdout).text()).trim()
    }
    const deps = { config: { dataDir: data, databaseUrl: undefined } } as unknown as Parameters<typeof besideServers>[0]
    expect(await besideServers(deps, async (running) => [running, await tryFromAnother()])).toEqual([undefined, String(process.pid)])
    expect(await tryFromAnother()).toBe('undefined')
  })

  test('a database migrated by a newer Warren is not served', async () => {
    const data = temp.make('warren-newer-')
    expect((await cli(data, 'admin', 'user', 'list')).code).toBe(0)
    const sqlite = new Database(join(data, 'warren.db'))
    sqlite.run(`insert into __drizzle_migrations (hash, created_at) values ('from-the-future', ${Date.UTC(2099, 0, 1)})`)
    sqlite.close()
    const served = await cli(data, 'serve')
    expect(served.code).toBe(1)
    expect(served.stderr + served.stdout).toContain('migrated by a newer Warren')
  }, 120_000)

  test('a restore leaves every repository’s updated_at; doctor --fix then finds nothing to bring in line', async () => {
    const data = temp.make('warren-restore-')
    const server = await startServe(SOURCES, data, rootEnv)
    const archive = join(temp.make('warren-dump-'), 'site.tar')
    try {
      expect((await apiCall(server, rootAuth, 'POST', '/user/repos', { name: 'kept' })).status).toBe(201)
      const work = await oneCommitRepo()
      await gitOk(work, 'push', '-q', remoteUrl(server.url, 'root/kept.git', 'root', rootEnv.WARREN_ADMIN_PASSWORD), 'main')
    } finally {
      await server.stop()
    }
    // An old repository: its last change long before the restore.
    const source = new Database(join(data, 'warren.db'))
    source.run('update repositories set updated_unix = 1000000')
    source.close()
    expect((await cli(data, 'dump', '--file', archive)).code).toBe(0)
    const target = join(temp.make('warren-restored-'), 'data')
    expect((await cli(target, 'restore', '--file', archive)).code).toBe(0)
    const fixed = await cli(target, 'doctor', '--fix')
    expect(fixed.stdout).not.toContain('brought')
    const restored = new Database(join(target, 'warren.db'))
    expect(restored.query('select updated_unix as at from repositories').all()).toEqual([{ at: 1000000 }])
    restored.close()
  }, 240_000)

  test('PostgreSQL: doctor --fix sees the running server and leaves its repository being created', async () => {
    const pg = await servedOnPostgres('warren_doctor_live', 1)
    try {
      const server = pg.servers[0]!
      expect((await apiCall(server, rootAuth, 'POST', '/user/repos', { name: 'migrating' })).status).toBe(201)
      const sql = new Bun.SQL(pg.database.url)
      await sql.unsafe(`update repositories set status = 'creating' where name = 'migrating'`)
      const folder = repoPath(pg.data, 'root', 'migrating')
      expect(existsSync(folder)).toBe(true)
      const fixed = await runCli(SOURCES, pg.data, ['doctor', '--fix'], { env: { WARREN_DATABASE_URL: pg.database.url } })
      expect(fixed.stdout).toContain('a server runs on this data folder')
      expect(fixed.stdout).not.toContain('fixed: a server runs')
      expect(fixed.stdout).not.toContain('removed 1 unfinished repositories')
      expect(existsSync(folder)).toBe(true)
      expect(await sql.unsafe(`select status from repositories where name = 'migrating'`)).toEqual([{ status: 'creating' }])
      await sql.close()
      expect((await fetch(`${server.url}/api/v1/version`, { headers: { authorization: basic('root', rootEnv.WARREN_ADMIN_PASSWORD) } })).status).toBe(200)
    } finally {
      await pg.stop()
    }
  }, 240_000)
})
