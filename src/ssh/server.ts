import { Server, utils, type Connection, type ServerChannel } from 'ssh2'
import type { AppDeps } from '../deps'
import { sshKeyFingerprint } from '../modules/keys/ssh-key'
import { parseGitCommand, printable } from './command'
import { refuse, runGitCommand, type ChannelActivity } from './git-session'
import { ConnectionGate, gitKeepAliveSeconds, IdleWatch, sshLimitsOf, UserSlots, type SshLimits } from './limits'
import { identityOfKey, type SshIdentity } from './identity'
import { lfsAuthenticate } from './lfs-authenticate'
import { loadOrCreateHostKey, type HostKey } from './host-key'
import { listenForSsh, type SshSocket } from './socket'
import type { Socket } from 'node:net'
import { errorFields, loggerOf } from '../lib/log'

/**
 * The built-in SSH server (Gitea's START_SSH_SERVER): keys → caller → the same git services as
 * HTTP. Built on ssh2 (pure JavaScript, runs under Bun; its optional native parts are not needed),
 * over Bun.listen's sockets (src/ssh/socket.ts: ssh2's many small writes sent as one per turn).
 *
 * - Sign-in: public keys only, as the configured SSH user (`git`, the user of `ssh_url`). The key
 *   is looked up by fingerprint on every sign-in and again for every command (a deleted key stops
 *   working at once, even on a connection that signed in before); its signature is checked.
 * - Commands: git-upload-pack, git-receive-pack, git-upload-archive (src/ssh/command.ts) on
 *   `owner/repo(.git)`. A shell, another command, a subsystem (sftp), a terminal, forwarding of
 *   ports, sockets, agents or X11: refused (where a channel exists, with a message on its stderr
 *   and exit status 1).
 * - Bounds (src/ssh/limits.ts, WARREN_SSH_*): connections at once, of those not signed in yet
 *   (all, and per address or IPv6 /64, with room always kept for clients that sign in), a sign-in
 *   deadline, signed-in connections per user, an idle limit (no data on any channel); sessions per
 *   connection and sign-in attempts per connection; git itself runs under the long time limit
 *   (src/git/run.ts).
 */

export interface SshServer {
  port: number
  hostKey: HostKey
  /** Stops listening, closes every connection, and waits (a few seconds at most) for running commands to finish. */
  stop(): Promise<void>
}

/** Sessions (commands) open at once on one connection. */
const MAX_SESSIONS = 8
/** Failed public-key sign-ins on one connection before it is closed (OpenSSH's MaxAuthTries is 6). */
const MAX_AUTH_FAILURES = 10
/** When stopping, how long a client whose command ended may take to close its connection itself. */
const CLOSE_WAIT_MS = 2_000

export interface SshServerOptions {
  host?: string
  port?: number
  /** Bounds other than the configured ones (tests shorten them). */
  limits?: Partial<SshLimits>
}

export async function startSshServer(deps: AppDeps, opts: SshServerOptions = {}): Promise<SshServer> {
  const hostKey = loadOrCreateHostKey(deps.config.dataDir)
  const connections = new Set<Connection>()
  const running = new Set<Promise<void>>()
  const limits = sshLimitsOf(deps.config, opts.limits)
  const lifecycle: Lifecycle = { stopping: false, busy: new Set(), limits, slots: new UserSlots(limits.maxConnectionsPerUser) }
  const gate = new ConnectionGate(limits)
  // ssh2's own maxConnections stays unset: the gate counts (ssh2 would count a closed socket a moment longer).
  const server = new Server({ hostKeys: [hostKey.privateKey], ident: 'Warren', keepaliveInterval: 15_000, keepaliveCountMax: 4 }, (client, info) => {
    connections.add(client)
    client.on('close', () => connections.delete(client))
    serveConnection(deps, client, running, lifecycle, () => gate.signedIn(info.ip, info.port))
  })
  // The listening socket is ours: each connection passes the sign-in gate, then goes to ssh2.
  const admit = (socket: SshSocket) => {
    socket.on('error', () => {})
    if (gate.admit(socket)) server.injectSocket(socket as unknown as Socket)
  }
  // Listening fails at once (the address in use): the returned promise rejects.
  const listener = listenForSsh(opts.host ?? deps.config.sshListenHost, opts.port ?? deps.config.sshListenPort, admit)
  return {
    port: listener.port,
    hostKey,
    /**
     * Stops as the HTTP server does (src/ops/shutdown.ts): no new connection or command;
     * connections with nothing running close now; running commands (a push being received
     * and recorded) finish within WARREN_SHUTDOWN_GRACE, then what is left is closed.
     */
    async stop() {
      listener.stop()
      gate.closeAll()
      lifecycle.stopping = true
      for (const c of connections) if (!lifecycle.busy.has(c)) c.end()
      let timer: ReturnType<typeof setTimeout> | undefined
      const grace = new Promise((r) => (timer = setTimeout(r, deps.config.shutdownGraceMs)))
      await Promise.race([Promise.allSettled([...running]), grace])
      clearTimeout(timer)
      // Ending a connection at once could overtake the exit status its client still reads.
      const closed = Promise.all([...connections].map((c) => new Promise<void>((r) => c.on('close', () => r()))))
      await Promise.race([closed, new Promise((r) => (timer = setTimeout(r, CLOSE_WAIT_MS)))])
      clearTimeout(timer)
      for (const c of connections) c.end()
    },
  }
}

