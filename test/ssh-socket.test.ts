// runs in one half: sqlite
import { describe, expect, test } from 'bun:test'
import { createHash, randomBytes } from 'node:crypto'
import { listenForSsh, type SshSocket } from '../src/ssh/socket'

/**
 * The SSH server's sockets (src/ssh/socket.ts) on real TCP connections: what ssh2 writes in many
 * small pieces arrives whole and in order, also when the client stops reading for a while (the
 * kernel takes part of a write, the rest waits for 'drain'); end() sends everything first; data
 * received while paused is held and given on resume.
 */
describe('SSH server sockets (Bun.listen)', () => {
  test('many small writes, a client that reads late: every byte arrives in order, then the end', async () => {
    const { port, accepted } = acceptOne()
    void connectAndRead(port)
    const server = await accepted
    // 24 MiB in pieces of 4 bytes to 40 KiB, as ssh2 writes length, ciphertext and MAC.
    const data = randomBytes(24 << 20)
    let at = 0
    let turns = 0
    let mostWaiting = 0
    while (at < data.length) {
      for (let i = 0; i < 64 && at < data.length; i++) {
        const size = [4, 32 * 1024 + 13, 32][i % 3]!
        server.write(data.subarray(at, Math.min(at + size, data.length)))
        at += size
      }
      turns++
      await Bun.sleep(0)
      mostWaiting = Math.max(mostWaiting, server.writableLength)
    }
    const closed = new Promise<void>((resolve) => server.once('close', () => resolve()))
    server.end()
    expect(server.write(new Uint8Array(1))).toBe(false)
    const received = await reading
    expect(received.length).toBe(data.length)
    expect(createHash('sha256').update(received).digest('hex')).toBe(createHash('sha256').update(data).digest('hex'))
    await closed
    expect(turns).toBeGreaterThan(10)
    // The kernel took only part while the client did not read: the rest waited for 'drain'.
    expect(mostWaiting).toBeGreaterThan(1 << 20)
  })

  test('data received while paused is held until resume; destroy closes at once', async () => {
    const { port, accepted } = acceptOne((socket) => socket.pause())
    const client = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } })
    const server = await accepted
    expect(server.remoteAddress).toContain('127.0.0.1')
    const got: string[] = []
    server.on('data', (d: Buffer) => got.push(d.toString()))
    client.write('SSH-2.0-test\r\n')
    await Bun.sleep(50)
    expect(got).toEqual([])
    server.resume()
    expect(got.join('')).toBe('SSH-2.0-test\r\n')
    const closed = new Promise<void>((resolve) => server.once('close', () => resolve()))
    server.destroy()
    await closed
    expect(server.destroyed).toBe(true)
    client.end()
  })
})

let reading: Promise<Buffer>

/** Listens for one connection (`onOpen` sees it first, as ssh2's pause would), then stops listening. */
function acceptOne(onOpen: (socket: SshSocket) => void = () => {}): { port: number; accepted: Promise<SshSocket> } {
  let accept!: (socket: SshSocket) => void
  const accepted = new Promise<SshSocket>((resolve) => (accept = resolve))
  const listener = listenForSsh('127.0.0.1', 0, (socket) => {
    onOpen(socket)
    listener.stop()
    accept(socket)
  })
  return { port: listener.port, accepted }
}

/** A client that waits a while before reading (so the server's writes back up), then reads to the end. */
function connectAndRead(port: number): void {
  reading = new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = []
    void Bun.connect({
      hostname: '127.0.0.1',
      port,
      socket: {
        open(sock) {
          sock.pause()
          setTimeout(() => sock.resume(), 300)
        },
        data: (_sock, d) => void chunks.push(Buffer.from(d)),
        close: () => resolve(Buffer.concat(chunks)),
        error: (_sock, e) => reject(e),
      },
    })
  })
}
