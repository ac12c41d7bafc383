import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { csrfIn, webVisitors } from './web-session'
import { contentMark } from './db-snapshot'
import { repoPath } from '../src/git/run'

/**
 * The web editor over plain HTTP (Gitea's `_new`, `_edit`, `_delete`, `_upload`): the buttons on
 * the file and folder views for writers only, each form's commit through the contents service
 * (the file read back through the API, the push announced), a commit to a new branch sent to the
 * comparison, the stale-edit and protected-branch refusals shown on the form again, files the
 * editor refuses, uploads, and who may open the forms at all.
 */

let s: TestServer
let alice: TestUser, bob: TestUser, carol: TestUser
let mark: () => Promise<string>
const b64 = (text: string) => Buffer.from(text).toString('base64')

const { signIn } = webVisitors(() => s.url, async () => '')

const page = async (path: string, user?: TestUser) =>
  fetch(s.url + path, { headers: { accept: 'text/html', ...(user ? { cookie: await signIn(user) } : {}) }, redirect: 'manual' })

/** Posts a form (urlencoded, or multipart when `files` are given) as `user`, with the CSRF token of their session unless `csrf` is null. */
async function submit(user: TestUser, path: string, fields: Record<string, string>, opts: { csrf?: string | null; files?: [string, Blob, string][] } = {}) {
  const cookie = await signIn(user)
  const csrf = opts.csrf === undefined ? csrfIn(await (await page('/', user)).text())! : opts.csrf
  const all = { ...(csrf === null ? {} : { _csrf: csrf }), ...fields }
  let body: URLSearchParams | FormData
  if (opts.files) {
    const form = new FormData()
    for (const [k, v] of Object.entries(all)) form.append(k, v)
    for (const [name, blob, filename] of opts.files) form.append(name, blob, filename)
    body = form
  } else body = new URLSearchParams(all)
  const res = await fetch(s.url + path, { method: 'POST', headers: { cookie, accept: 'text/html' }, body, redirect: 'manual' })
  return { status: res.status, location: res.headers.get('location'), html: await res.text() }
}

const contentOf = async (repo: string, path: string, ref = 'main') => {
  const res = await s.get(`/repos/alice/${repo}/contents/${path}?ref=${ref}`, { token: alice.token })
  return res.status === 200 ? { text: Buffer.from(res.body.content, 'base64').toString(), sha: res.body.sha as string } : null
}
const headOf = async (repo: string, branch = 'main') => (await s.get(`/repos/alice/${repo}/branches/${branch}`, { token: alice.token })).body.commit
const shaIn = (html: string) => /name="sha" value="([0-9a-f]+)"/.exec(html)?.[1]

beforeAll(async () => {
  s = await startTestServer({ webMaxFileView: 4096 })
  mark = contentMark(s.deps.db)
  alice = await s.user('alice')
  bob = await s.user('bob')
  carol = await s.user('carol')
  const asAlice = { token: alice.token }
  for (const name of ['proj', 'arch', 'guarded']) expect((await s.post('/user/repos', { name, auto_init: true }, asAlice)).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'blank' }, asAlice)).status).toBe(201)
  for (const repo of ['proj', 'guarded']) {
    expect((await s.put(`/repos/alice/${repo}/collaborators/bob`, { permission: 'read' }, asAlice)).status).toBe(204)
    expect((await s.put(`/repos/alice/${repo}/collaborators/carol`, { permission: 'write' }, asAlice)).status).toBe(204)
  }
  const files = [
    { operation: 'create', path: 'docs/guide.md', content: b64('# Guide\n\nfirst\n') },
    { operation: 'create', path: 'docs/only.txt', content: b64('alone\n') },
    { operation: 'create', path: 'blob.bin', content: Buffer.from([0, 1, 2, 3, 0, 255]).toString('base64') },
    { operation: 'create', path: 'latin1.txt', content: Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]).toString('base64') },
    { operation: 'create', path: 'big.txt', content: b64('x'.repeat(5000)) },
    { operation: 'create', path: 'up/keep.txt', content: b64('old\n') },
  ]
  expect((await s.post('/repos/alice/proj/contents', { files, message: 'fixture' }, asAlice)).status).toBe(201)
  expect((await s.post('/repos/alice/proj/tags', { tag_name: 'v1', target: 'main' }, asAlice)).status).toBe(201)
  expect((await s.patch('/repos/alice/arch', { archived: true }, asAlice)).status).toBe(200)
  expect((await s.post('/repos/alice/guarded/branch_protections', { rule_name: 'main', enable_push: false }, asAlice)).status).toBe(201)
})
afterAll(async () => {
  await s.stop()
})

