import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { git, gitOk, oneCommitRepo, refsOf, remoteUrl, tempDir } from './git-fixture'

/**
 * Git transports against hostile or careless clients, with the real git client: request bodies
 * of the wrong type, pushes to the refs the server keeps for pull requests, and error messages
 * that must not show where the server keeps its data.
 */

let s: TestServer
let alice: TestUser
const dirs: string[] = []
const temp = () => {
  const d = tempDir()
  dirs.push(d)
  return d
}

beforeAll(async () => {
  s = await startTestServer({ startSshServer: true })
  alice = await s.user('alice')
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
