import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { and, eq } from 'drizzle-orm'
import { contentMark } from './db-snapshot'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { git, gitOk, refsOf, remoteUrl, sh, tempDir } from './git-fixture'
import { pullRequests } from '../src/db/schema'
import { checkPull } from '../src/modules/pulls/mergeability'

/**
 * Git transports against hostile or careless clients, with the real git client: request bodies
 * of the wrong type, pushes to the refs the server keeps for pull requests, and error messages
 * that must not show where the server keeps its data.
 */

let s: TestServer
let alice: TestUser
let writer: TestUser
let keysDir: string
let writerKey: string
const dirs: string[] = []
const temp = () => {
  const d = tempDir()
  dirs.push(d)
  return d
}

/** git over SSH as the key's owner, checking the server's host key. */
const sshGit = (cwd: string, args: string[]) =>
  sh(['git', ...args], cwd, {
    GIT_SSH_COMMAND: `ssh -F /dev/null -i ${writerKey} -o IdentitiesOnly=yes -o UserKnownHostsFile=${join(keysDir, 'known_hosts')} -o StrictHostKeyChecking=yes -o BatchMode=yes -p ${s.ssh!.port}`,
  })

beforeAll(async () => {
  s = await startTestServer({ startSshServer: true })
  alice = await s.user('alice')
  writer = await s.user('writer')
  keysDir = temp()
  writeFileSync(join(keysDir, 'known_hosts'), `[127.0.0.1]:${s.ssh!.port} ${s.ssh!.hostKey.publicKey}\n`)
  writerKey = join(keysDir, 'writer')
  expect((await sh(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', 'writer', '-f', writerKey], keysDir)).code).toBe(0)
  expect((await s.post('/user/keys', { title: 'laptop', key: readFileSync(writerKey + '.pub', 'utf8').trim() }, { token: writer.token })).status).toBe(201)
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('git smart HTTP request bodies of another type', () => {
  test('415 for a non-git content type (after the access checks), for anonymous callers too; git clients still work', async () => {
    expect((await s.post('/user/repos', { name: 'typed', auto_init: true }, { token: alice.token })).status).toBe(201)
    expect((await s.post('/user/repos', { name: 'hidden', auto_init: true, private: true }, { token: alice.token })).status).toBe(201)
    const gitDir = join(s.dataDir, 'repositories', 'alice', 'typed.git')
    const before = await refsOf(gitDir)
    for (const service of ['upload-pack', 'receive-pack'])
      for (const type of ['application/json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', null])
        for (const body of ['{}', '0000', 'name=x'])
          for (const who of [null, alice.basic]) {
            const headers: Record<string, string> = {}
            if (type) headers['content-type'] = type
            if (who) headers.authorization = who
            const res = await fetch(`${s.url}/alice/typed.git/git-${service}`, { method: 'POST', headers, body })
            const answer = await res.json()
            // An anonymous push is asked to sign in first, as before; everything else is a 415.
            const expected = service === 'receive-pack' && !who ? 401 : 415
            expect([service, type, body, !!who, res.status]).toEqual([service, type, body, !!who, expected])
            if (expected === 415) expect(answer.message).toBe(`git-${service} expects a request body of type application/x-git-${service}-request`)
            expect(answer.url).toBeString()
          }
    // A repository the caller may not read is still not revealed.
    const hidden = await fetch(`${s.url}/alice/hidden.git/git-upload-pack`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(hidden.status).toBe(401)
    expect(await refsOf(gitDir)).toEqual(before)

    // A real git client whose requests carry another type gets the 415 and says so.
    const url = remoteUrl(s.url, 'alice/typed.git', 'alice', alice.password)
    const clone = join(temp(), 'c')
    const refused = await git(temp(), '-c', 'http.extraHeader=Content-Type: text/plain', 'clone', url, clone)
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain('415')
    // The same client with git's own types clones and pushes.
    await gitOk(temp(), 'clone', '-q', url, clone)
    await gitOk(clone, 'commit', '-q', '--allow-empty', '-m', 'more')
    await gitOk(clone, 'push', '-q', 'origin', 'HEAD')
    expect(await refsOf(gitDir)).not.toEqual(before)
  })
})

describe("refs/pull/ is the server's", () => {
  test('no client push over HTTP or SSH creates, moves or deletes a ref under refs/pull/; git shows why; the server still updates them', async () => {
    const created = await s.post('/user/repos', { name: 'reviewed', auto_init: true }, { token: alice.token })
    expect(created.status).toBe(201)
    const main = created.body.default_branch
    expect((await s.put('/repos/alice/reviewed/collaborators/writer', { permission: 'write' }, { token: alice.token })).status).toBe(204)
    const gitDir = join(s.dataDir, 'repositories', 'alice', 'reviewed.git')
    const httpUrl = remoteUrl(s.url, 'alice/reviewed.git', 'writer', writer.password)
    const sshUrl = `ssh://git@127.0.0.1:${s.ssh!.port}/alice/reviewed.git`
    const work = join(temp(), 'w')
    await gitOk(temp(), 'clone', '-q', httpUrl, work)
    await gitOk(work, 'checkout', '-q', '-b', 'feature')
    await gitOk(work, 'commit', '-q', '--allow-empty', '-m', 'the reviewed change')
    await gitOk(work, 'push', '-q', 'origin', 'feature')
    const opened = await s.post('/repos/alice/reviewed/pulls', { head: 'feature', base: main, title: 'Reviewed' }, { token: writer.token })
    expect(opened.status).toBe(201)
    const pull = (await s.deps.db.select().from(pullRequests).where(and(eq(pullRequests.baseRepoId, opened.body.base.repo.id), eq(pullRequests.index, opened.body.number))))[0]!
    await checkPull(s.deps, pull.id)
    const reviewed = await gitOk(work, 'rev-parse', 'HEAD')
    expect((await refsOf(gitDir))['refs/pull/1/head']).toBe(reviewed)

    await gitOk(work, 'checkout', '-q', '-b', 'evil', main)
    await gitOk(work, 'commit', '-q', '--allow-empty', '-m', 'not what reviewers saw')
    const mark = contentMark(s.deps.db)
    const before = { refs: await refsOf(gitDir), db: await mark() }
    const attempts = [
      ['--force', 'evil:refs/pull/1/head'],
      ['evil:refs/pull/2/head'],
      [':refs/pull/1/head'],
      ['evil:refs/pull/1/merge'],
      // One such ref refuses the whole push, the good ref with it.
      ['evil:refs/heads/ok', '--force', 'evil:refs/pull/1/head'],
    ]
    for (const [transport, url] of [['http', httpUrl], ['ssh', sshUrl]] as const)
      for (const refspecs of attempts) {
        const args = ['push', url, ...refspecs]
        const push = transport === 'ssh' ? await sshGit(work, args) : await git(work, ...args)
        expect([transport, refspecs, push.code === 0]).toEqual([transport, refspecs, false])
        expect(push.stderr).toContain('remote rejected')
        expect(push.stderr).toContain('refs/pull/ is kept by the server for pull requests')
        expect(await refsOf(gitDir)).toEqual(before.refs)
      }
    expect(await mark()).toBe(before.db)

    // The server's own update of the pull request's ref still happens when its head branch moves.
    await gitOk(work, 'checkout', '-q', 'feature')
    await gitOk(work, 'commit', '-q', '--allow-empty', '-m', 'a reviewed follow-up')
    const followUp = await gitOk(work, 'rev-parse', 'HEAD')
    expect((await sshGit(work, ['push', '-q', sshUrl, 'feature'])).code).toBe(0)
    await checkPull(s.deps, pull.id)
    expect((await refsOf(gitDir))['refs/pull/1/head']).toBe(followUp)
    // CI fetching the ref gets the pull request's code.
    const ci = join(temp(), 'ci')
    await gitOk(temp(), 'init', '-q', ci)
    await gitOk(ci, 'fetch', '-q', remoteUrl(s.url, 'alice/reviewed.git', 'writer', writer.password), 'refs/pull/1/head')
    expect(await gitOk(ci, 'rev-parse', 'FETCH_HEAD')).toBe(followUp)
  })
})

describe('error messages sent to git clients', () => {
  test("git archive --remote over SSH: git's errors reach the client without the server's data folder", async () => {
    const created = await s.post('/user/repos', { name: 'archived-paths', auto_init: true }, { token: alice.token })
    expect(created.status).toBe(201)
    const url = `ssh://git@127.0.0.1:${s.ssh!.port}/alice/archived-paths.git`
    const main = created.body.default_branch
    const cases = [[main, '../outside'], [main, '/etc/passwd'], ['no-such-ref'], [main, 'no-such-file']]
    for (const args of cases) {
      const r = await sshGit(keysDir, ['archive', `--remote=${url}`, '--format=tar', ...args])
      expect([args, r.code === 0]).toEqual([args, false])
      // Still says what went wrong, in the repository's own terms.
      expect(r.stderr).toContain('remote: fatal:')
      expect(r.stderr).not.toContain(s.dataDir)
      expect(r.stderr).not.toContain('repositories/alice')
    }
    const outside = await sshGit(keysDir, ['archive', `--remote=${url}`, main, '../outside'])
    expect(outside.stderr).toContain("'../outside' is outside repository at 'alice/archived-paths.git")
    // Archives themselves are untouched.
    const ok = await sh(['sh', '-c', `git archive --remote=${url} --format=tar ${main} README.md | tar -tf -`], keysDir, {
      GIT_SSH_COMMAND: `ssh -F /dev/null -i ${writerKey} -o IdentitiesOnly=yes -o UserKnownHostsFile=${join(keysDir, 'known_hosts')} -o StrictHostKeyChecking=yes -o BatchMode=yes -p ${s.ssh!.port}`,
    })
    expect(ok.code).toBe(0)
    expect(ok.stdout.trim()).toBe('README.md')
  })
})
