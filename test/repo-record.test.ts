/**
 * The handshake and the Repository record as a Gitea client sees them, through gitea-js: the
 * version clients gate features on, every field of Gitea 1.23's Repository and PullRequest with
 * real values, the settings PATCH keeps, and the global /settings routes.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { giteaApi, type Api } from 'gitea-js'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { missingGiteaFields } from './gitea-types'
import { commitOn, pushedRepo } from './pull-fixtures'
import { gitOk } from './git-fixture'
import { rmSync } from 'node:fs'
import { RepositorySchema } from '../src/modules/repos/model'
import { UserSchema } from '../src/modules/users/model'

type Client = Api<unknown>
let s: TestServer
let alice: TestUser
let bob: TestUser
let asAlice: Client
let asBob: Client
let anon: Client
const dirs: string[] = []

async function ok<T>(call: Promise<{ status: number; data: T; error: unknown }>, status = 200): Promise<T> {
  const r = await call.catch((e) => e)
  if (r.status !== status) console.error(r.status, r.error)
  expect(r.status).toBe(status)
  return r.data
}
async function fails(call: Promise<unknown>, status: number): Promise<any> {
  const r: any = await call.then(
    () => ({ status: 'succeeded' }),
    (e) => e,
  )
  expect(r.status).toBe(status)
  return r.error
}

beforeAll(async () => {
  // Mirrors are migrated from this same server.
  s = await startTestServer({ migrationsAllowLocalNetworks: true })
  alice = await s.user('alice')
  bob = await s.user('bob')
  asAlice = giteaApi(s.url, { token: alice.token })
  asBob = giteaApi(s.url, { token: bob.token })
  anon = giteaApi(s.url, {})
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('version handshake', () => {
  test('a Gitea version modern clients accept, Warren\'s own as build metadata, never read as Forgejo', async () => {
    const { version } = await ok(anon.version.getVersion())
    // hashicorp/go-version and node-semver both read major.minor.patch+metadata.
    const m = /^(\d+)\.(\d+)\.(\d+)\+warren-([0-9A-Za-z.-]+)$/.exec(version!)
    expect(m).not.toBeNull()
    const [major, minor] = [Number(m![1]), Number(m![2])]
    expect(major).toBe(1)
    // The gates up to 1.23 (src/version.ts; each driven by test/client-version-gates.test.ts).
    expect(minor).toBe(23)
    expect(version).not.toContain('gitea-')
  })
})

describe('the Repository record', () => {
  test('carries every field of Gitea 1.23, with the values Warren serves', async () => {
    const created = await ok(asAlice.user.createCurrentUserRepo({ name: 'record', auto_init: true }), 201)
    expect(missingGiteaFields('Repository', created)).toEqual([])
    const repo = await ok(asAlice.repos.repoGet('alice', 'record'))
    expect(missingGiteaFields('Repository', repo)).toEqual([])
    expect(repo).toMatchObject({
      url: `${s.url}/api/v1/repos/alice/record`,
      link: '/alice/record',
      languages_url: `${s.url}/api/v1/repos/alice/record/languages`,
      object_format_name: 'sha1',
      topics: [],
      licenses: [],
      template: false,
      internal: false,
      mirror: false,
      mirror_interval: '',
      mirror_updated: '0001-01-01T00:00:00Z',
      archived_at: '1970-01-01T00:00:00Z',
      original_url: '',
      has_releases: true,
      has_packages: true,
      has_projects: true,
      has_actions: false,
      allow_merge_commits: true,
      allow_fast_forward_only_merge: true,
      allow_rebase_update: true,
      default_merge_style: 'merge',
      default_delete_branch_after_merge: false,
      default_allow_maintainer_edit: false,
      external_tracker: null,
      external_wiki: null,
      repo_transfer: null,
    })
    expect(repo.internal_tracker).toMatchObject({ enable_time_tracker: true })
    // Lists and search give the same record.
    const listed = (await ok(asAlice.user.userCurrentListRepos())).find((r) => r.name === 'record')!
    expect(listed).toEqual(repo)
    const searched = await ok(asAlice.repos.repoSearch({ q: 'record' }))
    expect(searched.data![0]).toEqual(repo)
  })

  test('PATCH keeps every setting it accepts; bad values are 422 and change nothing', async () => {
    await ok(asAlice.user.createCurrentUserRepo({ name: 'settings', auto_init: true }), 201)
    const edited = await ok(
      asAlice.repos.repoEdit('alice', 'settings', {
        allow_fast_forward_only_merge: false,
        allow_rebase_update: false,
        allow_merge_commits: false,
        default_merge_style: 'squash',
        default_delete_branch_after_merge: true,
        default_allow_maintainer_edit: true,
        has_releases: false,
        has_packages: false,
        template: true,
        has_projects: false,
        // Units Warren does not serve stay off, as on a Gitea that disables them.
        has_actions: true,
        has_issues: true,
        external_tracker: { external_tracker_url: 'https://tracker.example.com/', external_tracker_format: 'https://tracker.example.com/{user}/{repo}/{index}', external_tracker_style: 'numeric' },
        has_wiki: true,
        external_wiki: { external_wiki_url: 'https://wiki.example.com/' },
      }),
    )
    const expected = {
      allow_fast_forward_only_merge: false,
      allow_rebase_update: false,
      allow_merge_commits: false,
      default_merge_style: 'squash',
      default_delete_branch_after_merge: true,
      default_allow_maintainer_edit: true,
      has_releases: false,
      template: true,
      has_projects: false,
      has_packages: false,
      has_actions: false,
      has_issues: true,
      internal_tracker: null,
      external_tracker: {
        external_tracker_url: 'https://tracker.example.com/',
        external_tracker_format: 'https://tracker.example.com/{user}/{repo}/{index}',
        external_tracker_style: 'numeric',
        external_tracker_regexp_pattern: '',
      },
      has_wiki: true,
      external_wiki: { external_wiki_url: 'https://wiki.example.com/' },
    }
    expect(edited).toMatchObject(expected)
    const again = await ok(asAlice.repos.repoGet('alice', 'settings'))
    expect(again).toMatchObject(expected)
    // With an external tracker the built-in issues are off: their routes answer 404; so do releases'.
    await fails(asAlice.repos.issueListIssues('alice', 'settings'), 404)
    await fails(asAlice.repos.repoListReleases('alice', 'settings'), 404)

    for (const bad of [
      { default_merge_style: 'octopus' },
      { has_issues: true, external_tracker: { external_tracker_url: 'ftp://tracker.example.com/' } },
      { has_issues: true, external_tracker: { external_tracker_url: 'https://t.example.com/', external_tracker_format: 'https://t.example.com/{index' } },
      { has_wiki: true, external_wiki: { external_wiki_url: 'not a url' } },
      { mirror_interval: '1h' },
    ]) {
      await fails(asAlice.repos.repoEdit('alice', 'settings', bad as never), 422)
      expect(await ok(asAlice.repos.repoGet('alice', 'settings'))).toEqual(again)
    }
    // Only administrators edit.
    await fails(asBob.repos.repoEdit('alice', 'settings', { template: false }), 403)

    // The built-in tracker back: the external one goes; archiving stamps archived_at.
    const back = await ok(asAlice.repos.repoEdit('alice', 'settings', { has_issues: true, has_wiki: false, archived: true }))
    expect(back).toMatchObject({ has_issues: true, external_tracker: null, has_wiki: false, external_wiki: null, archived: true })
    expect(back.internal_tracker).not.toBeNull()
    expect(back.archived_at).not.toBe('1970-01-01T00:00:00Z')
    const unarchived = await ok(asAlice.repos.repoEdit('alice', 'settings', { archived: false }))
    expect(unarchived.archived_at).toBe('1970-01-01T00:00:00Z')

    // Pull requests off: none of their settings shows, as Gitea.
    const noPulls = await ok(asAlice.repos.repoEdit('alice', 'settings', { has_pull_requests: false }))
    expect(noPulls).toMatchObject({ has_pull_requests: false, allow_squash_merge: false, allow_rebase: false, default_merge_style: 'merge' })
  })

  test('a merge style the repository turned off is refused (405) and the branch stays', async () => {
    const { dir } = await pushedRepo(s, alice, 'styles', dirs)
    await commitOn(dir, 'feature', { 'b.txt': 'two\n' }, 'feature', 'main')
    await gitOk(dir, 'push', '-q', 'origin', 'feature')
    await ok(asAlice.repos.repoCreatePullRequest('alice', 'styles', { head: 'feature', base: 'main', title: 'WIP: styles' }), 201)
    await ok(asAlice.repos.repoEdit('alice', 'styles', { allow_squash_merge: false }))
    const before = await gitOk(dir, 'ls-remote', 'origin', 'refs/heads/main')
    await fails(asAlice.repos.repoMergePullRequest('alice', 'styles', 1, { Do: 'squash' }), 405)
    expect(await gitOk(dir, 'ls-remote', 'origin', 'refs/heads/main')).toBe(before)
  })
})

describe('a pull mirror\'s record', () => {
  test('shows its interval, last update and source; PATCH changes the interval within the bounds', async () => {
    await ok(asAlice.user.createCurrentUserRepo({ name: 'upstream', auto_init: true }), 201)
    const cloneAddr = `${s.url}/alice/upstream.git`
    const mirror = await ok(
      asAlice.repos.repoMigrate({ clone_addr: cloneAddr, auth_username: alice.name, auth_password: alice.password, repo_name: 'mirrored', repo_owner: 'alice', mirror: true, mirror_interval: '10m' }),
      201,
    )
    expect(missingGiteaFields('Repository', mirror)).toEqual([])
    expect(mirror).toMatchObject({ mirror: true, mirror_interval: '10m0s', original_url: cloneAddr })
    expect(mirror.mirror_updated).not.toBe('0001-01-01T00:00:00Z')
    const longer = await ok(asAlice.repos.repoEdit('alice', 'mirrored', { mirror_interval: '1h30m' }))
    expect(longer.mirror_interval).toBe('1h30m0s')
    await fails(asAlice.repos.repoEdit('alice', 'mirrored', { mirror_interval: '1m' }), 422)
    expect((await ok(asAlice.repos.repoGet('alice', 'mirrored'))).mirror_interval).toBe('1h30m0s')
  })
})

describe('the Repository record wherever it is served', () => {
  test('holds no key beyond its schema, nor do its owner and parent, alone, in lists and in pull requests', async () => {
    // Its schema lets unknown keys through unchecked (repos/model.ts, for the lists' cost): what
    // the converter makes is all that goes out.
    const repoKeys = Object.keys((RepositorySchema as any).properties)
    const userKeys = Object.keys((UserSchema as any).properties)
    const extra = (record: object, keys: string[]) => Object.keys(record).filter((k) => !keys.includes(k))
    const checked: string[] = []
    const check = (where: string, r: any) => {
      checked.push(where)
      expect([where, extra(r, repoKeys), extra(r.owner, userKeys)]).toEqual([where, [], []])
      if (r.parent) expect([where, extra(r.parent, repoKeys), extra(r.parent.owner, userKeys)]).toEqual([where, [], []])
    }
    const { dir } = await pushedRepo(s, alice, 'keys-record', dirs)
    await commitOn(dir, 'topic', { 'k.txt': 'k\n' }, 'a topic', 'main')
    await gitOk(dir, 'push', '-q', 'origin', 'topic')
    await ok(asAlice.repos.repoCreatePullRequest('alice', 'keys-record', { head: 'topic', base: 'main', title: 'keys' }), 201)
    await ok(asBob.repos.createFork('alice', 'keys-record', {}), 202)
    for (const [who, auth] of [['anonymous', {}], ['alice', { token: alice.token }], ['bob', { token: bob.token }]] as const) {
      check(`${who} GET`, (await s.get('/repos/alice/keys-record', auth)).body)
      check(`${who} GET fork`, (await s.get('/repos/bob/keys-record', auth)).body)
      for (const r of (await s.get('/repos/search?q=keys-record', auth)).body.data) check(`${who} search`, r)
      for (const r of (await s.get('/repos/alice/keys-record/forks', auth)).body) check(`${who} forks`, r)
      for (const pr of (await s.get('/repos/alice/keys-record/pulls', auth)).body) {
        check(`${who} pull base`, pr.base.repo)
        check(`${who} pull head`, pr.head.repo)
      }
    }
    expect(checked.length).toBe(21)
  })
})

describe('the PullRequest record', () => {
  test('carries every field of Gitea 1.23: diff stats from the merge base, draft from the title', async () => {
    const { dir } = await pushedRepo(s, alice, 'pr-record', dirs)
    await commitOn(dir, 'topic', { 'a.txt': 'one\nmore\n', 'c.txt': 'x\ny\nz\n' }, 'two files', 'main')
    await gitOk(dir, 'push', '-q', 'origin', 'topic')
    const pr = await ok(asAlice.repos.repoCreatePullRequest('alice', 'pr-record', { head: 'topic', base: 'main', title: '[wip] two files' }), 201)
    expect(missingGiteaFields('PullRequest', pr)).toEqual([])
    const read = await ok(asAlice.repos.repoGetPullRequest('alice', 'pr-record', pr.number!))
    expect(read).toMatchObject({ draft: true, changed_files: 2, additions: 4, deletions: 0, requested_reviewers: [], requested_reviewers_teams: [], review_comments: 0, pin_order: 0, allow_maintainer_edit: false })
    const listed = await ok(asAlice.repos.repoListPullRequests('alice', 'pr-record'))
    expect(listed[0]).toMatchObject({ changed_files: 2, additions: 4, deletions: 0 })
    const titled = await ok(asAlice.repos.repoEditPullRequest('alice', 'pr-record', pr.number!, { title: 'two files' }), 201)
    expect(titled.draft).toBe(false)
  })
})

describe('global settings', () => {
  test('answer Warren\'s real limits and features', async () => {
    expect(await ok(anon.settings.getGeneralApiSettings())).toEqual({
      max_response_items: 50,
      default_paging_num: 30,
      default_git_trees_per_page: s.config.gitTreesPerPage,
      default_max_blob_size: s.config.maxBlobSize,
    })
    expect(await ok(anon.settings.getGeneralRepositorySettings())).toEqual({
      mirrors_disabled: false,
      http_git_disabled: false,
      migrations_disabled: false,
      stars_disabled: false,
      time_tracking_disabled: false,
      lfs_disabled: true,
    })
    const ui = await ok(anon.settings.getGeneralUiSettings())
    expect(ui.allowed_reactions).toEqual(s.config.reactions)
    expect(ui.allowed_reactions).toContain('+1')
    expect(missingGiteaFields('GeneralUISettings', ui)).toEqual([])
    const attachments = await ok(anon.settings.getGeneralAttachmentSettings())
    expect(attachments).toMatchObject({ enabled: true, max_size: Math.floor(s.config.maxAttachmentSize / 1024 / 1024) })
    expect(missingGiteaFields('GeneralAttachmentSettings', attachments)).toEqual([])
  })
})
