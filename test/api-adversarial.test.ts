/**
 * A hostile caller against the contents, git-data, commits, tags, branches, topics, reactions,
 * issue search and issue template routes: what a private repository shows to those who may not
 * read it, writes by readers, odd names in every path, names that could reach the batch reader as
 * a second command, concurrent writes to one branch, and inputs built to break a tree.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, remoteUrl, tempDir } from './git-fixture'
import { createAccessToken } from '../src/modules/users/service'

let s: TestServer
let alice: TestUser, bob: TestUser, carol: TestUser
let publicOnly: string, userOnly: string
let clone: string
const dirs: string[] = []

const b64 = (text: string) => Buffer.from(text).toString('base64')
const urlOf = (repo: string) => remoteUrl(s.url, `alice/${repo}.git`, 'alice', alice.token)
const refsOf = async (repo: string) => (await gitOk(clone, 'ls-remote', urlOf(repo))).trim()
/** The files of `branch` of `repo`, as a clone sees them. */
async function filesOf(repo: string, branch = 'main'): Promise<string[]> {
  await gitOk(clone, 'fetch', '-q', urlOf(repo), `+refs/heads/${branch}:refs/remotes/${repo}/${branch}`)
  return (await gitOk(clone, 'ls-tree', '-r', '--name-only', `${repo}/${branch}`)).trim().split('\n')
}

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  publicOnly = (await createAccessToken(s.deps, alice.user.id, 'po', ['public-only', 'read:repository', 'read:issue'])).secret
  userOnly = (await createAccessToken(s.deps, alice.user.id, 'uo', ['read:user'])).secret
  for (const [name, extra] of [['priv', { private: true }], ['pub', {}]] as const)
    expect((await s.post('/user/repos', { name, auto_init: true, default_branch: 'main', ...extra }, { token: alice.token })).status).toBe(201)
  expect((await s.put('/repos/alice/pub/collaborators/carol', { permission: 'read' }, { token: alice.token })).status).toBe(204)
  clone = tempDir('warren-adv-')
  dirs.push(clone)
  await gitOk(clone, 'init', '-q')
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('a private repository to those who may not read it', () => {
  test('every read route answers 404 to anonymous and a stranger, 403 to a public-only token and to a token without the category', async () => {
    const readme = (await s.get('/repos/alice/priv/contents/README.md', { token: alice.token })).body
    expect((await s.post('/repos/alice/priv/issues', { title: 'secret' }, { token: alice.token })).status).toBe(201)
    const reaction = await s.post('/repos/alice/priv/issues/1/reactions', { content: 'heart' }, { token: alice.token })
    expect(reaction.status).toBe(201)
    const head = (await s.get('/repos/alice/priv/branches/main', { token: alice.token })).body.commit.id
    const paths = [
      '/repos/alice/priv/contents',
      '/repos/alice/priv/contents/README.md',
      `/repos/alice/priv/git/trees/${head}`,
      `/repos/alice/priv/git/blobs/${readme.sha}`,
      '/repos/alice/priv/git/refs',
      `/repos/alice/priv/git/commits/${head}`,
      '/repos/alice/priv/commits',
      '/repos/alice/priv/languages',
      '/repos/alice/priv/tags',
      '/repos/alice/priv/topics',
      '/repos/alice/priv/issue_templates',
      '/repos/alice/priv/issue_config',
      '/repos/alice/priv/issues/1/reactions',
      '/repos/alice/priv/media/README.md',
      `/repos/alice/priv/compare/${head}...${head}`,
    ]
    for (const path of paths) {
      expect([path, (await s.get(path, { token: alice.token })).status]).toEqual([path, 200])
      for (const auth of [{}, { token: bob.token }]) expect([path, (await s.get(path, auth)).status]).toEqual([path, 404])
      // As Gitea: the owner's own token, limited to public repositories or to another category, is told so.
      for (const token of [publicOnly, userOnly]) expect([path, (await s.get(path, { token })).status]).toEqual([path, 403])
    }
    for (const auth of [{}, { token: bob.token }, { token: publicOnly }]) {
      const found = await s.get('/repos/issues/search?q=secret&state=all', auth)
      expect(found.status).toBe(200)
      expect(found.body).toEqual([])
    }
  })
})

