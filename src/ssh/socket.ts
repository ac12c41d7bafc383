import { EventEmitter } from 'node:events'
import type { Socket, TCPSocketListener } from 'bun'

/**
 * The SSH server's TCP sockets: Bun.listen's, with just what ssh2 and the connection gate use of
 * a node:net socket (write, end, destroy, pause, resume; 'data', 'end', 'close' and 'error'
 * events; the peer's address).
 *
 * Why not node:net: ssh2 writes every packet in three pieces (length, ciphertext, MAC), and Bun's
 * node:net socket passes each through a Node Writable stream into a buffer of its own, which
 * cost about half the server's time in a clone. Here what ssh2 writes in one turn of the event
 * loop is gathered and sent with one system call at its end; what the kernel does not take yet
 * waits in a list of chunks (never copied again) and goes on 'drain'. ssh2 itself never waits for
 * a socket's writes (the client's channel window bounds what it sends), so write() returns true.
 */
/**
 * Where the pieces of a turn are put together for the one write, shared by every socket (each
 * write is synchronous, and what the kernel does not take is copied out at once). Its usual size:
 * a turn's writes rarely pass it (a 64 KiB read of git's output makes two packets).
 */
const STAGING_BYTES = 256 * 1024
let staging = Buffer.alloc(0)

export class SshSocket extends EventEmitter {
  /** Read by ssh2 (its isWritable: writable, and a readable state not ended). */
  writable = true
  readonly _readableState = { ended: false }
  destroyed = false
  readonly remoteAddress: string
  readonly remotePort: number
  readonly remoteFamily: string
  /** Chunks the kernel did not take yet, in order; `offset` is how much of the first it took. */
  private waiting: Uint8Array[] = []
  private offset = 0
  private waitingBytes = 0
  /** What was written in this turn of the event loop, sent at its end. */
  private gathered: Uint8Array[] = []
  private gatheredBytes = 0
  /** Data received while paused (ssh2 pauses only until its crypto is ready). */
  private held: Buffer[] | null = null
  private ending = false
  private closed = false

  constructor(private readonly sock: Socket<SshSocket>) {
    super()
    this.remoteAddress = sock.remoteAddress
    this.remotePort = sock.remotePort
    this.remoteFamily = sock.remoteFamily ?? (sock.remoteAddress.includes(':') ? 'IPv6' : 'IPv4')
  }

  /** Bytes written and not yet taken by the kernel. */
  get writableLength(): number {
    return this.waitingBytes + this.gatheredBytes
  }

  write(chunk: Uint8Array | string): boolean {
    if (!this.writable) return false
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    if (!bytes.byteLength) return true
    if (!this.gathered.length) queueMicrotask(this.flushGathered)
    this.gathered.push(bytes)
    this.gatheredBytes += bytes.byteLength
    return true
  }

  /** Ends the connection once everything written has been sent. */
  end(): this {
    if (this.ending || this.closed) return this
    this.ending = true
    this.writable = false
    this.flushGathered()
    if (!this.waitingBytes) this.sock.end()
    return this
  }

  /** Closes the connection now, dropping what was not sent. */
  destroy(): this {
    if (this.closed) return this
    this.writable = false
    this.destroyed = true
    this.gathered = []
    this.waiting = []
    this.gatheredBytes = this.waitingBytes = 0
    this.sock.terminate()
    // Bun calls close() for a terminated socket too; this is for one it no longer reports on.
    queueMicrotask(() => this.onClose())
    return this
  }

  pause(): this {
    this.held ??= []
    return this
  }

  resume(): this {
    const held = this.held
    this.held = null
    for (const data of held ?? []) {
      if (this.closed || this.held) break
      this.emit('data', data)
    }
    return this
  }

  setNoDelay(): this {
    return this
  }

  // Called by the listener's handlers (serveSshSockets).
  onData(data: Buffer): void {
    if (this.held) this.held.push(data)
    else this.emit('data', data)
  }

  onDrain(): void {
    this.sendWaiting()
    if (this.ending && !this.waitingBytes && !this.closed) this.sock.end()
  }

  onEnd(): void {
    if (this._readableState.ended) return
    this._readableState.ended = true
    this.emit('end')
  }

  onError(error: Error): void {
    if (!this.closed) this.emit('error', error)
  }

  onClose(): void {
    if (this.closed) return
    this.closed = true
    this.writable = false
    this.destroyed = true
    this.gathered = []
    this.waiting = []
    this.gatheredBytes = this.waitingBytes = 0
    this.onEnd()
    this.emit('close')
  }

  private readonly flushGathered = (): void => {
    if (!this.gathered.length) return
    const pieces = this.gathered
    const total = this.gatheredBytes
    this.gathered = []
    this.gatheredBytes = 0
    if (this.closed) return
    if (this.waiting.length || pieces.length === 1) {
      for (const piece of pieces) this.waiting.push(piece)
      this.waitingBytes += total
      if (this.waiting.length === pieces.length) this.sendWaiting()
      return
    }
    // Copied into the staging buffer (a fresh buffer each turn would cost the memory system more
    // than the copy); what the kernel does not take is copied out of it.
    if (staging.byteLength < total) staging = Buffer.allocUnsafe(Math.max(total, STAGING_BYTES))
    let at = 0
    for (const piece of pieces) {
      staging.set(piece, at)
      at += piece.byteLength
    }
    const sent = Math.max(0, this.sock.write(staging, 0, total))
    if (sent < total) {
      this.waiting.push(Buffer.from(staging.subarray(sent, total)))
      this.waitingBytes += total - sent
    }
  }

  /** Hands the kernel what it will take of the waiting chunks. */
  private sendWaiting(): void {
    while (this.waiting.length && !this.closed) {
      const chunk = this.waiting[0]!
      const left = chunk.byteLength - this.offset
      const sent = this.sock.write(chunk, this.offset, left)
      if (sent < 0) return
      this.waitingBytes -= sent
      if (sent < left) {
        this.offset += sent
        return
      }
      this.waiting.shift()
      this.offset = 0
    }
  }
}

/** Listens on `hostname`:`port`, handing each new connection to `onSocket`. */
export function listenForSsh(hostname: string, port: number, onSocket: (socket: SshSocket) => void): TCPSocketListener<SshSocket> {
  return Bun.listen<SshSocket>({
    hostname,
    port,
    socket: {
      binaryType: 'buffer',
      open(sock) {
        // What is gathered in a turn goes at once (the exchanges before sign-in are small and answered in turn).
        sock.setNoDelay(true)
        sock.data = new SshSocket(sock)
        onSocket(sock.data)
      },
      data: (sock, data) => sock.data?.onData(data),
      drain: (sock) => sock.data?.onDrain(),
      end: (sock) => sock.data?.onEnd(),
      error: (sock, error) => sock.data?.onError(error),
      close: (sock) => sock.data?.onClose(),
    },
  })
}
