import type { Config } from '../config'
import { addressGroup } from '../lib/network-guard'

/**
 * The bounds that keep the SSH server open to real clients while others misbehave (OpenSSH's
 * LoginGraceTime, MaxStartups and ClientAliveInterval play these parts there):
 *
 * - Before sign-in (ConnectionGate, on the TCP socket: ssh2 sees a connection only once the client
 *   has sent its version line): one address (an IPv6 /64) holds at most `maxUnauthenticatedPerAddress`
 *   connections that have not signed in, all addresses together at most `maxUnauthenticated`, which
 *   is less than `maxConnections`: the rest is kept for connections that signed in. When the
 *   unauthenticated share (or the whole) is full, a newcomer from an address holding fewer such
 *   connections than the greediest one takes the place of that address's oldest: a flood of silent
 *   connections from other addresses can delay a real client by a handshake, never refuse it.
 *   Each must sign in within `loginGraceMs`.
 * - After sign-in: one user (a deploy key: that key) holds at most `maxConnectionsPerUser`
 *   (UserSlots); a connection on whose channels no data moved for `idleMs` is closed (IdleWatch).
 */
export interface SshLimits {
  maxConnections: number
  maxUnauthenticated: number
  maxUnauthenticatedPerAddress: number
  loginGraceMs: number
  maxConnectionsPerUser: number
  idleMs: number
}

export const sshLimitsOf = (config: Config, overrides: Partial<SshLimits> = {}): SshLimits => ({
  maxConnections: config.sshMaxConnections,
  maxUnauthenticated: config.sshMaxUnauthenticated,
  maxUnauthenticatedPerAddress: config.sshMaxUnauthenticatedPerAddress,
  loginGraceMs: config.sshLoginGraceMs,
  maxConnectionsPerUser: config.sshMaxConnectionsPerUser,
  idleMs: config.sshIdleTimeoutMs,
  ...overrides,
})

/** What the gate uses of a TCP socket (src/ssh/socket.ts SshSocket, or node:net's). */
export interface GateSocket {
  readonly remoteAddress?: string
  readonly remotePort?: number
  destroy(): unknown
  once(event: 'close', listener: () => void): unknown
}

/** One admitted socket: its address group and, until it signs in, its deadline. */
interface Admitted {
  socket: GateSocket
  group: string
  peer: string
  deadline?: ReturnType<typeof setTimeout>
  /** Still counted (false once closed or evicted). */
  counted: boolean
}

const peerOf = (address: string | undefined, port: number | undefined) => `${address ?? ''}|${port ?? ''}`

/**
 * The connection bounds kept on TCP sockets: `admit` takes a new socket or closes it; `signedIn`
 * (by the address and port ssh2 reports) lifts its deadline and moves it out of the
 * unauthenticated share. Every count changes synchronously, so what it decides is exact.
 */
export class ConnectionGate {
  private total = 0
  private unauthenticated = 0
  /** Connections not signed in yet, by address group, oldest first (a Set keeps insertion order). */
  private readonly pending = new Map<string, Set<Admitted>>()
  private readonly byPeer = new Map<string, Admitted>()

  constructor(private readonly limits: SshLimits) {}

  /** Admits `socket` (true) or closes it (false); an admitted one is closed at its deadline unless it signs in. */
  admit(socket: GateSocket): boolean {
    const group = addressGroup(socket.remoteAddress ?? '')
    const mine = this.pending.get(group)?.size ?? 0
    if (mine >= this.limits.maxUnauthenticatedPerAddress) return this.refuse(socket)
    if (this.total >= this.limits.maxConnections || this.unauthenticated >= this.limits.maxUnauthenticated) {
      const victim = this.oldestOfGreediest(mine)
      if (!victim) return this.refuse(socket)
      this.release(victim)
      victim.socket.destroy()
    }
    const entry: Admitted = { socket, group, peer: peerOf(socket.remoteAddress, socket.remotePort), counted: true }
    entry.deadline = setTimeout(() => socket.destroy(), this.limits.loginGraceMs)
    this.total++
    this.unauthenticated++
    let set = this.pending.get(group)
    if (!set) this.pending.set(group, (set = new Set()))
    set.add(entry)
    this.byPeer.set(entry.peer, entry)
    socket.once('close', () => this.release(entry))
    return true
  }

  /** The connection from `address`:`port` signed in: no deadline now, and it leaves the unauthenticated share. */
  signedIn(address: string | undefined, port: number | undefined): void {
    const entry = this.byPeer.get(peerOf(address, port))
    if (!entry?.deadline) return
    this.unpend(entry)
  }

