import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { renameSync } from 'node:fs'
import { GitError, repoPath } from '../src/git/run'
import { apiErrorOfGit } from '../src/lib/errors'
import { startTestServer, type TestServer, type TestUser } from './helpers'

/**
 * A repository's folder not where a request found the repository: a rename, transfer or deletion
 * moves or removes the folder before its rows change, so requests that looked the repository up
 * just before run git at the old place. A race audit saw such requests answered 500, with git's
 * words for the missing folder; they are a 503 with Retry-After (asked again, the request finds
 * the repository where it is now, or finds it gone). A folder already missing when the request
 * comes reads as a repository without those refs: 404s, never a 500.
 */

let s: TestServer
let alice: TestUser

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  expect((await s.post('/user/repos', { name: 'moving', auto_init: true }, { token: alice.token })).status).toBe(201)
})
afterAll(() => s.stop())

describe('a repository folder moved away from under requests', () => {
  test("git's words for a missing folder (seen under renames) answer 503 with Retry-After; other failures stay git's own", () => {
    for (const message of [
      'git mktree failed: fatal: not a git repository: /data/repositories/alice/moving.git',
      'git hash-object failed: fatal: cannot start git: ENOENT: no such file or directory, posix_spawn',
      "git cat-file could not start: the repository's folder is missing or unreadable",
    ]) {
      const answer = apiErrorOfGit(new GitError('failed', message, 'x'))
      expect([answer.status, answer.message, answer.headers]).toEqual([503, 'The repository was moved or deleted while this request was answered; try again', { 'Retry-After': '1' }])
    }
    expect(apiErrorOfGit(new GitError('failed', 'git merge-tree failed: fatal: bad object', 'merge-tree')).status).toBe(500)
    expect(apiErrorOfGit(new GitError('timeout', 'git took longer than 30 s', 'log')).status).toBe(504)
  })

  test('requests to a repository whose folder is gone are answered, none with a 500; nothing is written; all answer again once it is back', async () => {
    const gitDir = repoPath(s.dataDir, 'alice', 'moving')
    const auth = { token: alice.token }
    const reads = ['/repos/alice/moving/contents/README.md', '/repos/alice/moving/commits?limit=1', '/repos/alice/moving/git/trees/main', '/repos/alice/moving/branches/main', '/repos/alice/moving/raw/README.md', '/repos/alice/moving/git/refs', '/repos/alice/moving/archive/main.zip', '/repos/alice/moving/branches', '/repos/alice/moving/tags']
    const writes: [string, unknown][] = [
      ['/repos/alice/moving/contents/new.txt', { content: 'eA==' }],
      ['/repos/alice/moving/branches', { new_branch_name: 'x' }],
      ['/repos/alice/moving/tags', { tag_name: 'v1' }],
    ]
    for (const path of reads) expect([path, (await s.get(path, auth)).status]).toEqual([path, 200])
    renameSync(gitDir, `${gitDir}.moved`)
    try {
      for (const path of reads) expect([path, [200, 404, 503].includes((await s.get(path, auth)).status)]).toEqual([path, true])
      for (const [path, body] of writes) expect([path, [404, 503].includes((await s.post(path, body, auth)).status)]).toEqual([path, true])
    } finally {
      renameSync(`${gitDir}.moved`, gitDir)
    }
    for (const path of reads) expect([path, (await s.get(path, auth)).status]).toEqual([path, 200])
    expect((await s.get('/repos/alice/moving/contents/new.txt', auth)).status).toBe(404)
    expect((await s.get('/repos/alice/moving/branches/x', auth)).status).toBe(404)
    expect((await s.get('/repos/alice/moving/tags/v1', auth)).status).toBe(404)
  })
})
