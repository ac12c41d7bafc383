import { createServer, type Socket } from 'node:net'
import { Server, utils, type Connection, type ServerChannel } from 'ssh2'
import type { AppDeps } from '../deps'
import { sshKeyFingerprint } from '../modules/keys/ssh-key'
import { parseGitCommand, printable } from './command'
import { refuse, runGitCommand } from './git-session'
import { identityOfKey, type SshIdentity } from './identity'
import { loadOrCreateHostKey, type HostKey } from './host-key'
import { errorFields, loggerOf } from '../lib/log'

/**
 * The built-in SSH server (Gitea's START_SSH_SERVER): keys → caller → the same git services as
 * HTTP. Built on ssh2 (pure JavaScript, runs under Bun; its optional native parts are not needed).
 *
 * - Sign-in: public keys only, as the configured SSH user (`git`, the user of `ssh_url`). The key
 *   is looked up by fingerprint on every sign-in and again for every command (a deleted key stops
 *   working at once, even on a connection that signed in before); its signature is checked.
 * - Commands: git-upload-pack, git-receive-pack, git-upload-archive (src/ssh/command.ts) on
 *   `owner/repo(.git)`. A shell, another command, a subsystem (sftp), a terminal, forwarding of
 *   ports, sockets, agents or X11: refused (where a channel exists, with a message on its stderr
 *   and exit status 1).
 * - Bounds: connections at once, sessions per connection, sign-in attempts per connection, and an
 *   idle limit (a connection without a running command, from the handshake on, is closed after
 *   IDLE_MS); git itself runs under the long time limit (src/git/run.ts).
 * - Before sign-in (ssh2 sees a connection only once the client has sent its version line, so
 *   these are kept on the TCP socket, which is then handed to ssh2): a connection must sign in
 *   within SIGN_IN_MS, and one address may hold MAX_UNSIGNED_PER_ADDRESS connections that have
 *   not signed in yet (OpenSSH's LoginGraceTime and MaxStartups): silent or slow sockets cannot
 *   fill MAX_CONNECTIONS and lock everyone out.
 */

export interface SshServer {
  port: number
  hostKey: HostKey
  /** Stops listening, closes every connection, and waits (a few seconds at most) for running commands to finish. */
  stop(): Promise<void>
}

/** Connections served at once; more are closed at once. */
export const MAX_CONNECTIONS = 512
/** Sessions (commands) open at once on one connection. */
const MAX_SESSIONS = 8
/** Failed public-key sign-ins on one connection before it is closed (OpenSSH's MaxAuthTries is 6). */
const MAX_AUTH_FAILURES = 10
/** A connection without a running command (handshake and sign-in included) is closed after this long. */
const IDLE_MS = 60_000
/** When stopping, how long a client whose command ended may take to close its connection itself. */
const CLOSE_WAIT_MS = 2_000
/** A connection that has not signed in this long after it opened is closed. */
export const SIGN_IN_MS = 30_000
/** Connections one address may hold before they sign in; more are closed at once. */
export const MAX_UNSIGNED_PER_ADDRESS = 32

export interface SshServerOptions {
  host?: string
  port?: number
  /** The sign-in deadline (SIGN_IN_MS unless a test shortens it). */
  signInMs?: number
}

/**
 * The sign-in bounds, kept on TCP sockets before ssh2 has them: `admit` takes a new socket (or
 * closes it: too many unsigned ones from its address) and closes it at the deadline unless
 * `signedIn` is called with its address and port first.
 */
function signInGate(signInMs: number) {
  const unsigned = new Map<string, number>()
  const waiting = new Map<string, () => void>()
  const sockets = new Set<Socket>()
  return {
    admit(socket: Socket): boolean {
      const address = socket.remoteAddress ?? ''
      const held = unsigned.get(address) ?? 0
      if (held >= MAX_UNSIGNED_PER_ADDRESS) {
        socket.destroy()
        return false
      }
      unsigned.set(address, held + 1)
      const key = `${address}|${socket.remotePort}`
      const deadline = setTimeout(() => socket.destroy(), signInMs)
      let counted = true
      const settle = () => {
        clearTimeout(deadline)
        if (waiting.get(key) === settle) waiting.delete(key)
        sockets.delete(socket)
        if (!counted) return
        counted = false
        const left = (unsigned.get(address) ?? 1) - 1
        if (left > 0) unsigned.set(address, left)
        else unsigned.delete(address)
      }
      waiting.set(key, settle)
      sockets.add(socket)
      socket.once('close', settle)
      return true
    },
    /** Closes the sockets that have not signed in (stopping: they have nothing to finish). */
    closeAll(): void {
      for (const socket of sockets) socket.destroy()
    },
    signedIn(address: string | undefined, port: number | undefined): void {
      waiting.get(`${address ?? ''}|${port}`)?.()
    },
  }
}

