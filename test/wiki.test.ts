/**
 * Repository wikis through gitea-js and the raw API: Gitea's title / file name mapping, pages
 * written as commits in the bare `{repo}.wiki.git` (checked with git itself), reads, history,
 * Gitea's codes for every refusal, who may read and write, concurrent writes that never lose one,
 * the `wiki` webhook, and the wiki following its repository's rename, transfer and deletion.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { giteaApi, type Api } from 'gitea-js'
import { folderMoves, repositories } from '../src/db/schema'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { finishFolderMoves, moveFolderWithRows, repairAbandonedFolderMoves } from '../src/modules/repos/folder-move'
import { claimWork } from '../src/db/client'
import { CLAIM_SPACE, lockKey, SessionLocks } from '../src/db/pg-locks'
import { SQL } from 'bun'
import { startLeftoverRepair } from '../src/jobs/leftover-repair'
import { logOutput } from './log-capture'
import { eq } from 'drizzle-orm'
import { cleanPath, gitPathToWebPath, titleToWebPath, webPathToGitPath, webPathToTitle } from '../src/modules/wiki/paths'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { git, gitOk, remoteUrl, tempDir } from './git-fixture'
import { fails } from './gitea-calls'
import { missingGiteaFields } from './gitea-types'
import { startReceiver, until, type Receiver } from './webhook-receiver'

let s: TestServer
let worker: ReturnType<typeof startWebhookWorker>
let rx: Receiver
let alice: TestUser, bob: TestUser, carol: TestUser
let asAlice: Api<unknown>, asBob: Api<unknown>, anon: Api<unknown>

const b64 = (text: string) => Buffer.from(text).toString('base64')
const text = (base64: string | undefined) => Buffer.from(base64 ?? '', 'base64').toString('utf8')
const wikiDir = (owner: string, repo: string) => join(s.dataDir, 'repositories', owner, `${repo}.wiki.git`)
/** `git <args>` in a wiki's bare repository. */
const inWiki = (owner: string, repo: string, ...args: string[]) => gitOk(wikiDir(owner, repo), ...args)
const asA = () => ({ token: alice.token })
const dirs: string[] = []

