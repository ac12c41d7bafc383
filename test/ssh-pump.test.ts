// runs in one half: sqlite
import { describe, expect, test } from 'bun:test'
import { EventEmitter } from 'node:events'
import { createHash, randomBytes } from 'node:crypto'
import { CHANNEL_WRITE_BYTES, pumpToChannel, type ChannelActivity, type ChannelState } from '../src/ssh/git-session'

/**
 * How git's output goes to an SSH channel (src/ssh/git-session.ts pumpToChannel): gathered from
 * git's small writes into writes of CHANNEL_WRITE_BYTES, every byte in order, what git wrote before
 * it waits for the client sent without waiting for more, and a buffer the channel still holds (its
 * window shut) never written over. The channel here behaves as ssh2's does: while the client's
 * window is open a write is copied into packets at once; while it is shut the channel keeps the
 * buffer itself (writableLength), answers false past its high-water mark, and emits 'drain' once
 * the client read it all.
 */
class Channel extends EventEmitter {
  /** What reached the client, as it was when it was sent. */
  readonly sent: Buffer[] = []
  private kept: Uint8Array[] = []
  private shut = false
  constructor(private readonly highWaterMark = Infinity) {
    super()
  }
  get writableLength(): number {
    return this.kept.reduce((n, k) => n + k.byteLength, 0)
  }
  write(data: Uint8Array): boolean {
    if (!this.shut) {
      this.sent.push(Buffer.from(data))
      return true
    }
    this.kept.push(data)
    return this.writableLength < this.highWaterMark
  }
  shutWindow(): void {
    this.shut = true
  }
  /** The client read: what was kept goes now (as it is now), then 'drain'. */
  openWindow(): void {
    this.shut = false
    for (const k of this.kept) this.sent.push(Buffer.from(k))
    this.kept = []
    this.emit('drain')
  }
}

const activity: ChannelActivity = { keepAliveSeconds: 5, touch() {}, expectingData: (p) => p, serverWork: (p) => p }
const openState = (): ChannelState => ({ open: true, closed: new Promise(() => {}), giveUp() {} })
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

/**
 * `data` as git writes it into its stdout: `piece` bytes at a time, one a turn of the event loop
 * (`each(i)` before piece i), into a pipe of `pipeBytes` (git waits while it is full); a read takes
 * everything the pipe holds, and the pipe is read only when asked (as Bun reads a child's stdout).
 */
function gitOutput(data: Buffer, piece: number, each: (i: number) => Promise<void> | void = () => {}, pipeBytes = 256 * 1024): ReadableStream<Uint8Array> {
  const pipe: Buffer[] = []
  let held = 0
  let ended = false
  let wake: (() => void) | null = null
  const changed = () => {
    wake?.()
    wake = null
  }
  const waitForChange = () => new Promise<void>((resolve) => (wake = resolve))
  void (async () => {
    for (let at = 0, i = 0; at < data.length; at += piece, i++) {
      await Bun.sleep(0)
      await each(i)
      while (held >= pipeBytes) await waitForChange()
      pipe.push(data.subarray(at, at + piece))
      held += Math.min(piece, data.length - at)
      changed()
    }
    await each(Math.ceil(data.length / piece))
    ended = true
    changed()
  })()
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        while (!held && !ended) await waitForChange()
        if (!held) return controller.close()
        controller.enqueue(Buffer.concat(pipe.splice(0)))
        held = 0
        changed()
      },
    },
    { highWaterMark: 0 },
  )
}

describe('git output to an SSH channel', () => {
  test("git's 8 KiB writes go out gathered into writes of 64 KiB and more, every byte in order", async () => {
    const data = randomBytes(4 << 20)
    const channel = new Channel()
    let reads = 0
    const counted = gitOutput(data, 8 * 1024).pipeThrough(new TransformStream({ transform: (c, t) => (reads++, t.enqueue(c)) }, undefined, { highWaterMark: 0 }))
    // What is gathered waits for a full write up to a minute here, not GATHER_MS: on a busy machine a
    // pause of the process longer than that sent writes early, and this test counts them (the next
    // one shows what is gathered going out without more coming).
    await pumpToChannel(counted, channel, openState(), activity, 60_000)
    expect(sha(Buffer.concat(channel.sent))).toBe(sha(data))
    // 512 pieces of git's: read a few at a time, written at most 64 times, each write (but the last) of 64 KiB or more.
    expect(reads).toBeLessThan(256)
    expect(channel.sent.length).toBeLessThanOrEqual(data.length / CHANNEL_WRITE_BYTES)
    expect(channel.sent.slice(0, -1).filter((w) => w.length < CHANNEL_WRITE_BYTES)).toEqual([])
  })

  test('what git wrote before it waits for the client goes without more coming (git then waits for an answer)', async () => {
    const channel = new Channel()
    const advertisement = Buffer.from('0032want 0123456789012345678901234567890123456789\n0000')
    let answered!: () => void
    const answer = new Promise<void>((resolve) => (answered = resolve))
    const sentSoFar = () => Buffer.concat(channel.sent).length
    const poll = async () => {
      while (sentSoFar() < advertisement.length) await Bun.sleep(1)
      answered()
    }
    void poll()
    // The advertisement, then nothing until the client has it (as git waits for the client's wants).
    await pumpToChannel(gitOutput(advertisement, 20, (i) => (i === 3 ? answer : undefined)), channel, openState(), activity)
    expect(Buffer.concat(channel.sent).equals(advertisement)).toBe(true)
  })

  test('a buffer the channel keeps while the window is shut is never written over; past the high-water mark the pump waits for drain', async () => {
    const data = randomBytes(2 << 20)
    const highWaterMark = 200 * 1024
    const channel = new Channel(highWaterMark)
    let waited = 0
    // The client stops reading; it reads again once the channel holds past its mark (three writes kept, the fourth refused).
    const stall = async () => {
      channel.shutWindow()
      while (channel.writableLength < highWaterMark) await Bun.sleep(1)
      waited++
      channel.openWindow()
    }
    const stream = gitOutput(data, 8 * 1024, (i) => {
      if (i === 20 || i === 120) void stall()
    })
    await pumpToChannel(stream, channel, openState(), activity)
    expect(waited).toBe(2)
    expect(sha(Buffer.concat(channel.sent))).toBe(sha(data))
  })
})