describe('writes by those who may not write', () => {
  test('a reader cannot write files, apply a patch, make a tag or a branch or set topics; the refs stay as they were', async () => {
    const before = await refsOf('pub')
    const auth = { token: carol.token }
    const tries = [
      await s.post('/repos/alice/pub/contents/x.txt', { content: b64('x') }, auth),
      await s.post('/repos/alice/pub/contents', { files: [{ operation: 'create', path: 'x.txt', content: b64('x') }] }, auth),
      await s.post('/repos/alice/pub/diffpatch', { content: 'diff --git a/y b/y\nnew file mode 100644\n--- /dev/null\n+++ b/y\n@@ -0,0 +1 @@\n+y\n' }, auth),
      await s.post('/repos/alice/pub/tags', { tag_name: 'v9', target: 'main' }, auth),
      await s.post('/repos/alice/pub/branches', { new_branch_name: 'evil' }, auth),
      await s.put('/repos/alice/pub/topics/evil', undefined, auth),
    ]
    for (const r of tries) expect(r.status).toBe(403)
    expect(await refsOf('pub')).toBe(before)
  })
})

describe('odd names in paths', () => {
  test('path escapes, control characters and option-like names are refused or not found, never a 500', async () => {
    const auth = { token: alice.token }
    const reads = [
      '/repos/alice/pub/contents/..%2fpriv',
      '/repos/alice/pub/contents/%2e%2e/x',
      '/repos/alice/pub/contents/a%00b',
      '/repos/alice/pub/contents/a%0ainfo%20HEAD',
      '/repos/alice/pub/contents/README.md?ref=--output=/tmp/x',
      '/repos/alice/pub/contents/README.md?ref=main%0acontents%20HEAD',
      '/repos/alice/pub/contents/README.md?ref=HEAD@%7B-1%7D',
      '/repos/alice/pub/contents/README.md?ref=refs/heads/../x',
      '/repos/alice/pub/contents/README.md?ref=main:README.md',
      '/repos/alice/pub/git/trees/main%0ainfo%20HEAD',
      '/repos/alice/pub/git/trees/--help',
      '/repos/alice/pub/git/trees/main~1',
      '/repos/alice/pub/git/trees/:%2Ftext',
      '/repos/alice/pub/git/blobs/main:README.md',
      '/repos/alice/pub/git/tags/HEAD',
      '/repos/alice/pub/git/commits/@%7B-1%7D',
      '/repos/alice/pub/git/commits/--all',
      '/repos/alice/pub/git/notes/main%20HEAD',
      '/repos/alice/pub/git/refs/heads/..%2f..%2fconfig',
      '/repos/alice/pub/git/refs/%0a',
      '/repos/alice/pub/commits?sha=--all',
      '/repos/alice/pub/commits?path=..%2f..&sha=main',
      '/repos/alice/pub/commits?sha=main%0acontents%20HEAD',
      '/repos/alice/pub/tags/..%2f..%2fconfig',
      '/repos/alice/pub/tags/-x',
      '/repos/alice/pub/branches/..%2fx',
      '/repos/alice/pub/branches/%40%7B-1%7D',
      '/repos/alice/pub/compare/main...--all',
      '/repos/alice/pub/compare/main...main%0ainfo%20HEAD',
      `/repos/alice/pub/contents/${'a'.repeat(5000)}`,
      `/repos/alice/pub/git/trees/${'a'.repeat(5000)}`,
    ]
    for (const path of reads) {
      const r = await s.get(path, auth)
      expect([path, r.status < 500, r.body?.message === undefined || typeof r.body.message === 'string']).toEqual([path, true, true])
      expect([path, r.status === 200 && path.includes('%0a')]).toEqual([path, false])
    }
    // The batch reader still answers after all of them.
    expect((await s.get('/repos/alice/pub/contents/README.md', auth)).status).toBe(200)
  })

  test('a space in a path reaches the batch reader as part of the name, not as a second word', async () => {
    const auth = { token: alice.token }
    expect((await s.post('/repos/alice/pub/contents/a%20b.txt', { content: b64('spaced\n') }, auth)).status).toBe(201)
    const r = await s.get('/repos/alice/pub/contents/a%20b.txt', auth)
    expect(r.status).toBe(200)
    expect(Buffer.from(r.body.content, 'base64').toString()).toBe('spaced\n')
    expect((await s.get('/repos/alice/pub/contents/a', auth)).status).toBe(404)
  })
})