beforeAll(async () => {
  s = await startTestServer({ webhookAllowedHostList: 'loopback', webhookRetryDelay: 0.05, maxBlobSize: 4096 })
  worker = startWebhookWorker(s.deps, { pollMs: 10 })
  rx = await startReceiver()
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  asAlice = giteaApi(s.url, { token: alice.token })
  asBob = giteaApi(s.url, { token: bob.token })
  anon = giteaApi(s.url, {})
  for (const [name, extra] of [
    ['proj', {}],
    ['secret', { private: true }],
    ['frozen', {}],
    ['nowiki', {}],
    ['moving', {}],
  ] as const)
    expect((await s.post('/user/repos', { name, ...extra }, asA())).status).toBe(201)
  expect((await s.put('/repos/alice/proj/collaborators/bob', { permission: 'read' }, asA())).status).toBe(204)
  expect((await s.patch('/repos/alice/nowiki', { has_wiki: false }, asA())).status).toBe(200)
  const hook = { type: 'gitea', config: { url: rx.url('/proj'), content_type: 'json' }, events: ['wiki'], active: true }
  expect((await s.post('/repos/alice/proj/hooks', hook, asA())).status).toBe(201)
})
afterAll(async () => {
  await worker.stop()
  rx.stop()
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe("Gitea's page names", () => {
  test('titles, web paths and file names map as Gitea maps them', () => {
    for (const [title, web] of [
      ['', 'unnamed'],
      ['.', 'unnamed'],
      ['..', 'unnamed'],
      ['wiki name', 'wiki-name'],
      ['title.md', 'title.md.-'],
      ['wiki-name', 'wiki-name.-'],
      ['the wiki-name', 'the+wiki-name.-'],
      ['a/b', 'a%2Fb'],
      ['a%b', 'a%25b'],
      ['100% Free', '100%25-Free'],
    ])
      expect(titleToWebPath(title!)).toBe(web!)
    for (const [git, web] of [
      ['wiki-name.md', 'wiki%20name'],
      ['wiki-name.md', 'wiki+name'],
      ['wiki name.md', 'wiki%20name.md'],
      ['wiki%20name.md', 'wiki%2520name.md'],
      ['2000-01-02-meeting.md', '2000-01-02+meeting'],
      ['2000-01-02 meeting.-.md', '2000-01-02%20meeting.-'],
    ])
      expect(webPathToGitPath(web!)).toBe(git!)
    expect(gitPathToWebPath('Home-Page.md')).toBe('Home-Page')
    expect(gitPathToWebPath('2000-01-02 meeting.-.md')).toBe('2000-01-02+meeting.-')
    expect(gitPathToWebPath('image.png')).toBeNull()
    expect(gitPathToWebPath('bad%zz.md')).toBeNull()
    expect(webPathToTitle('2000-01-02+meeting.-')).toBe('2000-01-02 meeting')
    expect(webPathToTitle('Home-Page')).toBe('Home Page')
    // A page's file is looked up cleaned as Go's path.Clean: no `.`, `..` or empty segment; one climbing out names nothing.
    for (const [path, clean] of [
      ['Home.md', 'Home.md'],
      ['./Home.md', 'Home.md'],
      ['a//b/./c.md', 'a/b/c.md'],
      ['a/../Home.md', 'Home.md'],
      ['../Home.md', null],
      ['a/../../Home.md', null],
      ['.', null],
      ['', null],
    ] as const)
      expect(cleanPath(path)).toBe(clean)
  })
})

describe('pages', () => {
  test('no wiki yet: its reads are 404, and no folder is made by them', async () => {
    await fails(asAlice.repos.repoGetWikiPages('alice', 'proj'), 404)
    await fails(asAlice.repos.repoGetWikiPage('alice', 'proj', 'Home'), 404)
    await fails(asAlice.repos.repoGetWikiPageRevisions('alice', 'proj', 'Home'), 404)
    await fails(asAlice.repos.repoDeleteWikiPage('alice', 'proj', 'Home'), 404)
    expect(existsSync(wikiDir('alice', 'proj'))).toBe(false)
  })

  test('the first page makes the bare wiki beside the repository, on branch main, one commit by the caller', async () => {
    const res = await asAlice.repos.repoCreateWikiPage('alice', 'proj', { title: 'Home', content_base64: b64('# Home page\n\nWelcome!\n') })
    expect(res.status).toBe(201)
    expect(missingGiteaFields('WikiPage', res.data)).toEqual([])
    expect(missingGiteaFields('WikiCommit', res.data.last_commit!)).toEqual([])
    expect(res.data).toMatchObject({ title: 'Home', sub_url: 'Home', html_url: `${s.url}/alice/proj/wiki/Home`, commit_count: 1, sidebar: '', footer: '' })
    expect(text(res.data.content_base64)).toBe('# Home page\n\nWelcome!\n')
    expect(res.data.last_commit).toMatchObject({ message: 'Add "Home"\n', author: { name: 'alice', email: 'alice@example.com' }, commiter: { name: 'alice' } })
    expect(res.data.last_commit!.author!.date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    expect(await inWiki('alice', 'proj', 'rev-parse', '--is-bare-repository')).toBe('true')
    expect(await inWiki('alice', 'proj', 'symbolic-ref', 'HEAD')).toBe('refs/heads/main')
    expect(await inWiki('alice', 'proj', 'rev-parse', 'main')).toBe(res.data.last_commit!.sha!)
    expect(await inWiki('alice', 'proj', 'ls-tree', '--name-only', 'main')).toBe('Home.md')
    expect(await inWiki('alice', 'proj', 'log', '-1', '--format=%an|%ae|%cn|%B', 'main')).toBe('alice|alice@example.com|alice|Add "Home"')
  })

  test('titles become Gitea file names; the list pages them in git order with their last commits', async () => {
    for (const title of ['Page With Spaced Name', '2000-01-02 meeting', '100% Free', '_Sidebar', '_Footer'])
      expect((await asAlice.repos.repoCreateWikiPage('alice', 'proj', { title, content_base64: b64(`about ${title}`), message: `write ${title}` })).status).toBe(201)
    expect((await inWiki('alice', 'proj', 'ls-tree', '--name-only', 'main')).split('\n')).toEqual([
      '100%25-Free.md',
      '2000-01-02 meeting.-.md',
      'Home.md',
      'Page-With-Spaced-Name.md',
      '_Footer.md',
      '_Sidebar.md',
    ])
    const all = await asAlice.repos.repoGetWikiPages('alice', 'proj')
    expect(all.headers.get('x-total-count')).toBe('6')
    expect(all.data.map((p) => [p.title, p.sub_url])).toEqual([
      ['100% Free', '100%25-Free'],
      ['2000-01-02 meeting', '2000-01-02+meeting.-'],
      ['Home', 'Home'],
      ['Page With Spaced Name', 'Page-With-Spaced-Name'],
      ['_Footer', '_Footer'],
      ['_Sidebar', '_Sidebar'],
    ])
    expect(all.data.map((p) => p.last_commit!.message)).toEqual(['write 100% Free\n', 'write 2000-01-02 meeting\n', 'Add "Home"\n', 'write Page With Spaced Name\n', 'write _Footer\n', 'write _Sidebar\n'])
    for (const p of all.data) expect(missingGiteaFields('WikiPageMetaData', p)).toEqual([])
    const second = await asAlice.repos.repoGetWikiPages('alice', 'proj', { page: 2, limit: 4 })
    expect(second.data.map((p) => p.title)).toEqual(['_Footer', '_Sidebar'])
    expect(second.headers.get('x-total-count')).toBe('6')
    expect(second.headers.get('link')).toContain('rel="first"')
  })

  test('a page by its sub_url (raw or escaped once), with the sidebar and footer', async () => {
    const page = await asAlice.repos.repoGetWikiPage('alice', 'proj', 'Page-With-Spaced-Name')
    expect(page.data).toMatchObject({ title: 'Page With Spaced Name', sub_url: 'Page-With-Spaced-Name', commit_count: 1 })
    expect(text(page.data.content_base64)).toBe('about Page With Spaced Name')
    expect(text(page.data.sidebar)).toBe('about _Sidebar')
    expect(text(page.data.footer)).toBe('about _Footer')
    // Gitea reads the path's raw text, `100%25+Free` as the URL spells it, which names the same file as `100%25-Free`.
    const raw = await s.get('/repos/alice/proj/wiki/page/100%25+Free', asA())
    expect(raw.status).toBe(200)
    expect(raw.body.title).toBe('100% Free')
    const dashed = await s.get('/repos/alice/proj/wiki/page/2000-01-02+meeting.-', asA())
    expect(text(dashed.body.content_base64)).toBe('about 2000-01-02 meeting')
    // A web path ending in .md names the file itself.
    expect((await s.get('/repos/alice/proj/wiki/page/Home.md', asA())).body.title).toBe('Home')
    // The unescaped name is read cleaned (Gitea's path.Clean): `./Home` and `a/../Home` are Home; `../Home` climbs out of the wiki, 404.
    for (const name of ['.%2FHome', 'a%2F..%2FHome']) expect(text((await s.get(`/repos/alice/proj/wiki/page/${name}`, asA())).body.content_base64)).toBe('# Home page\n\nWelcome!\n')
    expect((await s.get('/repos/alice/proj/wiki/page/..%2FHome', asA())).status).toBe(404)
    await fails(asAlice.repos.repoGetWikiPage('alice', 'proj', 'Nowhere'), 404)
  })

  test('editing: new content is a second revision; a title renames the page; revisions are newest first', async () => {
    const edited = await asAlice.repos.repoEditWikiPage('alice', 'proj', 'Home', { content_base64: b64('# Home\n\nv2\n') })
    expect(edited.status).toBe(200)
    expect(edited.data).toMatchObject({ sub_url: 'Home', commit_count: 2 })
    expect(edited.data.last_commit!.message).toBe('Update "Home"\n')
    const revisions = await asAlice.repos.repoGetWikiPageRevisions('alice', 'proj', 'Home')
    expect(missingGiteaFields('WikiCommitList', revisions.data)).toEqual([])
    expect(revisions.data.count).toBe(2)
    expect(revisions.headers.get('x-total-count')).toBe('2')
    expect(revisions.data.commits!.map((c) => c.message)).toEqual(['Update "Home"\n', 'Add "Home"\n'])
    expect((await asAlice.repos.repoGetWikiPageRevisions('alice', 'proj', 'Home', { page: 2 })).data.commits).toEqual([])

    const renamed = await asAlice.repos.repoEditWikiPage('alice', 'proj', 'Page-With-Spaced-Name', { title: 'Spaced Out', content_base64: b64('moved'), message: 'rename it' })
    expect(renamed.data).toMatchObject({ title: 'Spaced Out', sub_url: 'Spaced-Out', commit_count: 1 })
    expect(await inWiki('alice', 'proj', 'show', '--name-status', '--format=', 'main')).toBe('D\tPage-With-Spaced-Name.md\nA\tSpaced-Out.md')
    await fails(asAlice.repos.repoGetWikiPage('alice', 'proj', 'Page-With-Spaced-Name'), 404)
  })

  test("refusals with Gitea's codes leave the wiki as it was", async () => {
    const before = await inWiki('alice', 'proj', 'rev-parse', 'main')
    const post = (body: unknown) => s.post('/repos/alice/proj/wiki/new', body, asA())
    const exists = await post({ title: 'Home', content_base64: b64('again') })
    expect(exists.status).toBe(400)
    expect(exists.body.message).toContain('already exists')
    expect((await post({ title: '_new', content_base64: b64('x') })).body.message).toBe('wiki title is reserved: _new')
    expect((await post({ title: '   ', content_base64: b64('x') })).status).toBe(400)
    expect((await post({ content_base64: b64('x') })).status).toBe(400)
    expect((await post({ title: 'Bad', content_base64: 'not base64!' })).status).toBe(400)
    expect((await post({ title: 'Big', content_base64: b64('x'.repeat(5000)) })).status).toBe(413)
    expect((await post({ title: 'x'.repeat(300), content_base64: b64('x') })).status).toBe(422)
    // Renaming onto another page's title.
    await fails(asAlice.repos.repoEditWikiPage('alice', 'proj', 'Spaced-Out', { title: 'Home', content_base64: b64('x') }), 409)
    await fails(asAlice.repos.repoEditWikiPage('alice', 'proj', 'Nowhere', { content_base64: b64('x') }), 404)
    await fails(asAlice.repos.repoEditWikiPage('alice', 'proj', 'Home', { title: 'raw', content_base64: b64('x') }), 400)
    await fails(asAlice.repos.repoDeleteWikiPage('alice', 'proj', 'Nowhere'), 404)
    expect((await s.get(`/repos/alice/proj/wiki/page/${'a'.repeat(2000)}`, asA())).status).toBe(422)
    // Names that do not unescape, climb out, or hold control characters: 4xx, never a 500, nothing written.
    for (const name of ['%ZZ', '%2E%2E', '..%2F..%2Fconfig.md', '%0A.md', 'a%00b', '.git.md', '%2F', '_new'])
      for (const [method, body] of [
        ['GET', undefined],
        ['PATCH', { content_base64: b64('x') }],
        ['DELETE', undefined],
      ] as const) {
        const r = await s.request(method, `/repos/alice/proj/wiki/page/${name}`, { ...asA(), body })
        expect([400, 404, 409, 422]).toContain(r.status)
      }
    expect(await inWiki('alice', 'proj', 'rev-parse', 'main')).toBe(before)
  })

  test('hostile titles stay one escaped file at the root', async () => {
    for (const title of ['line\nbreak', 'a/../../b', '../up', '.git', 'tab\there'])
      expect((await s.post('/repos/alice/proj/wiki/new', { title, content_base64: b64(title) }, asA())).status).toBe(201)
    const files = (await inWiki('alice', 'proj', 'ls-tree', '--name-only', 'main')).split('\n')
    expect(await inWiki('alice', 'proj', 'ls-tree', '-d', 'main')).toBe('')
    for (const name of ['line%0Abreak.md', 'a%2F..%2F..%2Fb.md', '..%2Fup.md', '.git.md', 'tab%09here.md']) expect(files).toContain(name)
    const pages = (await asAlice.repos.repoGetWikiPages('alice', 'proj', { limit: 50 })).data
    expect(pages.map((p) => p.title)).toEqual(expect.arrayContaining(['line\nbreak', 'a/../../b', '../up', '.git', 'tab\there']))
    for (const title of ['line\nbreak', 'a/../../b']) {
      const sub = pages.find((p) => p.title === title)!.sub_url!
      expect(text((await s.get(`/repos/alice/proj/wiki/page/${sub}`, asA())).body.content_base64)).toBe(title)
      expect((await s.del(`/repos/alice/proj/wiki/page/${sub}`, undefined, asA())).status).toBe(204)
    }
  })

  test('deleting a page is a commit without its file; then it is 404', async () => {
    expect((await asAlice.repos.repoCreateWikiPage('alice', 'proj', { title: 'Scratch', content_base64: b64('tmp') })).status).toBe(201)
    expect((await asAlice.repos.repoDeleteWikiPage('alice', 'proj', 'Scratch')).status).toBe(204)
    expect(await inWiki('alice', 'proj', 'log', '-1', '--format=%B', 'main')).toBe('Delete page "Scratch"')
    expect(await inWiki('alice', 'proj', 'ls-tree', '--name-only', 'main')).not.toContain('Scratch')
    await fails(asAlice.repos.repoGetWikiPage('alice', 'proj', 'Scratch'), 404)
    await fails(asAlice.repos.repoDeleteWikiPage('alice', 'proj', 'Scratch'), 404)
  })

  test('the wiki webhook announces created, edited and deleted pages', async () => {
    const of = (action: string, page: string) => rx.received.find((r) => r.headers['x-gitea-event'] === 'wiki' && r.payload.action === action && r.payload.page === page)
    const created = await until(() => of('created', 'Home'), 'the created page')
    expect(created.payload).toMatchObject({ comment: 'Add "Home"', repository: { full_name: 'alice/proj' }, sender: { login: 'alice' } })
    expect((await until(() => of('edited', 'Spaced-Out'), 'the renamed page')).payload.comment).toBe('rename it')
    expect((await until(() => of('deleted', 'Scratch'), 'the deleted page')).payload.comment).toBe('')
  })

  test('concurrent writes: each one is 201 or 409, and no accepted page is lost', async () => {
    const before = Number(await inWiki('alice', 'proj', 'rev-list', '--count', 'main'))
    const titles = Array.from({ length: 6 }, (_, i) => `Race ${i}`)
    const answers = await Promise.all(titles.map((title) => s.post('/repos/alice/proj/wiki/new', { title, content_base64: b64(title) }, asA())))
    for (const a of answers) expect([201, 409]).toContain(a.status)
    const accepted = titles.filter((_, i) => answers[i]!.status === 201)
    expect(accepted.length).toBeGreaterThan(0)
    const files = (await inWiki('alice', 'proj', 'ls-tree', '--name-only', 'main')).split('\n')
    for (const title of accepted) expect(files).toContain(`${title.replace(' ', '-')}.md`)
    expect(Number(await inWiki('alice', 'proj', 'rev-list', '--count', 'main'))).toBe(before + accepted.length)
    expect(await inWiki('alice', 'proj', 'rev-list', '--merges', '--count', 'main')).toBe('0')
  })
})

describe('who may read and write', () => {
  test('readers read, only writers write; strangers do not see a private wiki; a disabled wiki is 404; an archived one is 423', async () => {
    expect((await asBob.repos.repoGetWikiPage('alice', 'proj', 'Home')).status).toBe(200)
    expect((await anon.repos.repoGetWikiPages('alice', 'proj')).status).toBe(200)
    await fails(asBob.repos.repoCreateWikiPage('alice', 'proj', { title: 'Bob', content_base64: b64('x') }), 403)
    await fails(asBob.repos.repoEditWikiPage('alice', 'proj', 'Home', { content_base64: b64('x') }), 403)
    await fails(asBob.repos.repoDeleteWikiPage('alice', 'proj', 'Home'), 403)
    await fails(anon.repos.repoCreateWikiPage('alice', 'proj', { title: 'Anon', content_base64: b64('x') }), 401)

    expect((await asAlice.repos.repoCreateWikiPage('alice', 'secret', { title: 'Home', content_base64: b64('x') })).status).toBe(201)
    await fails(anon.repos.repoGetWikiPage('alice', 'secret', 'Home'), 404)
    await fails(giteaApi(s.url, { token: carol.token }).repos.repoGetWikiPages('alice', 'secret'), 404)

    await fails(asAlice.repos.repoCreateWikiPage('alice', 'nowiki', { title: 'Home', content_base64: b64('x') }), 404)
    await fails(asAlice.repos.repoGetWikiPages('alice', 'nowiki'), 404)
    expect(existsSync(wikiDir('alice', 'nowiki'))).toBe(false)

    expect((await asAlice.repos.repoCreateWikiPage('alice', 'frozen', { title: 'Home', content_base64: b64('x') })).status).toBe(201)
    expect((await s.patch('/repos/alice/frozen', { archived: true }, asA())).status).toBe(200)
    await fails(asAlice.repos.repoEditWikiPage('alice', 'frozen', 'Home', { content_base64: b64('y') }), 423)
    expect((await asAlice.repos.repoGetWikiPage('alice', 'frozen', 'Home')).status).toBe(200)
  })
})

describe('git over HTTP', () => {
  const wikiUrl = (repo: string, who?: TestUser) => remoteUrl(s.url, `alice/${repo}.wiki.git`, who?.name, who?.token)

  test('a reader clones the wiki; a writer pushes a page the API then reads; a reader may not push', async () => {
    const work = tempDir('warren-wiki-')
    dirs.push(work)
    await gitOk(work, 'clone', '-q', wikiUrl('proj', bob), '.')
    expect(await gitOk(work, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main')
    expect(await gitOk(work, 'show', 'HEAD:Spaced-Out.md')).toBe('moved')
    writeFileSync(join(work, 'From-Git.md'), 'pushed page\n')
    await gitOk(work, 'add', '.')
    await gitOk(work, '-c', 'user.name=Bob', '-c', 'user.email=bob@example.com', 'commit', '-q', '-m', 'from git')
    const refused = await git(work, 'push', '-q', wikiUrl('proj', bob), 'main')
    expect(refused.code).not.toBe(0)
    await gitOk(work, 'push', '-q', wikiUrl('proj', alice), 'main')
    const page = await asAlice.repos.repoGetWikiPage('alice', 'proj', 'From-Git')
    expect(text(page.data.content_base64)).toBe('pushed page\n')
    expect(page.data.last_commit!.message).toBe('from git\n')
  })

  test('a first push makes the wiki; a repository without one (or with the wiki off) has nothing to clone', async () => {
    const work = tempDir('warren-wiki-')
    dirs.push(work)
    expect((await s.post('/user/repos', { name: 'pushed' }, asA())).status).toBe(201)
    expect((await git(work, 'clone', '-q', wikiUrl('pushed', alice), 'none')).code).not.toBe(0)
    expect((await git(work, 'ls-remote', wikiUrl('nowiki', alice))).code).not.toBe(0)
    await gitOk(work, 'init', '-q', '-b', 'main', 'src')
    writeFileSync(join(work, 'src', 'Home.md'), 'from a push\n')
    await gitOk(join(work, 'src'), 'add', '.')
    await gitOk(join(work, 'src'), '-c', 'user.name=A', '-c', 'user.email=a@example.com', 'commit', '-q', '-m', 'first')
    await gitOk(join(work, 'src'), 'push', '-q', wikiUrl('pushed', alice), 'main')
    expect(text((await asAlice.repos.repoGetWikiPage('alice', 'pushed', 'Home')).data.content_base64)).toBe('from a push\n')
    expect((await asAlice.repos.repoGetWikiPages('alice', 'pushed')).data.map((p) => p.title)).toEqual(['Home'])
    // A first push of another branch than main: the wiki follows its only branch.
    expect((await s.post('/user/repos', { name: 'mastered' }, asA())).status).toBe(201)
    await gitOk(join(work, 'src'), 'push', '-q', wikiUrl('mastered', alice), 'main:master')
    expect(text((await asAlice.repos.repoGetWikiPage('alice', 'mastered', 'Home')).data.content_base64)).toBe('from a push\n')
    expect(await inWiki('alice', 'mastered', 'symbolic-ref', 'HEAD')).toBe('refs/heads/master')
    expect((await asAlice.repos.repoEditWikiPage('alice', 'mastered', 'Home', { content_base64: b64('edited') })).status).toBe(200)
    expect(await inWiki('alice', 'mastered', 'show', 'master:Home.md')).toBe('edited')
  })
})

describe("the wiki follows its repository's folder", () => {
  test('rename and transfer move the wiki with the repository; deletion removes it', async () => {
    expect((await asAlice.repos.repoCreateWikiPage('alice', 'moving', { title: 'Home', content_base64: b64('travels') })).status).toBe(201)
    expect((await s.patch('/repos/alice/moving', { name: 'moved' }, asA())).status).toBe(200)
    expect(existsSync(wikiDir('alice', 'moving'))).toBe(false)
    expect(text((await asAlice.repos.repoGetWikiPage('alice', 'moved', 'Home')).data.content_base64)).toBe('travels')
    // Git over HTTP: the old name's wiki redirects to the new name's wiki, as the repository does.
    const old = await fetch(`${s.url}/alice/moving.wiki.git/info/refs?service=git-upload-pack`, { redirect: 'manual' })
    expect(old.status).toBe(301)
    expect(old.headers.get('location')).toBe('/alice/moved.wiki.git/info/refs?service=git-upload-pack')

    expect((await s.post('/orgs', { username: 'acme' }, asA())).status).toBe(201)
    expect((await s.post('/repos/alice/moved/transfer', { new_owner: 'acme' }, asA())).status).toBe(202)
    expect(existsSync(wikiDir('alice', 'moved'))).toBe(false)
    expect(existsSync(wikiDir('acme', 'moved'))).toBe(true)
    expect(text((await asAlice.repos.repoGetWikiPage('acme', 'moved', 'Home')).data.content_base64)).toBe('travels')
    // The folder moves left no intent behind.
    expect(await s.deps.db.select().from(folderMoves)).toEqual([])

    expect((await s.del('/repos/acme/moved', undefined, asA())).status).toBe(204)
    expect(existsSync(wikiDir('acme', 'moved'))).toBe(false)
  })

  test("a leftover wiki folder at the new name refuses the rename (409), nothing moved; a crash's intents put both folders back", async () => {
    expect((await s.post('/user/repos', { name: 'stay' }, asA())).status).toBe(201)
    expect((await asAlice.repos.repoCreateWikiPage('alice', 'stay', { title: 'Home', content_base64: b64('here') })).status).toBe(201)
    mkdirSync(wikiDir('alice', 'taken'))
    expect((await s.patch('/repos/alice/stay', { name: 'taken' }, asA())).status).toBe(409)
    rmSync(wikiDir('alice', 'taken'), { recursive: true })
    expect(existsSync(wikiDir('alice', 'stay'))).toBe(true)
    expect((await s.get('/repos/alice/stay', asA())).status).toBe(200)
    expect(await s.deps.db.select().from(folderMoves)).toEqual([])

    // A crash after both folders moved and before the rows changed: the start-up repair moves both back.
    const root = join(s.dataDir, 'repositories')
    for (const [from, to] of [
      ['alice/stay.git', 'alice/gone.git'],
      ['alice/stay.wiki.git', 'alice/gone.wiki.git'],
    ] as const) {
      await s.deps.db.insert(folderMoves).values({ fromPath: from, toPath: to, createdUnix: 0 })
      renameSync(join(root, from), join(root, to))
    }
    expect(await finishFolderMoves(s.deps)).toBe(2)
    expect(text((await asAlice.repos.repoGetWikiPage('alice', 'stay', 'Home')).data.content_base64)).toBe('here')
    expect(existsSync(wikiDir('alice', 'gone'))).toBe(false)
  })

  test("the running repair of abandoned moves: a mover finishing between the repair's reads keeps its folder; a live one is left; a dead one's is put back", async () => {
    const root = join(s.dataDir, 'repositories')
    const [from, to] = ['alice/stay.git', 'alice/went.git']
    const intentGone = async () => (await s.deps.db.select().from(folderMoves)).length === 0
    // A mover in the middle: its folder moved, its intent written and claimed.
    const moveMidway = async () => {
      renameSync(join(root, from), join(root, to))
      const [row] = await s.deps.db.insert(folderMoves).values({ fromPath: from, toPath: to, createdUnix: 0 }).returning({ id: folderMoves.id })
      return { id: row!.id, claim: await claimWork(s.deps.db, 'folder-move', row!.id) }
    }
    // 1. It finishes right after the repair listed its intent: the intent removed, then the claim
    //    released (as every owner does). The repair must not take the finished move for a dead one.
    let mover = await moveMidway()
    const finishing = mover
    expect(
      await repairAbandonedFolderMoves(s.deps, {
        afterListing: async () => {
          await s.deps.db.delete(folderMoves).where(eq(folderMoves.id, finishing.id))
          await finishing.claim.release()
        },
      }),
    ).toBe(0)
    expect(existsSync(join(root, to))).toBe(true)
    expect(existsSync(join(root, from))).toBe(false)
    renameSync(join(root, to), join(root, from))
    // 2. Still claimed (this process's own claim, as another process's): left alone; and while a
    //    repair holds a claim taken over, a new claim of it waits until the repair lets go.
    mover = await moveMidway()
    expect(await repairAbandonedFolderMoves(s.deps)).toBe(0)
    expect(existsSync(join(root, to))).toBe(true)
    expect(await s.deps.db.$runtime.takeOver('folder-move', mover.id)).toBeNull()
    await mover.claim.release()
    if (s.config.databaseUrl) {
      // Another process's claim (another session's shared lock): the take-over is refused; while
      // a repair holds one, another process's claim is not granted.
      const other = new SQL(s.config.databaseUrl, { max: 1 })
      try {
        await other.begin(async (tx) => {
          await tx.unsafe(`select pg_advisory_xact_lock_shared(${CLAIM_SPACE['folder-move']}, ${mover.id})`)
          expect(await repairAbandonedFolderMoves(s.deps)).toBe(0)
          expect(existsSync(join(root, to))).toBe(true)
        })
        const held = (await s.deps.db.$runtime.takeOver('folder-move', mover.id))!
        const [tried] = await other.unsafe(`select pg_try_advisory_lock_shared(${CLAIM_SPACE['folder-move']}, ${mover.id}) as got`)
        expect(tried.got).toBe(false)
        await held.release()
      } finally {
        await other.close()
      }
    }
    // 3. Its claim gone with the intent still there (the mover died): the folder is put back, the intent removed.
    const taken = (await s.deps.db.$runtime.takeOver('folder-move', mover.id))!
    // A claim waits for a take-over a bounded while, then is refused (409, the API's shape).
    await expect(claimWork(s.deps.db, 'folder-move', mover.id, { waitMs: 20 })).rejects.toMatchObject({ status: 409, message: expect.stringContaining('being repaired') })
    let claimed = false
    const waiting = claimWork(s.deps.db, 'folder-move', mover.id).then((c) => ((claimed = true), c))
    expect(await repairAbandonedFolderMoves(s.deps)).toBe(0)
    expect(claimed).toBe(false)
    await taken.release()
    await (await waiting).release()
    expect(await repairAbandonedFolderMoves(s.deps)).toBe(1)
    expect(existsSync(join(root, from))).toBe(true)
    expect(existsSync(join(root, to))).toBe(false)
    expect(await intentGone()).toBe(true)
    expect(text((await asAlice.repos.repoGetWikiPage('alice', 'stay', 'Home')).data.content_base64)).toBe('here')
  })

  test("one move that cannot go back stops neither the others nor the round's other repairs; its failure is logged once, its intent kept", async () => {
    const root = join(s.dataDir, 'repositories')
    // Its old place under a file: the folder cannot go back there.
    writeFileSync(join(root, 'not-a-folder'), '')
    mkdirSync(join(root, 'alice', 'stuck.git'))
    renameSync(join(root, 'alice/stay.git'), join(root, 'alice/went.git'))
    await s.deps.db.insert(folderMoves).values([
      { fromPath: 'not-a-folder/stuck.git', toPath: 'alice/stuck.git', createdUnix: 0 },
      { fromPath: 'alice/stay.git', toPath: 'alice/went.git', createdUnix: 0 },
    ])
    const out = await logOutput(async () => {
      const job = startLeftoverRepair(s.deps, 3_600_000)
      await until(() => existsSync(join(root, 'alice/stay.git')), 'the good move put back', 2400, 25)
      await job.stop()
      // The next round fails the same way, silently.
      expect(await repairAbandonedFolderMoves(s.deps)).toBe(0)
    }, () => true)
    expect(out.split('moving a folder back failed').length - 1).toBe(1)
    expect(out).not.toContain('repairing what a dead process left failed')
    expect(existsSync(join(root, 'alice/went.git'))).toBe(false)
    expect((await s.deps.db.select({ from: folderMoves.fromPath }).from(folderMoves)).map((m) => m.from)).toEqual(['not-a-folder/stuck.git'])
    // At start (and in `warren doctor --fix`) the same failure stops the repair, loudly; the intent stays.
    await expect(finishFolderMoves(s.deps)).rejects.toThrow('1 interrupted folder moves could not be undone')
    expect((await s.deps.db.select({ from: folderMoves.fromPath }).from(folderMoves)).map((m) => m.from)).toEqual(['not-a-folder/stuck.git'])
    await s.deps.db.delete(folderMoves)
    rmSync(join(root, 'not-a-folder'))
    rmSync(join(root, 'alice', 'stuck.git'), { recursive: true })
    expect((await s.get('/repos/alice/stay', asA())).status).toBe(200)
  })

  test("a mover whose claim vanished (its lock connection dropped) and whose move a repair undid commits nothing: 409, its rows' change rolled back", async () => {
    const root = join(s.dataDir, 'repositories')
    const [from, to] = [join(root, 'alice/stay.git'), join(root, 'alice/went.git')]
    const description = async () => (await s.deps.db.select({ d: repositories.description }).from(repositories).where(eq(repositories.lowerName, 'stay')))[0]!.d
    const before = await description()
    const moving = moveFolderWithRows(s.deps, from, to, () => s.deps.db.update(repositories).set({ description: 'moved' }).where(eq(repositories.lowerName, 'stay')), {
      taken: 'taken',
      // Meanwhile the leader's repair, finding the intent unclaimed, puts the folder back and removes the intent.
      afterMove: async () => {
        renameSync(to, from)
        await s.deps.db.delete(folderMoves)
      },
    })
    await expect(moving).rejects.toMatchObject({ status: 409, message: expect.stringContaining('undone by a repair') })
    expect(await description()).toBe(before)
    expect(existsSync(from)).toBe(true)
    expect(existsSync(to)).toBe(false)
    expect(await s.deps.db.select().from(folderMoves)).toEqual([])
  })

  test('a claim waits while another PostgreSQL session holds the exclusive lock, granted once it unlocks; with a deadline, refused; an unlock answered false drops the lock connection', async () => {
    if (!s.config.databaseUrl) return
    const pool = new SQL(s.config.databaseUrl, { max: 1 })
    const other = await pool.reserve()
    const key = `${CLAIM_SPACE.push}, 2000000001`
    try {
      await other.unsafe(`select pg_advisory_lock(${key})`)
      await expect(claimWork(s.deps.db, 'push', 2000000001, { waitMs: 50 })).rejects.toMatchObject({ status: 409 })
      let granted = false
      const waiting = claimWork(s.deps.db, 'push', 2000000001).then((c) => ((granted = true), c))
      // Several of its tries refused meanwhile (no time asserted: only that it has not been granted).
      const sharedHeld = async () => (await other.unsafe(`select count(*)::int as n from pg_locks where locktype = 'advisory' and classid = ${CLAIM_SPACE.push} and objid = 2000000001 and mode = 'ShareLock' and granted`))[0].n
      await Bun.sleep(300)
      expect(granted).toBe(false)
      expect(await sharedHeld()).toBe(0)
      await other.unsafe(`select pg_advisory_unlock(${key})`)
      const claim = await waiting
      expect(await sharedHeld()).toBe(1)
      await claim.release()
      expect(await sharedHeld()).toBe(0)

      // An unlock that answers false (the session did not hold the lock as thought: here unlocked
      // behind its back) closes the lock connection: every lock on it goes, none stays leaked.
      const locks = new SessionLocks(new SQL(s.config.databaseUrl, { max: 1 }))
      try {
        const a = (await locks.tryLock('test-unlock-a', 'exclusive'))!
        const b = (await locks.tryLock('test-unlock-b', 'exclusive'))!
        await (locks as unknown as { query(text: string): Promise<unknown> }).query(`select pg_advisory_unlock(${lockKey('test-unlock-a')})`)
        const [before] = await other.unsafe(`select pg_try_advisory_lock(${lockKey('test-unlock-b')}) as got`)
        expect(before.got).toBe(false)
        await a.release()
        expect(await b.stillHeld!()).toBe(false)
        // The closed session's locks are freed as the server ends it.
        await until(async () => (await other.unsafe(`select pg_try_advisory_lock(${lockKey('test-unlock-b')}) as got`))[0].got, 'the dropped connection lock freed')
        await other.unsafe(`select pg_advisory_unlock(${lockKey('test-unlock-b')})`)
      } finally {
        await locks.close()
      }
    } finally {
      other.release()
      await pool.close()
    }
  })
})