describe('web editor', () => {
  test('writers see New file and Upload files on folders, Edit and Delete on files; readers and visitors see none; tags offer none', async () => {
    const mine = await (await page('/alice/proj/src/branch/main/docs/guide.md', carol)).text()
    expect(mine).toContain('href="/alice/proj/_edit/main/docs/guide.md"')
    expect(mine).toContain('href="/alice/proj/_delete/main/docs/guide.md"')
    const folder = await (await page('/alice/proj/src/branch/main/docs', carol)).text()
    expect(folder).toContain('href="/alice/proj/_new/main/docs"')
    expect(folder).toContain('href="/alice/proj/_upload/main/docs"')
    expect(await (await page('/alice/proj', alice)).text()).toContain('href="/alice/proj/_new/main"')
    // A binary file may be deleted, not edited.
    const binary = await (await page('/alice/proj/src/branch/main/blob.bin', alice)).text()
    expect(binary).not.toContain('_edit/')
    expect(binary).toContain('href="/alice/proj/_delete/main/blob.bin"')
    for (const who of [bob, undefined]) {
      const html = await (await page('/alice/proj/src/branch/main/docs/guide.md', who)).text()
      expect(html).not.toContain('/_edit/')
      expect(html).not.toContain('/_delete/')
      expect(await (await page('/alice/proj/src/branch/main/docs', who)).text()).not.toContain('/alice/proj/_new/')
    }
    const tagged = await (await page('/alice/proj/src/tag/v1/docs/guide.md', alice)).text()
    expect(tagged).toContain('docs/guide.md')
    expect(tagged).not.toContain('/_edit/')
    expect(await (await page('/alice/proj/src/tag/v1/docs', alice)).text()).not.toContain('/alice/proj/_new/')
    // Archived: no buttons even for the owner.
    expect(await (await page('/alice/arch/src/branch/main/README.md', alice)).text()).not.toContain('/_edit/')
    // An empty repository offers its first file.
    const blank = await (await page('/alice/blank', alice)).text()
    expect(blank).toContain('href="/alice/blank/_new/main"')
    expect(blank).toContain('href="/alice/blank/_upload/main"')
  })

  test('the forms: readers 403, visitors to sign in, an archived repository 423, an unknown branch 404', async () => {
    for (const action of ['_new/main/docs', '_edit/main/docs/guide.md', '_delete/main/docs/guide.md', '_upload/main/docs']) {
      expect((await page(`/alice/proj/${action}`, bob)).status).toBe(403)
      const anonymous = await page(`/alice/proj/${action}`)
      expect(anonymous.status).toBe(303)
      expect(anonymous.headers.get('location')).toBe(`/user/login?redirect_to=${encodeURIComponent(`/alice/proj/${action}`)}`)
      expect((await page(`/alice/arch/${action.replace('docs/guide.md', 'README.md')}`, alice)).status).toBe(423)
      expect((await page(`/alice/proj/${action.replace('main', 'nope')}`, alice)).status).toBe(404)
    }
    expect((await page('/alice/proj/_edit/main/docs/missing.txt', alice)).status).toBe(404)
    expect((await page('/alice/proj/_edit/main/docs', alice)).status).toBe(404)
    // A reader's POST changes nothing.
    const before = await mark()
    expect((await submit(bob, '/alice/proj/_new/main/docs', { tree_path: 'docs/x.txt', content: 'x' })).status).toBe(403)
    expect(await mark()).toBe(before)
  })

  test('a new file: the form starts in its folder; without the token nothing changes; its commit is the push of the writer, with the default message', async () => {
    const form = await (await page('/alice/proj/_new/main/docs', carol)).text()
    expect(form).toContain('name="tree_path" required')
    expect(form).toContain('value="docs/"')
    expect(form).toContain('value="carol-patch-1"')
    const before = await mark()
    expect((await submit(carol, '/alice/proj/_new/main/docs', { tree_path: 'docs/new.txt', content: 'x' }, { csrf: null })).status).toBe(403)
    expect(await mark()).toBe(before)

    const made = await submit(carol, '/alice/proj/_new/main/docs', { tree_path: 'docs/new.txt', content: 'line one\r\nline two\r\n', commit_choice: 'direct' })
    expect(made.status).toBe(303)
    expect(made.location).toBe('/alice/proj/src/branch/main/docs/new.txt?done=committed')
    expect((await contentOf('proj', 'docs/new.txt'))?.text).toBe('line one\nline two\n')
    const head = await headOf('proj')
    expect(head.message).toBe('Add docs/new.txt\n')
    expect(head.author.username).toBe('carol')
    expect(await (await page(made.location!, carol)).text()).toContain('Your changes were committed.')
    // The push is announced as any other: the repository's feed has carol's push to main.
    const feed = await s.get('/repos/alice/proj/activities/feeds', { token: alice.token })
    expect(feed.body.some((a: any) => a.op_type === 'commit_repo' && a.act_user.login === 'carol' && a.ref_name === 'refs/heads/main')).toBe(true)

    // A file that exists is refused on the form again, which keeps what was typed.
    const again = await submit(carol, '/alice/proj/_new/main/docs', { tree_path: 'docs/new.txt', content: 'kept text', commit_summary: 'mine' })
    expect(again.status).toBe(422)
    expect(again.html).toContain('repository file already exists')
    expect(again.html).toContain('kept text')
    expect(again.html).toContain('value="mine"')
    const nameless = await submit(carol, '/alice/proj/_new/main/docs', { tree_path: 'docs/', content: 'x' })
    expect(nameless.status).toBe(422)
    expect(nameless.html).toContain('Give the file a name.')
    expect((await submit(carol, '/alice/proj/_new/main/docs', { tree_path: '../escape.txt', content: 'x' })).status).toBe(422)
  })

  test('editing: the form shows the text and its blob id; the commit updates, renames, and takes the summary and description', async () => {
    const form = await (await page('/alice/proj/_edit/main/docs/guide.md', alice)).text()
    expect(form).toContain('# Guide\n\nfirst\n</textarea>')
    const sha = shaIn(form)!
    expect(sha).toBe((await contentOf('proj', 'docs/guide.md'))!.sha)
    const saved = await submit(alice, '/alice/proj/_edit/main/docs/guide.md', { tree_path: 'docs/guide.md', content: '# Guide\n\nsecond\n', sha, commit_summary: 'Reword', commit_message: 'Because.\r\n', signoff: 'on' })
    expect(saved.status).toBe(303)
    expect(saved.location).toBe('/alice/proj/src/branch/main/docs/guide.md?done=committed')
    expect((await contentOf('proj', 'docs/guide.md'))?.text).toBe('# Guide\n\nsecond\n')
    expect((await headOf('proj')).message).toBe(`Reword\n\nBecause.\n\nSigned-off-by: alice <alice@example.com>\n`)

    const now = shaIn(await (await page('/alice/proj/_edit/main/docs/guide.md', alice)).text())!
    const moved = await submit(alice, '/alice/proj/_edit/main/docs/guide.md', { tree_path: 'docs/manual.md', content: '# Manual\n', sha: now })
    expect(moved.status).toBe(303)
    expect(moved.location).toBe('/alice/proj/src/branch/main/docs/manual.md?done=committed')
    expect(await contentOf('proj', 'docs/guide.md')).toBeNull()
    expect((await contentOf('proj', 'docs/manual.md'))?.text).toBe('# Manual\n')
    expect((await headOf('proj')).message).toBe('Update docs/manual.md\n')
  })

  test('preview changes: the diff against the branch above the form, the text kept, nothing written; same access as the edit form', async () => {
    const form = await (await page('/alice/proj/_edit/main/docs/only.txt', carol)).text()
    expect(form).toContain('formaction="/alice/proj/_preview/main/docs/only.txt"')
    const sha = shaIn(form)!
    const git = repoPath(s.deps.config.dataDir, 'alice', 'proj')
    const objects = () => Bun.spawnSync(['git', 'count-objects', '-v'], { env: { ...process.env, GIT_DIR: git } }).stdout.toString()
    const [before, objectsBefore, head] = [await mark(), objects(), (await headOf('proj')).id]
    const fields = { tree_path: 'docs/only.txt', content: 'alone\r\nand <b>more</b>\r\n', sha, commit_summary: 'kept summary' }
    const shown = await submit(carol, '/alice/proj/_preview/main/docs/only.txt', fields)
    expect(shown.status).toBe(200)
    expect(shown.html).toContain('Preview of the changes')
    expect(shown.html).toContain('<span class="added">1 additions</span> and <span class="removed">0 deletions</span>')
    expect(shown.html).toContain('and &lt;b&gt;more&lt;/b&gt;')
    // The form again below, with what was typed, ready to commit.
    expect(shown.html).toContain('alone\nand &lt;b&gt;more&lt;/b&gt;\n</textarea>')
    expect(shown.html).toContain('value="kept summary"')
    expect(shown.html).toContain(`name="sha" value="${sha}"`)
    expect(shown.html).toContain('action="/alice/proj/_edit/main/docs/only.txt"')
    // Nothing written: the database, the repository's objects, the branch.
    expect(await mark()).toBe(before)
    expect(objects()).toBe(objectsBefore)
    expect((await headOf('proj')).id).toBe(head)
    // The same text: no change.
    expect((await submit(carol, '/alice/proj/_preview/main/docs/only.txt', { ...fields, content: 'alone\n' })).html).toContain('No files changed.')
    // The edit form's rules: readers 403, no token 403, archived 423, a file the editor refuses 422, a missing one said so.
    expect((await submit(bob, '/alice/proj/_preview/main/docs/only.txt', fields)).status).toBe(403)
    expect((await submit(carol, '/alice/proj/_preview/main/docs/only.txt', fields, { csrf: null })).status).toBe(403)
    expect((await submit(alice, '/alice/arch/_preview/main/README.md', { ...fields, tree_path: 'README.md' })).status).toBe(423)
    const binary = await submit(carol, '/alice/proj/_preview/main/blob.bin', { ...fields, tree_path: 'blob.bin' })
    expect(binary.status).toBe(422)
    expect(binary.html).toContain('This file is binary')
    const missing = await submit(carol, '/alice/proj/_preview/main/docs/nothere.txt', { ...fields, tree_path: 'docs/nothere.txt' })
    expect(missing.status).toBe(409)
    expect(missing.html).toContain('no longer exists')
    expect(await mark()).toBe(before)
  })

  test('a file changed since the form was opened is not overwritten: the form says so and keeps the text', async () => {
    const form = await (await page('/alice/proj/_edit/main/docs/manual.md', alice)).text()
    const opened = shaIn(form)!
    const current = await contentOf('proj', 'docs/manual.md')
    expect((await s.put('/repos/alice/proj/contents/docs/manual.md', { content: b64('# Manual\n\nby the API\n'), sha: current!.sha }, { token: alice.token })).status).toBe(200)
    const head = (await headOf('proj')).id
    const stale = await submit(alice, '/alice/proj/_edit/main/docs/manual.md', { tree_path: 'docs/manual.md', content: 'my edit', sha: opened })
    expect(stale.status).toBe(409)
    expect(stale.html).toContain('The file changed since you opened it')
    expect(stale.html).toContain('my edit')
    expect((await headOf('proj')).id).toBe(head)
    expect((await contentOf('proj', 'docs/manual.md'))?.text).toBe('# Manual\n\nby the API\n')
    // A file gone meanwhile says so too.
    const gone = await submit(alice, '/alice/proj/_edit/main/docs/nothere.md', { tree_path: 'docs/nothere.md', content: 'x', sha: opened })
    expect(gone.status).toBe(409)
    expect(gone.html).toContain('no longer exists')
  })

  test('binary, non-UTF-8 and too-large files are refused by the edit form with a clear message', async () => {
    for (const [path, words] of [
      ['blob.bin', 'This file is binary'],
      ['latin1.txt', 'not UTF-8'],
      ['big.txt', 'too large to edit'],
    ]) {
      const res = await page(`/alice/proj/_edit/main/${path}`, alice)
      expect(res.status).toBe(422)
      const html = await res.text()
      expect(html).toContain(words)
      expect(html).toContain(`href="/alice/proj/raw/branch/main/${path}"`)
    }
  })

  test('committing to a new branch goes to the comparison, where the pull request is opened; the base branch stays', async () => {
    const head = (await headOf('proj')).id
    const form = await (await page('/alice/proj/_edit/main/docs/only.txt', carol)).text()
    const done = await submit(carol, '/alice/proj/_edit/main/docs/only.txt', { tree_path: 'docs/only.txt', content: 'changed\n', sha: shaIn(form)!, commit_choice: 'commit-to-new-branch', new_branch_name: 'carol-patch-1' })
    expect(done.status).toBe(303)
    expect(done.location).toBe('/alice/proj/compare/main...carol-patch-1')
    expect((await headOf('proj')).id).toBe(head)
    expect((await contentOf('proj', 'docs/only.txt', 'carol-patch-1'))?.text).toBe('changed\n')
    const compare = await page(done.location!, carol)
    expect(compare.status).toBe(200)
    expect(await compare.text()).toContain('Create pull request')
    // The next form proposes the next free name; an existing branch is refused; a nameless one too.
    expect(await (await page('/alice/proj/_new/main', carol)).text()).toContain('value="carol-patch-2"')
    const taken = await submit(carol, '/alice/proj/_new/main', { tree_path: 'n.txt', content: 'x', commit_choice: 'commit-to-new-branch', new_branch_name: 'carol-patch-1' })
    expect(taken.status).toBe(422)
    expect(taken.html).toContain('branch already exists')
    const unnamed = await submit(carol, '/alice/proj/_new/main', { tree_path: 'n.txt', content: 'x', commit_choice: 'commit-to-new-branch', new_branch_name: ' ' })
    expect(unnamed.status).toBe(422)
    expect(unnamed.html).toContain('Give the new branch a name')
  })

  test('a protected branch: the form proposes a new branch, and a direct commit is refused by the push path on the form again', async () => {
    const form = await (await page('/alice/guarded/_new/main', carol)).text()
    expect(form).toContain('it is protected')
    expect(form).toMatch(/value="direct"[^>]*disabled/)
    expect(form).toMatch(/value="commit-to-new-branch" checked/)
    const head = (await headOf('guarded')).id
    const refused = await submit(carol, '/alice/guarded/_new/main', { tree_path: 'p.txt', content: 'x', commit_choice: 'direct' })
    expect(refused.status).toBe(403)
    expect(refused.html).toMatch(/role="alert">[^<]*protected/)
    expect((await headOf('guarded')).id).toBe(head)
    const branched = await submit(carol, '/alice/guarded/_new/main', { tree_path: 'p.txt', content: 'x', commit_choice: 'commit-to-new-branch', new_branch_name: 'side' })
    expect(branched.status).toBe(303)
    expect((await contentOf('guarded', 'p.txt', 'side'))?.text).toBe('x')
  })

  test('deleting: a confirmation, then the commit; back to the closest folder still there', async () => {
    const form = await (await page('/alice/proj/_delete/main/docs/only.txt', alice)).text()
    expect(form).toContain('Delete the file')
    const sha = shaIn(form)!
    expect((await submit(alice, '/alice/proj/_delete/main/docs/only.txt', { sha: 'f'.repeat(40) })).status).toBe(409)
    const done = await submit(alice, '/alice/proj/_delete/main/docs/only.txt', { sha })
    expect(done.status).toBe(303)
    expect(done.location).toBe('/alice/proj/src/branch/main/docs?done=file-deleted')
    expect(await contentOf('proj', 'docs/only.txt')).toBeNull()
    expect((await headOf('proj')).message).toBe('Delete docs/only.txt\n')
    // The last file of a folder: back to the root.
    const up = shaIn(await (await page('/alice/proj/_delete/main/up/keep.txt', alice)).text())!
    expect((await submit(alice, '/alice/proj/_delete/main/up/keep.txt', { sha: up })).location).toBe('/alice/proj/src/branch/main?done=file-deleted')
  })

  test('uploading files into a folder: new ones added, one of the same name replaced, in one commit; bounded', async () => {
    expect((await page('/alice/proj/_upload/main/docs', alice)).status).toBe(200)
    const files: [string, Blob, string][] = [
      ['files', new Blob(['# Manual, uploaded\n']), 'manual.md'],
      ['files', new Blob([new Uint8Array([0, 1, 2])]), 'data.bin'],
    ]
    const done = await submit(alice, '/alice/proj/_upload/main/docs', { tree_path: 'docs' }, { files })
    expect(done.status).toBe(303)
    expect(done.location).toBe('/alice/proj/src/branch/main/docs?done=committed')
    expect((await contentOf('proj', 'docs/manual.md'))?.text).toBe('# Manual, uploaded\n')
    expect((await s.get('/repos/alice/proj/contents/docs/data.bin', { token: alice.token })).body.size).toBe(3)
    expect((await headOf('proj')).message).toBe('Upload files to "docs"\n')
    // Nothing chosen; too many; a name git refuses.
    const none = await submit(alice, '/alice/proj/_upload/main/docs', { tree_path: 'docs' }, { files: [['files', new Blob([]), '']] })
    expect(none.status).toBe(422)
    expect(none.html).toContain('Choose at least one file')
    const many = Array.from({ length: 21 }, (_, i): [string, Blob, string] => ['files', new Blob(['x']), `f${i}.txt`])
    expect((await submit(alice, '/alice/proj/_upload/main/docs', { tree_path: 'docs' }, { files: many })).status).toBe(422)
    expect((await submit(alice, '/alice/proj/_upload/main/docs', { tree_path: '.git' }, { files: [['files', new Blob(['x']), 'config']] })).status).toBe(422)
  })

  test("an empty repository's first file makes its default branch", async () => {
    const form = await page('/alice/blank/_new/main', alice)
    expect(form.status).toBe(200)
    const html = await form.text()
    expect(html).not.toContain('commit-to-new-branch')
    const done = await submit(alice, '/alice/blank/_new/main', { tree_path: 'README.md', content: '# Blank no more\n', commit_choice: 'direct' })
    expect(done.status).toBe(303)
    expect(done.location).toBe('/alice/blank/src/branch/main/README.md?done=committed')
    expect((await contentOf('blank', 'README.md'))?.text).toBe('# Blank no more\n')
    expect((await s.get('/repos/alice/blank', { token: alice.token })).body.empty).toBe(false)
  })
  test('cherry-pick and revert: offered to writers on the commit page, applied onto a branch as a new commit through the push path; conflicts and protected branches refused', async () => {
    const asAlice = { token: alice.token }
    const put = async (path: string, text: string, message: string, branch = 'main') => {
      const now = await contentOf('proj', path, branch)
      const res = await s.post('/repos/alice/proj/contents', { branch, message, files: [{ operation: now ? 'update' : 'create', path, content: b64(text), ...(now ? { sha: now.sha } : {}) }] }, asAlice)
      expect(res.status).toBe(201)
      return res.body.commit.sha as string
    }
    await put('pick/a.txt', 'one\ntwo\nthree\nfour\nfive\nsix\n', 'Add a.txt')
    expect((await s.post('/repos/alice/proj/branches', { new_branch_name: 'side', old_ref_name: 'main' }, asAlice)).status).toBe(201)
    // The branch moves on meanwhile (a nearby line): the pick merges by git's three-way apply.
    await put('pick/a.txt', 'one\ntwo\nthree\nfour\nFIVE\nsix\n', 'Shout five', 'side')
    const picked = await put('pick/a.txt', 'one\nTWO\nthree\nfour\nfive\nsix\n', 'Shout two\n\nBecause.')

    const commitPage = await (await page(`/alice/proj/commit/${picked}`, carol)).text()
    expect(commitPage).toContain(`href="/alice/proj/_cherrypick/${picked}/main"`)
    expect(commitPage).toContain(`href="/alice/proj/_cherrypick/${picked}/main?cherry-pick-type=revert"`)
    expect(await (await page(`/alice/proj/commit/${picked}`, bob)).text()).not.toContain('_cherrypick')

    const address = `/alice/proj/_cherrypick/${picked}/side`
    const form = await page(address, carol)
    expect(form.status).toBe(200)
    const html = await form.text()
    expect(html).toContain('value="Shout two"')
    expect(html).toContain('Because.</textarea>')
    expect(html).toContain(`href="/alice/proj/_cherrypick/${picked}/main"`)
    expect(html).toContain(`action="${address}"`)
    expect((await page(address, bob)).status).toBe(403)
    expect((await page(`/alice/proj/_cherrypick/${'0'.repeat(40)}/side`, carol)).status).toBe(404)
    expect((await page(`/alice/proj/_cherrypick/${picked}/nope`, carol)).status).toBe(404)
    // Not a commit id, a tree's id, an id past 64 digits: refused, never a 500.
    const tree = (await s.get(`/repos/alice/proj/git/commits/${picked}`, asAlice)).body.commit.tree.sha
    for (const odd of ['zz', tree, 'a'.repeat(65)]) expect((await page(`/alice/proj/_cherrypick/${odd}/side`, carol)).status).toBeOneOf([404, 422])
    expect((await submit(carol, `/alice/proj/_cherrypick/${tree}/side`, { commit_choice: 'direct' })).status).toBe(404)
    expect((await page(`/alice/arch/_cherrypick/${picked}/main`, alice)).status).toBe(423)

    const sideHead = (await headOf('proj', 'side')).id
    const before = await mark()
    expect((await submit(carol, address, { commit_summary: 'Shout two', commit_choice: 'direct' }, { csrf: null })).status).toBe(403)
    expect((await submit(bob, address, { commit_summary: 'Shout two', commit_choice: 'direct' })).status).toBe(403)
    expect(await mark()).toBe(before)

    const done = await submit(carol, address, { commit_summary: 'Shout two', commit_message: 'Because.', commit_choice: 'direct' })
    expect(done.status).toBe(303)
    expect(done.location).toBe('/alice/proj/src/branch/side?done=committed')
    expect((await contentOf('proj', 'pick/a.txt', 'side'))?.text).toBe('one\nTWO\nthree\nfour\nFIVE\nsix\n')
    const head = await headOf('proj', 'side')
    expect(head.message).toBe('Shout two\n\nBecause.\n')
    expect(head.author.username).toBe('carol')
    const parents = (await s.get(`/repos/alice/proj/git/commits/${head.id}`, asAlice)).body.parents.map((p: { sha: string }) => p.sha)
    expect(parents).toEqual([sideHead])
    // Again: the branch has it already.
    const twice = await submit(carol, address, { commit_choice: 'direct' })
    expect(twice.status).toBe(422)
    expect(twice.html).toContain('already has these changes')

    // A conflict: the same line changed otherwise on the branch; nothing moves.
    const clash = await put('pick/a.txt', 'one\nTWO\nthree\nfour\nfive\nsix!\n', 'Six')
    const conflicting = await submit(carol, `/alice/proj/_cherrypick/${clash}/side`, { commit_choice: 'direct', commit_summary: 'mine' })
    expect(conflicting.status).toBe(409)
    expect(conflicting.html).toContain('do not apply cleanly to side')
    expect(conflicting.html).toContain('value="mine"')
    expect((await headOf('proj', 'side')).id).toBe(head.id)

    // A revert, to a new branch: the comparison follows; Gitea's message.
    const reverted = await submit(carol, `/alice/proj/_cherrypick/${picked}/main`, { revert: 'true', commit_summary: `Revert "Shout two"`, commit_choice: 'commit-to-new-branch', new_branch_name: 'unshout' })
    expect(reverted.status).toBe(303)
    expect(reverted.location).toBe('/alice/proj/compare/main...unshout')
    expect((await contentOf('proj', 'pick/a.txt', 'unshout'))?.text).toBe('one\ntwo\nthree\nfour\nfive\nsix!\n')
    expect((await headOf('proj', 'unshout')).message).toBe(`Revert "Shout two"\n`)
    for (const query of ['revert=true', 'cherry-pick-type=revert']) {
      const revertForm = await (await page(`/alice/proj/_cherrypick/${picked}/main?${query}`, carol)).text()
      expect(revertForm).toContain('value="Revert &quot;Shout two&quot;"')
      expect(revertForm).toContain(`This reverts commit ${picked}.`)
    }

    // Bytes that are not UTF-8 (Latin-1) are picked exactly as they are.
    const latin1 = Buffer.from('caf\xe9\n', 'latin1')
    const added = await s.post('/repos/alice/proj/contents', { branch: 'main', message: 'Latin-1', files: [{ operation: 'create', path: 'pick/l1.txt', content: latin1.toString('base64') }] }, asAlice)
    expect(added.status).toBe(201)
    expect((await submit(carol, `/alice/proj/_cherrypick/${added.body.commit.sha}/side`, { commit_choice: 'direct' })).status).toBe(303)
    const onSide = await s.get('/repos/alice/proj/contents/pick/l1.txt?ref=side', asAlice)
    expect(Buffer.from(onSide.body.content, 'base64')).toEqual(latin1)

    // A protected branch: the push path refuses the direct commit.
    const guardedHead = (await headOf('guarded')).id
    const first = (await s.get('/repos/alice/guarded/commits?limit=1', asAlice)).body[0].sha
    const refused = await submit(carol, `/alice/guarded/_cherrypick/${first}/main`, { revert: 'true', commit_choice: 'direct' })
    expect(refused.status).toBe(403)
    expect(refused.html).toMatch(/role="alert">[^<]*protected/)
    expect((await headOf('guarded')).id).toBe(guardedHead)
  })
})
