import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { giteaApi, type Api } from 'gitea-js'
import { startDiffOrPatch } from '../src/git/compare'
import { DEFAULT_GIT_LIMITS, repoPath } from '../src/git/run'
import { boundedOutput, READ_AHEAD } from '../src/git/stream'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, tempDir } from './git-fixture'
import { commitOn, forkWithBranch, pushedRepo } from './pull-fixtures'

/*
 * A pull request's diff and patch (the API's `{index}.diff` / `.patch` and the record's
 * diff_url / patch_url, held to WARREN_MAX_DIFF_SIZE), GET …/pulls/{base}/{head}, the
 * caller's permissions in the branch repositories' records, and a pull request's comments'
 * URLs, through gitea-js.
 */

const MAX_DIFF = 4096
let s: TestServer
let alice: TestUser, bob: TestUser, reader: TestUser
let asAlice: Api<unknown>, asBob: Api<unknown>, asReader: Api<unknown>, anon: Api<unknown>
const dirs: string[] = []
let work: string
/** Commits of alice/d: main's, feature's (t.txt and the binary bin.dat). */
let main: string, feature: string
const BIN = Buffer.from([0, 1, 2, 3, 255, 0, 10, 13, 0, 42])

beforeAll(async () => {
  s = await startTestServer({ maxDiffSize: MAX_DIFF })
  alice = await s.user('alice')
  bob = await s.user('bob')
  reader = await s.user('reader')
  asAlice = giteaApi(s.url, { token: alice.token })
  asBob = giteaApi(s.url, { token: bob.token })
  asReader = giteaApi(s.url, { token: reader.token })
  anon = giteaApi(s.url, {})
  const repo = await pushedRepo(s, alice, 'd', dirs)
  work = repo.dir
  expect((await s.put('/repos/alice/d/collaborators/reader', { permission: 'read' }, { token: alice.token })).status).toBe(204)
  main = await gitOk(work, 'rev-parse', 'main')
  await gitOk(work, 'checkout', '-q', '-b', 'feature', 'main')
  writeFileSync(join(work, 'bin.dat'), BIN)
  feature = await commitOn(work, 'feature', { 't.txt': 'text\n' }, 'text and binary')
  // big: a change larger than the limit.
  await commitOn(work, 'big', { 'big.txt': 'x'.repeat(99) + '\n'.repeat(1) + 'line\n'.repeat(2000) }, 'big', 'main')
  await gitOk(work, 'push', '-q', 'origin', 'feature', 'big')
  expect((await asAlice.repos.repoCreatePullRequest('alice', 'd', { head: 'feature', base: 'main', title: 'Feature' })).status).toBe(201)
  expect((await asAlice.repos.repoCreatePullRequest('alice', 'd', { head: 'big', base: 'main', title: 'Big' })).status).toBe(201)
})
afterAll(async () => {
  await s.stop()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})

/** A text answer of gitea-js (asked for with `format: 'text'`, as its callers of text routes do). */
const textOf = async (call: Promise<{ status: number; headers: Headers; data: string }>) => {
  const r = await call
  expect(r.status).toBe(200)
  expect(r.headers.get('content-type')).toContain('text/plain')
  return r.data
}
const TEXT = { format: 'text' } as const
const statusOf = async (call: Promise<{ status: number }>) => (await call.catch((e: { status: number }) => e)).status

/** A fresh clone of alice/d at main. */
async function cloneAtMain(): Promise<string> {
  const dir = tempDir()
  dirs.push(dir)
  await gitOk(dir, 'clone', '-q', remoteUrl(s.url, 'alice/d.git', 'alice', alice.password), 'c')
  const c = join(dir, 'c')
  await gitOk(c, 'config', 'user.email', 'x@example.com')
  await gitOk(c, 'config', 'user.name', 'x')
  return c
}

