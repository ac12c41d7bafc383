// runs in one half: sqlite
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { appendFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { connect, type Socket } from 'node:net'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, oneCommitRepo, sh, tempDir } from './git-fixture'
import { startSshServer, type SshServer } from '../src/ssh/server'
import type { SshLimits } from '../src/ssh/limits'
import { addressGroup } from '../src/lib/network-guard'
import { loadConfig } from '../src/config'

/**
 * The SSH server's connection bounds (src/ssh/limits.ts) with the real OpenSSH and git clients and
 * raw TCP sockets from loopback addresses (127.0.0.2, 127.0.0.3, … and ::1 act as other clients).
 * Each test starts an SSH server of its own over the same data with small bounds.
 */

let s: TestServer
let alice: TestUser
let bob: TestUser
let dir: string
let knownHosts: string
type Key = { path: string; pub: string }
let aliceKey: Key
let aliceLaptop: Key
let bobKey: Key
let deployKey: Key

async function newKey(name: string): Promise<Key> {
  const path = join(dir, name)
  const r = await sh(['ssh-keygen', '-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', path], dir)
  if (r.code !== 0) throw new Error(r.stderr)
  return { path, pub: readFileSync(path + '.pub', 'utf8').trim() }
}

/** An SSH server over the test server's data with `limits`, its host key trusted under both loopback names. */
async function limitedServer(limits: Partial<SshLimits>, host = '127.0.0.1'): Promise<SshServer> {
  const server = await startSshServer(s.deps, { host, port: 0, limits })
  appendFileSync(knownHosts, `[127.0.0.1]:${server.port} ${server.hostKey.publicKey}\n[::1]:${server.port} ${server.hostKey.publicKey}\n`)
  return server
}

const sshArgs = (key: Key, port: number) => ['-F', '/dev/null', '-i', key.path, '-o', 'IdentitiesOnly=yes', '-o', `UserKnownHostsFile=${knownHosts}`, '-o', 'StrictHostKeyChecking=yes', '-o', 'BatchMode=yes', '-p', String(port)]

/** git over SSH through `port` with `key` (`extra`: more ssh options, e.g. a ProxyCommand). */
const sshGit = (key: Key, port: number, args: string[], extra: string[] = [], cwd = dir) =>
  sh(['git', ...args], cwd, { GIT_SSH_COMMAND: ['ssh', ...sshArgs(key, port), ...extra].join(' ') })

const url = (port: number, repo: string, host = '127.0.0.1') => `ssh://git@${host}:${port}/alice/${repo}.git`

/** A signed-in connection without any channel (ssh -N), in the background until `close`d. */
async function masterConnection(key: Key, port: number, name: string) {
  const control = join(dir, `${name}.sock`)
  const args = [...sshArgs(key, port), '-o', `ControlPath=${control}`]
  const opened = await sh(['ssh', ...args, '-o', 'ControlMaster=yes', '-f', '-N', 'git@127.0.0.1'], dir)
  if (opened.code !== 0) throw new Error(opened.stderr)
  return {
    alive: async () => (await sh(['ssh', ...args, '-O', 'check', 'git@127.0.0.1'], dir)).code === 0,
    close: () => sh(['ssh', ...args, '-O', 'exit', 'git@127.0.0.1'], dir),
  }
}

interface Raw {
  socket: Socket
  received: () => string
  closed: Promise<void>
  /** Settles once the server greeted it (its version line) or closed it. */
  settled: Promise<'greeted' | 'closed'>
}

/** A raw TCP connection to `host`:`port` from `localAddress` that never says anything. */
function rawConnection(port: number, localAddress: string, host = localAddress.includes(':') ? '::1' : '127.0.0.1'): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port, localAddress })
    let data = ''
    let greet!: (v: 'greeted' | 'closed') => void
    const settled = new Promise<'greeted' | 'closed'>((r) => (greet = r))
    socket.on('data', (d) => {
      data += d.toString('latin1')
      if (data.startsWith('SSH-2.0-')) greet('greeted')
    })
    const closed = new Promise<void>((r) => socket.once('close', () => r()))
    void closed.then(() => greet('closed'))
    socket.once('error', reject)
    socket.once('connect', () => resolve({ socket, received: () => data, closed, settled }))
  })
}

