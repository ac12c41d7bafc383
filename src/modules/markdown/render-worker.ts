/**
 * The markdown render worker (and code highlighter): one job at a time, posted by the render pool (render-pool.ts) once
 * the worker has said it is ready (the renderer loaded), so a job's time budget is its render only.
 * It is also an entry point of the bundle (package.json "build"), so the pool finds it there.
 */
import { loadRenderer, renderMarkdown } from './render'
import { highlightLines } from '../../lib/highlight'
import { highlighter } from '../../lib/highlight-engine'
import type { RenderJob, RenderResult } from './render-pool'

declare const self: Worker

self.onmessage = (event: MessageEvent<RenderJob>) => {
  const { id, config, text, opts, highlight } = event.data
  let result: RenderResult
  try {
    result = {
      id,
      html:
        typeof text !== 'string'
          ? text.map((t) => (t ? renderMarkdown(config, t, opts) : ''))
          : highlight
            ? highlightLines(text, highlight, highlighter()).join('\n')
            : renderMarkdown(config, text, opts),
    }
  } catch (error) {
    // A RangeError is output too large for a string or the stack.
    result = { id, error: error instanceof RangeError ? 'it is too large' : String(error) }
  }
  self.postMessage(result)
}

/**
 * A first render compiles the renderer's WebAssembly and the sanitiser's code paths, which on a
 * busy machine took longer than a small document's whole time budget: the worker renders one small
 * document of each kind of markup before it says it is ready, so that time is never charged to a job.
 */
const WARM_UP = '# a\n\n*b* **c** ~d~ `e` [f](g) <b>h</b> #1 @i\n\n| j |\n|-|\n| k |\n\n- [ ] l\n\n> m\n\n```\nn\n```\n'

loadRenderer()
  .then(() => renderMarkdown({ baseUrl: 'http://localhost/' }, WARM_UP, { mode: 'gfm', context: 'o/r' }))
  .then(
  () => self.postMessage({ ready: true }),
  (error) => self.postMessage({ failed: String(error) }),
)
