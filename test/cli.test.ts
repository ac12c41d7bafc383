// runs in one half: sqlite
import { afterAll, describe, expect, test } from 'bun:test'
import { Database } from 'bun:sqlite'
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { tmpdir } from 'node:os'
import { repoPath } from '../src/git/run'
import { gitOk, oneCommitRepo, refsOf, remoteUrl } from './git-fixture'
import { basic, runCli, SOURCES, startServe, tempDirs } from './process-helpers'

const temp = tempDirs()
afterAll(temp.cleanup)
const tempData = () => temp.make()
const cli = (dataDir: string, ...args: string[]) => runCli(SOURCES, dataDir, args)
const serve = (dataDir: string, extra: Record<string, string> = {}) => startServe(SOURCES, dataDir, extra)

describe('warren admin user create', () => {
  test('creates a user without a running server; errors exit 1 with a clear message', async () => {
    const data = tempData()
    const ok = await cli(data, 'admin', 'user', 'create', '--username', 'boss', '--password', 'pw-boss-secret', '--email', 'boss@example.com', '--admin')
    expect(ok.code).toBe(0)
    expect(ok.stdout).toContain("'boss'")
    expect(ok.stdout).toContain('administrator')

    const pw = 'long-enough'
    const taken = await cli(data, 'admin', 'user', 'create', '--username', 'BOSS', '--password', pw, '--email', 'other@example.com')
    expect(taken.code).toBe(1)
    expect(taken.stderr).toContain('already exists')
    const takenEmail = await cli(data, 'admin', 'user', 'create', '--username', 'other', '--password', pw, '--email', 'Boss@example.com')
    expect(takenEmail.code).toBe(1)
    expect(takenEmail.stderr).toContain('e-mail already in use')
    const badEmail = await cli(data, 'admin', 'user', 'create', '--username', 'other', '--password', pw, '--email', 'nope')
    expect(badEmail.code).toBe(1)
    expect(badEmail.stderr).toContain('Email')
    const badName = await cli(data, 'admin', 'user', 'create', '--username', 'bad name', '--password', pw, '--email', 'o@example.com')
    expect(badName.code).toBe(1)
    expect(badName.stderr).toContain('UserName')
    const short = await cli(data, 'admin', 'user', 'create', '--username', 'other', '--password', 'seven77', '--email', 'o@example.com')
    expect(short.code).toBe(1)
    expect(short.stderr).toContain('password must be at least 8 characters')
    const missing = await cli(data, 'admin', 'user', 'create', '--username', 'other', '--email', 'o@example.com')
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('--password is required')
    const unknownOption = await cli(data, 'admin', 'user', 'create', '--username', 'other', '--pasword', pw, '--email', 'o@example.com')
    expect(unknownOption.code).toBe(1)
    expect(unknownOption.stderr).toContain('pasword')
    const unknownCommand = await cli(data, 'admin', 'frobnicate')
    expect(unknownCommand.code).toBe(1)
    expect(unknownCommand.stderr).toContain('unknown command')

    // nothing but boss was created: a server on that folder has exactly one user
    const server = await serve(data)
    try {
      const res = await fetch(`${server.url}/api/v1/admin/users`, { headers: { authorization: basic('boss', 'pw-boss-secret') } })
      expect(res.status).toBe(200)
      const list = (await res.json()) as any[]
      expect(list.map((u) => u.login)).toEqual(['boss'])
      expect(list[0].is_admin).toBe(true)
    } finally {
      await server.stop()
    }
  }, 240_000)

  test('WARREN_MIN_PASSWORD_LENGTH sets the shortest password', async () => {
    const data = tempData()
    const run = (password: string, min: string) =>
      runCli(SOURCES, data, ['admin', 'user', 'create', '--username', 'u' + password.length, '--password', password, '--email', `u${password.length}@example.com`], { env: { WARREN_MIN_PASSWORD_LENGTH: min } })
    expect((await run('abc', '3')).code).toBe(0)
    const refused = await run('abcdefghijk', '12')
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('at least 12 characters')
  })
})