export function startSshServer(deps: AppDeps, opts: SshServerOptions = {}): Promise<SshServer> {
  const hostKey = loadOrCreateHostKey(deps.config.dataDir)
  const connections = new Set<Connection>()
  const running = new Set<Promise<void>>()
  const lifecycle: Lifecycle = { stopping: false, busy: new Set() }
  const gate = signInGate(opts.signInMs ?? SIGN_IN_MS)
  const server = new Server({ hostKeys: [hostKey.privateKey], ident: 'Warren', keepaliveInterval: 15_000, keepaliveCountMax: 4 }, (client, info) => {
    connections.add(client)
    client.on('close', () => connections.delete(client))
    client.once('ready', () => gate.signedIn(info.ip, info.port))
    serveConnection(deps, client, running, lifecycle)
  })
  server.maxConnections = MAX_CONNECTIONS
  // The listening socket is ours: each connection passes the sign-in gate, then goes to ssh2.
  const listener = createServer((socket) => {
    socket.on('error', () => {})
    if (gate.admit(socket)) server.injectSocket(socket)
  })
  listener.on('error', (e: Error) => loggerOf(deps.config).error('SSH server', errorFields(e)))
  return new Promise((resolve, reject) => {
    listener.once('error', reject)
    listener.listen(opts.port ?? deps.config.sshListenPort, opts.host ?? deps.config.sshListenHost, () => {
      listener.off('error', reject)
      resolve({
        port: (listener.address() as { port: number }).port,
        hostKey,
        /**
         * Stops as the HTTP server does (src/ops/shutdown.ts): no new connection or command;
         * connections with nothing running close now; running commands (a push being received
         * and recorded) finish within WARREN_SHUTDOWN_GRACE, then what is left is closed.
         */
        async stop() {
          listener.close()
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
      })
    })
  })
}

/** Whether the server is stopping, and the connections running a command (which it lets finish). */
interface Lifecycle {
  stopping: boolean
  busy: Set<Connection>
}

/** One client connection: sign-in, then sessions. */
function serveConnection(deps: AppDeps, client: Connection, running: Set<Promise<void>>, lifecycle: Lifecycle): void {
  let fingerprint: string | null = null
  let failures = 0
  let sessions = 0
  let commands = 0
  let idleTimer: ReturnType<typeof setTimeout> | undefined
  const idle = () => {
    clearTimeout(idleTimer)
    idleTimer = setTimeout(() => client.end(), IDLE_MS)
  }
  idle()
  client.on('close', () => clearTimeout(idleTimer))
  client.on('error', () => {})

  client.on('authentication', async (ctx) => {
    const fail = () => {
      if (++failures >= MAX_AUTH_FAILURES) return client.end()
      ctx.reject(['publickey'])
    }
    if (ctx.method !== 'publickey') return ctx.method === 'none' ? ctx.reject(['publickey']) : fail()
    if (ctx.username !== deps.config.sshUser) return fail()
    const keyFingerprint = sshKeyFingerprint(ctx.key.data)
    if (!await identityOfKey(deps, keyFingerprint)) return fail()
    // The client asks whether this key would do; it signs only then.
    if (!ctx.signature || !ctx.blob) return ctx.accept()
    const key = utils.parseKey(ctx.key.data)
    if (key instanceof Error || Array.isArray(key) || key.verify(ctx.blob, ctx.signature, ctx.hashAlgo) !== true) return fail()
    fingerprint = keyFingerprint
    ctx.accept()
  })

  client.on('ready', () => {
    client.on('session', (accept, reject) => {
      if (sessions >= MAX_SESSIONS) return reject()
      sessions++
      const session = accept()
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
        const identity = fingerprint ? await identityOfKey(deps, fingerprint) : undefined
        if (!identity) return refuse(channel, 'this key is no longer registered')
        if (lifecycle.stopping) return refuse(channel, 'the server is shutting down; try again shortly')
        commands++
        lifecycle.busy.add(client)
        clearTimeout(idleTimer)
        const task = Promise.resolve()
          .then(() => run(identity))
          .catch((e) => {
            loggerOf(deps.config).error('an SSH command failed', errorFields(e))
            if (channel.writable) refuse(channel, 'internal error')
          })
          .finally(() => {
            running.delete(task)
            if (--commands > 0) return
            lifecycle.busy.delete(client)
            // Stopping: the client closes the connection once it has read the exit status (stop() waits for that).
            if (!lifecycle.stopping) idle()
          })
        running.add(task)
      }
      session.on('exec', async (accept, _reject, info) => {
        const channel = accept()
        await start(channel, async (identity) => {
          const command = parseGitCommand(String(info.command))
          if ('refusal' in command) return refuse(channel, command.refusal)
          return await runGitCommand(deps, identity, command, channel, gitProtocol)
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

/** What a shell request gets (as Gitea words it): the key works, but there is no shell. */
function shellMessage(identity: SshIdentity): string {
  const who =
    identity.kind === 'user'
      ? `Hi there, ${identity.user.name}! You've successfully authenticated with the key named ${printable(identity.key.name, 100)}`
      : "Hi there! You've successfully authenticated with a deploy key"
  return `${who}, but Warren does not provide shell access; use git (clone, fetch, push) with this address.`
}
