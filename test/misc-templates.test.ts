/**
 * Gitea 1.23's template, license, NodeInfo and admin list routes, through gitea-js: the .gitignore,
 * license and label templates (the texts auto_init writes), a repository's licenses detected in its
 * default branch, NodeInfo, every user's e-mail addresses, and the background jobs (`/admin/cron`).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { giteaApi, type Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, tempDir } from './git-fixture'
import { missingGiteaFields } from './gitea-types'
import { GITIGNORE_TEMPLATES, LICENSE_TEMPLATES } from '../src/modules/repos/templates'
import { startMirrorScheduler } from '../src/jobs/mirror-scheduler'
import { startPullChecker } from '../src/jobs/pull-checker'
import { startRepositorySweep } from '../src/jobs/repository-sweep'

type Client = Api<unknown>
let s: TestServer
let root: TestUser
let alice: TestUser
let bob: TestUser
let asAlice: Client
let asRoot: Client
let anonymous: Client
const dirs: string[] = []
const errorShape = () => ({ message: expect.any(String), url: `${s.config.baseUrl}api/swagger` })

/** Fails with the answer's status and body (gitea-js throws the Response). */
async function refused(call: Promise<unknown>): Promise<{ status: number; body: unknown }> {
  try {
    await call
  } catch (res) {
    const r = res as Response & { error?: unknown }
    return { status: r.status, body: r.error }
  }
  throw new Error('the call succeeded')
}

/** Pushes `files` as one commit on main of alice/`repo` (a new repository). */
async function pushRepo(repo: string, files: Record<string, string>, opts: { private?: boolean } = {}) {
  await asAlice.user.createCurrentUserRepo({ name: repo, default_branch: 'main', private: opts.private })
  const dir = tempDir()
  dirs.push(dir)
  await gitOk(dir, 'init', '-q', '--initial-branch=main')
  for (const [p, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true })
    writeFileSync(join(dir, p), text)
  }
  await gitOk(dir, 'add', '-A')
  await gitOk(dir, 'commit', '-q', '-m', 'files')
  await gitOk(dir, 'push', '-q', remoteUrl(s.url, `alice/${repo}.git`, 'alice', alice.token), 'main')
}

beforeAll(async () => {
  s = await startTestServer()
  root = await s.user('root', { admin: true })
  alice = await s.user('alice', { email: 'alice@example.com' })
  bob = await s.user('bob', { email: 'Bob.Builder@example.org' })
  asAlice = giteaApi(s.url, { token: alice.token })
  asRoot = giteaApi(s.url, { token: root.token })
  anonymous = giteaApi(s.url, {})
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('gitignore templates', () => {
  test('the list names the templates auto_init knows, and each is served by any case of its name', async () => {
    const names = (await anonymous.gitignore.listGitignoresTemplates()).data
    expect(names).toContain('Go')
    expect(names).toContain('Node')
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b, 'en')))
    expect(names.length).toBe(Object.keys(GITIGNORE_TEMPLATES).length)
    const go = (await anonymous.gitignore.getGitignoreTemplateInfo('go')).data
    expect(go).toEqual({ name: 'Go', source: GITIGNORE_TEMPLATES.Go! })
    expect(missingGiteaFields('GitignoreTemplateInfo', go)).toEqual([])
  })

  test("the text served is the one a new repository's .gitignore holds", async () => {
    const repo = (await asAlice.user.createCurrentUserRepo({ name: 'ignored', auto_init: true, gitignores: 'Go' })).data
    const raw = await fetch(`${s.url}/api/v1/repos/alice/${repo.name}/raw/.gitignore`, { headers: { authorization: `token ${alice.token}` } })
    expect(raw.status).toBe(200)
    const text = await raw.text()
    expect(text.startsWith('# ---> Go\n')).toBe(true)
    const served = (await anonymous.gitignore.getGitignoreTemplateInfo('Go')).data
    expect(text).toContain(served.source!.trim())
  })

  test('an unknown name is a 404 in the API shape', async () => {
    const r = await refused(anonymous.gitignore.getGitignoreTemplateInfo('NoSuchLanguage'))
    expect(r).toEqual({ status: 404, body: errorShape() })
  })
})

