import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ApiError, unprocessable } from '../../lib/errors'
import type { RenderConfig, RenderOptions } from './render'

/** A job as posted to a render worker. */
export interface RenderJob {
  id: number
  config: RenderConfig
  text: string
  opts: RenderOptions
}

/** A worker's answer: the HTML, or why rendering failed. */
export type RenderResult = { id: number; html: string } | { id: number; error: string }

export interface RenderPoolSettings {
  /** Workers rendering at once. */
  workers: number
  /** Longest a render may run; past it the worker is killed and replaced, and the caller gets 422. */
  timeoutMs: number
  /** Jobs that may wait for a worker; more are refused with 503. */
  queueLimit: number
  /** Longest text (UTF-16 code units) accepted; checked before anything is posted. */
  maxText: number
}

interface Pending {
  job: RenderJob
  resolve: (html: string) => void
  reject: (error: ApiError) => void
}

interface Slot {
  worker: Worker
  busy?: { pending: Pending; timer: ReturnType<typeof setTimeout> }
}

/**
 * Where the worker's code is: beside this file when running from source; in the bundle
 * (`bun build --splitting`, chunks at the output root) at the path of its own entry point.
 */
function workerUrl(): URL {
  const source = new URL('./render-worker.ts', import.meta.url)
  if (existsSync(fileURLToPath(source))) return source
  const bundled = new URL('./modules/markdown/render-worker.js', import.meta.url)
  if (existsSync(fileURLToPath(bundled))) return bundled
  throw new Error(`markdown render worker not found (looked for ${source.pathname} and ${bundled.pathname})`)
}

/**
 * A small pool of render workers: jobs queue first come first served up to `queueLimit`, each
 * runs within `timeoutMs`, and a worker that overruns (or dies) is terminated and replaced, so
 * the next job finds a fresh one. Workers start on first use and never keep the process alive.
 */
export class RenderPool {
  private readonly slots: (Slot | undefined)[]
  private readonly queue: Pending[] = []
  private nextId = 1
  private url: URL | undefined

  constructor(private readonly settings: RenderPoolSettings) {
    this.slots = new Array(Math.max(1, settings.workers)).fill(undefined)
  }

  render(config: RenderConfig, text: string, opts: RenderOptions): Promise<string> {
    if (text.length > this.settings.maxText) return Promise.reject(unprocessable(`The text is longer than ${this.settings.maxText} characters`, 'Text'))
    // Refused only when no worker is free and the queue is full (a queue of 0: never wait).
    if (this.queue.length >= this.settings.queueLimit && this.slots.every((slot) => slot?.busy))
      return Promise.reject(new ApiError(503, 'Too many markdown documents are being rendered; try again shortly', {}, { 'Retry-After': '1' }))
    return new Promise((resolve, reject) => {
      this.queue.push({ job: { id: this.nextId++, config: { baseUrl: config.baseUrl }, text, opts }, resolve, reject })
      this.dispatch()
    })
  }

  private dispatch(): void {
    for (let i = 0; i < this.slots.length && this.queue.length > 0; i++) {
      const slot = (this.slots[i] ??= this.spawn(i))
      if (slot.busy) continue
      const pending = this.queue.shift()!
      const timer = setTimeout(
        () => this.retire(i, unprocessable(`The markdown took longer than ${this.settings.timeoutMs} ms to render`)),
        this.settings.timeoutMs,
      )
      slot.busy = { pending, timer }
      slot.worker.postMessage(pending.job)
    }
  }

  private spawn(index: number): Slot {
    this.url ??= workerUrl()
    const worker = new Worker(this.url.href, { ref: false })
    const slot: Slot = { worker }
    worker.onmessage = (event: MessageEvent<RenderResult>) => {
      const busy = slot.busy
      if (!busy || busy.pending.job.id !== event.data.id) return
      clearTimeout(busy.timer)
      slot.busy = undefined
      const result = event.data
      if ('html' in result) busy.pending.resolve(result.html)
      else busy.pending.reject(unprocessable(`The markdown cannot be rendered (${result.error})`))
      this.dispatch()
    }
    worker.onerror = (event) => {
      event.preventDefault?.()
      if (this.slots[index] === slot) this.retire(index, unprocessable(`The markdown cannot be rendered (${event.message || 'the renderer failed'})`))
    }
    return slot
  }

  /** Kills slot `index`'s worker, failing its job with `error`; a new worker starts on demand. */
  private retire(index: number, error: ApiError): void {
    const slot = this.slots[index]
    if (!slot) return
    this.slots[index] = undefined
    if (slot.busy) {
      clearTimeout(slot.busy.timer)
      slot.busy.pending.reject(error)
    }
    slot.worker.terminate()
    this.dispatch()
  }
}
