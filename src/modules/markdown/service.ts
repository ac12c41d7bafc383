import type { Config } from '../../config'
import type { RenderOptions } from './render'
import { RenderPool } from './render-pool'
import { MAX_MARKDOWN_TEXT } from './model'

export type { RenderOptions } from './render'

/** The pools of this process, one per distinct setting (a process normally has one). */
const pools = new Map<string, RenderPool>()

/**
 * Renders markdown to sanitised HTML off the main thread (POST /markdown and /markdown/raw):
 * 422 when the text is too long or takes longer than `config.markdownTimeoutMs`, 503 when
 * `config.markdownQueue` renders already wait.
 */
export function renderMarkdown(config: Config, text: string, opts: RenderOptions = {}): Promise<string> {
  if (!text) return Promise.resolve('')
  const settings = { workers: config.markdownWorkers, timeoutMs: config.markdownTimeoutMs, queueLimit: config.markdownQueue, maxText: MAX_MARKDOWN_TEXT }
  const key = JSON.stringify(settings)
  let pool = pools.get(key)
  if (!pool) pools.set(key, (pool = new RenderPool(settings)))
  return pool.render(config, text, opts)
}