describe('warren admin user list, change-password, delete', () => {
  test('list shows users (and --admin only admins); change-password sets a password the API then accepts; delete removes a user', async () => {
    const data = tempData()
    for (const [name, admin] of [['root', true], ['bob', false], ['carol', false]] as const) {
      const args = ['admin', 'user', 'create', '--username', name, '--password', `${name}-password`, '--email', `${name}@example.com`]
      expect((await cli(data, ...args, ...(admin ? ['--admin'] : []))).code).toBe(0)
    }
    const list = await cli(data, 'admin', 'user', 'list')
    expect(list.code).toBe(0)
    const lines = list.stdout.trim().split('\n')
    expect(lines[0]!.split(/\s+/)).toEqual(['ID', 'Username', 'Email', 'IsActive', 'IsAdmin'])
    expect(lines.slice(1).map((l) => l.split(/\s+/))).toEqual([
      ['1', 'root', 'root@example.com', 'true', 'true'],
      ['2', 'bob', 'bob@example.com', 'true', 'false'],
      ['3', 'carol', 'carol@example.com', 'true', 'false'],
    ])
    const admins = await cli(data, 'admin', 'user', 'list', '--admin')
    expect(admins.stdout.trim().split('\n').slice(1).map((l) => l.split(/\s+/)[1])).toEqual(['root'])

    expect((await cli(data, 'admin', 'user', 'change-password', '--username', 'bob', '--password', 'short')).stderr).toContain('at least 8')
    const changed = await cli(data, 'admin', 'user', 'change-password', '--username', 'bob', '--password', 'bob-new-password')
    expect(changed.code).toBe(0)
    const unknown = await cli(data, 'admin', 'user', 'change-password', '--username', 'nobody', '--password', 'whatever-long')
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('user does not exist')

    const server = await serve(data)
    try {
      const as = (name: string, password: string) => fetch(`${server.url}/api/v1/user`, { headers: { authorization: basic(name, password) } }).then((r) => r.status)
      expect(await as('bob', 'bob-new-password')).toBe(200)
      expect(await as('bob', 'bob-password')).toBe(401)
      // carol owns a repository: deleting her is refused until it is gone
      const repo = await fetch(`${server.url}/api/v1/user/repos`, {
        method: 'POST',
        headers: { authorization: basic('carol', 'carol-password'), 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'keep' }),
      })
      expect(repo.status).toBe(201)
      const refused = await cli(data, 'admin', 'user', 'delete', '--username', 'carol')
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain('owns repositories')
      // root is the only site administrator: never deleted
      const last = await cli(data, 'admin', 'user', 'delete', '--username', 'root')
      expect(last.code).toBe(1)
      expect(last.stderr).toContain('user is the last site administrator')
      // while the server runs
      const deleted = await cli(data, 'admin', 'user', 'delete', '--username', 'bob')
      expect(deleted.code).toBe(0)
      expect(await as('bob', 'bob-new-password')).toBe(401)
      expect((await fetch(`${server.url}/api/v1/users/bob`)).status).toBe(404)
    } finally {
      await server.stop()
    }
    const after = await cli(data, 'admin', 'user', 'list')
    expect(after.stdout).not.toContain('bob')
    expect(after.stdout).toContain('carol')
  }, 240_000)

  test('--help on every command, and usage on bad options', async () => {
    const data = tempData()
    const commands = [
      ['serve'],
      ['admin', 'user', 'create'],
      ['admin', 'user', 'list'],
      ['admin', 'user', 'change-password'],
      ['admin', 'user', 'delete'],
      ['admin', 'badge', 'create'],
      ['admin', 'badge', 'list'],
      ['admin', 'badge', 'delete'],
      ['doctor'],
      ['dump'],
      ['restore'],
    ]
    for (const command of commands) {
      const r = await cli(data, ...command, '--help')
      expect(r.code).toBe(0)
      expect(r.stdout).toStartWith(`warren ${command.join(' ')}`)
    }
    const top = await cli(data, '--help')
    for (const command of commands) expect(top.stdout).toContain(command.join(' '))
    const bad = await cli(data, 'doctor', '--frobnicate')
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('warren doctor [--fix]')
    // --help reads nothing: the data folder was never created
    expect(existsSync(join(data, 'warren.db'))).toBe(false)
  }, 240_000)
})