describe('contents writes built to break a tree', () => {
  test('names git would silently leave out of the tree (.git. , git~1, .git followed by a space) are refused; the branch stays', async () => {
    const before = await refsOf('pub')
    for (const path of ['.git./hooks/x', 'GIT~1/config', 'sub/.git /x', 'sub/.git.']) {
      const r = await s.post('/repos/alice/pub/contents', { files: [{ operation: 'create', path, content: b64('x') }] }, { token: alice.token })
      expect([path, r.status]).toEqual([path, 422])
    }
    expect(await refsOf('pub')).toBe(before)
  })

  test('a file and a folder of the same name in one commit are refused, never a tree with both', async () => {
    const before = await refsOf('pub')
    for (const paths of [['d', 'd/e'], ['f/g/h', 'f/g'], ['k/l', 'k']]) {
      const files = paths.map((path) => ({ operation: 'create', path, content: b64(path) }))
      expect((await s.post('/repos/alice/pub/contents', { files }, { token: alice.token })).status).toBe(422)
    }
    const moved = [{ operation: 'create', path: 'm/n', content: b64('n') }, { operation: 'update', path: 'm', from_path: 'README.md', sha: (await s.get('/repos/alice/pub/contents/README.md', { token: alice.token })).body.sha, content: b64('m') }]
    expect((await s.post('/repos/alice/pub/contents', { files: moved }, { token: alice.token })).status).toBe(422)
    expect(await refsOf('pub')).toBe(before)
  })

  test('concurrent writes to one branch: every answered commit is kept, the others are refused (409)', async () => {
    const names = Array.from({ length: 6 }, (_, i) => `race/f${i}.txt`)
    const answers = await Promise.all(names.map((name) => s.post(`/repos/alice/pub/contents/${name}`, { content: b64(name) }, { token: alice.token })))
    for (const r of answers) expect([201, 409]).toContain(r.status)
    const files = await filesOf('pub')
    const kept = names.filter((_, i) => answers[i]!.status === 201)
    expect(kept.length).toBeGreaterThan(0)
    for (const name of kept) expect(files).toContain(name)
    for (const name of names.filter((_, i) => answers[i]!.status !== 201)) expect(files).not.toContain(name)
  })
})

describe('query paths', () => {
  test('a history path leaving the repository is refused (422), not a 500', async () => {
    for (const path of ['../..', 'a/../../b', '..']) {
      const r = await s.get(`/repos/alice/pub/commits?sha=main&path=${encodeURIComponent(path)}`, { token: alice.token })
      expect([path, r.status]).toEqual([path, 422])
    }
  })
})

