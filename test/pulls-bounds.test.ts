import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, sh } from './git-fixture'
import { commitOn, pushedRepo } from './pull-fixtures'
import { startGit } from '../src/git/run'
import { readTokens } from '../src/git/tokens'
import { commitFiles } from '../src/git/commit-files'

/**
 * A pull request whose commits each touch tens of thousands of files (anyone can open one from a
 * fork): its commit and file lists answer a bounded number of bytes, read a bounded part of git's
 * output, and leave the server answering other requests meanwhile.
 */

let s: TestServer
let alice: TestUser
const dirs: string[] = []
const tok = (u: TestUser) => ({ token: u.token })

const COMMITS = 3
const FILES_PER_COMMIT = 20_000
let repoDir = ''
let hugeHead = ''

/**
 * Commits on `branch` (from `from`), each adding (or setting) `files` paths under `d<n>/` that
 * share one blob of `content`: a big tree made in a second, with plumbing.
 */
async function hugeCommits(dir: string, branch: string, from: string, commits: number, files: number, content = 'the same line in every file\n'): Promise<string> {
  const env = { GIT_INDEX_FILE: join(dir, '.git', `${branch}.index`) }
  const blobFile = join(dir, '..', `${branch}.blob`)
  writeFileSync(blobFile, content)
  dirs.push(blobFile)
  const blob = await gitOk(dir, 'hash-object', '-w', blobFile)
  expect((await sh(['git', 'read-tree', from], dir, env)).code).toBe(0)
  let parent = await gitOk(dir, 'rev-parse', from)
  for (let c = 1; c <= commits; c++) {
    const list = join(dir, '..', `${branch}-${c}.list`)
    dirs.push(list)
    writeFileSync(list, Array.from({ length: files }, (_, i) => `100644 ${blob}\td${c}/f${String(i).padStart(6, '0')}.txt\n`).join(''))
    expect((await sh(['sh', '-c', 'git update-index --add --index-info < "$0"', list], dir, env)).code).toBe(0)
    const tree = (await sh(['git', 'write-tree'], dir, env)).stdout.trim()
    parent = await gitOk(dir, 'commit-tree', tree, '-p', parent, '-m', `add ${files} files in d${c}`)
  }
  await gitOk(dir, 'update-ref', `refs/heads/${branch}`, parent)
  return parent
}

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  const repo = await pushedRepo(s, alice, 'big', dirs)
  repoDir = repo.dir
  hugeHead = await hugeCommits(repo.dir, 'huge', 'main', COMMITS, FILES_PER_COMMIT)
  await gitOk(repo.dir, 'push', '-q', 'origin', 'huge')
  const pr = await s.post('/repos/alice/big/pulls', { head: 'huge', base: 'main', title: 'Huge' }, tok(alice))
  expect(pr.status).toBe(201)
  expect(pr.body.number).toBe(1)
})
afterAll(async () => {
  await s.stop()
  dirs.forEach((d) => rmSync(d, { recursive: true, force: true }))
})

const bytes = (text: string) => Buffer.byteLength(text, 'utf8')