describe('warren admin badge create, list, delete', () => {
  test('makes the badges the API gives users (Gitea 1.23 has no API for them), lists and deletes them', async () => {
    const data = tempData()
    const made = await cli(data, 'admin', 'badge', 'create', '--slug', 'helper', '--description', 'Helps a lot', '--image-url', 'https://example.com/h.png')
    expect(made.code).toBe(0)
    expect(made.stdout).toContain("Badge 'helper' has been created")
    expect((await cli(data, 'admin', 'badge', 'create', '--slug', 'plain')).code).toBe(0)
    const taken = await cli(data, 'admin', 'badge', 'create', '--slug', 'helper')
    expect(taken.code).toBe(1)
    expect(taken.stderr).toContain('already exists')
    const bad = await cli(data, 'admin', 'badge', 'create', '--slug', 'no spaces')
    expect(bad.code).toBe(1)
    expect(bad.stderr).toContain('Slug')
    const listed = (await cli(data, 'admin', 'badge', 'list')).stdout.split('\n').filter(Boolean)
    expect(listed[0]).toMatch(/^ID\s+Slug\s+Description\s+ImageURL$/)
    expect(listed.slice(1).map((line) => line.split(/\s+/)[1])).toEqual(['helper', 'plain'])
    expect(listed[1]).toContain('https://example.com/h.png')
    expect((await cli(data, 'admin', 'badge', 'delete', '--slug', 'plain')).code).toBe(0)
    const gone = await cli(data, 'admin', 'badge', 'delete', '--slug', 'plain')
    expect(gone.code).toBe(1)
    expect(gone.stderr).toContain("doesn't exist")
    expect((await cli(data, 'admin', 'badge', 'list')).stdout).not.toContain('plain')
  }, 240_000)
})

describe('warren serve', () => {
  test('creates the WARREN_ADMIN_* admin on first start; the CLI works while it runs', async () => {
    const data = tempData()
    const admin = { WARREN_ADMIN_USER: 'siteadmin', WARREN_ADMIN_PASSWORD: 'pw-site-secret', WARREN_ADMIN_EMAIL: 'site@example.com' }
    const first = await serve(data, admin)
    try {
      const me = await fetch(`${first.url}/api/v1/user`, { headers: { authorization: basic('siteadmin', 'pw-site-secret') } })
      expect(me.status).toBe(200)
      const body = (await me.json()) as any
      expect(body.login).toBe('siteadmin')
      expect(body.is_admin).toBe(true)

      const created = await cli(data, 'admin', 'user', 'create', '--username', 'live', '--password', 'pw-live-secret', '--email', 'live@example.com')
      expect(created.code).toBe(0)
      const live = await fetch(`${first.url}/api/v1/user`, { headers: { authorization: basic('live', 'pw-live-secret') } })
      expect(live.status).toBe(200)
      expect(((await live.json()) as any).is_admin).toBe(false)
    } finally {
      await first.stop()
    }

    // a second start with other WARREN_ADMIN_* values creates nobody: users already exist
    const again = await serve(data, { ...admin, WARREN_ADMIN_USER: 'second', WARREN_ADMIN_EMAIL: 'second@example.com' })
    try {
      expect((await fetch(`${again.url}/api/v1/users/second`)).status).toBe(404)
      expect((await fetch(`${again.url}/api/v1/users/siteadmin`)).status).toBe(200)
    } finally {
      await again.stop()
    }
  }, 240_000)

  test('one log line per request (text or JSON), with the user; git missing is said at start', async () => {
    const data = tempData()
    const server = await serve(data, { WARREN_LOG: 'json', WARREN_ADMIN_USER: 'logger', WARREN_ADMIN_PASSWORD: 'pw-logger-secret', WARREN_ADMIN_EMAIL: 'l@example.com' })
    try {
      await fetch(`${server.url}/api/v1/user`, { headers: { authorization: basic('logger', 'pw-logger-secret') } })
      await fetch(`${server.url}/api/v1/repos/nobody/nothing`)
    } finally {
      expect(await server.stop()).toBe(0)
    }
    const lines = server.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l))
    const requests = lines.filter((l) => l.msg === 'request')
    expect(requests.find((l) => l.path === '/api/v1/user')).toMatchObject({ level: 'info', method: 'GET', status: 200, user: 'logger' })
    expect(requests.find((l) => l.path === '/api/v1/repos/nobody/nothing')).toMatchObject({ status: 404, user: '-' })
    for (const r of requests) expect(typeof r.duration_ms).toBe('number')

    // Started from another folder (as the installed `warren` command is): the web pages render too.
    const text = await startServe(SOURCES, data, { WARREN_LOG: 'text' }, { cwd: tmpdir() })
    await fetch(`${text.url}/api/v1/version`)
    const home = await fetch(`${text.url}/explore/repos`)
    expect(home.status).toBe(200)
    expect(await home.text()).toContain('<title>Explore repositories · Warren</title>')
    await text.stop()
    expect(text.output()).toMatch(/ INFO request method=GET path=\/api\/v1\/version status=200 duration_ms=[\d.]+ user=- /)

    const noGit = await runCli(SOURCES, data, ['serve'], { env: { PATH: '/nonexistent', WARREN_PORT: '0' } })
    expect(noGit.code).toBe(1)
    expect(noGit.stderr).toContain('git is not installed')
    const badLog = await runCli(SOURCES, data, ['serve'], { env: { WARREN_LOG: 'xml' } })
    expect(badLog.code).toBe(1)
    expect(badLog.stderr).toContain('WARREN_LOG must be one of text, json')
  }, 240_000)
})