/** Whether `p` settled within `ms` (a bound against a hang, generous for a busy machine: not a timing). */
const within = (p: Promise<unknown>, ms = 30_000) => Promise.race([p.then(() => true), Bun.sleep(ms).then(() => false)])

/** Size of the incompressible file in alice/big. */
const BIG = 12 * 1024 * 1024
/** Every test here drives several ssh and git processes (the preload's limit does not reach every file when several run). */
const LIMIT = 120_000

const opened: Raw[] = []
async function silent(port: number, from: string): Promise<Raw> {
  const c = await rawConnection(port, from)
  opened.push(c)
  await c.settled
  return c
}

beforeAll(async () => {
  s = await startTestServer({ startSshServer: true })
  alice = await s.user('alice')
  bob = await s.user('bob')
  dir = tempDir()
  knownHosts = join(dir, 'known_hosts')
  writeFileSync(knownHosts, `[127.0.0.1]:${s.ssh!.port} ${s.ssh!.hostKey.publicKey}\n`)
  ;[aliceKey, aliceLaptop, bobKey, deployKey] = await Promise.all(['alice', 'alice-laptop', 'bob', 'deploy'].map(newKey))
  for (const [key, who] of [[aliceKey, alice], [aliceLaptop, alice], [bobKey, bob]] as const)
    expect((await s.post('/user/keys', { title: key.path.split('/').pop(), key: key.pub }, { token: who.token })).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'small', auto_init: true }, { token: alice.token })).status).toBe(201)
  expect((await s.post('/repos/alice/small/keys', { title: 'ci', key: deployKey.pub, read_only: true }, { token: alice.token })).status).toBe(201)
  // A repository whose clone moves some megabytes of incompressible data.
  expect((await s.post('/user/repos', { name: 'big' }, { token: alice.token })).status).toBe(201)
  const work = await oneCommitRepo()
  writeFileSync(join(work, 'big.bin'), randomBytes(BIG))
  await gitOk(work, 'add', 'big.bin')
  await gitOk(work, 'commit', '-q', '-m', 'big')
  expect((await sshGit(aliceKey, s.ssh!.port, ['push', '-q', url(s.ssh!.port, 'big'), 'main'], [], work)).code).toBe(0)
  rmSync(work, { recursive: true, force: true })
}, LIMIT)
afterAll(async () => {
  for (const c of opened) c.socket.destroy()
  await s.stop()
  rmSync(dir, { recursive: true, force: true })
})

describe('settings and address groups', () => {
  test('WARREN_SSH_* bounds: defaults, the unauthenticated share derived from the whole and always below it', () => {
    const d = loadConfig({})
    expect([d.sshMaxConnections, d.sshMaxUnauthenticated, d.sshMaxUnauthenticatedPerAddress, d.sshMaxConnectionsPerUser]).toEqual([512, 128, 16, 32])
    expect([d.sshLoginGraceMs, d.sshIdleTimeoutMs]).toEqual([30_000, 60_000])
    const small = loadConfig({ WARREN_SSH_MAX_CONNECTIONS: '40', WARREN_SSH_LOGIN_GRACE_TIME: '2.5', WARREN_SSH_IDLE_TIMEOUT: '300' })
    expect([small.sshMaxUnauthenticated, small.sshMaxUnauthenticatedPerAddress, small.sshLoginGraceMs, small.sshIdleTimeoutMs]).toEqual([10, 10, 2500, 300_000])
    expect(() => loadConfig({ WARREN_SSH_MAX_CONNECTIONS: '40', WARREN_SSH_MAX_UNAUTHENTICATED: '40' })).toThrow('WARREN_SSH_MAX_UNAUTHENTICATED must be a whole number from 1 to 39')
    expect(() => loadConfig({ WARREN_SSH_MAX_UNAUTHENTICATED: '8', WARREN_SSH_MAX_UNAUTHENTICATED_PER_ADDRESS: '9' })).toThrow('WARREN_SSH_MAX_UNAUTHENTICATED_PER_ADDRESS')
    expect(() => loadConfig({ WARREN_SSH_IDLE_TIMEOUT: '0' })).toThrow('WARREN_SSH_IDLE_TIMEOUT')
    expect(() => loadConfig({ WARREN_SSH_MAX_CONNECTIONS_PER_USER: 'many' })).toThrow('WARREN_SSH_MAX_CONNECTIONS_PER_USER')
  })

  test('IPv4 alone, IPv4-mapped IPv6 as its IPv4 address, IPv6 by its /64', () => {
    expect(addressGroup('192.0.2.1')).toBe('192.0.2.1')
    expect(addressGroup('::ffff:192.0.2.1')).toBe('192.0.2.1')
    expect(addressGroup('::FFFF:c000:0201')).toBe('192.0.2.1')
    expect(addressGroup('127.0.0.2')).not.toBe(addressGroup('127.0.0.3'))
    // One /64 is one group, however its last 64 bits differ; the next /64 is another.
    expect(addressGroup('2001:db8:0:1::1')).toBe('2001:db8:0:1::/64')
    expect(addressGroup('2001:DB8:0:1:ffff:ffff:ffff:ffff')).toBe('2001:db8:0:1::/64')
    expect(addressGroup('2001:db8::1:0:0:7%eth0')).toBe('2001:db8:0:0::/64')
    expect(addressGroup('2001:db8:0:2::1')).not.toBe(addressGroup('2001:db8:0:1::1'))
    expect(addressGroup('::1')).toBe('0:0:0:0::/64')
    // Not an address: a group of its own, never merged with one.
    expect(addressGroup('')).toBe('')
    expect(addressGroup('not-an-address')).toBe('not-an-address')
  })
})