describe('diff and patch', () => {
  test('.diff: binary files named only, unless ?binary=true, which `git apply` applies; .patch always carries them and `git am` applies it', async () => {
    const plain = await textOf(asAlice.repos.repoDownloadPullDiffOrPatch('alice', 'd', 1, 'diff', {}, TEXT))
    expect(plain).toBe(await gitOk(work, 'diff', '-M', main, feature).then((d) => d + '\n'))
    expect(plain).toContain('Binary files /dev/null and b/bin.dat differ')
    expect(plain).toContain('+text')

    const binary = await textOf(asAlice.repos.repoDownloadPullDiffOrPatch('alice', 'd', 1, 'diff', { binary: true }, TEXT))
    expect(binary).toContain('GIT binary patch')
    const c = await cloneAtMain()
    writeFileSync(join(c, '..', 'p.diff'), binary)
    await gitOk(c, 'apply', '--index', join(c, '..', 'p.diff'))
    expect(readFileSync(join(c, 'bin.dat'))).toEqual(BIN)
    expect(readFileSync(join(c, 't.txt'), 'utf8')).toBe('text\n')

    const patch = await textOf(asReader.repos.repoDownloadPullDiffOrPatch('alice', 'd', 1, 'patch', {}, TEXT))
    expect(patch).toStartWith(`From ${feature} `)
    expect(patch).toContain('GIT binary patch')
    const c2 = await cloneAtMain()
    writeFileSync(join(c2, '..', 'p.patch'), patch)
    await gitOk(c2, 'am', '-q', join(c2, '..', 'p.patch'))
    expect(readFileSync(join(c2, 'bin.dat'))).toEqual(BIN)
    expect(await gitOk(c2, 'log', '-1', '--format=%s|%an')).toBe('text and binary|Alice A')
  })

  test("the record's diff_url and patch_url answer the same text, to the repository's readers only", async () => {
    const pr = (await asAlice.repos.repoGetPullRequest('alice', 'd', 1)).data
    expect(pr.diff_url).toBe(`${s.config.baseUrl}alice/d/pulls/1.diff`)
    const auth = { headers: { authorization: `token ${alice.token}` } }
    const diff = await fetch(pr.diff_url!, auth)
    expect([diff.status, await diff.text()]).toEqual([200, await textOf(asAlice.repos.repoDownloadPullDiffOrPatch('alice', 'd', 1, 'diff', {}, TEXT))])
    const patch = await fetch(pr.patch_url!, auth)
    expect([patch.status, await patch.text()]).toEqual([200, await textOf(asAlice.repos.repoDownloadPullDiffOrPatch('alice', 'd', 1, 'patch', {}, TEXT))])
    expect((await fetch(`${pr.diff_url}?binary=true`, auth).then((r) => r.text()))).toContain('GIT binary patch')
    // The bare index is the pull request's web page; an unknown one is 404.
    expect((await fetch(pr.html_url!, auth)).status).toBe(200)
    expect((await fetch(`${s.url}/alice/d/pulls/9.diff`, auth)).status).toBe(404)

    expect((await s.patch('/repos/alice/d', { private: true }, { token: alice.token })).status).toBe(200)
    try {
      expect((await fetch(pr.diff_url!)).status).toBe(404)
      expect((await fetch(pr.diff_url!, { headers: { authorization: `token ${bob.token}` } })).status).toBe(404)
      expect((await fetch(pr.diff_url!, { headers: { authorization: `token ${reader.token}` } })).status).toBe(200)
    } finally {
      expect((await s.patch('/repos/alice/d', { private: false }, { token: alice.token })).status).toBe(200)
    }
  })

  test('a diff or patch over WARREN_MAX_DIFF_SIZE: 406 before anything is sent', async () => {
    for (const kind of ['diff', 'patch'] as const) {
      const r = await s.get(`/repos/alice/d/pulls/2.${kind}`, { token: alice.token })
      expect([r.status, r.body.message]).toEqual([406, expect.stringContaining('WARREN_MAX_DIFF_SIZE')])
      expect((await fetch(`${s.url}/alice/d/pulls/2.${kind}`)).status).toBe(406)
    }
    expect(await statusOf(asAlice.repos.repoDownloadPullDiffOrPatch('alice', 'd', 2, 'diff'))).toBe(406)
  })

  test('past the read-ahead, a stream over its limit is refused or ends with an error at the limit; one within it is whole', async () => {
    const huge = await commitOn(work, 'huge', { 'huge.txt': 'a fairly long line of text\n'.repeat(Math.ceil((8 * READ_AHEAD) / 27)) }, 'huge', 'main')
    const gitDir = repoPath(s.dataDir, 'alice', 'd')
    await gitOk(work, 'push', '-q', 'origin', 'huge')
    const repo = { gitDir, limits: DEFAULT_GIT_LIMITS }
    const whole = await gitOk(gitDir, 'diff', '-M', main, huge)
    const within = await boundedOutput((await startDiffOrPatch(repo, main, huge, 'diff'))!.body, whole.length + 10)
    expect((await new Response(within!).text()).trimEnd()).toBe(whole)
    // Past the read-ahead and short of the whole: refused before anything is sent when what was
    // read ahead already passes the limit (on a busy machine one read of git's output may hold
    // most of it), else a stream that ends with an error at the limit; never the whole.
    const over = await boundedOutput((await startDiffOrPatch(repo, main, huge, 'diff'))!.body, 4 * READ_AHEAD)
    if (over) await expect(new Response(over).text()).rejects.toThrow('limit')
    // The stream's own error, with reads of a known size: 16 of a quarter of the read-ahead.
    const chunk = new Uint8Array(READ_AHEAD / 4).fill(97)
    const chunks = () => {
      let left = 16
      return new ReadableStream<Uint8Array>({ pull: (c) => (left-- > 0 ? c.enqueue(chunk.slice()) : c.close()) })
    }
    const cut = await boundedOutput(chunks(), 2 * READ_AHEAD)
    expect(cut).not.toBeNull()
    const reader = cut!.getReader()
    let passed = 0
    const error = await (async () => {
      for (;;) {
        const next = await reader.read()
        if (next.done) return undefined
        passed += next.value.byteLength
      }
    })().catch((e: Error) => e)
    expect([error?.message, passed]).toEqual([`the output passed its limit of ${2 * READ_AHEAD} bytes`, 2 * READ_AHEAD])
    expect(await boundedOutput(chunks(), READ_AHEAD / 2)).toBeNull()
    expect(await new Response((await boundedOutput(chunks(), 4 * READ_AHEAD))!).arrayBuffer()).toHaveProperty('byteLength', 4 * READ_AHEAD)
  })
})