describe('a pull request of commits touching tens of thousands of files', () => {
  test('its commits answer a bounded body: each lists at most the configured number of files, marked truncated, with exact stats', async () => {
    const max = s.config.maxCommitFiles
    expect(max).toBe(1000)
    const r = await s.get('/repos/alice/big/pulls/1/commits', tok(alice))
    expect(r.status).toBe(200)
    expect(r.headers.get('x-total-count')).toBe(String(COMMITS))
    expect(r.body).toHaveLength(COMMITS)
    expect(r.body[0].sha).toBe(hugeHead)
    for (const c of r.body) {
      expect(c.files).toHaveLength(max)
      expect(c.files_truncated).toBe(true)
      expect(c.files[0]).toEqual({ filename: expect.stringMatching(/^d\d\/f000000\.txt$/), status: 'added' })
      // The stats are git's count of the whole commit, not of the files listed.
      expect(c.stats).toEqual({ total: FILES_PER_COMMIT, additions: FILES_PER_COMMIT, deletions: 0 })
    }
    // Bytes received: the listed files and a few kilobytes of record per commit; all 20,000 paths would be ~50x more.
    expect(bytes(r.text)).toBeLessThan(COMMITS * (max * 100 + 8192))
    expect(bytes(r.text)).toBeLessThan((COMMITS * FILES_PER_COMMIT * 40) / 10)
  })

  test('files=false leaves the files out (null, as Gitea) and reads none; verification=false is taken', async () => {
    const r = await s.get('/repos/alice/big/pulls/1/commits?files=false&verification=false', tok(alice))
    expect(r.status).toBe(200)
    expect(r.body).toHaveLength(COMMITS)
    for (const c of r.body) {
      expect(c.files).toBeNull()
      expect('files_truncated' in c).toBe(false)
      expect(c.stats.additions).toBe(FILES_PER_COMMIT)
      expect(c.commit.verification).toBeNull()
    }
    expect(bytes(r.text)).toBeLessThan(COMMITS * 8192)
    // Gitea's FormBool: an empty value is the default (true); `0` and `f` are false.
    expect((await s.get('/repos/alice/big/pulls/1/commits?files=&limit=1', tok(alice))).body[0].files).toHaveLength(s.config.maxCommitFiles)
    expect((await s.get('/repos/alice/big/pulls/1/commits?files=0&limit=1', tok(alice))).body[0].files).toBeNull()
    expect((await s.get('/repos/alice/big/pulls/1/commits?files=F&limit=1', tok(alice))).body[0].files).toBeNull()
  })

  test('pages: limit and page pick the commits, X-Total-Count and Link describe the whole list', async () => {
    const r = await s.get('/repos/alice/big/pulls/1/commits?limit=1&page=2&files=false', tok(alice))
    expect(r.status).toBe(200)
    expect(r.body.map((c: any) => c.sha)).toEqual([await gitOk(repoDir, 'rev-parse', 'huge~1')])
    expect(r.headers.get('x-total-count')).toBe(String(COMMITS))
    const link = r.headers.get('link') ?? ''
    expect(link).toContain('commits?limit=1&page=3&files=false>; rel="next"')
    expect(link).toContain('commits?limit=1&page=1&files=false>; rel="prev"')
    const last = await s.get('/repos/alice/big/pulls/1/commits?limit=2&page=2', tok(alice))
    expect(last.body).toHaveLength(1)
    expect(last.body[0].files).toHaveLength(s.config.maxCommitFiles)
  })

  test('its files list the first 3000 of 60,000, says they are cut, and pages within them', async () => {
    const r = await s.get('/repos/alice/big/pulls/1/files?limit=50&page=60', tok(alice))
    expect(r.status).toBe(200)
    expect(r.headers.get('x-total-count')).toBe('3000')
    expect(r.headers.get('x-warren-files-truncated')).toBe('true')
    expect(r.body).toHaveLength(50)
    expect(r.body[49].filename).toBe('d1/f002999.txt')
    expect(r.body[49]).toMatchObject({ status: 'added', additions: 1, deletions: 0 })
    expect((await s.get('/repos/alice/big/pulls/1/files?limit=50&page=61', tok(alice))).body).toEqual([])
  })

  test('while such lists are being built, other requests are answered', async () => {
    const order: string[] = []
    const big = [1, 2, 3].map((n) =>
      s.get('/repos/alice/big/pulls/1/commits', tok(alice)).then((r) => {
        order.push(`commits ${n}`)
        return r
      }),
    )
    const version = s.get('/api/v1/version').then((r) => {
      order.push('version')
      return r
    })
    const [v, ...lists] = await Promise.all([version, ...big])
    expect(v.status).toBe(200)
    expect(v.body.version).toBeString()
    for (const r of lists) expect(r.status).toBe(200)
    expect(order).toHaveLength(4)
  })
})

describe('a pull request conflicting in thousands of files', () => {
  test('names the first 200 conflicting paths and is not mergeable', async () => {
    await hugeCommits(repoDir, 'clash-base', 'main', 1, 5000, 'base\n')
    await hugeCommits(repoDir, 'clash-left', 'clash-base', 1, 5000, 'left\n')
    await hugeCommits(repoDir, 'clash-right', 'clash-base', 1, 5000, 'right\n')
    await gitOk(repoDir, 'push', '-q', 'origin', 'clash-left', 'clash-right')
    const pr = await s.post('/repos/alice/big/pulls', { head: 'clash-right', base: 'clash-left', title: 'Clash' }, tok(alice))
    expect(pr.status).toBe(201)
    expect(pr.body.mergeable).toBe(false)
    expect(pr.body.conflicted_files).toHaveLength(200)
    expect(pr.body.conflicted_files[0]).toBe('d1/f000000.txt')
  })
})

describe('the git readers stop git where the list stops', () => {
  test('readTokens kills git when the reader has had enough, and reports it', async () => {
    const proc = startGit(['log', '-z', '--raw', '--no-renames', '--format=%H', 'huge'], { gitDir: join(repoDir, '.git') })
    let seen = 0
    const read = await readTokens(proc, () => ++seen < 10, 4096)
    expect(read.stopped).toBe(true)
    expect(seen).toBe(10)
    expect((await proc.done).killed?.kind).toBe('aborted')
  })

  test('commitFiles cuts each commit at its limit and still lists the commits after a cut one', async () => {
    const ids = (await gitOk(repoDir, 'rev-list', 'huge', '^main')).split('\n')
    const lists = await commitFiles({ gitDir: join(repoDir, '.git'), limits: { quick: 30, long: 600 } }, ids, 5)
    expect([...lists.keys()]).toEqual(ids)
    for (const id of ids) {
      expect(lists.get(id)!.files).toHaveLength(5)
      expect(lists.get(id)!.truncated).toBe(true)
    }
  })

  test('paths shaped like entries (":x", "1\\t2\\tx") are read as paths', async () => {
    const head = await commitOn(repoDir, 'odd', { ':colon.txt': 'c\n', '1\t2\ttab.txt': 't\n' }, 'odd names', 'main')
    const lists = await commitFiles({ gitDir: join(repoDir, '.git'), limits: { quick: 30, long: 600 } }, [head], 2)
    expect(lists.get(head)).toEqual({
      files: [
        { path: '1\t2\ttab.txt', status: 'A', sameContent: false },
        { path: ':colon.txt', status: 'A', sameContent: false },
      ],
      truncated: false,
    })
  })
})