describe('archived repositories and odd names of new refs', () => {
  test('an archived repository takes no file, patch, tag, branch or topic change (423) and its refs stay', async () => {
    expect((await s.post('/user/repos', { name: 'frozen', auto_init: true, default_branch: 'main' }, { token: alice.token })).status).toBe(201)
    expect((await s.post('/repos/alice/frozen/issues', { title: 'old' }, { token: alice.token })).status).toBe(201)
    expect((await s.patch('/repos/alice/frozen', { archived: true }, { token: alice.token })).status).toBe(200)
    const before = await refsOf('frozen')
    const auth = { token: alice.token }
    const tries = {
      file: await s.post('/repos/alice/frozen/contents/x.txt', { content: b64('x') }, auth),
      files: await s.post('/repos/alice/frozen/contents', { files: [{ operation: 'create', path: 'x.txt', content: b64('x') }] }, auth),
      patch: await s.post('/repos/alice/frozen/diffpatch', { content: 'diff --git a/y b/y\nnew file mode 100644\n--- /dev/null\n+++ b/y\n@@ -0,0 +1 @@\n+y\n' }, auth),
      tag: await s.post('/repos/alice/frozen/tags', { tag_name: 'v9', target: 'main' }, auth),
      branch: await s.post('/repos/alice/frozen/branches', { new_branch_name: 'late' }, auth),
    }
    for (const [what, r] of Object.entries(tries)) expect([what, r.status]).toEqual([what, 423])
    expect(await refsOf('frozen')).toBe(before)
  })

  test('tags and branches named like options, HEAD, revision syntax or an object id are refused (422) or kept literal', async () => {
    const auth = { token: alice.token }
    const head = (await s.get('/repos/alice/pub/branches/main', auth)).body.commit.id as string
    const before = await refsOf('pub')
    for (const name of ['-x', '--force', 'a..b', '@', 'x@{1}', 'a b', 'a\nb', 'refs/heads/../x', 'x.lock', '', '/x', 'x/', 'a~1', 'a^', 'a:b', 'a*']) {
      expect([name, (await s.post('/repos/alice/pub/tags', { tag_name: name, target: 'main' }, auth)).status]).toEqual([name, 422])
      expect([name, (await s.post('/repos/alice/pub/branches', { new_branch_name: name }, auth)).status]).toEqual([name, 422])
    }
    expect(await refsOf('pub')).toBe(before)
    // Nor as the branch a file write makes.
    expect((await s.post('/repos/alice/pub/contents/n.txt', { content: b64('n'), new_branch: '/x' }, auth)).status).toBe(422)
    expect(await refsOf('pub')).toBe(before)
    // A tag named like the commit id: the contents of that id are still read by id or by tag alike, never a 500.
    const made = await s.post('/repos/alice/pub/tags', { tag_name: head.slice(0, 12), target: 'main' }, auth)
    expect([201, 422]).toContain(made.status)
    expect((await s.get(`/repos/alice/pub/contents/README.md?ref=${head.slice(0, 12)}`, auth)).status).toBe(200)
  })

  test('topics with odd names are refused (422), never stored', async () => {
    const auth = { token: alice.token }
    for (const topic of ['-x', 'a b', 'x'.repeat(40), 'a%0Ab', '.x'])
      expect([topic, (await s.put(`/repos/alice/pub/topics/${encodeURIComponent(topic)}`, undefined, auth)).status]).toEqual([topic, 422])
    expect((await s.put('/repos/alice/pub/topics', { topics: Array.from({ length: 26 }, (_, i) => `t${i}`) }, auth)).status).toBe(422)
    expect((await s.get('/repos/alice/pub/topics', auth)).body.topics).toEqual([])
  })
})

describe('huge inputs', () => {
  test('a patch of many files that does not apply is a 422; a deep tree lists without a 500', async () => {
    const auth = { token: alice.token }
    const hunks = Array.from({ length: 2000 }, (_, i) => `diff --git a/p${i} b/p${i}\n--- a/p${i}\n+++ b/p${i}\n@@ -1 +1 @@\n-a\n+b\n`).join('')
    const before = await refsOf('pub')
    expect((await s.post('/repos/alice/pub/diffpatch', { content: hunks }, auth)).status).toBe(422)
    expect(await refsOf('pub')).toBe(before)
    const deep = Array.from({ length: 200 }, (_, i) => `d${i}`).join('/') + '/leaf.txt'
    expect((await s.post('/repos/alice/pub/contents', { files: [{ operation: 'create', path: deep, content: b64('leaf') }] }, auth)).status).toBe(201)
    const tree = await s.get('/repos/alice/pub/git/trees/main?recursive=true&per_page=1000', auth)
    expect(tree.status).toBe(200)
    expect(tree.body.tree.some((e: { path: string }) => e.path === deep)).toBe(true)
    expect((await s.get(`/repos/alice/pub/contents/${deep}`, auth)).status).toBe(200)
    expect((await s.get(`/repos/alice/pub/commits?sha=main&path=${encodeURIComponent(deep)}`, auth)).status).toBe(200)
  })
})
