/**
 * Renders for bench/markdown.ts in a thread of its own, so a render that runs away can be cut
 * (terminated) at the bench's limit. First message: the candidate's name; then texts.
 */
import { CANDIDATES, type Render } from './markdown-candidates'

declare const self: Worker
let render: Render | undefined

self.onmessage = async (event: MessageEvent<{ candidate: string } | { text: string }>) => {
  const data = event.data
  try {
    if ('candidate' in data) {
      render = await CANDIDATES[data.candidate]!()
      self.postMessage({ ready: true })
      return
    }
    const started = performance.now()
    const html = render!(data.text)
    self.postMessage({ ms: performance.now() - started, bytes: html.length })
  } catch (error) {
    self.postMessage({ error: error instanceof RangeError ? 'stack overflow' : String(error).slice(0, 80) })
  }
}