describe('license templates', () => {
  test('the list has each license with its URL; one license has its text', async () => {
    const list = (await anonymous.licenses.listLicenseTemplates()).data
    expect(list.map((l) => l.key)).toEqual(Object.keys(LICENSE_TEMPLATES).sort((a, b) => a.localeCompare(b, 'en')))
    const mit = list.find((l) => l.key === 'MIT')!
    expect(mit).toEqual({ key: 'MIT', name: 'MIT', url: `${s.config.baseUrl}api/v1/licenses/MIT` })
    expect(missingGiteaFields('LicensesTemplateListEntry', mit)).toEqual([])
    const info = (await anonymous.licenses.getLicenseTemplateInfo('mit')).data
    expect(info).toEqual({ key: 'MIT', name: 'MIT', url: mit.url!, body: LICENSE_TEMPLATES.MIT!, implementation: '' })
    expect(info.body).toContain('Permission is hereby granted')
    expect(missingGiteaFields('LicenseTemplateInfo', info)).toEqual([])
  })

  test('an unknown license is a 404 in the API shape', async () => {
    expect(await refused(anonymous.licenses.getLicenseTemplateInfo('WTFPL-9'))).toEqual({ status: 404, body: errorShape() })
  })
})

describe('label templates', () => {
  test("Gitea's two label sets, their labels with colours and exclusivity", async () => {
    expect((await anonymous.label.listLabelTemplates()).data).toEqual(['Advanced', 'Default'])
    const basic = (await anonymous.label.getLabelTemplateInfo('default')).data
    expect(basic).toHaveLength(7)
    expect(basic[0]).toEqual({ name: 'bug', color: 'ee0701', description: 'Something is not working', exclusive: false })
    expect(missingGiteaFields('LabelTemplate', basic[0]!)).toEqual([])
    const advanced = (await anonymous.label.getLabelTemplateInfo('Advanced')).data
    expect(advanced.find((l) => l.name === 'Priority/High')).toEqual({ name: 'Priority/High', color: 'd32f2f', description: 'The priority is high', exclusive: true })
    expect(advanced.find((l) => l.name === 'Kind/Bug')!.exclusive).toBe(false)
  })

  test('an unknown set is a 404 in the API shape', async () => {
    expect(await refused(anonymous.label.getLabelTemplateInfo('Fancy'))).toEqual({ status: 404, body: errorShape() })
  })

  test("a new repository starts with the set its issue_labels names; an unknown set is a 422 and makes nothing", async () => {
    await asAlice.user.createCurrentUserRepo({ name: 'labelled', issue_labels: 'advanced' })
    const made = (await asAlice.repos.issueListLabels('alice', 'labelled', { limit: 50 })).data
    const served = (await anonymous.label.getLabelTemplateInfo('Advanced')).data
    expect(made.map((l) => [l.name, l.color, l.description]).sort()).toEqual(served.map((l) => [l.name, l.color, l.description]).sort())
    const r = await refused(asAlice.user.createCurrentUserRepo({ name: 'unlabelled', issue_labels: 'Fancy' }))
    expect(r.status).toBe(422)
    expect((await refused(asAlice.repos.repoGet('alice', 'unlabelled'))).status).toBe(404)
  })
})