/** A user, a repository with a pushed branch, and an issue, through the API and git. */
async function seed(url: string, name: string) {
  const auth = { authorization: basic('root', 'root-password'), 'content-type': 'application/json' }
  const post = (path: string, body: unknown) => fetch(`${url}/api/v1${path}`, { method: 'POST', headers: auth, body: JSON.stringify(body) })
  expect((await post('/user/repos', { name })).status).toBe(201)
  const work = await oneCommitRepo()
  await gitOk(work, 'push', '-q', remoteUrl(url, `root/${name}.git`, 'root', 'root-password'), 'main')
  expect((await post(`/repos/root/${name}/issues`, { title: `issue of ${name}` })).status).toBe(201)
  rmSync(work, { recursive: true, force: true })
}

describe('warren doctor', () => {
  test('a healthy folder passes; damage is reported (exit 1) and --fix repairs what it safely can', async () => {
    const data = tempData()
    expect((await cli(data, 'admin', 'user', 'create', '--username', 'root', '--password', 'root-password', '--email', 'r@example.com', '--admin')).code).toBe(0)
    const server = await serve(data)
    try {
      await seed(server.url, 'good')
      await seed(server.url, 'broken')
      // beside a running server: checks pass, and --fix leaves what may be its work alone
      const live = await cli(data, 'doctor')
      expect(live.code).toBe(0)
      expect(live.stdout).toContain('2 repositories checked, no problem found')
      const quarantine = join(repoPath(data, 'root', 'good'), 'objects', 'tmp_objdir-incoming-abc123')
      mkdirSync(quarantine)
      const liveFix = await cli(data, 'doctor', '--fix')
      expect(liveFix.stdout).toContain('a server runs on this data folder')
      expect(existsSync(quarantine)).toBe(true)
    } finally {
      await server.stop()
    }
    const ok = await cli(data, 'doctor')
    expect(ok.stdout).toContain('[ ok ] git')
    expect(ok.stdout).toContain('[ ok ] database')
    expect(ok.stdout).toContain('1 temporary git objects')

    // damage: an object of "broken" is gone, a folder has no repository, a push was cut off
    const broken = repoPath(data, 'root', 'broken')
    const objects = join(broken, 'objects')
    const stored = [
      ...readdirSync(objects).filter((d) => /^[0-9a-f]{2}$/.test(d)).map((d) => join(objects, d)),
      ...readdirSync(join(objects, 'pack')).filter((f) => f.startsWith('pack-')).map((f) => join(objects, 'pack', f)),
    ]
    expect(stored.length).toBeGreaterThan(0)
    for (const path of stored) rmSync(path, { recursive: true })
    mkdirSync(join(data, 'repositories', 'ghost', 'lost.git'), { recursive: true })
    writeFileSync(join(data, 'repositories', 'ghost', 'lost.git', 'HEAD'), 'ref: refs/heads/main\n')
    const sick = await cli(data, 'doctor')
    expect(sick.code).toBe(1)
    expect(sick.stdout).toContain('[FAIL] repository folders')
    expect(sick.stdout).toContain('ghost/lost.git: folder without a repository (unadopted')
    expect(sick.stdout).toContain('[FAIL] repository health')
    expect(sick.stdout).toContain('repositories/root/broken.git')

    const fixed = await cli(data, 'doctor', '--fix')
    expect(fixed.stdout).toContain('fixed: removed 1 temporary git objects')
    // Left where it is (unadopted: an administrator adopts or deletes it), still listed, not a fault.
    expect(existsSync(join(data, 'repositories', 'ghost', 'lost.git', 'HEAD'))).toBe(true)
    expect(fixed.stdout).toContain('ghost/lost.git: folder without a repository (unadopted')
    expect(existsSync(join(repoPath(data, 'root', 'good'), 'objects', 'tmp_objdir-incoming-abc123'))).toBe(false)
    // lost objects cannot be made up: still reported, exit 1
    expect(fixed.code).toBe(1)
    expect(fixed.stdout).toContain('[ ok ] repository folders')
    expect(fixed.stdout).toContain('[FAIL] repository health')

    // An interrupted folder move that cannot be undone (its old place under a file) fails the
    // repair loudly, as it fails the start; its intent is kept for the next try.
    writeFileSync(join(data, 'repositories', 'not-a-folder'), '')
    mkdirSync(join(data, 'repositories', 'root', 'stuck.git'))
    const sqlite = new Database(join(data, 'warren.db'))
    sqlite.run(`insert into folder_moves (from_path, to_path, created_unix) values ('not-a-folder/stuck.git', 'root/stuck.git', 0)`)
    const stuck = await cli(data, 'doctor', '--fix')
    expect(stuck.code).toBe(1)
    expect(stuck.stdout).toContain('[FAIL] repository folders')
    expect(stuck.stdout).toContain('the start-up repair failed: 1 interrupted folder moves could not be undone')
    expect(sqlite.query('select count(*) as n from folder_moves').get()).toEqual({ n: 1 })
    sqlite.close()
  }, 240_000)
})