describe('before sign-in', () => {
  test('silent connections: one address holds a bounded number before sign-in, others still get in; one that never signs in is closed at the deadline', async () => {
    const port = s.ssh!.port
    const held = []
    for (let i = 0; i < s.config.sshMaxUnauthenticatedPerAddress; i++) held.push(await silent(port, '127.0.0.2'))
    try {
      // One more from the same address is closed at once, before the server says anything.
      const extra = await rawConnection(port, '127.0.0.2')
      await extra.closed
      expect(extra.received()).toBe('')
      // Another address signs in and works meanwhile.
      expect((await sshGit(aliceKey, port, ['ls-remote', url(port, 'small')])).code).toBe(0)
      // The silent ones were greeted and are still open.
      await Bun.sleep(50)
      for (const c of held) expect(c.socket.destroyed).toBe(false)
      expect(held[0]!.received()).toStartWith('SSH-2.0-Warren')
    } finally {
      for (const c of held) c.socket.destroy()
    }
    // The sign-in deadline (shortened on a second server over the same data).
    const quick = await limitedServer({ loginGraceMs: 200 })
    try {
      const idle = await rawConnection(quick.port, '127.0.0.3')
      expect(await within(idle.closed)).toBe(true)
      expect(idle.received()).toStartWith('SSH-2.0-Warren')
    } finally {
      await quick.stop()
    }
    // A client that signs in in time is not cut off by the deadline: a signed-in connection outlives
    // it. (A deadline long enough for a busy machine's key exchange; the connection is then held
    // past it.)
    const graceMs = 3000
    const patient = await limitedServer({ loginGraceMs: graceMs })
    const signedIn = await masterConnection(aliceKey, patient.port, 'grace')
    try {
      await Bun.sleep(graceMs + 500)
      expect(await signedIn.alive()).toBe(true)
      const cloned = await sshGit(aliceKey, patient.port, ['clone', '-q', url(patient.port, 'small'), join(dir, 'quick')])
      expect(cloned.code).toBe(0)
    } finally {
      await signedIn.close()
      await patient.stop()
    }
  }, LIMIT)

  test('silent connections fill only their share: a newcomer replaces the oldest of the greediest address, and a real clone gets in while signed-in and silent connections fill the server', async () => {
    const l = await limitedServer({ maxConnections: 6, maxUnauthenticated: 4, maxUnauthenticatedPerAddress: 2 })
    const masters = [await masterConnection(aliceKey, l.port, 'share-a'), await masterConnection(bobKey, l.port, 'share-b')]
    try {
      // 2 signed in + 4 silent: the whole server is taken.
      const [a1, a2, b1, b2] = [await silent(l.port, '127.0.0.2'), await silent(l.port, '127.0.0.2'), await silent(l.port, '127.0.0.3'), await silent(l.port, '127.0.0.3')]
      for (const c of [a1, a2, b1, b2]) expect(await c!.settled).toBe('greeted')
      // A third address gets in, each time in place of the oldest connection of the address holding most.
      const c1 = await silent(l.port, '127.0.0.4')
      expect(await c1.settled).toBe('greeted')
      expect(await within(a1!.closed)).toBe(true)
      const c2 = await silent(l.port, '127.0.0.4')
      expect(await c2.settled).toBe('greeted')
      expect(await within(b1!.closed)).toBe(true)
      // An address at its own limit replaces nobody: its next connection is closed unanswered.
      const c3 = await rawConnection(l.port, '127.0.0.4')
      await c3.closed
      expect(c3.received()).toBe('')
      // A real client from yet another address clones; the signed-in connections were never touched.
      const cloned = await sshGit(aliceKey, l.port, ['clone', '-q', url(l.port, 'small'), join(dir, 'share')])
      expect([cloned.code, cloned.stderr]).toEqual([0, ''])
      expect(await within(c1.closed)).toBe(true)
      for (const m of masters) expect(await m.alive()).toBe(true)
      await Bun.sleep(50)
      for (const c of [a2, b2, c2]) expect(c!.socket.destroyed).toBe(false)
    } finally {
      for (const m of masters) await m.close()
      await l.stop()
    }
  }, LIMIT)

  test('a dual-stack listener counts IPv4 clients by their IPv4 address (not as one IPv6 /64); ::1 has a limit of its own', async () => {
    // Bound to the IPv4-mapped loopback address: IPv4 clients arrive as ::ffff:127.0.0.x.
    const mapped = await limitedServer({ maxUnauthenticatedPerAddress: 2 }, '::ffff:127.0.0.1')
    try {
      for (const from of ['127.0.0.2', '127.0.0.2', '127.0.0.3', '127.0.0.3']) expect(await (await silent(mapped.port, from)).settled).toBe('greeted')
      const extra = await rawConnection(mapped.port, '127.0.0.2')
      await extra.closed
      expect(extra.received()).toBe('')
      expect((await sshGit(aliceKey, mapped.port, ['ls-remote', url(mapped.port, 'small')])).code).toBe(0)
    } finally {
      await mapped.stop()
    }
    const v6 = await limitedServer({ maxUnauthenticatedPerAddress: 2 }, '::1')
    try {
      const held = [await silent(v6.port, '::1'), await silent(v6.port, '::1')]
      for (const c of held) expect(await c.settled).toBe('greeted')
      const extra = await rawConnection(v6.port, '::1')
      await extra.closed
      expect(extra.received()).toBe('')
      for (const c of held) c.socket.destroy()
      await Promise.all(held.map((c) => c.closed))
      await Bun.sleep(50)
      expect((await sshGit(aliceKey, v6.port, ['ls-remote', url(v6.port, 'small', '[::1]')])).code).toBe(0)
    } finally {
      await v6.stop()
    }
  }, LIMIT)
})

