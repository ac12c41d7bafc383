import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, makeWorkRepo, remoteUrl, sh, tempDir } from './git-fixture'
import { gitEnv } from '../src/git/run'
import { isLsRefsRequest, pktLine } from '../src/git/smart-http'
import { refAnswerHits } from '../src/git/ref-answers'

/**
 * upload-pack's ref answers (the advertisement of protocol v0 and v2, v2's ls-refs) are kept
 * while a repository's refs and config are unchanged (src/git/ref-answers.ts). Each answer is
 * compared, byte for byte, with what git itself prints for the repository at that moment: on
 * the first request (git ran) and the next ones (kept), after pushes, deletions, annotated
 * tags, `git pack-refs`, a new HEAD and a config change, on an empty repository and full ones.
 */

let s: TestServer
let alice: TestUser
const dirs: string[] = []
const temp = () => {
  const d = tempDir()
  dirs.push(d)
  return d
}
const gitDirOf = (name: string) => join(s.dataDir, 'repositories', 'alice', `${name}.git`)

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  for (const name of ['empty', 'full', 'other']) expect((await s.post('/user/repos', { name }, { token: alice.token })).status).toBe(201)
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** What git itself prints: `git upload-pack --stateless-rpc` on the bare repository, in Warren's environment. */
async function gitsOwn(gitDir: string, opts: { advertise?: boolean; v2?: boolean; input?: Uint8Array }): Promise<Buffer> {
  const proc = Bun.spawn(['git', 'upload-pack', '--stateless-rpc', ...(opts.advertise ? ['--advertise-refs'] : []), gitDir], {
    env: gitEnv(opts.v2 ? { GIT_PROTOCOL: 'version=2' } : {}),
    stdin: opts.input ? new Blob([opts.input as Uint8Array<ArrayBuffer>]) : 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const out = Buffer.from(await new Response(proc.stdout).arrayBuffer())
  expect(await proc.exited).toBe(0)
  return opts.advertise ? Buffer.concat([pktLine('# service=git-upload-pack\n'), Buffer.from('0000'), out]) : out
}

/** A protocol v2 request body: the command, the capabilities, a delimiter, the arguments, a flush. */
function v2Request(command: string, args: string[]): Uint8Array {
  return Buffer.concat([
    pktLine(`command=${command}\n`),
    pktLine('agent=git/2.39.5\n'),
    pktLine('object-format=sha1\n'),
    Buffer.from('0001'),
    ...args.map((a) => pktLine(`${a}\n`)),
    Buffer.from('0000'),
  ])
}

const LS_REFS_BODIES = [
  v2Request('ls-refs', ['peel', 'symrefs', 'unborn']),
  v2Request('ls-refs', ['symrefs', 'ref-prefix HEAD', 'ref-prefix refs/heads/', 'ref-prefix refs/tags/']),
  v2Request('ls-refs', ['peel', 'ref-prefix refs/tags/']),
  v2Request('ls-refs', []),
]

async function warrenAdvertisement(name: string, v2: boolean): Promise<Buffer> {
  const res = await fetch(`${s.url}/alice/${name}.git/info/refs?service=git-upload-pack`, { headers: v2 ? { 'Git-Protocol': 'version=2' } : {} })
  expect(res.status).toBe(200)
  return Buffer.from(await res.arrayBuffer())
}

async function warrenLsRefs(name: string, body: Uint8Array): Promise<Buffer> {
  const res = await fetch(`${s.url}/alice/${name}.git/git-upload-pack`, {
    method: 'POST',
    headers: { 'Git-Protocol': 'version=2', 'content-type': 'application/x-git-upload-pack-request' },
    body: body as Uint8Array<ArrayBuffer>,
  })
  expect(res.status).toBe(200)
  expect(res.headers.get('content-type')).toBe('application/x-git-upload-pack-result')
  return Buffer.from(await res.arrayBuffer())
}

/**
 * Every answer, asked twice, is git's own for the repository as it is now: the second is served
 * kept (the test server runs in this process, so its hit count is readable here).
 */
async function expectGitsAnswers(name: string): Promise<void> {
  const gitDir = gitDirOf(name)
  for (const v2 of [false, true]) {
    const own = await gitsOwn(gitDir, { advertise: true, v2 })
    expect((await warrenAdvertisement(name, v2)).toString('latin1')).toBe(own.toString('latin1'))
    const hits = refAnswerHits()
    expect((await warrenAdvertisement(name, v2)).toString('latin1')).toBe(own.toString('latin1'))
    expect(refAnswerHits()).toBe(hits + 1)
  }
  for (const body of LS_REFS_BODIES) {
    const own = await gitsOwn(gitDir, { v2: true, input: body })
    expect((await warrenLsRefs(name, body)).toString('latin1')).toBe(own.toString('latin1'))
    const hits = refAnswerHits()
    expect((await warrenLsRefs(name, body)).toString('latin1')).toBe(own.toString('latin1'))
    expect(refAnswerHits()).toBe(hits + 1)
  }
}

describe('ref answers without git', () => {
  test('an empty repository: advertisements and ls-refs (unborn HEAD) are git’s own', async () => {
    await expectGitsAnswers('empty')
    const own = (await gitsOwn(gitDirOf('empty'), { v2: true, input: LS_REFS_BODIES[0]! })).toString()
    expect(own).toContain('unborn HEAD symref-target:refs/heads/main')
  })

  test('branches, light and annotated tags, loose and packed, across every change', async () => {
    const work = await makeWorkRepo()
    dirs.push(work.dir)
    const url = remoteUrl(s.url, 'alice/full.git', 'alice', alice.token)
    await gitOk(work.dir, 'push', '-q', url, 'master', 'dev', 'feature/slash', '--tags')
    await expectGitsAnswers('full')
    // Peeled annotated tags are in the answers.
    const peeled = (await warrenLsRefs('full', LS_REFS_BODIES[0]!)).toString()
    expect(peeled).toMatch(/refs\/tags\/v2\.0 peeled:[0-9a-f]{40}/)
    expect(peeled).toMatch(/HEAD symref-target:refs\/heads\/master/)
    const v0 = (await warrenAdvertisement('full', false)).toString()
    expect(v0).toContain('refs/tags/v2.0^{}')

    // A new commit on a branch and a new annotated tag.
    writeFileSync(join(work.dir, 'more.txt'), 'more\n')
    await gitOk(work.dir, 'add', 'more.txt')
    await gitOk(work.dir, 'commit', '-q', '-m', 'More')
    await gitOk(work.dir, 'tag', '-a', 'v3.0', '-m', 'Release 3.0')
    await gitOk(work.dir, 'push', '-q', url, 'master', 'v3.0')
    await expectGitsAnswers('full')
    expect((await warrenLsRefs('full', LS_REFS_BODIES[2]!)).toString()).toContain('refs/tags/v3.0 peeled:')

    // Refs packed (as gc does), then one of them deleted, one changed while packed.
    await gitOk(gitDirOf('full'), 'pack-refs', '--all')
    await expectGitsAnswers('full')
    await gitOk(work.dir, 'push', '-q', url, ':feature/slash')
    await expectGitsAnswers('full')
    expect((await warrenLsRefs('full', LS_REFS_BODIES[3]!)).toString()).not.toContain('feature/slash')
    await gitOk(work.dir, 'push', '-q', '--force', url, 'dev:master')
    await expectGitsAnswers('full')

    // A new default branch (HEAD), then a config change that hides refs.
    expect((await s.patch('/repos/alice/full', { default_branch: 'dev' }, { token: alice.token })).status).toBe(200)
    await expectGitsAnswers('full')
    expect((await warrenLsRefs('full', LS_REFS_BODIES[0]!)).toString()).toContain('HEAD symref-target:refs/heads/dev')
    const gitDir = gitDirOf('full')
    await gitOk(gitDir, 'config', '--file', join(gitDir, 'config'), 'uploadpack.hideRefs', 'refs/tags/v1.0')
    await expectGitsAnswers('full')
    expect((await warrenLsRefs('full', LS_REFS_BODIES[3]!)).toString()).not.toContain('refs/tags/v1.0')
    await gitOk(gitDir, 'config', '--file', join(gitDir, 'config'), '--unset', 'uploadpack.hideRefs')
    await expectGitsAnswers('full')
  })

  test('git’s own clients: ls-remote (protocol v2 and v0), clone and fetch over HTTP', async () => {
    const work = await makeWorkRepo()
    dirs.push(work.dir)
    await gitOk(work.dir, 'push', '-q', remoteUrl(s.url, 'alice/other.git', 'alice', alice.token), '--all')
    await gitOk(work.dir, 'push', '-q', remoteUrl(s.url, 'alice/other.git', 'alice', alice.token), '--tags')
    const httpUrl = `${s.url}/alice/other.git`
    const onDisk = await gitOk(work.dir, 'ls-remote', gitDirOf('other'))
    for (const version of ['2', '0']) {
      for (let i = 0; i < 2; i++) expect(await gitOk(work.dir, '-c', `protocol.version=${version}`, 'ls-remote', httpUrl)).toBe(onDisk)
      expect(await gitOk(work.dir, '-c', `protocol.version=${version}`, 'ls-remote', '--tags', httpUrl)).toBe(await gitOk(work.dir, 'ls-remote', '--tags', gitDirOf('other')))
    }
    // A clone's fetch request (short, read whole, not ls-refs) still reaches git as it came.
    const dest = join(temp(), 'clone')
    await gitOk(work.dir, '-c', 'protocol.version=2', 'clone', '-q', httpUrl, dest)
    expect(await gitOk(dest, 'rev-parse', 'refs/remotes/origin/dev')).toBe(await gitOk(work.dir, 'rev-parse', 'dev'))
    const fetched = await sh(['git', '-c', 'protocol.version=2', 'fetch', '-q', 'origin'], dest)
    expect(fetched.code).toBe(0)
  })

  test('only a whole, well-formed ls-refs request is taken for one', () => {
    expect(isLsRefsRequest(LS_REFS_BODIES[0]!)).toBe(true)
    expect(isLsRefsRequest(Buffer.from('0014command=ls-refs\n0000'))).toBe(true)
    expect(isLsRefsRequest(v2Request('fetch', ['done']))).toBe(false)
    // Cut short, trailing bytes, a bad length, a delimiter first, nothing.
    const whole = Buffer.from(LS_REFS_BODIES[0]!)
    expect(isLsRefsRequest(whole.subarray(0, whole.length - 4))).toBe(false)
    expect(isLsRefsRequest(Buffer.concat([whole, Buffer.from('0000')]))).toBe(false)
    expect(isLsRefsRequest(Buffer.from('0003command=ls-refs\n0000'))).toBe(false)
    expect(isLsRefsRequest(Buffer.from('zz14command=ls-refs\n0000'))).toBe(false)
    expect(isLsRefsRequest(Buffer.from('00010014command=ls-refs\n0000'))).toBe(false)
    expect(isLsRefsRequest(Buffer.from('0000'))).toBe(false)
    expect(isLsRefsRequest(new Uint8Array(0))).toBe(false)
  })
})
