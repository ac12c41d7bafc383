/**
 * Reads whose work grows with the data rather than with the request (the issue search's count
 * over every issue a caller may read: 50-60 ms at 180,000 open issues), kept off the event
 * loop. On SQLite, whose statements run on the thread that asks them, they run on a thread of their
 * own (`read-thread-worker.ts`: its own connection to the file, which may only read), one at a time,
 * so no other request waits for them; the turns go round the clients waiting (their addresses,
 * lib/request-client.ts), so one client's burst of such reads waits behind itself, not others'
 * reads; each waits at most READ_BUDGET_MS, its turn included, then fails alone with 503 (see
 * ReadThread). The thread starts at the first such read and ends after IDLE_MS without one, or
 * when the database closes (whenClosed). On PostgreSQL the database's own processes run every
 * statement: the connection itself. A list's count and page are two reads, each in a read
 * transaction of its own there: a commit between them may show in one only.
 *
 * `offThreadReads(db)` is a connection like `db` for reads: prepare statements on it as on `db`
 * (perConnection keeps them apart). It never sees a write transaction's uncommitted rows: callers
 * inside one read through `db` (readerFor).
 */
import { drizzle } from 'drizzle-orm/sqlite-proxy'
import type { ReadThreadMessage, ReadThreadReport } from './read-thread-worker'
import { perConnection, whenClosed, type Db } from './client'
import { ApiError } from '../lib/errors'
import { threadEntryUrl } from '../lib/thread-entry'
import { currentClient } from '../lib/request-client'
import { ClientTurns } from '../lib/client-turns'
import { READ_THREAD_GONE } from './unavailable'

/** The longest a read waits for its answer, its turn included. */
export const READ_BUDGET_MS = 20_000
/** How long the thread stays without a read before it ends. */
const IDLE_MS = 30_000

const threadUrl = () => threadEntryUrl(import.meta.url, './read-thread-worker.ts', './db/read-thread-worker.js', 'read thread')

const tooLong = () => new ApiError(503, 'This read of many rows took too long to answer while the server was busy; try again, or narrow it (an owner, a state, a period, a text)', {}, { 'Retry-After': '5' })

/**
 * A read that could not be answered because the thread or the database went away (the server
 * stopping, the thread failing): a retry may succeed, so the API answers 503 with Retry-After
 * (db/unavailable.ts knows the code), not 500.
 */
const gone = (message: string) => Object.assign(new Error(message), { code: READ_THREAD_GONE })

type Method = 'all' | 'values' | 'get'
interface Read {
  id: number
  text: string
  params: unknown[]
  method: Method
  /** The client it is read for (lib/request-client.ts): the turns go round the clients. */
  client: string
  /** The turns given when it was queued (lib/client-turns.ts). */
  since: number
  resolve(rows: unknown): void
  reject(error: Error): void
  timer: Timer
  /** Failed (past its budget, or the database closed): its answer, if it comes, is dropped. */
  settled: boolean
}

/**
 * One thread and the reads waiting for it, queued here and handed over one at a time, so a read
 * past its budget while queued is never run, and one past it while running fails alone (the
 * thread finishes its statement, whose answer is dropped: bun:sqlite cannot interrupt one, and a
 * thread ended meanwhile would go on using its core beside the next one). The next read is the
 * oldest one of the client whose turn comes next (lib/client-turns.ts, as the markdown render pool
 * shares its workers): a client asking many reads at once takes every other turn at most while
 * others wait.
 */
class ReadThread {
  private worker: Worker | null = null
  private readonly queue: Read[] = []
  private running: Read | null = null
  private nextId = 1
  private idle: Timer | null = null
  private closed = false
  /** The clients' turns (of those running or waiting). */
  private readonly turns = new ClientTurns()
  /** How many clients' turns are remembered now (tests: as many as run or wait). */
  get clientsRemembered(): number {
    return this.turns.remembered
  }
  /** Told each statement's text as it is queued (test/query-counter.ts records them as the connection's). */
  readonly observers: ((text: string) => void)[] = []

  constructor(
    private readonly file: string,
    /** READ_BUDGET_MS (tests shorten it). */
    public budgetMs: number,
  ) {}

  run(text: string, params: unknown[], method: Method): Promise<unknown> {
    if (this.closed) return Promise.reject(gone('the database was closed'))
    for (const observe of this.observers) observe(text)
    return new Promise((resolve, reject) => {
      const read: Read = {
        id: this.nextId++,
        text,
        params,
        method,
        client: currentClient(),
        since: this.turns.given,
        resolve,
        reject,
        settled: false,
        timer: setTimeout(() => this.expire(read), this.budgetMs),
      }
      this.queue.push(read)
      this.pump()
    })
  }

