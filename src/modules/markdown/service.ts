import type { Config } from '../../config'
import type { RenderOptions } from './render'
import { RenderPool } from './render-pool'
import { MAX_MARKDOWN_TEXT } from './model'
import { WeightedCache } from '../../lib/weighted-cache'

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
  return poolOf(config).render(config, text, opts, client)
}

/**
 * Documents rendered by renderMarkdownAll, by the site's address, the options and the text (all a
 * rendering depends on), bounded by their characters (key and HTML), least recently used first
 * out: a page shown again (a conversation's comments, a README, a wiki page) renders only what is
 * new or edited.
 */
const kept = new WeightedCache<{ html: string; size: number }>(4 * 1024 * 1024, (k) => k.size)

/** The characters the kept renderings hold now (tests). */
export const renderingsKept = (): number => kept.weight

/**
 * Renders several documents (an issue's body and comments) in one job of the pool: one place in
 * its queue and one time budget for them all, their total length bounded as one text's; those
 * rendered before with the same options are taken as kept, and only the others are rendered. The
 * same errors as renderMarkdown, for the whole batch of those rendered.
 */
export async function renderMarkdownAll(config: Config, texts: string[], opts: RenderOptions = {}, client = ''): Promise<string[]> {
  const prefix = JSON.stringify([config.baseUrl, opts.mode ?? '', opts.context ?? '', !!opts.wiki, opts.branch ?? '']) + '\0'
  const found = texts.map((text) => kept.get(prefix + text)?.html)
  const missing = [...new Set(texts.filter((_, i) => found[i] === undefined))]
  if (missing.length === 0) return found as string[]
  const made = await poolOf(config).renderAll(config, missing, opts, client)
  const byText = new Map(missing.map((text, i) => [text, made[i]!]))
  for (const [text, html] of byText) kept.set(prefix + text, { html, size: prefix.length + text.length + html.length })
  return texts.map((text, i) => found[i] ?? byText.get(text)!)
}

/**
 * Highlights code as `language` (highlight.js) in the same pool, with the same time budget,
 * queue and sharing between clients as markdown: one HTML fragment per line of `text`. Rejects as
 * renderMarkdown does (422 past the time budget, 503 with the queue full); callers show the text
 * plainly then.
 */
export async function highlightCode(config: Config, text: string, language: string, client = ''): Promise<string[]> {
  if (!text) return []
  return (await poolOf(config).render(config, text, {}, client, language)).split('\n')
}

function poolOf(config: Config): RenderPool {
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
  return pool
}

/** How many render workers the configuration's pool has alive now (none before the first render, none once idle). */
export const renderWorkersAlive = (config: Config): number => pools.get(config)?.workersAlive ?? 0