describe('after sign-in', () => {
  test("one user's signed-in connections are bounded (whatever the key); another user's and a deploy key's still get in, a deploy key bounded on its own", async () => {
    const l = await limitedServer({ maxConnectionsPerUser: 2 })
    const first = await masterConnection(aliceKey, l.port, 'user-1')
    const second = await masterConnection(aliceLaptop, l.port, 'user-2')
    try {
      const refused = await sshGit(aliceKey, l.port, ['ls-remote', url(l.port, 'small')])
      expect(refused.code).not.toBe(0)
      expect(refused.stderr).toContain('Warren: too many SSH connections are open for this account (at most 2); close some and try again')
      expect((await sshGit(bobKey, l.port, ['ls-remote', url(l.port, 'small')])).code).toBe(0)
      // A deploy key counts on its own (not as the repository's owner), under the same limit.
      const deploys = [await masterConnection(deployKey, l.port, 'deploy-1'), await masterConnection(deployKey, l.port, 'deploy-2')]
      const third = await sshGit(deployKey, l.port, ['ls-remote', url(l.port, 'small')])
      for (const d of deploys) await d.close()
      expect(third.stderr).toContain('Warren: too many SSH connections are open for this deploy key (at most 2)')
      // The refused connection took no slot; a closed one gives its slot back.
      expect(await first.alive()).toBe(true)
      await first.close()
      const again = await sshGit(aliceKey, l.port, ['ls-remote', url(l.port, 'small')])
      expect([again.code, again.stdout]).toEqual([0, expect.stringContaining('refs/heads/main')])
    } finally {
      await first.close()
      await second.close()
      await l.stop()
    }
  }, LIMIT)

  test('idle connections are closed: one without a channel, one whose command waits for a client that sends nothing; a transfer longer than the idle limit is not', async () => {
    const idleMs = 1000
    const l = await limitedServer({ idleMs })
    try {
      const bare = Bun.spawn(['ssh', ...sshArgs(aliceKey, l.port), '-N', 'git@127.0.0.1'], { stdin: 'ignore', stdout: 'ignore', stderr: 'ignore' })
      expect(await within(bare.exited)).toBe(true)

      // upload-pack advertises its refs, then waits for the client's wants, which never come.
      const waiting = Bun.spawn(['ssh', ...sshArgs(aliceKey, l.port), 'git@127.0.0.1', "git-upload-pack 'alice/small.git'"], { stdin: 'pipe', stdout: 'pipe', stderr: 'ignore' })
      const output = waiting.stdout.getReader()
      let advertised = new TextDecoder().decode((await output.read()).value)
      // Meanwhile the server's git runs with its keepalives within the limit (once a second for
      // 1 s; git's own 5 s would let a clone asked quietly go idle while its pack is prepared).
      expect(gitCommandLines().filter((line) => line.includes(' upload-pack ') && line.includes(s.deps.config.dataDir))).toEqual([
        expect.stringContaining('-c uploadpack.keepAlive=1 -c receive.keepAlive=1 upload-pack'),
      ])
      for (let r = await output.read(); !r.done; r = await output.read()) advertised += new TextDecoder().decode(r.value)
      expect(await within(waiting.exited)).toBe(true)
      expect(advertised).toContain('refs/heads/main')
      waiting.stdin.end()
    } finally {
      await l.stop()
    }
    // A clone through a relay that lets the client read 2 MiB/s: data keeps moving, so it is never
    // idle; the transfer (12 MiB) outlasts the limit. What the server hears of a client reading is
    // its SSH window opening again, which OpenSSH's client does once it has read half of it (1 MiB):
    // every half second here, far within the limit even when the client's processes wait for a
    // busy machine's cores (4 MiB at 512 KiB/s under a 3 s limit: every 2 s, closed as idle when the
    // cores were busy). Git preparing the pack sends its keepalives within the limit.
    const transferIdleMs = 4000
    const t = await limitedServer({ idleMs: transferIdleMs })
    try {
      const relay = join(dir, 'relay.ts')
      writeFileSync(relay, RELAY)
      const started = performance.now()
      const slow = await sshGit(aliceKey, t.port, ['clone', '-q', url(t.port, 'big'), join(dir, 'slow')], [`-o 'ProxyCommand=${process.execPath} ${relay} %h %p 2097152'`])
      expect([slow.code, slow.stderr]).toEqual([0, ''])
      expect(readFileSync(join(dir, 'slow', 'big.bin')).length).toBe(BIG)
      // At that rate the transfer outlasted the idle limit.
      expect(performance.now() - started).toBeGreaterThan(transferIdleMs)
    } finally {
      await t.stop()
    }
  }, LIMIT)
})

/** The command lines of this machine's git processes (Linux's /proc), arguments joined by spaces. */
function gitCommandLines(): string[] {
  const lines: string[] = []
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean)
      if (args[0]?.endsWith('git')) lines.push(args.join(' '))
    } catch {
      // Ended meanwhile.
    }
  }
  return lines
}

/** A ProxyCommand relaying stdin to the server, and the server's bytes to stdout at most `rate` bytes a second. */
const RELAY = `
import { connect } from 'node:net'
const [host, port, rate] = process.argv.slice(2)
const socket = connect({ host, port: Number(port) })
process.stdin.on('data', (d) => socket.write(d))
process.stdin.on('end', () => socket.end())
socket.on('data', (chunk) => {
  socket.pause()
  process.stdout.write(chunk, () => setTimeout(() => socket.resume(), (chunk.length * 1000) / Number(rate)))
})
socket.on('close', () => process.exit(0))
socket.on('error', () => process.exit(1))
`