  /** The next queued read to the thread, when it has none. */
  private pump(): void {
    if (this.running || this.queue.length === 0) return
    if (this.idle) clearTimeout(this.idle)
    this.idle = null
    const read = (this.running = this.queue.splice(this.nextTurn(), 1)[0]!)
    this.turns.took(read.client)
    const worker = (this.worker ??= this.start())
    worker.postMessage({ id: read.id, text: read.text, params: read.params, method: read.method } satisfies ReadThreadMessage)
  }

  /** The index in the queue of the read whose turn comes next (see the class). */
  private nextTurn(): number {
    let next = 0
    let least = Infinity
    for (let i = 0; i < this.queue.length; i++) {
      const read = this.queue[i]!
      const turn = this.turns.rank(read.client, read.since)
      if (turn < least) {
        next = i
        least = turn
      }
    }
    return next
  }

  /** `read` is over or left the queue: its client is forgotten if nothing of it runs or waits. */
  private finished(read: Read): void {
    if (this.running?.client !== read.client && !this.queue.some((queued) => queued.client === read.client)) this.turns.forget(read.client)
  }

  private expire(read: Read): void {
    const queued = this.queue.indexOf(read)
    if (queued >= 0) {
      this.queue.splice(queued, 1)
      this.finished(read)
    }
    this.settle(read, tooLong())
  }

  private settle(read: Read, error: Error | null, rows?: unknown): void {
    if (read.settled) return
    read.settled = true
    clearTimeout(read.timer)
    if (error) read.reject(error)
    else read.resolve(rows)
  }

  private start(): Worker {
    // Unreferenced: a thread waiting for work never keeps the process alive (a read waiting keeps its timer).
    const worker = new Worker(threadUrl().href, { ref: false })
    worker.onmessage = (event: MessageEvent<ReadThreadReport>) => {
      const report = event.data
      const read = this.running
      if (worker !== this.worker || !read || read.id !== report.id) return
      this.running = null
      this.finished(read)
      if ('error' in report) this.settle(read, Object.assign(new Error(report.error), { code: report.code }))
      else this.settle(read, null, report.rows)
      this.pump()
      if (!this.running) (this.idle = setTimeout(() => this.end(), IDLE_MS)).unref()
    }
    worker.onerror = (event) => {
      if (worker === this.worker) this.end(gone(`read thread failed: ${event.message}`))
    }
    worker.postMessage({ open: this.file } satisfies ReadThreadMessage)
    return worker
  }

  /** Ends the thread; what waits for it fails with `error` (the next read starts another). */
  end(error: Error = gone('the read thread ended')): void {
    if (this.idle) clearTimeout(this.idle)
    this.idle = null
    this.worker?.terminate()
    this.worker = null
    for (const read of [...(this.running ? [this.running] : []), ...this.queue.splice(0)]) this.settle(read, error)
    this.running = null
    this.turns.clear()
  }

  /** The database closes: the thread ends, and no read starts another. */
  close(): void {
    this.closed = true
    this.end(gone('the database was closed'))
  }
}

const threads = new WeakMap<Db, ReadThread>()

/** The thread of `db`'s reads off the event loop (tests). */
export const readThreadOf = (db: Db): ReadThread | undefined => threads.get(offThreadReads(db))

/** A connection like `db` whose reads run off the event loop (see above); `db` itself on PostgreSQL. */
export const offThreadReads = perConnection((db: Db): Db => {
  if (db.$runtime.dialect !== 'sqlite') return db
  const thread = new ReadThread(db.$client.filename, READ_BUDGET_MS)
  whenClosed(db, () => thread.close())
  const off = drizzle(async (text, params, method) => {
    // Its connection refuses any write (query_only); a statement run for its effect is refused here.
    if (method === 'run') throw new Error('the read thread only reads')
    return { rows: (await thread.run(text, params, method)) as any[] }
  }) as unknown as Db
  off.$client = db.$client
  off.$runtime = db.$runtime
  threads.set(off, thread)
  return off
})

/** Where a read whose work grows with the data runs: off the event loop, unless inside a write transaction (whose rows only `db` sees). */
export const readerFor = (db: Db): Db => (db.$runtime.inWriteTransaction() ? db : offThreadReads(db))
