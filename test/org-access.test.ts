/**
 * A whole organisation, walked through: created by an admin for its owner, members added through
 * teams, a membership publicized and concealed, team-owned private repositories, then one table
 * row per (caller, action) saying what each kind of caller may list, read, push and change.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { startTestServer, type Auth, type TestServer, type TestUser } from './helpers'
import { sh } from './git-fixture'

type Caller = 'anonymous' | 'outsider' | 'member' | 'reader' | 'writer' | 'owner' | 'admin'
const CALLERS: Caller[] = ['anonymous', 'outsider', 'member', 'reader', 'writer', 'owner', 'admin']

let s: TestServer
const users = {} as Record<Exclude<Caller, 'anonymous'>, TestUser>
let readersId: number
let writersId: number
let work: string

const auth = (c: Caller): Auth => (c === 'anonymous' ? {} : { token: users[c].token })

/** git as the test's caller: no credential helper, so a refusal is git's own answer. */
async function git(args: string[], cwd: string): Promise<{ code: number; out: string }> {
  const r = await sh(['git', '-c', 'credential.helper=', '-c', 'init.defaultBranch=master', ...args], cwd)
  return { code: r.code, out: r.stdout + r.stderr }
}

/** The repository's smart HTTP URL with the caller's credentials (Basic: name + token). */
function remote(c: Caller, repo: string): string {
  const host = s.url.replace(/^http:\/\//, '')
  const credentials = c === 'anonymous' ? '' : `${users[c].name}:${users[c].token}@`
  return `http://${credentials}${host}/acme/${repo}.git`
}

/** What git made of an answer: ok, or why it was refused. */
function outcome(r: { code: number; out: string }): string {
  if (r.code === 0) return 'ok'
  if (/could not read Username|Authentication failed/.test(r.out)) return 'needs sign-in'
  if (/not found/.test(r.out)) return 'not found'
  if (/error: 403/.test(r.out)) return 'forbidden'
  return r.out
}

/** Clones `acme/secret` as the caller. */
async function cloneAs(c: Caller): Promise<string> {
  return outcome(await git(['clone', '--quiet', remote(c, 'secret'), join(work, `clone-${c}`)], work))
}

/** Pushes a new commit to branch `from-<caller>` of `acme/secret` as the caller. */
async function pushAs(c: Caller): Promise<string> {
  const dir = join(work, 'pusher')
  writeFileSync(join(dir, `${c}.txt`), `${c}\n`)
  await git(['add', '.'], dir)
  await git(['commit', '--quiet', '-m', `commit by ${c}`], dir)
  return outcome(await git(['push', '--quiet', remote(c, 'secret'), `HEAD:refs/heads/from-${c}`], dir))
}

beforeAll(async () => {
  s = await startTestServer()
  work = mkdtempSync(join(tmpdir(), 'warren-org-access-'))
  users.admin = await s.user('sam', { admin: true })
  await s.user('nina') // joins through the 'add team member' rows
  for (const [c, name] of [
    ['owner', 'olga'],
    ['reader', 'rita'],
    ['writer', 'walt'],
    ['member', 'mel'],
    ['outsider', 'otto'],
  ] as const)
    users[c] = await s.user(name)

  // The site admin creates the organisation; olga owns it.
  expect((await s.post('/admin/users/olga/orgs', { username: 'acme' }, auth('admin'))).status).toBe(201)
  // Teams: read and write on chosen repositories; an empty team for a plain member.
  const team = async (name: string, permission: string, extra: object = {}) => {
    const r = await s.post('/orgs/acme/teams', { name, permission, ...extra }, auth('owner'))
    expect(r.status).toBe(201)
    return r.body.id as number
  }
  readersId = await team('readers', 'read')
  writersId = await team('writers', 'write', { can_create_org_repo: true })
  const othersId = await team('others', 'admin')
  for (const [id, c] of [
    [readersId, 'reader'],
    [writersId, 'writer'],
    [othersId, 'member'],
  ] as const)
    expect((await s.put(`/teams/${id}/members/${users[c].name}`, undefined, auth('owner'))).status).toBe(204)

  // Publicize and conceal: rita stays public, walt changes his mind.
  expect((await s.put('/orgs/acme/public_members/rita', undefined, auth('reader'))).status).toBe(204)
  expect((await s.put('/orgs/acme/public_members/walt', undefined, auth('writer'))).status).toBe(204)
  expect((await s.del('/orgs/acme/public_members/walt', undefined, auth('writer'))).status).toBe(204)

  // Team-owned repositories: a private one for readers and writers, a public one for nobody.
  expect((await s.post('/org/acme/repos', { name: 'secret', private: true, auto_init: true }, auth('owner'))).status).toBe(201)
  expect((await s.post('/orgs/acme/repos', { name: 'open' }, auth('owner'))).status).toBe(201)
  for (const id of [readersId, writersId]) expect((await s.put(`/teams/${id}/repos/acme/secret`, undefined, auth('owner'))).status).toBe(204)

  // A working copy for the push rows.
  expect((await git(['clone', '--quiet', remote('owner', 'secret'), join(work, 'pusher')], work)).code).toBe(0)
})
afterAll(() => {
  s.stop()
  rmSync(work, { recursive: true, force: true })
})

const names = (body: any) => (Array.isArray(body) ? body.map((x: any) => x.name ?? x.login).sort() : body)
const perms = (body: any) => (body?.permissions ? Object.entries(body.permissions).filter(([, v]) => v).map(([k]) => k).sort().join('+') : 'none')

/** Each action, and what every caller gets from it (in CALLERS order). */
const ACTIONS: { action: string; run: (c: Caller) => Promise<unknown>; expected: unknown[] }[] = [
  {
    action: 'list org repos',
    run: async (c) => names((await s.get('/orgs/acme/repos', auth(c))).body),
    expected: [['open'], ['open'], ['open'], ['open', 'secret'], ['open', 'secret'], ['open', 'secret'], ['open', 'secret']],
  },
  {
    action: 'read private repo',
    run: async (c) => (await s.get('/repos/acme/secret', auth(c))).status,
    expected: [404, 404, 404, 200, 200, 200, 200],
  },
  {
    action: 'permissions on private repo',
    run: async (c) => perms((await s.get('/repos/acme/secret', auth(c))).body),
    expected: ['none', 'none', 'none', 'pull', 'pull+push', 'admin+pull+push', 'admin+pull+push'],
  },
  {
    action: 'permissions on public repo',
    run: async (c) => perms((await s.get('/repos/acme/open', auth(c))).body),
    expected: ['pull', 'pull', 'pull', 'pull', 'pull', 'admin+pull+push', 'admin+pull+push'],
  },
  {
    action: 'list members',
    run: async (c) => names((await s.get('/orgs/acme/members', auth(c))).body),
    expected: [['rita'], ['rita'], ...Array(5).fill(['mel', 'olga', 'rita', 'walt'])],
  },
  {
    action: 'check concealed member',
    run: async (c) => (await s.get('/orgs/acme/members/walt', auth(c))).status,
    expected: [401, 302, 204, 204, 204, 204, 204],
  },
  {
    action: 'list teams',
    run: async (c) => (await s.get('/orgs/acme/teams', auth(c))).status,
    expected: [401, 403, 200, 200, 200, 200, 200],
  },
  {
    action: 'read a team',
    run: async (c) => (await s.get(`/teams/${readersId}`, auth(c))).status,
    expected: [401, 404, 200, 200, 200, 200, 200],
  },
  {
    action: 'list team repos',
    run: async (c) => {
      const r = await s.get(`/teams/${readersId}/repos`, auth(c))
      return r.status === 200 ? names(r.body) : r.status
    },
    expected: [401, 404, [], ['secret'], ['secret'], ['secret'], ['secret']],
  },
  {
    action: 'edit org',
    run: async (c) => (await s.patch('/orgs/acme', { description: `by ${c}` }, auth(c))).status,
    expected: [401, 403, 403, 403, 403, 200, 200],
  },
  {
    action: 'create team',
    run: async (c) => (await s.post('/orgs/acme/teams', { name: `t-${c}` }, auth(c))).status,
    expected: [401, 403, 403, 403, 403, 201, 201],
  },
  {
    action: 'edit a team',
    run: async (c) => (await s.patch(`/teams/${writersId}`, { description: `by ${c}` }, auth(c))).status,
    expected: [401, 404, 404, 404, 404, 200, 200],
  },
  {
    action: 'add team member',
    run: async (c) => (await s.put(`/teams/${readersId}/members/nina`, undefined, auth(c))).status,
    expected: [401, 404, 404, 404, 404, 204, 204],
  },
  {
    action: 'create org repo',
    run: async (c) => (await s.post('/orgs/acme/repos', { name: `r-${c}`, private: true }, auth(c))).status,
    expected: [401, 403, 403, 403, 201, 201, 201],
  },
  {
    action: 'give a team the public repo',
    run: async (c) => (await s.put(`/teams/${writersId}/repos/acme/open`, undefined, auth(c))).status,
    expected: [401, 404, 403, 403, 403, 204, 204],
  },
  {
    action: 'delete org (still owns repos)',
    run: async (c) => (await s.del('/orgs/acme', undefined, auth(c))).status,
    expected: [401, 403, 403, 403, 403, 422, 422],
  },
  {
    action: 'git clone private repo',
    run: cloneAs,
    expected: ['needs sign-in', 'not found', 'not found', 'ok', 'ok', 'ok', 'ok'],
  },
  {
    action: 'git push private repo',
    run: pushAs,
    expected: ['needs sign-in', 'not found', 'not found', 'forbidden', 'ok', 'ok', 'ok'],
  },
]

describe('organisation access table', () => {
  const rows = ACTIONS.flatMap((a) => CALLERS.map((caller, i) => ({ ...a, caller, want: a.expected[i] })))
  test.each(rows.map((r) => [r.action, r.caller, r] as const))('%s as %s', async (_action, caller, row) => {
    expect(await row.run(caller)).toEqual(row.want)
  })

  test('the pushes that succeeded are on the server, the refused ones are not', async () => {
    const branches = await git(['ls-remote', '--heads', remote('owner', 'secret')], work)
    expect(branches.code).toBe(0)
    for (const c of ['writer', 'owner', 'admin']) expect(branches.out).toContain(`refs/heads/from-${c}`)
    for (const c of ['anonymous', 'outsider', 'member', 'reader']) expect(branches.out).not.toContain(`refs/heads/from-${c}`)
  })

  test('a writer who created a repository administers it; the org still refuses deletion', async () => {
    const r = await s.get('/repos/acme/r-writer', auth('writer'))
    expect(r.status).toBe(200)
    expect(r.body.permissions).toEqual({ admin: true, push: true, pull: true })
    expect((await s.get('/repos/acme/r-writer', auth('reader'))).status).toBe(404)
    expect((await s.get('/orgs/acme', auth('anonymous'))).body.description).toBe('by admin')
  })
})

describe('a team with includes_all_repositories', () => {
  test('covers every repository of the organisation over git, also ones created later, until switched off', async () => {
    const r = await s.post('/orgs/acme/teams', { name: 'all-writers', permission: 'write', includes_all_repositories: true }, auth('owner'))
    expect(r.status).toBe(201)
    expect(r.body.includes_all_repositories).toBe(true)
    const allId = r.body.id as number
    const nell = await s.user('nell')
    const token = nell.token
    expect((await s.put(`/teams/${allId}/members/nell`, undefined, auth('owner'))).status).toBe(204)
    const host = s.url.replace(/^http:\/\//, '')
    const url = (repo: string) => `http://nell:${token}@${host}/acme/${repo}.git`

    // Listed, readable and writable without being added to the team one by one.
    expect((await s.get('/repos/acme/secret', { token })).body.permissions).toEqual({ admin: false, push: true, pull: true })
    expect((await s.get(`/teams/${allId}/repos`, { token })).body.map((x: any) => x.name)).toContain('secret')
    expect((await s.post('/orgs/acme/repos', { name: 'later', private: true, auto_init: true }, auth('owner'))).status).toBe(201)
    for (const repo of ['secret', 'later']) {
      const dir = join(work, `all-${repo}`)
      expect(outcome(await git(['clone', '--quiet', url(repo), dir], work))).toBe('ok')
      writeFileSync(join(dir, 'nell.txt'), 'nell\n')
      await git(['add', '.'], dir)
      await git(['commit', '--quiet', '-m', 'by nell'], dir)
      expect(outcome(await git(['push', '--quiet', url(repo), 'HEAD:refs/heads/from-nell'], dir))).toBe('ok')
    }

    // Switched off: the team covers only what it was given (nothing), so the private repositories vanish.
    expect((await s.patch(`/teams/${allId}`, { includes_all_repositories: false }, auth('owner'))).body.includes_all_repositories).toBe(false)
    expect((await s.get('/repos/acme/later', { token })).status).toBe(404)
    expect(outcome(await git(['ls-remote', url('later')], work))).toBe('not found')
  })
})