describe('warren dump and restore', () => {
  test('a dump taken while requests are served restores into an empty folder that serves the same data', async () => {
    const data = tempData()
    expect((await cli(data, 'admin', 'user', 'create', '--username', 'root', '--password', 'root-password', '--email', 'r@example.com', '--admin')).code).toBe(0)
    const server = await serve(data)
    const archive = join(temp.make('warren-dump-'), 'site.tar')
    let before: { repos: any[]; issues: any[]; refs: Record<string, string> }
    try {
      await seed(server.url, 'alpha')
      // attachments (as the releases area keeps them) travel with the dump
      mkdirSync(join(data, 'attachments', 'ab'), { recursive: true })
      writeFileSync(join(data, 'attachments', 'ab', 'abcdef'), 'attached bytes')
      // requests keep coming while the dump runs: issues are filed the whole time
      let filing = true
      let filed = 0
      const writer = (async () => {
        while (filing && filed < 30) {
          const r = await fetch(`${server.url}/api/v1/repos/root/alpha/issues`, {
            method: 'POST',
            headers: { authorization: basic('root', 'root-password'), 'content-type': 'application/json' },
            body: JSON.stringify({ title: `during dump ${filed}` }),
          })
          expect(r.status).toBe(201)
          filed++
        }
      })()
      const dumped = await cli(data, 'dump', '--file', archive)
      filing = false
      await writer
      expect(dumped.code).toBe(0)
      expect(dumped.stdout).toContain(archive)
      expect(filed).toBeGreaterThan(0)
      const get = (path: string) => fetch(`${server.url}/api/v1${path}`, { headers: { authorization: basic('root', 'root-password') } }).then((r) => r.json() as any)
      before = { repos: await get('/user/repos'), issues: await get('/repos/root/alpha/issues?state=all&limit=50'), refs: {} }
      const clone = temp.make('warren-clone-')
      await gitOk(clone, 'clone', '-q', remoteUrl(server.url, 'root/alpha.git', 'root', 'root-password'), 'alpha')
      before.refs = await refsOf(join(clone, 'alpha'))
    } finally {
      await server.stop()
    }

    // refused into a folder that holds anything
    const busy = tempData()
    writeFileSync(join(busy, 'something'), 'x')
    const refused = await cli(busy, 'restore', '--file', archive)
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain('not empty')
    expect(readdirSync(busy)).toEqual(['something'])

    const target = join(tempData(), 'restored')
    const restored = await cli(target, 'restore', '--file', archive)
    expect(restored.code).toBe(0)
    expect(readdirSync(join(target, 'attachments', 'ab'))).toEqual(['abcdef'])
    const again = await serve(target)
    try {
      const get = (path: string) => fetch(`${again.url}/api/v1${path}`, { headers: { authorization: basic('root', 'root-password') } }).then((r) => r.json() as any)
      const repos = await get('/user/repos')
      expect(repos.map((r: any) => [r.full_name, r.empty, r.default_branch])).toEqual(before.repos.map((r: any) => [r.full_name, r.empty, r.default_branch]))
      // the dump is one moment: every issue it holds is one the source had, numbered alike
      const issues = (await get('/repos/root/alpha/issues?state=all&limit=50')) as any[]
      const source = new Map(before.issues.map((i: any) => [i.number, i.title]))
      expect(issues.length).toBeGreaterThan(0)
      for (const i of issues) expect(source.get(i.number)).toBe(i.title)
      const clone = temp.make('warren-clone-')
      await gitOk(clone, 'clone', '-q', remoteUrl(again.url, 'root/alpha.git', 'root', 'root-password'), 'alpha')
      expect(await refsOf(join(clone, 'alpha'))).toEqual(before.refs)
      const doctor = await cli(target, 'doctor')
      expect(doctor.stdout).toContain('1 repositories checked, no problem found')
    } finally {
      await again.stop()
    }
  }, 120_000)
})