/** Whether the server is stopping, the connections running a command (which it lets finish), the bounds and who holds the per-user slots. */
interface Lifecycle {
  stopping: boolean
  busy: Set<Connection>
  limits: SshLimits
  slots: UserSlots
}

/** Whose slot a signed-in connection takes: a user's, whatever key; a deploy key's own. */
const slotOf = (identity: SshIdentity, fingerprint: string) => (identity.kind === 'user' ? `user:${identity.user.id}` : `deploy-key:${fingerprint}`)

/**
 * One client connection: sign-in, then sessions. `signedIn` tells the gate once it has signed in
 * within the bounds; one over its user's limit stays unsigned for the gate (its deadline closes
 * it) and each command it tries is refused with the reason.
 */
function serveConnection(deps: AppDeps, client: Connection, running: Set<Promise<void>>, lifecycle: Lifecycle, signedIn: () => void): void {
  let fingerprint: string | null = null
  let slot: string | null = null
  /** The slot this connection wanted but its user (or deploy key) holds the limit of already. */
  let overLimit: string | null = null
  let failures = 0
  let sessions = 0
  let commands = 0
  let watch: IdleWatch | undefined
  /** The channels of running commands, whose queued output tells whether the client still reads. */
  const channels = new Set<ServerChannel>()
  const queued = () => [...channels].reduce((n, c) => n + c.writableLength + c.stderr.writableLength, 0)
  let closed = false
  client.on('close', () => {
    closed = true
    watch?.stop()
    if (slot) lifecycle.slots.give(slot)
  })
  client.on('error', () => {})

  client.on('authentication', async (ctx) => {
    const fail = () => {
      if (++failures >= MAX_AUTH_FAILURES) return client.end()
      ctx.reject(['publickey'])
    }
    if (ctx.method !== 'publickey') return ctx.method === 'none' ? ctx.reject(['publickey']) : fail()
    if (ctx.username !== deps.config.sshUser) return fail()
    const keyFingerprint = sshKeyFingerprint(ctx.key.data)
    const identity = await identityOfKey(deps, keyFingerprint)
    if (!identity) return fail()
    // The client asks whether this key would do; it signs only then.
    if (!ctx.signature || !ctx.blob) return ctx.accept()
    const key = utils.parseKey(ctx.key.data)
    if (key instanceof Error || Array.isArray(key) || key.verify(ctx.blob, ctx.signature, ctx.hashAlgo) !== true) return fail()
    fingerprint = keyFingerprint
    // A second signature on the same connection (ssh2 allows it before 'ready') takes no second slot;
    // one that closed while its key was looked up takes none (its close gave back what it held).
    if (closed) return
    if (!slot && !overLimit) {
      const wanted = slotOf(identity, keyFingerprint)
      if (lifecycle.slots.take(wanted)) slot = wanted
      else overLimit = wanted
    }
    ctx.accept()
  })

  client.on('ready', () => {
    if (!overLimit) {
      signedIn()
      watch = new IdleWatch(lifecycle.limits.idleMs, () => client.end(), queued)
    }
    client.on('session', (accept, reject) => {
      if (sessions >= MAX_SESSIONS) return reject()
      sessions++
      const session = accept()
      watch?.touch()
      let gitProtocol: string | null = null
      session.on('close', () => sessions--)
      session.on('env', (accept, reject, info) => {
        // Only git's protocol version; smart-http.ts checks its form before git sees it.
        if (info.key === 'GIT_PROTOCOL' && typeof info.val === 'string' && info.val.length <= 200) {
          gitProtocol = info.val
          accept?.()
        } else reject?.()
      })
      for (const refused of ['pty', 'x11', 'auth-agent', 'signal', 'window-change'] as const) session.on(refused, (_accept: unknown, reject?: () => void) => reject?.())
      /** A command runs with the key's identity as it is now: a key deleted since sign-in is refused. */
      const start = async (channel: ServerChannel | undefined, run: (identity: SshIdentity) => Promise<void> | void) => {
        if (!channel) return
        if (overLimit) return refuse(channel, overLimitMessage(lifecycle.limits.maxConnectionsPerUser, overLimit))
        channels.add(channel)
        channel.once('close', () => channels.delete(channel))
        watch?.hold()
        const identity = fingerprint ? await identityOfKey(deps, fingerprint) : undefined
        if (!identity || lifecycle.stopping) {
          watch?.release()
          return refuse(channel, identity ? 'the server is shutting down; try again shortly' : 'this key is no longer registered')
        }
        commands++
        lifecycle.busy.add(client)
        const task = Promise.resolve()
          .then(() => run(identity))
          .catch((e) => {
            loggerOf(deps.config).error('an SSH command failed', errorFields(e))
            if (channel.writable) refuse(channel, 'internal error')
          })
          .finally(() => {
            running.delete(task)
            // Stopping: the client closes the connection once it has read the exit status (stop() waits for that).
            if (!lifecycle.stopping) watch?.release()
            if (--commands === 0) lifecycle.busy.delete(client)
          })
        running.add(task)
      }
      session.on('exec', async (accept, _reject, info) => {
        const channel = accept()
        await start(channel, async (identity) => {
          const command = parseGitCommand(String(info.command))
          if ('refusal' in command) return refuse(channel, command.refusal)
          if (command.lfs) return await lfsAuthenticate(deps, identity, command, channel)
          return await runGitCommand(deps, identity, command, channel, gitProtocol, activityOf(watch, lifecycle.limits.idleMs))
        })
      })
      session.on('shell', async (accept) => {
        const channel = accept()
        await start(channel, (identity) => refuse(channel, shellMessage(identity)))
      })
      session.on('subsystem', async (accept, _reject, info) => {
        const channel = accept()
        await start(channel, () => refuse(channel, `the subsystem "${printable(String(info.name), 50)}" is not provided; only git commands are served`))
      })
    })
    // Port forwarding (either way), socket forwarding: refused (no channel, so no message).
    client.on('tcpip', (_accept, reject) => reject())
    client.on('openssh.streamlocal', (_accept, reject) => reject())
    client.on('request', (_accept, reject) => reject?.())
  })
}