  /** Closes the connections that have not signed in (stopping: they have nothing to finish). */
  closeAll(): void {
    for (const set of [...this.pending.values()]) for (const entry of [...set]) entry.socket.destroy()
  }

  /** Counts now held: all connections, and those not signed in (for tests and logs). */
  counts(): { total: number; unauthenticated: number } {
    return { total: this.total, unauthenticated: this.unauthenticated }
  }

  private refuse(socket: GateSocket): false {
    socket.destroy()
    return false
  }

  /** The oldest unauthenticated connection of the address group holding most of them, if it holds more than `than`. */
  private oldestOfGreediest(than: number): Admitted | undefined {
    let greediest: Set<Admitted> | undefined
    for (const set of this.pending.values()) if (set.size > (greediest?.size ?? than)) greediest = set
    return greediest?.values().next().value
  }

  private unpend(entry: Admitted): void {
    clearTimeout(entry.deadline)
    entry.deadline = undefined
    this.unauthenticated--
    const set = this.pending.get(entry.group)
    set?.delete(entry)
    if (set?.size === 0) this.pending.delete(entry.group)
  }

  private release(entry: Admitted): void {
    if (!entry.counted) return
    entry.counted = false
    if (entry.deadline) this.unpend(entry)
    this.total--
    if (this.byPeer.get(entry.peer) === entry) this.byPeer.delete(entry.peer)
  }
}

/** Signed-in connections held per user (or deploy key). */
export class UserSlots {
  private readonly held = new Map<string, number>()

  constructor(private readonly limit: number) {}

  /** Takes a slot for `who`, or returns false when they hold the limit already. */
  take(who: string): boolean {
    const n = this.held.get(who) ?? 0
    if (n >= this.limit) return false
    this.held.set(who, n + 1)
    return true
  }

  give(who: string): void {
    const n = (this.held.get(who) ?? 1) - 1
    if (n > 0) this.held.set(who, n)
    else this.held.delete(who)
  }
}

/**
 * Seconds between git's own keepalives on a connection whose idle limit is `idleMs`: three within
 * the limit, never more than git's default 5 s nor less than its smallest, 1 s. With the default
 * alone, a limit under 5 s closed a clone whose pack took longer than the limit to prepare (a
 * clone asked quietly, `-q`, hears nothing until the pack's first bytes but these keepalives).
 */
export const gitKeepAliveSeconds = (idleMs: number): number => Math.max(1, Math.min(5, Math.floor(idleMs / 3000)))

/**
 * The idle limit of one signed-in connection: `onIdle` runs once no data has moved on its channels
 * for `ms`. Data moving in either direction (`touch`) keeps it alive, and so does output still
 * queued for the client shrinking (`pending`: bytes waiting for the client's SSH window, which
 * opens only as the client reads; a command's last output is still queued after it ended, and a
 * slow reader takes a while between two openings of the window); so does work the server does
 * for a command itself (`hold` … `release`: checking access, recording a push), which the client
 * only waits for. A running git counts as data expected: a working transfer keeps talking (git's
 * own keepalives, uploadpack.keepAlive and receive.keepAlive, sent within the limit (gitKeepAliveSeconds), fill its quiet phases), while one
 * waiting for a client that sends or reads nothing goes idle. Protocol keepalives are not channel
 * data and keep nothing alive.
 */
export class IdleWatch {
  private last = performance.now()
  private holds = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private stopped = false
  private lastPending = 0

  constructor(
    private readonly ms: number,
    private readonly onIdle: () => void,
    private readonly pending: () => number = () => 0,
  ) {
    this.arm(ms)
  }

  touch(): void {
    this.last = performance.now()
  }

  hold(): void {
    this.holds++
    clearTimeout(this.timer)
    this.timer = undefined
  }

  release(): void {
    this.holds = Math.max(0, this.holds - 1)
    if (this.holds > 0) return
    this.touch()
    this.arm(this.ms)
  }

  stop(): void {
    this.stopped = true
    clearTimeout(this.timer)
  }

  /** Checks at most once per `ms` (not per chunk of data): past the deadline since the last data, idle; else wait the rest. */
  private arm(after: number): void {
    if (this.stopped || this.holds > 0) return
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.timer = undefined
      if (this.stopped || this.holds > 0) return
      const pending = this.pending()
      if (pending !== this.lastPending) this.touch()
      this.lastPending = pending
      const quiet = performance.now() - this.last
      if (quiet >= this.ms) {
        this.stopped = true
        return this.onIdle()
      }
      this.arm(this.ms - quiet)
    }, after)
  }
}
