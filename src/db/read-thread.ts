/**
 * Reads whose work grows with the data rather than with the request (the issue search's count and
 * page over every issue a caller may read: 60 ms each at 180,000 open issues), kept off the event
 * loop. On SQLite, whose statements run on the thread that asks them, they run on a thread of their
 * own (`read-thread-worker.ts`: its own connection to the file, which may only read), one at a time,
 * so no other request waits for them; each waits at most READ_BUDGET_MS, its turn included, then
 * fails with 503 (the thread is ended: its statement finishes unseen, the reads queued behind it
 * fail alike, and the next read starts a new thread). The thread starts at the first such read and
 * ends after IDLE_MS without one, or when the database closes (whenClosed). On PostgreSQL the
 * database's own processes run every statement: the connection itself.
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

/** The longest a read waits for its answer, its turn included. */
export const READ_BUDGET_MS = 20_000
/** How long the thread stays without a read before it ends. */
const IDLE_MS = 30_000

const threadUrl = () => threadEntryUrl(import.meta.url, './read-thread-worker.ts', './db/read-thread-worker.js', 'read thread')

const tooLong = () => new ApiError(503, 'This search took too long to answer; narrow it (an owner, a state, a text) and try again', {}, { 'Retry-After': '5' })

type Method = 'all' | 'values' | 'get'
interface Waiting {
  resolve(rows: unknown): void
  reject(error: Error): void
  timer: Timer
}

/** One thread and what waits for it. */
class ReadThread {
  private worker: Worker | null = null
  private readonly waiting = new Map<number, Waiting>()
  private nextId = 1
  private idle: Timer | null = null
  /** Threads started (tests: a read past its budget ends its thread). */
  started = 0
  /** Told each statement's text as it is sent (test/query-counter.ts records them as the connection's). */
  readonly observers: ((text: string) => void)[] = []

  constructor(
    private readonly file: string,
    /** READ_BUDGET_MS (tests shorten it). */
    public budgetMs: number,
  ) {}

  run(text: string, params: unknown[], method: Method): Promise<unknown> {
    if (this.idle) clearTimeout(this.idle)
    this.idle = null
    const worker = (this.worker ??= this.start())
    for (const observe of this.observers) observe(text)
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => this.end(tooLong()), this.budgetMs)
      this.waiting.set(id, { resolve, reject, timer })
      worker.postMessage({ id, text, params, method } satisfies ReadThreadMessage)
    })
  }

  private start(): Worker {
    this.started++
    // Unreferenced: a thread waiting for work never keeps the process alive (a read waiting keeps its timer).
    const worker = new Worker(threadUrl().href, { ref: false })
    worker.onmessage = (event: MessageEvent<ReadThreadReport>) => {
      if (worker !== this.worker) return
      const report = event.data
      const waiting = this.waiting.get(report.id)
      if (!waiting) return
      this.waiting.delete(report.id)
      clearTimeout(waiting.timer)
      if ('error' in report) waiting.reject(new Error(report.error))
      else waiting.resolve(report.rows)
      if (this.waiting.size === 0) this.idle = setTimeout(() => this.end(), IDLE_MS)
    }
    worker.onerror = (event) => {
      if (worker === this.worker) this.end(new Error(`read thread failed: ${event.message}`))
    }
    worker.postMessage({ open: this.file } satisfies ReadThreadMessage)
    return worker
  }

  /** Ends the thread; what waits for it fails with `error`. */
  end(error: Error = new Error('the database was closed')): void {
    if (this.idle) clearTimeout(this.idle)
    this.idle = null
    this.worker?.terminate()
    this.worker = null
    const waiting = [...this.waiting.values()]
    this.waiting.clear()
    for (const w of waiting) {
      clearTimeout(w.timer)
      w.reject(error)
    }
  }
}

const threads = new WeakMap<Db, ReadThread>()

/** The thread of `db`'s reads off the event loop (tests). */
export const readThreadOf = (db: Db): ReadThread | undefined => threads.get(offThreadReads(db))

/** A connection like `db` whose reads run off the event loop (see above); `db` itself on PostgreSQL. */
export const offThreadReads = perConnection((db: Db): Db => {
  if (db.$runtime.dialect !== 'sqlite') return db
  const thread = new ReadThread(db.$client.filename, READ_BUDGET_MS)
  whenClosed(db, () => thread.end())
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