describe("a repository's licenses", () => {
  test('the license auto_init wrote, filled in with the year and owner, is found', async () => {
    await asAlice.user.createCurrentUserRepo({ name: 'mit-repo', auto_init: true, license: 'MIT' })
    expect((await asAlice.repos.repoGetLicenses('alice', 'mit-repo')).data).toEqual(['MIT'])
  })

  test('several license files at the root, reflowed texts, and files that are no license', async () => {
    const reflowed = LICENSE_TEMPLATES['Apache-2.0']!.replace(/\s+/g, ' ').toUpperCase()
    await pushRepo('multi', {
      COPYING: LICENSE_TEMPLATES['GPL-3.0']!,
      'COPYING.LESSER': LICENSE_TEMPLATES['LGPL-3.0']!,
      'LICENSE-APACHE.txt': reflowed,
      'LICENSE.md': 'All rights reserved. You may not use this at all.\n',
      'docs/LICENSE': LICENSE_TEMPLATES.MIT!,
      'README.md': LICENSE_TEMPLATES.ISC!,
    })
    expect((await asAlice.repos.repoGetLicenses('alice', 'multi')).data).toEqual(['Apache-2.0', 'GPL-3.0', 'LGPL-3.0'])
  })

  test('close licenses are told apart: AGPL-3.0 is not taken for GPL-3.0, nor BSD-3-Clause for BSD-2-Clause', async () => {
    await pushRepo('agpl', { LICENSE: LICENSE_TEMPLATES['AGPL-3.0']!, 'LICENCE.BSD': LICENSE_TEMPLATES['BSD-3-Clause']! })
    expect((await asAlice.repos.repoGetLicenses('alice', 'agpl')).data).toEqual(['AGPL-3.0', 'BSD-3-Clause'])
  })

  test('an empty repository and one without a license file have none; a private one is hidden from others', async () => {
    await asAlice.user.createCurrentUserRepo({ name: 'empty' })
    expect((await asAlice.repos.repoGetLicenses('alice', 'empty')).data).toEqual([])
    await pushRepo('secret', { LICENSE: LICENSE_TEMPLATES.MIT! }, { private: true })
    expect((await asAlice.repos.repoGetLicenses('alice', 'secret')).data).toEqual(['MIT'])
    const asBob = giteaApi(s.url, { token: bob.token })
    expect((await refused(asBob.repos.repoGetLicenses('alice', 'secret'))).status).toBe(404)
    expect((await refused(anonymous.repos.repoGetLicenses('alice', 'nothing-here'))).status).toBe(404)
  })
})

describe('nodeinfo', () => {
  test('NodeInfo 2.1: the software, registration, and usage counts', async () => {
    const repo = (await asAlice.user.createCurrentUserRepo({ name: 'talk', auto_init: true })).data
    const issue = (await asAlice.repos.issueCreateIssue('alice', repo.name!, { title: 'one' })).data
    await asAlice.repos.issueCreateComment('alice', repo.name!, issue.number!, { body: 'a reply' })
    const info = (await anonymous.nodeinfo.getNodeInfo()).data
    expect(info.version).toBe('2.1')
    expect(info.software!.name).toBe('warren')
    expect(info.openRegistrations).toBe(s.config.webRegistration)
    // root, alice and bob (the organisations none); one issue, one comment.
    expect(info.usage).toEqual({ users: { total: 3, activeHalfyear: expect.any(Number), activeMonth: expect.any(Number) }, localPosts: 1, localComments: 1 })
    expect(missingGiteaFields('NodeInfo', info)).toEqual([])
  })
})

describe('admin: e-mails', () => {
  test("every user's addresses with the user, paged; the search by address, login or full name", async () => {
    const all = await asRoot.admin.adminGetAllEmails({ limit: 2 })
    expect(all.headers.get('x-total-count')).toBe('3')
    expect(all.data).toHaveLength(2)
    const page2 = (await asRoot.admin.adminGetAllEmails({ limit: 2, page: 2 })).data
    const emails = [...all.data, ...page2]
    expect(emails.map((e) => e.email)).toEqual(['alice@example.com', 'Bob.Builder@example.org', 'root@example.com'])
    expect(emails[1]).toEqual({ email: 'Bob.Builder@example.org', verified: true, primary: true, user_id: bob.user.id, username: 'bob' })
    expect(missingGiteaFields('Email', emails[1]!)).toEqual([])
    expect((await asRoot.admin.adminSearchEmails({ q: 'BUILDER' })).data.map((e) => e.username)).toEqual(['bob'])
    expect((await asRoot.admin.adminSearchEmails({ q: 'ali' })).data.map((e) => e.email)).toEqual(['alice@example.com'])
    expect((await asRoot.admin.adminSearchEmails({ q: '%' })).data).toEqual([])
    expect((await asRoot.admin.adminSearchEmails({ q: '' })).data).toHaveLength(3)
  })

  test('site administrators only: 401 anonymous, 403 others; an over-long keyword is a 422', async () => {
    expect((await refused(anonymous.admin.adminGetAllEmails())).status).toBe(401)
    expect(await refused(asAlice.admin.adminGetAllEmails())).toEqual({ status: 403, body: errorShape() })
    expect((await refused(asAlice.admin.adminSearchEmails({ q: 'a' }))).status).toBe(403)
    expect((await refused(asRoot.admin.adminSearchEmails({ q: 'x'.repeat(300) }))).status).toBe(422)
  })
})

