import type { Config } from '../../config'
import type { RenderOptions } from './render'
import { RenderPool } from './render-pool'
import { MAX_MARKDOWN_TEXT } from './model'

export type { RenderOptions } from './render'

/** The pool of each configuration (a process has one; tests have one per server). */
const pools = new WeakMap<Config, RenderPool>()

/**
 * Renders markdown to sanitised HTML off the main thread (POST /markdown and /markdown/raw) for
 * `client` (its address: the pool shares its workers out between clients): 422 when the text is
 * too long or takes longer than `config.markdownTimeoutMs`, 503 when `config.markdownQueue`
 * renders already wait.
 */
export function renderMarkdown(config: Config, text: string, opts: RenderOptions = {}, client = ''): Promise<string> {
  if (!text) return Promise.resolve('')
  let pool = pools.get(config)
  if (!pool)
    pools.set(
      config,
      (pool = new RenderPool({
        workers: config.markdownWorkers,
        timeoutMs: config.markdownTimeoutMs,
        queueLimit: config.markdownQueue,
        maxText: MAX_MARKDOWN_TEXT,
        perClient: config.markdownWorkersPerClient,
        idleMs: config.workerIdleMs,
      })),
    )
  return pool.render(config, text, opts, client)
}

/** How many render workers the configuration's pool has alive now (none before the first render, none once idle). */
export const renderWorkersAlive = (config: Config): number => pools.get(config)?.workersAlive ?? 0
