import { ApiError, unprocessable } from '../../lib/errors'
import { threadEntryUrl } from '../../lib/thread-entry'
import { ClientTurns } from '../../lib/client-turns'
import type { RenderConfig, RenderOptions } from './render'

/** A job as posted to a render worker. */
export interface RenderJob {
  id: number
  config: RenderConfig
  /** One document, or several rendered in one job (a page's comments): one time budget for all. */
  text: string | string[]
  opts: RenderOptions
  /** A highlight.js language: the job highlights `text` as code instead (its lines joined by newlines). */
  highlight?: string
}

/** A worker's answer: the HTML (one per document of a batch), or why rendering failed; or, once, that it is ready (or failed to load). */
export type RenderResult = { id: number; html: string | string[] } | { id: number; error: string }
type WorkerMessage = RenderResult | { ready: true } | { failed: string }

export interface RenderPoolSettings {
  /** Workers rendering at once. */
  workers: number
  /** Longest a render may run; past it the worker is killed and replaced, and the caller gets 422. */
  timeoutMs: number
  /** Jobs that may wait for a worker; more are refused with 503. */
  queueLimit: number
  /** Longest text (UTF-16 code units) accepted; checked before anything is posted. */
  maxText: number
  /** Workers one client may hold at once (its further jobs wait behind its own); 0: all but one, at least one. */
  perClient: number
  /** How long a worker may stay idle before it ends (its thread and memory go; the next job starts a new one). */
  idleMs: number
}

interface Pending {
  job: RenderJob
  client: string
  /** The turns given when it was queued (lib/client-turns.ts). */
  since: number
  resolve: (html: string | string[]) => void
  reject: (error: ApiError) => void
}

interface Slot {
  worker: Worker
  /** Whether the worker has loaded the renderer; a job given to it before then is posted when it has. */
  ready: boolean
  /** Its job; the timer runs from when the job was posted to a ready worker. */
  busy?: { pending: Pending; timer?: ReturnType<typeof setTimeout> }
  /** While it has no job: ends it after `idleMs`. */
  idle?: ReturnType<typeof setTimeout>
}

/** Longest a new worker may take to load the renderer before its job fails and it is replaced. */
const LOAD_TIMEOUT_MS = 30_000

const busyError = () => new ApiError(503, 'Too many markdown documents are being rendered; try again shortly', {}, { 'Retry-After': '1' })

/**
 * Where the worker's code is: beside this file when running from source; in the bundle
 * (`bun build --splitting`, chunks at the output root) at the path of its own entry point.
 */
const workerUrl = () => threadEntryUrl(import.meta.url, './render-worker.ts', './modules/markdown/render-worker.js', 'markdown render worker')

/**
 * A small pool of render workers, shared fairly between clients: a client holds at most
 * `perClient` workers at once, a free worker goes to the waiting job of the client holding the
 * fewest (the longest waiting among equals), and when the queue is full a newcomer takes the place
 * of the newest job of a client with more waiting than it. So one client's burst of slow renders
 * waits behind itself while other clients' renders go first. Each render runs within `timeoutMs`;
 * a worker that overruns, fails or dies is terminated and replaced. Workers start on first use,
 * end after `idleMs` without a job (a process that renders nothing keeps no renderer in memory)
 * and never keep the process alive.
 */
export class RenderPool {
  private readonly slots: (Slot | undefined)[]
  private readonly queue: Pending[] = []
  /** Workers each client holds now (clients holding none are not kept). */
  private readonly holding = new Map<string, number>()
  /** The clients' turns (of those holding or waiting): among equals, whose comes first (lib/client-turns.ts). */
  private readonly turns = new ClientTurns()
  private nextId = 1
  private url: URL | undefined

  constructor(private readonly settings: RenderPoolSettings) {
    this.slots = new Array(Math.max(1, settings.workers)).fill(undefined)
  }

  /** Workers alive now (started, not ended by idleness, failure or a time limit). */
  get workersAlive(): number {
    return this.slots.filter((slot) => slot !== undefined).length
  }

  /**
   * Renders `text` for `client` (the key a caller is shared out by: its address); with `highlight`
   * (a language), highlights it as code instead: one HTML fragment per line, joined by newlines.
   */
  render(config: RenderConfig, text: string, opts: RenderOptions, client = '', highlight?: string): Promise<string> {
    return this.enqueue(config, text, opts, client, highlight) as Promise<string>
  }

  /**
   * Renders several documents in one job (one place in the queue, one time budget), their total
   * length bounded as one text's: a page's comments without a job each.
   */
  renderAll(config: RenderConfig, texts: string[], opts: RenderOptions, client = ''): Promise<string[]> {
    if (texts.length === 0) return Promise.resolve([])
    return this.enqueue(config, texts, opts, client) as Promise<string[]>
  }

  private enqueue(config: RenderConfig, text: string | string[], opts: RenderOptions, client: string, highlight?: string): Promise<string | string[]> {
    const length = typeof text === 'string' ? text.length : text.reduce((n, t) => n + t.length, 0)
    if (length > this.settings.maxText) return Promise.reject(unprocessable(`The text is longer than ${this.settings.maxText} characters`, 'Text'))
    const startsNow = this.held(client) < this.perClient && this.slots.some((slot) => !slot?.busy)
    if (!startsNow && this.queue.length >= this.settings.queueLimit && !this.pushOutFor(client)) return Promise.reject(busyError())
    return new Promise((resolve, reject) => {
      this.queue.push({ job: { id: this.nextId++, config: { baseUrl: config.baseUrl }, text, opts, highlight }, client, since: this.turns.given, resolve, reject })
      this.dispatch()
    })
  }