describe('admin: cron', () => {
  test("the process's jobs, their schedules and rounds; one run now; gone once stopped", async () => {
    expect((await asRoot.admin.adminCronList()).data).toEqual([])
    const mirrors = startMirrorScheduler(s.deps, { tickMs: 3_600_000 })
    const pulls = startPullChecker(s.deps, { tickMs: 3_600_000 })
    try {
      const list = (await asRoot.admin.adminCronList()).data
      expect(list.map((c) => c.name)).toEqual(['check_pull_requests', 'update_mirrors'])
      const mirror = list.find((c) => c.name === 'update_mirrors')!
      expect(mirror.schedule).toBe('@every 1h')
      expect(missingGiteaFields('Cron', mirror)).toEqual([])
      expect(Date.parse(mirror.next!)).toBeGreaterThan(Date.now())
      const before = mirror.exec_times!
      expect((await asRoot.admin.adminCronRun('update_mirrors')).status).toBe(204)
      let after = before
      for (let i = 0; i < 200 && after === before; i++) {
        await Bun.sleep(10)
        after = (await asRoot.admin.adminCronList()).data.find((c) => c.name === 'update_mirrors')!.exec_times!
      }
      expect(after).toBe(before + 1)
      const ran = (await asRoot.admin.adminCronList()).data.find((c) => c.name === 'update_mirrors')!
      expect(ran.prev).not.toBe('0001-01-01T00:00:00Z')
      const paged = await asRoot.admin.adminCronList({ limit: 1, page: 2 })
      expect(paged.data.map((c) => c.name)).toEqual(['update_mirrors'])
      expect(paged.headers.get('x-total-count')).toBe('2')
      expect(await refused(asRoot.admin.adminCronRun('no_such_task'))).toEqual({ status: 404, body: errorShape() })
      expect(await refused(asAlice.admin.adminCronRun('update_mirrors'))).toEqual({ status: 403, body: errorShape() })
      expect((await refused(asAlice.admin.adminCronList())).status).toBe(403)
    } finally {
      await mirrors.stop()
      await pulls.stop()
    }
    expect((await asRoot.admin.adminCronList()).data).toEqual([])
    expect((await refused(asRoot.admin.adminCronRun('update_mirrors'))).status).toBe(404)
  })

  test('the sweep after the start runs once, and again on demand (a whole sweep with the same checks), never twice at once', async () => {
    let sweeps = 0
    const sweep = startRepositorySweep(s.deps, { startedAt: Date.now(), delayMs: 0, pauseMs: 300, onDone: () => sweeps++ })
    const listed = async () => (await asRoot.admin.adminCronList()).data.find((c) => c.name === 'repository_sweep')!
    try {
      expect((await listed()).schedule).toBe('@startup')
      for (let i = 0; i < 1000 && sweeps < 1; i++) await Bun.sleep(10)
      expect(sweeps).toBe(1)
      expect((await listed()).exec_times).toBe(1)
      expect((await listed()).next).toBe('0001-01-01T00:00:00Z')
      // Two asks at once (a sweep pauses between its steps): one sweep.
      const asks = await Promise.all([asRoot.admin.adminCronRun('repository_sweep'), asRoot.admin.adminCronRun('repository_sweep')])
      expect(asks.map((r) => r.status)).toEqual([204, 204])
      for (let i = 0; i < 1000 && sweeps < 2; i++) await Bun.sleep(10)
      await Bun.sleep(700)
      expect(sweeps).toBe(2)
      expect((await listed()).exec_times).toBe(2)
    } finally {
      await sweep.stop()
    }
  })
})