describe('a pull request by its base and head', () => {
  test('branch, owner:branch and owner/repo:branch; the open one first, else the latest; unknown ones 404', async () => {
    const byBranches = async (base: string, head: string, as = asAlice) => (await as.repos.repoGetPullRequestByBaseHead('alice', 'd', base, head)).data
    const one = await byBranches('main', 'feature')
    expect(one).toEqual((await asAlice.repos.repoGetPullRequest('alice', 'd', 1)).data)
    expect((await byBranches('main', 'alice:feature')).number).toBe(1)
    expect((await byBranches('main', 'alice/d:feature', anon)).number).toBe(1)

    const fork = await forkWithBranch(s, alice, 'd', bob, 'fix', dirs)
    const forkPull = (await asBob.repos.repoCreatePullRequest('alice', 'd', { head: 'bob:fix', base: 'main', title: 'Fix' })).data
    expect((await byBranches('main', 'bob:fix')).number).toBe(forkPull.number!)
    expect((await byBranches('main', 'bob/d:fix')).head!.sha).toBe(fork.head)
    // The fork's branch is not alice's.
    expect(await statusOf(asAlice.repos.repoGetPullRequestByBaseHead('alice', 'd', 'main', 'fix'))).toBe(404)

    // A head branch with a slash in its name.
    await commitOn(work, 'topic/x', { 'x.txt': 'x\n' }, 'x', 'main')
    await gitOk(work, 'push', '-q', 'origin', 'topic/x')
    const topic = (await asAlice.repos.repoCreatePullRequest('alice', 'd', { head: 'topic/x', base: 'main', title: 'Topic' })).data
    expect((await byBranches('main', 'topic/x')).number).toBe(topic.number!)

    // Closed: still found; opened again from the same branches: the open one.
    expect((await asAlice.repos.repoEditPullRequest('alice', 'd', topic.number!, { state: 'closed' })).status).toBe(201)
    expect((await byBranches('main', 'topic/x')).state).toBe('closed')
    const again = (await asAlice.repos.repoCreatePullRequest('alice', 'd', { head: 'topic/x', base: 'main', title: 'Topic again' })).data
    expect((await byBranches('main', 'topic/x')).number).toBe(again.number!)

    for (const [base, head] of [
      ['main', 'nope'],
      ['dev', 'feature'],
      ['main', 'nobody:feature'],
      ['main', 'bob/nothing:fix'],
    ])
      expect(await statusOf(asAlice.repos.repoGetPullRequestByBaseHead('alice', 'd', base!, head!))).toBe(404)
  })
})