  private get perClient(): number {
    const { perClient, workers } = this.settings
    return perClient > 0 ? perClient : Math.max(1, workers - 1)
  }

  private held(client: string): number {
    return this.holding.get(client) ?? 0
  }

  /**
   * The queue is full: refuses (503) the newest job of the client with the most waiting, when it
   * has more waiting than `client` would with this job. Whether a place was freed.
   */
  private pushOutFor(client: string): boolean {
    const waiting = new Map<string, number>()
    for (const pending of this.queue) waiting.set(pending.client, (waiting.get(pending.client) ?? 0) + 1)
    let heaviest: string | undefined
    for (const [other, count] of waiting) if (heaviest === undefined || count > waiting.get(heaviest)!) heaviest = other
    if (heaviest === undefined || heaviest === client || waiting.get(heaviest)! <= (waiting.get(client) ?? 0) + 1) return false
    const index = this.queue.findLastIndex((pending) => pending.client === heaviest)
    const [evicted] = this.queue.splice(index, 1)
    evicted!.reject(busyError())
    return true
  }

  /**
   * The waiting job to start next: of the clients under perClient, the one holding the fewest
   * workers, among equals the one whose turn comes first (lib/client-turns.ts); its oldest job.
   */
  private nextJob(): Pending | undefined {
    let best = -1
    let bestKey = [0, 0]
    for (let i = 0; i < this.queue.length; i++) {
      const { client, since } = this.queue[i]!
      const key = [this.held(client), this.turns.rank(client, since)]
      if (key[0]! >= this.perClient) continue
      if (best < 0 || key[0]! < bestKey[0]! || (key[0] === bestKey[0] && key[1]! < bestKey[1]!)) [best, bestKey] = [i, key]
    }
    if (best < 0) return undefined
    const [pending] = this.queue.splice(best, 1)
    this.turns.took(pending!.client)
    return pending
  }

  private dispatch(): void {
    for (let i = 0; i < this.slots.length && this.queue.length > 0; i++) {
      if (this.slots[i]?.busy) continue
      const pending = this.nextJob()
      if (!pending) return
      const slot = (this.slots[i] ??= this.spawn(i))
      clearTimeout(slot.idle)
      this.holding.set(pending.client, this.held(pending.client) + 1)
      slot.busy = { pending }
      if (slot.ready) this.post(i, slot)
      // A worker that never finishes loading must not hold its job for ever.
      else slot.busy.timer = setTimeout(() => this.retire(i, unprocessable('The markdown cannot be rendered (the renderer did not start)')), LOAD_TIMEOUT_MS)
    }
  }

  /** Posts slot `index`'s job to its (ready) worker and starts the job's time budget. */
  private post(index: number, slot: Slot): void {
    const busy = slot.busy!
    clearTimeout(busy.timer)
    busy.timer = setTimeout(
      () => this.retire(index, unprocessable(`The markdown took longer than ${this.settings.timeoutMs} ms to render`)),
      this.settings.timeoutMs,
    )
    slot.worker.postMessage(busy.pending.job)
  }

  /** Frees slot `index`'s job: the client holds one worker fewer. */
  private release(slot: Slot): Pending | undefined {
    const busy = slot.busy
    if (!busy) return undefined
    clearTimeout(busy.timer)
    slot.busy = undefined
    const { client } = busy.pending
    const held = this.held(client) - 1
    if (held > 0) this.holding.set(client, held)
    else {
      this.holding.delete(client)
      // A client with nothing running or waiting is forgotten (the maps stay as small as the pool's work).
      if (!this.queue.some((pending) => pending.client === client)) this.turns.forget(client)
    }
    return busy.pending
  }

  private spawn(index: number): Slot {
    this.url ??= workerUrl()
    const worker = new Worker(this.url.href, { ref: false })
    const slot: Slot = { worker, ready: false }
    worker.onmessage = (event: MessageEvent<WorkerMessage>) => {
      if (this.slots[index] !== slot) return
      const message = event.data
      if ('ready' in message) {
        slot.ready = true
        if (slot.busy) this.post(index, slot)
        return
      }
      if ('failed' in message) return this.retire(index, unprocessable(`The markdown cannot be rendered (${message.failed})`))
      if (slot.busy?.pending.job.id !== message.id) return
      // A renderer that failed may be left in a bad state (a WebAssembly trap): the worker is replaced.
      if ('error' in message) return this.retire(index, unprocessable(`The markdown cannot be rendered (${message.error})`))
      this.release(slot)!.resolve(message.html)
      this.dispatch()
      if (!slot.busy) slot.idle = this.idleTimer(index, slot)
    }
    worker.onerror = (event) => {
      event.preventDefault?.()
      if (this.slots[index] === slot) this.retire(index, unprocessable(`The markdown cannot be rendered (${event.message || 'the renderer failed'})`))
    }
    return slot
  }

  /** Ends slot `index`'s worker once it has stayed `idleMs` without a job. */
  private idleTimer(index: number, slot: Slot): ReturnType<typeof setTimeout> {
    const timer = setTimeout(() => {
      if (this.slots[index] !== slot || slot.busy) return
      this.slots[index] = undefined
      slot.worker.terminate()
    }, this.settings.idleMs)
    timer.unref?.()
    return timer
  }

  /** Kills slot `index`'s worker, failing its job with `error`; a new worker starts on demand. */
  private retire(index: number, error: ApiError): void {
    const slot = this.slots[index]
    if (!slot) return
    this.slots[index] = undefined
    clearTimeout(slot.idle)
    this.release(slot)?.reject(error)
    slot.worker.terminate()
    this.dispatch()
  }
}
