import type { Config } from '../config'
import { ApiError } from '../lib/errors'
import { highlightLines } from '../lib/highlight'
import { languageOf } from '../lib/code-language'
import { highlightCode } from '../modules/markdown/service'
import { WeightedCache } from '../lib/weighted-cache'

/**
 * The file view's lines as HTML: highlighted in the render pool's workers (never on the event
 * loop; under the markdown time budget), plain past WARREN_WEB_MAX_HIGHLIGHT, for an unknown
 * language, or when the pool refuses (busy, past its budget). A blob never changes, so its
 * highlighted lines are kept by object id and language in a cache bounded by its characters
 * (least recently used first out): reading a file again costs no highlighting.
 */

/** Highlighted lines by blob id and language, bounded by their characters. */
const cache = new WeightedCache<string[]>(16 * 1024 * 1024, (lines) => lines.reduce((n, l) => n + l.length, 0))

/** Lines of `text` escaped (linear: the plain form of any file). */
export const plainLines = (text: string): string[] => highlightLines(text, undefined)

/**
 * `text` (the blob `oid`, named `name`) as one HTML fragment per line; highlighted when it is
 * within `config.webMaxHighlight` and its name says a language; `client` shares the pool fairly.
 */
export async function fileLines(config: Config, oid: string, name: string, text: string, client: string): Promise<{ lines: string[]; highlighted: boolean }> {
  const language = text.length <= config.webMaxHighlight ? languageOf(name) : undefined
  if (!language) return { lines: plainLines(text), highlighted: false }
  const key = `${oid}:${language}`
  const hit = cache.get(key)
  if (hit) return { lines: hit, highlighted: true }
  try {
    const lines = await highlightCode(config, text, language, client)
    cache.set(key, lines)
    return { lines, highlighted: true }
  } catch (e) {
    if (!(e instanceof ApiError)) throw e
    // Busy or past its time budget: the file reads plainly (nothing is cached, a later view may highlight it).
    return { lines: plainLines(text), highlighted: false }
  }
}