describe('records', () => {
  test("the branch repositories carry the caller's own permissions, in a record and in the list", async () => {
    const perms = async (as: Api<unknown>, index: number) => {
      const pr = (await as.repos.repoGetPullRequest('alice', 'd', index)).data
      const listed = (await as.repos.repoListPullRequests('alice', 'd', { state: 'all', limit: 50 })).data.find((p) => p.number === index)!
      expect(listed.base!.repo!.permissions).toEqual(pr.base!.repo!.permissions!)
      expect(listed.head!.repo!.permissions).toEqual(pr.head!.repo!.permissions!)
      return [pr.base!.repo!.permissions, pr.head!.repo!.permissions]
    }
    const all = { admin: true, push: true, pull: true }
    const read = { admin: false, push: false, pull: true }
    expect(await perms(asAlice, 1)).toEqual([all, all])
    expect(await perms(asReader, 1)).toEqual([read, read])
    expect(await perms(anon, 1)).toEqual([read, read])
    // The fork's pull request: bob owns the head's repository, alice the base's.
    const forkIndex = (await asAlice.repos.repoGetPullRequestByBaseHead('alice', 'd', 'main', 'bob:fix')).data.number!
    expect(await perms(asBob, forkIndex)).toEqual([read, all])
    expect(await perms(asAlice, forkIndex)).toEqual([all, read])
  })

  test("a pull request's comments give pull_request_url only (Gitea's Comment.IssueURL is empty there); an issue's issue_url only", async () => {
    const pr = (await asAlice.repos.repoGetPullRequest('alice', 'd', 1)).data
    const onPull = (await asReader.repos.issueCreateComment('alice', 'd', 1, { body: 'looks good' })).data
    expect([onPull.pull_request_url, onPull.issue_url]).toEqual([pr.html_url!, ''])
    const issue = (await asAlice.repos.issueCreateIssue('alice', 'd', { title: 'a plain issue' })).data
    const onIssue = (await asAlice.repos.issueCreateComment('alice', 'd', issue.number!, { body: 'noted' })).data
    expect([onIssue.pull_request_url, onIssue.issue_url]).toEqual(['', issue.html_url!])
    const listed = (await anon.repos.issueGetRepoComments('alice', 'd')).data
    expect(listed.map((c) => [c.id, c.pull_request_url, c.issue_url])).toEqual([
      [onPull.id, pr.html_url, ''],
      [onIssue.id, '', issue.html_url],
    ])
  })
})
