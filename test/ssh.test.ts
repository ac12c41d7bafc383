// runs in one half: sqlite
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, oneCommitRepo, refsOf, sh, tempDir } from './git-fixture'
import { eventsOfRepo } from '../src/events/outbox'
import { deployKeys, publicKeys } from '../src/db/schema'
import { loadOrCreateHostKey } from '../src/ssh/host-key'
import { parseGitCommand } from '../src/ssh/command'
import { Client, utils, type ClientChannel } from 'ssh2'

/**
 * Git over SSH with the real git and OpenSSH client: every connection checks the server's host
 * key against a known_hosts file made from the key the server generated (StrictHostKeyChecking).
 */

let s: TestServer
let alice: TestUser
let bob: TestUser
let keysDir: string
let knownHosts: string
const dirs: string[] = []
const temp = () => {
  const d = tempDir()
  dirs.push(d)
  return d
}

/** A new ed25519 key pair made by ssh-keygen: its private key file and public line. */
async function newKey(name: string): Promise<{ path: string; pub: string }> {
  const path = join(keysDir, name)
  const r = await sh(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', path], keysDir)
  if (r.code !== 0) throw new Error(r.stderr)
  return { path, pub: readFileSync(path + '.pub', 'utf8').trim() }
}

function sshCommand(key: string): string {
  return [
    'ssh',
    '-F /dev/null',
    `-i ${key}`,
    '-o IdentitiesOnly=yes',
    `-o UserKnownHostsFile=${knownHosts}`,
    '-o StrictHostKeyChecking=yes',
    '-o BatchMode=yes',
    `-p ${s.ssh!.port}`,
  ].join(' ')
}

/** git with GIT_SSH_COMMAND using `key`. */
const sshGit = (cwd: string, key: string, args: string[], env: Record<string, string> = {}) =>
  sh(['git', ...args], cwd, { GIT_SSH_COMMAND: sshCommand(key), ...env })

/** The OpenSSH client itself (no git), with `key`; `args` after the host. */
const ssh = (key: string, args: string[]) =>
  sh(
    ['ssh', '-F', '/dev/null', '-T', '-i', key, '-o', 'IdentitiesOnly=yes', '-o', `UserKnownHostsFile=${knownHosts}`, '-o', 'StrictHostKeyChecking=yes', '-o', 'BatchMode=yes', '-p', String(s.ssh!.port), 'git@127.0.0.1', ...args],
    keysDir,
  )

let aliceKey: { path: string; pub: string }
let bobKey: { path: string; pub: string }
let strangerKey: { path: string; pub: string }
let readKey: { path: string; pub: string }
let writeKey: { path: string; pub: string }
let secretUrl: string
let secretId: number

beforeAll(async () => {
  s = await startTestServer({ startSshServer: true, migrationsAllowLocalNetworks: true })
  alice = await s.user('alice')
  bob = await s.user('bob')
  keysDir = temp()
  knownHosts = join(keysDir, 'known_hosts')
  writeFileSync(knownHosts, `[127.0.0.1]:${s.ssh!.port} ${s.ssh!.hostKey.publicKey}\n`)
  ;[aliceKey, bobKey, strangerKey, readKey, writeKey] = await Promise.all(['alice', 'bob', 'stranger', 'deploy-read', 'deploy-write'].map(newKey))
  expect((await s.post('/user/keys', { title: 'laptop', key: aliceKey.pub }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/user/keys', { title: 'bob', key: bobKey.pub }, { token: bob.token })).status).toBe(201)
  const created = await s.post('/user/repos', { name: 'secret', private: true }, { token: alice.token })
  expect(created.status).toBe(201)
  secretUrl = created.body.ssh_url
  secretId = created.body.id
  expect((await s.post('/user/repos', { name: 'other', private: true }, { token: alice.token })).status).toBe(201)
  const ro = await s.post('/repos/alice/secret/keys', { title: 'ci read', key: readKey.pub, read_only: true }, { token: alice.token })
  const rw = await s.post('/repos/alice/secret/keys', { title: 'ci write', key: writeKey.pub, read_only: false }, { token: alice.token })
  expect([ro.status, rw.status]).toEqual([201, 201])
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

/** Where the first flush-pkt (0000) of git's pkt-lines in `b` ends; -1 while it has not come. */
function flushEnd(b: Buffer): number {
  for (let at = 0; at + 4 <= b.length; ) {
    const n = parseInt(b.subarray(at, at + 4).toString(), 16)
    if (n === 0) return at + 4
    at += n
  }
  return -1
}

/** Band 1 (the pack) of git's side-band-64k pkt-lines, up to their flush. */
function sideBand1(b: Buffer): Buffer {
  const parts: Buffer[] = []
  for (let at = 0; at + 4 <= b.length; ) {
    const n = parseInt(b.subarray(at, at + 4).toString(), 16)
    if (n === 0) break
    if (b[at + 4] === 1) parts.push(b.subarray(at + 5, at + n))
    at += n
  }
  return Buffer.concat(parts)
}

describe('git over SSH', () => {
  test('ssh_url names the SSH server; its host key is the one kept in the data folder', () => {
    expect(secretUrl).toBe(`ssh://git@127.0.0.1:${s.ssh!.port}/alice/secret.git`)
    expect(loadOrCreateHostKey(s.dataDir).publicKey).toBe(s.ssh!.hostKey.publicKey)
    expect(s.ssh!.hostKey.publicKey).toStartWith('ssh-ed25519 ')
  })

  test('a user key pushes to, clones and fetches a private repository; the push is recorded', async () => {
    const work = await oneCommitRepo()
    dirs.push(work)
    const first = await gitOk(work, 'rev-parse', 'HEAD')
    const push = await sshGit(work, aliceKey.path, ['push', secretUrl, 'main'])
    expect(push.stderr).toContain('[new branch]')
    expect(push.code).toBe(0)
    const events = (await eventsOfRepo(s.deps.db, secretId)).filter((e) => e.kind === 'push')
    expect(events.map((e) => [e.actorId, e.payload])).toEqual([[alice.user.id, { ref: 'refs/heads/main', before: '0'.repeat(40), after: first }]])
    expect((await s.get('/repos/alice/secret', { token: alice.token })).body).toMatchObject({ empty: false, default_branch: 'main' })

    const clone = join(temp(), 'c')
    const cloned = await sshGit(keysDir, aliceKey.path, ['clone', '-q', secretUrl, clone])
    expect(cloned.code).toBe(0)
    expect(await gitOk(clone, 'rev-parse', 'HEAD')).toBe(first)

    writeFileSync(join(work, 'a.txt'), 'two\n')
    await gitOk(work, 'commit', '-q', '-am', 'two')
    expect((await sshGit(work, aliceKey.path, ['push', '-q', secretUrl, 'main'])).code).toBe(0)
    const fetched = await sshGit(clone, aliceKey.path, ['fetch', '-q', 'origin'])
    expect(fetched.code).toBe(0)
    expect(await gitOk(clone, 'rev-parse', 'origin/main')).toBe(await gitOk(work, 'rev-parse', 'HEAD'))
  })

  test('protocol v2 is spoken when the client asks (GIT_PROTOCOL passed through)', async () => {
    const r = await sshGit(keysDir, aliceKey.path, ['-c', 'protocol.version=2', 'ls-remote', secretUrl], { GIT_TRACE_PACKET: '1' })
    expect(r.code).toBe(0)
    expect(r.stderr).toContain('version 2')
    expect(r.stderr).toContain('ls-refs')
    expect(r.stdout).toContain('refs/heads/main')
    const v0 = await sshGit(keysDir, aliceKey.path, ['-c', 'protocol.version=0', 'ls-remote', secretUrl], { GIT_TRACE_PACKET: '1' })
    expect(v0.code).toBe(0)
    expect(v0.stderr).not.toContain('version 2')
    expect(v0.stdout).toContain('refs/heads/main')
  })

  test("git's output over SSH (a client of ssh2's own): whole, in full packets, and what git wrote before waiting for the client is not held back", async () => {
    expect((await s.post('/user/repos', { name: 'packets', private: true }, { token: alice.token })).status).toBe(201)
    const work = await oneCommitRepo()
    dirs.push(work)
    writeFileSync(join(work, 'random.bin'), randomBytes(3 << 20))
    await gitOk(work, 'add', 'random.bin')
    await gitOk(work, 'commit', '-q', '-m', 'random')
    const head = await gitOk(work, 'rev-parse', 'HEAD')
    expect((await sshGit(work, aliceKey.path, ['push', '-q', `ssh://git@127.0.0.1:${s.ssh!.port}/alice/packets.git`, 'main'])).code).toBe(0)

    // ssh2's client gives each CHANNEL_DATA packet as one 'data' event.
    const hostKey = utils.parseKey(s.ssh!.hostKey.publicKey)
    if (hostKey instanceof Error || Array.isArray(hostKey)) throw new Error('host key')
    const client = new Client()
    const ready = new Promise<void>((resolve, reject) => client.once('ready', () => resolve()).once('error', reject))
    client.connect({
      host: '127.0.0.1',
      port: s.ssh!.port,
      username: 'git',
      privateKey: readFileSync(aliceKey.path),
      hostVerifier: (key: Buffer) => key.equals(hostKey.getPublicSSH()),
    })
    await ready
    const channel = await new Promise<ClientChannel>((resolve, reject) => client.exec("git-upload-pack 'alice/packets.git'", (e, c) => (e ? reject(e) : resolve(c))))
    const packets: Buffer[] = []
    let advertised = -1
    const exit = new Promise<number>((resolve) => channel.once('exit', (code: number) => resolve(code)))
    const closed = new Promise<void>((resolve) => channel.once('close', () => resolve()))
    channel.on('data', (d: Buffer) => {
      packets.push(d)
      // The advertisement ends with a flush; git then waits for the client: what it wrote must come without more.
      if (advertised < 0 && (advertised = flushEnd(Buffer.concat(packets))) >= 0) {
        const want = `want ${head} side-band-64k\n`
        channel.write((want.length + 4).toString(16).padStart(4, '0') + want + '00000009done\n')
      }
    })
    expect(await exit).toBe(0)
    await closed
    client.end()
    const all = Buffer.concat(packets)
    expect(all.subarray(advertised, advertised + 8).toString()).toBe('0008NAK\n')
    const pack = sideBand1(all.subarray(advertised + 8))
    expect(pack.subarray(0, 4).toString()).toBe('PACK')
    expect(pack.length).toBeGreaterThan(3 << 20)
    // Whole: git takes the pack (its trailing checksum and every object) into a repository of its own.
    const into = temp()
    await gitOk(into, 'init', '-q', '--bare')
    const indexed = Bun.spawn(['git', 'index-pack', '--stdin', '--fix-thin'], { cwd: into, stdin: new Blob([new Uint8Array(pack)]), stdout: 'pipe', stderr: 'pipe' })
    expect(await indexed.exited).toBe(0)
    expect(await gitOk(into, 'cat-file', '-t', head)).toBe('commit')
    // Mostly full packets (OpenSSH's and ssh2's largest is 32 KiB); written as git wrote, they averaged ~8 KiB.
    const dataPackets = packets.filter((p) => p.length > 0)
    expect(pack.length / dataPackets.length).toBeGreaterThan(16 * 1024)
  })

  test('the path forms git sends: scp-like with and without .git, ssh:// with a leading slash, any case', async () => {
    const port = s.ssh!.port
    for (const url of [`ssh://git@127.0.0.1:${port}/alice/secret`, `ssh://git@127.0.0.1:${port}/Alice/Secret.git`]) {
      const r = await sshGit(keysDir, aliceKey.path, ['ls-remote', url])
      expect(r.code).toBe(0)
      expect(r.stdout).toContain('refs/heads/main')
    }
    // scp-like addresses cannot carry a port: the port comes from the ssh command (-p).
    for (const url of ['git@127.0.0.1:alice/secret.git', 'git@127.0.0.1:alice/secret']) {
      const r = await sshGit(keysDir, aliceKey.path, ['ls-remote', url])
      expect(r.code).toBe(0)
      expect(r.stdout).toContain('refs/heads/main')
    }
  })

  test('an empty repository clones; a renamed repository is still served under its old name', async () => {
    const empty = await s.post('/user/repos', { name: 'empty' }, { token: alice.token })
    const cloned = await sshGit(keysDir, aliceKey.path, ['clone', empty.body.ssh_url, join(temp(), 'e')])
    expect(cloned.code).toBe(0)
    expect(cloned.stderr).toContain('empty repository')
    expect((await s.patch('/repos/alice/empty', { name: 'renamed' }, { token: alice.token })).status).toBe(200)
    const work = await oneCommitRepo()
    dirs.push(work)
    expect((await sshGit(work, aliceKey.path, ['push', '-q', empty.body.ssh_url, 'main'])).code).toBe(0)
    expect((await s.get('/repos/alice/renamed', { token: alice.token })).body.empty).toBe(false)
  })

  test('git archive --remote is served (git-upload-archive)', async () => {
    const r = await sh(['sh', '-c', `git archive --remote=${secretUrl} --format=tar main a.txt | tar -xOf - a.txt`], keysDir, {
      GIT_SSH_COMMAND: sshCommand(aliceKey.path),
    })
    expect(r.code).toBe(0)
    expect(r.stdout).toBe('two\n')
  })

  test('a read-only deploy key clones its repository only and may not push', async () => {
    const clone = join(temp(), 'c')
    expect((await sshGit(keysDir, readKey.path, ['clone', '-q', secretUrl, clone])).code).toBe(0)
    writeFileSync(join(clone, 'b.txt'), 'b\n')
    await gitOk(clone, 'add', 'b.txt')
    await gitOk(clone, 'commit', '-q', '-m', 'b')
    const push = await sshGit(clone, readKey.path, ['push', 'origin', 'main'])
    expect(push.code).not.toBe(0)
    expect(push.stderr).toContain('the deploy key is read-only')
    const other = await sshGit(keysDir, readKey.path, ['ls-remote', secretUrl.replace('secret', 'other')])
    expect(other.code).not.toBe(0)
    expect(other.stderr).toContain('repository alice/other.git does not exist, or you do not have access to it')
  })

  test('a deploy key with write access pushes (recorded as the owner, as Gitea); a key is used at most once a minute in the record', async () => {
    await s.deps.db.update(deployKeys).set({ updatedUnix: 0 }).where(eq(deployKeys.title, 'ci write'))
    const clone = join(temp(), 'c')
    expect((await sshGit(keysDir, writeKey.path, ['clone', '-q', secretUrl, clone])).code).toBe(0)
    const used = (await s.deps.db.select().from(deployKeys).where(eq(deployKeys.title, 'ci write')))[0]!
    expect(used.updatedUnix).toBeGreaterThan(Date.now() / 1000 - 60)
    writeFileSync(join(clone, 'c.txt'), 'c\n')
    await gitOk(clone, 'add', 'c.txt')
    await gitOk(clone, 'commit', '-q', '-m', 'c')
    // Used again within the minute (the push): the record is not rewritten.
    const recent = Math.floor(Date.now() / 1000) - 30
    await s.deps.db.update(deployKeys).set({ updatedUnix: recent }).where(eq(deployKeys.id, used.id))
    const before = (await eventsOfRepo(s.deps.db, secretId)).at(-1)!.id
    const push = await sshGit(clone, writeKey.path, ['push', 'origin', 'main'])
    expect(push.code).toBe(0)
    const pushed = (await eventsOfRepo(s.deps.db, secretId, before)).filter((e) => e.kind === 'push')
    expect(pushed.map((e) => e.actorId)).toEqual([alice.user.id])
    expect((await s.deps.db.select().from(deployKeys).where(eq(deployKeys.id, used.id)))[0]!.updatedUnix).toBe(recent)
  })

  test("a user key's use is recorded (updated time), throttled", async () => {
    await s.deps.db.update(publicKeys).set({ updatedUnix: 1000 }).where(eq(publicKeys.ownerId, alice.user.id))
    expect((await sshGit(keysDir, aliceKey.path, ['ls-remote', secretUrl])).code).toBe(0)
    const first = (await s.deps.db.select().from(publicKeys).where(eq(publicKeys.ownerId, alice.user.id)))[0]!.updatedUnix
    expect(first).toBeGreaterThan(1000)
    await s.deps.db.update(publicKeys).set({ updatedUnix: first - 30 }).where(eq(publicKeys.ownerId, alice.user.id))
    expect((await sshGit(keysDir, aliceKey.path, ['ls-remote', secretUrl])).code).toBe(0)
    expect((await s.deps.db.select().from(publicKeys).where(eq(publicKeys.ownerId, alice.user.id)))[0]!.updatedUnix).toBe(first - 30)
  })

  test("another user's key: the private repository is answered as missing, exactly like a missing one", async () => {
    const secret = await sshGit(keysDir, bobKey.path, ['ls-remote', secretUrl])
    const missing = await sshGit(keysDir, bobKey.path, ['ls-remote', secretUrl.replace('secret', 'nothing')])
    expect(secret.code).not.toBe(0)
    expect(secret.stderr).toContain('Warren: repository alice/secret.git does not exist, or you do not have access to it')
    expect(missing.stderr.replace('nothing', 'secret')).toBe(secret.stderr)
    // Bob can read once he is a collaborator, but not push with read access.
    expect((await s.put('/repos/alice/secret/collaborators/bob', { permission: 'read' }, { token: alice.token })).status).toBe(204)
    const clone = join(temp(), 'c')
    expect((await sshGit(keysDir, bobKey.path, ['clone', '-q', secretUrl, clone])).code).toBe(0)
    const push = await sshGit(clone, bobKey.path, ['push', 'origin', 'main:bob'])
    expect(push.code).not.toBe(0)
    expect(push.stderr).toContain('you do not have permission to push to alice/secret.git')
  })

  test("a stranger's key and a deleted key are refused at sign-in", async () => {
    const stranger = await sshGit(keysDir, strangerKey.path, ['ls-remote', secretUrl])
    expect(stranger.code).not.toBe(0)
    expect(stranger.stderr).toContain('Permission denied (publickey)')

    const temporary = await newKey('temporary')
    const added = await s.post('/user/keys', { title: 'temporary', key: temporary.pub }, { token: alice.token })
    expect((await sshGit(keysDir, temporary.path, ['ls-remote', secretUrl])).code).toBe(0)
    expect((await s.del(`/user/keys/${added.body.id}`, undefined, { token: alice.token })).status).toBe(204)
    const deleted = await sshGit(keysDir, temporary.path, ['ls-remote', secretUrl])
    expect(deleted.code).not.toBe(0)
    expect(deleted.stderr).toContain('Permission denied (publickey)')
  })

  test('a key deleted while its connection stays open stops working on that connection too', async () => {
    const temporary = await newKey('multiplexed')
    const added = await s.post('/user/keys', { title: 'multiplexed', key: temporary.pub }, { token: alice.token })
    const socket = join(keysDir, 'control.sock')
    const master = `${sshCommand(temporary.path)} -o ControlPath=${socket}`
    // A master connection signs in once (-f: in the background after sign-in); later commands reuse it.
    const opened = await sh(['sh', '-c', `${master} -o ControlMaster=yes -f -N git@127.0.0.1`], keysDir)
    expect(opened.code).toBe(0)
    try {
      const env = { GIT_SSH_COMMAND: `${master} -o ControlMaster=no` }
      expect((await sh(['git', 'ls-remote', secretUrl], keysDir, env)).code).toBe(0)
      expect((await s.del(`/user/keys/${added.body.id}`, undefined, { token: alice.token })).status).toBe(204)
      const after = await sh(['git', 'ls-remote', secretUrl], keysDir, env)
      expect(after.code).not.toBe(0)
      expect(after.stderr).toContain('Warren: this key is no longer registered')
    } finally {
      await sh(['sh', '-c', `${master} -O exit git@127.0.0.1`], keysDir)
    }
  })

  test('a shell, another command, a path escape, a bad name and forwarding are refused with a message', async () => {
    const shell = await ssh(aliceKey.path, [])
    expect(shell.code).toBe(1)
    expect(shell.stderr).toContain("Hi there, alice! You've successfully authenticated with the key named laptop, but Warren does not provide shell access")
    const other = await ssh(aliceKey.path, ['ls', '/'])
    expect(other.code).toBe(1)
    expect(other.stderr).toContain('Warren: unknown command "ls"')
    for (const path of ["'../../etc/passwd'", "'/alice/../../secret.git'", "'alice/secret/../../x'", "'alice'"]) {
      const escape = await ssh(aliceKey.path, [`git-upload-pack ${path}`])
      expect(escape.code).toBe(1)
      expect(escape.stderr).toContain('Warren: invalid repository path')
    }
    const extra = await ssh(aliceKey.path, ["git-upload-pack 'alice/secret.git' --strict"])
    expect(extra.code).toBe(1)
    expect(extra.stderr).toContain('takes one repository path')
    // Forwarding (here ssh -W, a direct-tcpip channel to the HTTP port) is refused.
    const stdio = await sh(
      ['ssh', '-F', '/dev/null', '-i', aliceKey.path, '-o', 'IdentitiesOnly=yes', '-o', `UserKnownHostsFile=${knownHosts}`, '-o', 'BatchMode=yes', '-p', String(s.ssh!.port), '-W', `127.0.0.1:${new URL(s.url).port}`, 'git@127.0.0.1'],
      keysDir,
    )
    expect(stdio.code).not.toBe(0)
    expect(stdio.stderr).toContain('open failed')
  })

  test('refs the API could not serve refuse the whole push, reported per ref', async () => {
    const clone = join(temp(), 'c')
    expect((await sshGit(keysDir, aliceKey.path, ['clone', '-q', secretUrl, clone])).code).toBe(0)
    const before = await refsOf(join(s.dataDir, 'repositories', 'alice', 'secret.git'))
    const push = await sshGit(clone, aliceKey.path, ['push', 'origin', 'main:refs/heads/ok', 'main:refs/heads/x/-bad'])
    expect(push.code).not.toBe(0)
    expect(push.stderr).toContain('[remote rejected]')
    expect(push.stderr).toContain('ref name component starts with "-"')
    expect(await refsOf(join(s.dataDir, 'repositories', 'alice', 'secret.git'))).toEqual(before)
    // The connection was left usable: the next push works.
    expect((await sshGit(clone, aliceKey.path, ['push', '-q', 'origin', 'main:refs/heads/ok'])).code).toBe(0)
  })

  test('a push larger than WARREN_MAX_PUSH_SIZE fails and moves no ref; git past its time limit is stopped with a message', async () => {
    const clone = join(temp(), 'c')
    expect((await sshGit(keysDir, aliceKey.path, ['clone', '-q', secretUrl, clone])).code).toBe(0)
    writeFileSync(join(clone, 'big.bin'), randomBytes(1 << 20))
    await gitOk(clone, 'add', 'big.bin')
    await gitOk(clone, 'commit', '-q', '-m', 'big')
    const gitDir = join(s.dataDir, 'repositories', 'alice', 'secret.git')
    const before = await refsOf(gitDir)
    const limit = s.config.maxPushSize
    s.config.maxPushSize = 256 * 1024
    try {
      const push = await sshGit(clone, aliceKey.path, ['push', 'origin', 'main'])
      expect(push.code).not.toBe(0)
      expect(push.stderr).toContain('Warren: The request body is larger than 262144 bytes')
    } finally {
      s.config.maxPushSize = limit
    }
    expect(await refsOf(gitDir)).toEqual(before)

    const timeout = s.config.gitTimeout
    s.config.gitTimeout = 0.001
    try {
      // A clone, not ls-remote: ls-remote succeeds whenever the ref advertisement got out before
      // the kill (git ignores ssh's exit status there); a clone needs a round trip more.
      const slow = await sshGit(keysDir, aliceKey.path, ['clone', '-q', secretUrl, join(temp(), 'slow')])
      expect(slow.code).not.toBe(0)
      expect(slow.stderr).toContain('Warren: git took longer than 0.001 s')
    } finally {
      s.config.gitTimeout = timeout
    }
    expect((await sshGit(clone, aliceKey.path, ['push', '-q', 'origin', 'main'])).code).toBe(0)
  })
})

/** A new user with a key of their own and an SSH URL builder. */
async function userWithKey(name: string) {
  const user = await s.user(name)
  const key = await newKey(name)
  expect((await s.post('/user/keys', { title: name, key: key.pub }, { token: user.token })).status).toBe(201)
  return { user, key }
}

describe('git over SSH: hostile connections and callers whose standing changes', () => {
  test("a disabled account's key is refused on every command; a user who must change password still uses git (as over HTTP)", async () => {
    const root = await s.user('root-ssh', { admin: true })
    const { user: carol, key } = await userWithKey('carol')
    const repo = await s.post('/user/repos', { name: 'own', private: true, auto_init: true }, { token: carol.token })
    expect(repo.status).toBe(201)
    const url = repo.body.ssh_url
    expect((await sshGit(keysDir, key.path, ['ls-remote', url])).code).toBe(0)
    for (const change of [{ prohibit_login: true }, { prohibit_login: false, active: false }]) {
      expect((await s.patch('/admin/users/carol', { login_name: 'carol', source_id: 0, ...change }, { token: root.token })).status).toBe(200)
      const refused = await sshGit(keysDir, key.path, ['ls-remote', url])
      expect(refused.code).not.toBe(0)
      expect(refused.stderr).toContain('Warren: your account is disabled')
    }
    expect((await s.patch('/admin/users/carol', { login_name: 'carol', source_id: 0, active: true, must_change_password: true }, { token: root.token })).status).toBe(200)
    expect((await s.get('/user', { token: carol.token })).status).toBe(403)
    expect((await sshGit(keysDir, key.path, ['ls-remote', url])).code).toBe(0)
    const http = await sh(['git', 'ls-remote', url.replace(/^.*?:\d+\//, `${s.url.replace('://', `://carol:${carol.password}@`)}/`)], keysDir)
    expect(http.code).toBe(0)
  })

  test('pushes to an archived repository and to a mirror are refused, as over HTTP (the one decision); clones still work', async () => {
    const { user: dora, key } = await userWithKey('dora')
    const created = await s.post('/user/repos', { name: 'frozen', auto_init: true }, { token: dora.token })
    expect(created.status).toBe(201)
    const clone = join(temp(), 'frozen')
    expect((await sshGit(keysDir, key.path, ['clone', '-q', created.body.ssh_url, clone])).code).toBe(0)
    await gitOk(clone, 'commit', '-q', '--allow-empty', '-m', 'next')
    expect((await s.patch('/repos/dora/frozen', { archived: true }, { token: dora.token })).status).toBe(200)
    const gitDir = join(s.dataDir, 'repositories', 'dora', 'frozen.git')
    const before = await refsOf(gitDir)
    const archived = await sshGit(clone, key.path, ['push', 'origin', 'HEAD'])
    expect(archived.code).not.toBe(0)
    expect(archived.stderr).toContain('Warren: repository dora/frozen.git is archived (read-only)')
    expect((await sshGit(keysDir, key.path, ['ls-remote', created.body.ssh_url])).code).toBe(0)

    const mirror = await s.post(
      '/repos/migrate',
      { clone_addr: `${s.url}/dora/frozen.git`, uid: dora.user.id, repo_name: 'copy', mirror: true },
      { token: dora.token },
    )
    expect(mirror.status).toBe(201)
    expect(mirror.body.mirror).toBe(true)
    const mirrored = await sshGit(clone, key.path, ['push', mirror.body.ssh_url, 'HEAD:refs/heads/main'])
    expect(mirrored.code).not.toBe(0)
    expect(mirrored.stderr).toContain('Warren: mirror repository dora/copy.git is read-only')
    expect(await refsOf(gitDir)).toEqual(before)
    const overHttp = await sh(['git', 'push', `${s.url.replace('://', `://dora:${dora.password}@`)}/dora/copy.git`, 'HEAD:refs/heads/main'], clone)
    expect(overHttp.code).not.toBe(0)
    expect((await sshGit(keysDir, key.path, ['ls-remote', mirror.body.ssh_url])).code).toBe(0)
  })

  test('a repository deleted while a connection stays open is gone for that connection too; its deploy key stops opening anything', async () => {
    const { user: erin, key } = await userWithKey('erin')
    const created = await s.post('/user/repos', { name: 'brief', private: true, auto_init: true }, { token: erin.token })
    expect(created.status).toBe(201)
    const deployKey = await newKey('brief-deploy')
    expect((await s.post('/repos/erin/brief/keys', { title: 'ci', key: deployKey.pub, read_only: false }, { token: erin.token })).status).toBe(201)
    expect((await sshGit(keysDir, deployKey.path, ['ls-remote', created.body.ssh_url])).code).toBe(0)
    const socket = join(keysDir, 'control-brief.sock')
    const master = `${sshCommand(key.path)} -o ControlPath=${socket}`
    expect((await sh(['sh', '-c', `${master} -o ControlMaster=yes -f -N git@127.0.0.1`], keysDir)).code).toBe(0)
    try {
      const env = { GIT_SSH_COMMAND: `${master} -o ControlMaster=no` }
      expect((await sh(['git', 'ls-remote', created.body.ssh_url], keysDir, env)).code).toBe(0)
      expect((await s.del('/repos/erin/brief', undefined, { token: erin.token })).status).toBe(204)
      const after = await sh(['git', 'ls-remote', created.body.ssh_url], keysDir, env)
      expect(after.code).not.toBe(0)
      expect(after.stderr).toContain('Warren: repository erin/brief.git does not exist')
    } finally {
      await sh(['sh', '-c', `${master} -O exit git@127.0.0.1`], keysDir)
    }
    // The deploy key went with its repository: it no longer signs in at all.
    const orphan = await sshGit(keysDir, deployKey.path, ['ls-remote', created.body.ssh_url])
    expect(orphan.code).not.toBe(0)
    expect(orphan.stderr).toContain('Permission denied (publickey)')
  })
})

describe('SSH command parsing', () => {
  test('the forms clients send are read; anything else is refused with a reason', () => {
    const ok = { ownerName: 'alice', repoName: 'secret.git' }
    expect(parseGitCommand("git-upload-pack 'alice/secret.git'")).toEqual({ service: 'upload-pack', ...ok })
    expect(parseGitCommand("git-receive-pack '/alice/secret.git'")).toEqual({ service: 'receive-pack', ...ok })
    expect(parseGitCommand('git upload-archive "alice/secret.git"')).toEqual({ service: 'upload-archive', ...ok })
    expect(parseGitCommand("git-upload-pack 'ali''ce'/secret.git")).toEqual({ service: 'upload-pack', ...ok })
    expect(parseGitCommand('git-upload-pack alice/secret')).toEqual({ service: 'upload-pack', ownerName: 'alice', repoName: 'secret' })
    const refused = (command: string) => (parseGitCommand(command) as { refusal: string }).refusal
    expect(refused("git-upload-pack 'alice/secret.git")).toContain('takes one repository path')
    expect(refused('git-upload-pack')).toContain('takes one repository path')
    expect(refused("git-upload-pack 'a'\\''b/c'")).toContain('invalid repository path "a\'b/c"')
    expect(refused("git-upload-pack '../x'")).toContain('invalid repository path')
    expect(refused("git-upload-pack 'alice/secret\x1b[2J'")).toContain('invalid repository path "alice/secret?[2J"')
    expect(refused('sh -c id')).toBe('unknown command "sh": only git-upload-pack, git-receive-pack, git-upload-archive and git-lfs-authenticate are served')
    expect(refused('git-upload-pack ' + 'a'.repeat(2000))).toBe('the command is too long')
  })
})

describe('stopping the SSH server (the shutdown of serve)', () => {
  test('a push in flight finishes and is recorded; new connections are refused', async () => {
    const t = await startTestServer({ startSshServer: true })
    try {
      const carol = await t.user('carol')
      const key = await newKey('carol-stop')
      expect((await t.post('/user/keys', { title: 'carol', key: key.pub }, { token: carol.token })).status).toBe(201)
      const created = await t.post('/user/repos', { name: 'slow' }, { token: carol.token })
      expect(created.status).toBe(201)
      // The server's own hook holds the push inside receive-pack long enough to stop the server under it.
      const gitDir = join(t.dataDir, 'repositories', 'carol', 'slow.git')
      const started = join(temp(), 'hook-started')
      writeFileSync(join(gitDir, 'hooks', 'pre-receive'), `#!/bin/sh\ntouch '${started}'\nsleep 1.5\ncat >/dev/null\n`, { mode: 0o755 })
      const hosts = join(temp(), 'known_hosts')
      writeFileSync(hosts, `[127.0.0.1]:${t.ssh!.port} ${t.ssh!.hostKey.publicKey}\n`)
      const command = `ssh -F /dev/null -i ${key.path} -o IdentitiesOnly=yes -o UserKnownHostsFile=${hosts} -o StrictHostKeyChecking=yes -o BatchMode=yes -p ${t.ssh!.port}`
      const work = await oneCommitRepo()
      dirs.push(work)
      const push = sh(['git', 'push', created.body.ssh_url, 'main'], work, { GIT_SSH_COMMAND: command })
      for (let i = 0; i < 200 && !existsSync(started); i++) await Bun.sleep(25)
      expect(existsSync(started)).toBe(true)
      const stopped = t.ssh!.stop()
      const late = await sh(['git', 'ls-remote', created.body.ssh_url], work, { GIT_SSH_COMMAND: command })
      expect(late.code).not.toBe(0)
      const pushed = await push
      expect([pushed.code, pushed.stderr]).toEqual([0, expect.stringContaining('main -> main')])
      await stopped
      expect((await refsOf(gitDir))['refs/heads/main']).toBe(await gitOk(work, 'rev-parse', 'main'))
      const events = (await eventsOfRepo(t.deps.db, created.body.id)).map((e) => e.kind)
      expect(events).toContain('push')
    } finally {
      await t.stop()
    }
  }, 240_000)
})

describe('wikis over SSH', () => {
  test("a repository's wiki is cloned and pushed as {repo}.wiki.git under the repository's access; a first push makes it", async () => {
    const b64 = (text: string) => Buffer.from(text).toString('base64')
    expect((await s.post('/repos/alice/secret/wiki/new', { title: 'Home', content_base64: b64('over ssh') }, { token: alice.token })).status).toBe(201)
    const wikiUrl = secretUrl.replace(/\.git$/, '.wiki.git')
    const work = temp()
    const clone = await sshGit(work, aliceKey.path, ['clone', '-q', wikiUrl, 'w'])
    expect(clone.code).toBe(0)
    expect(await gitOk(join(work, 'w'), 'show', 'HEAD:Home.md')).toBe('over ssh')
    writeFileSync(join(work, 'w', 'Ssh-Page.md'), 'pushed over ssh\n')
    await gitOk(join(work, 'w'), 'add', '.')
    await gitOk(join(work, 'w'), '-c', 'user.name=A', '-c', 'user.email=a@example.com', 'commit', '-q', '-m', 'ssh page')
    expect((await sshGit(join(work, 'w'), aliceKey.path, ['push', '-q', 'origin', 'main'])).code).toBe(0)
    const page = await s.get('/repos/alice/secret/wiki/page/Ssh-Page', { token: alice.token })
    expect(Buffer.from(page.body.content_base64, 'base64').toString()).toBe('pushed over ssh\n')
    // Bob reads the repository (a read collaborator by now): he clones its wiki and may not push to it.
    expect((await sshGit(work, bobKey.path, ['clone', '-q', wikiUrl, 'b'])).code).toBe(0)
    expect((await sshGit(join(work, 'w'), bobKey.path, ['push', '-q', wikiUrl, 'main:other'])).code).not.toBe(0)
    // The other repository has no wiki yet: nothing to clone, until a push makes it.
    const otherWiki = secretUrl.replace(/secret\.git$/, 'other.wiki.git')
    expect((await sshGit(work, aliceKey.path, ['ls-remote', otherWiki])).code).not.toBe(0)
    expect((await sshGit(join(work, 'w'), aliceKey.path, ['push', '-q', otherWiki, 'main'])).code).toBe(0)
    expect((await s.get('/repos/alice/other/wiki/page/Home', { token: alice.token })).status).toBe(200)
    // A read-only deploy key of the repository reads its wiki and may not push to it; with the
    // wiki off no one reaches it, and nothing is made by trying.
    expect((await sshGit(work, readKey.path, ['clone', '-q', wikiUrl, 'r'])).code).toBe(0)
    expect((await sshGit(join(work, 'w'), readKey.path, ['push', '-q', wikiUrl, 'main:deploy'])).code).not.toBe(0)
    expect((await s.patch('/repos/alice/other', { has_wiki: false }, { token: alice.token })).status).toBe(200)
    expect((await sshGit(work, aliceKey.path, ['ls-remote', otherWiki])).code).not.toBe(0)
    expect((await sshGit(join(work, 'w'), aliceKey.path, ['push', '-q', otherWiki, 'main:off'])).code).not.toBe(0)
    expect(await gitOk(join(s.dataDir, 'repositories', 'alice', 'other.wiki.git'), 'for-each-ref', '--format=%(refname)')).toBe('refs/heads/main')
  })
})
