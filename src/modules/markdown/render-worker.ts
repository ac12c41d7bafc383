/**
 * The markdown render worker: one job at a time, posted by the render pool (render-pool.ts).
 * It is also an entry point of the bundle (package.json "build"), so the pool finds it there.
 */
import { renderMarkdown } from './render'
import type { RenderJob, RenderResult } from './render-pool'

declare const self: Worker

self.onmessage = (event: MessageEvent<RenderJob>) => {
  const { id, config, text, opts } = event.data
  let result: RenderResult
  try {
    result = { id, html: renderMarkdown(config, text, opts) }
  } catch (error) {
    // A RangeError is input nested deeper than the stack allows.
    result = { id, error: error instanceof RangeError ? 'it is nested too deeply' : String(error) }
  }
  self.postMessage(result)
}