/** The refusal of a connection over its user's limit (or, for a deploy key, the key's). */
function overLimitMessage(limit: number, slot: string): string {
  return `too many SSH connections are open for this ${slot.startsWith('deploy-key:') ? 'deploy key' : 'account'} (at most ${limit}); close some and try again`
}

/** What the git session reports to the idle limit (a command holds it from its start: the server works until data is expected). */
function activityOf(watch: IdleWatch | undefined, idleMs: number): ChannelActivity {
  return {
    keepAliveSeconds: gitKeepAliveSeconds(idleMs),
    touch: () => watch?.touch(),
    expectingData: (span) => {
      if (!watch) return span
      watch.release()
      return span.finally(() => watch.hold())
    },
    serverWork: (work) => {
      if (!watch) return work
      watch.hold()
      return work.finally(() => watch.release())
    },
  }
}

/** What a shell request gets (as Gitea words it): the key works, but there is no shell. */
function shellMessage(identity: SshIdentity): string {
  const who =
    identity.kind === 'user'
      ? `Hi there, ${identity.user.name}! You've successfully authenticated with the key named ${printable(identity.key.name, 100)}`
      : "Hi there! You've successfully authenticated with a deploy key"
  return `${who}, but Warren does not provide shell access; use git (clone, fetch, push) with this address.`
}
