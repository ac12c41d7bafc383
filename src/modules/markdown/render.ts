import { init, mdToHtml } from 'md4w'
// The renderer's code, embedded in the bundle and the single binary like the docs page's assets.
import wasmPath from '../../../node_modules/md4w/js/md4w-fast.wasm' with { type: 'file' }
import { boundNesting, nestsDeeperThan } from './bound-nesting'
import { postProcess, type LinkPlan } from './post-process'
import { sanitize } from './sanitize'

/** What rendering needs of the configuration (plain data: it is posted to the render worker). */
export interface RenderConfig {
  baseUrl: string
}

export interface RenderOptions {
  /** `gfm` resolves `#123`, `@user` and relative links against `context`; anything else renders plainly. */
  mode?: string
  /** `owner/repo` (joined to `{base}`) or an absolute URL. */
  context?: string
  /** Relative links point into the wiki (`{context}/wiki/...`). */
  wiki?: boolean
  /**
   * The branch relative links point into (`{context}/src/branch/{branch}/...`): the context
   * repository's default branch when it is known (markdown/context.ts), else `master`.
   */
  branch?: string
}

/**
 * md4c's flags for GitHub-flavoured markdown as Gitea renders it: tables, strikethrough, task
 * lists, and autolinks (URLs, `www.` and e-mail addresses); raw HTML is kept for the sanitiser.
 */
const GFM_FLAGS =
  0x0100 /* TABLES */ | 0x0200 /* STRIKETHROUGH */ | 0x0800 /* TASKLISTS */ |
  0x0004 /* PERMISSIVE_URL_AUTO_LINKS */ | 0x0008 /* PERMISSIVE_EMAIL_AUTO_LINKS */ | 0x0400 /* PERMISSIVE_WWW_AUTO_LINKS */

let ready: Promise<void> | undefined

/** Loads the renderer (md4c compiled to WebAssembly); renderMarkdown may run once it resolves. */
export function loadRenderer(): Promise<void> {
  // A bundle names the file relative to the chunk that imports it; sources and the binary, absolutely.
  const path = wasmPath.startsWith('.') ? Bun.fileURLToPath(new URL(wasmPath, import.meta.url)) : wasmPath
  return (ready ??= Bun.file(path)
    .arrayBuffer()
    .then((bytes) => init(new Uint8Array(bytes))))
}

/** Where `context` points: itself when it is a URL, else joined to `{base}`; no trailing slash. */
export function contextUrl(config: RenderConfig, context: string): string {
  const trimmed = context.trim()
  if (/^https?:\/\//i.test(trimmed)) return trimmed.replace(/\/+$/, '')
  return (config.baseUrl + trimmed.replace(/^\/+/, '')).replace(/\/+$/, '')
}

/** A branch as a URL's path segments (its slashes kept, as the source pages read them). */
const branchPath = (branch: string | undefined) => (branch ? branch.split('/').map(encodeURIComponent).join('/') : 'master')

function linkPlan(config: RenderConfig, opts: RenderOptions): LinkPlan | undefined {
  if (opts.mode !== 'gfm') return undefined
  const context = opts.context?.trim() ? contextUrl(config, opts.context) : ''
  if (!context) return { baseUrl: config.baseUrl }
  return {
    baseUrl: config.baseUrl,
    context,
    pagePrefix: opts.wiki ? `${context}/wiki/` : `${context}/src/branch/${branchPath(opts.branch)}/`,
    imagePrefix: opts.wiki ? `${context}/wiki/raw/` : `${context}/raw/branch/${branchPath(opts.branch)}/`,
  }
}

/**
 * md4c puts an empty self-link after each heading's text; Gitea's headings carry the id themselves
 * (added by postProcess). Each match starts at a fixed prefix and stops at the next quote: linear.
 */
const HEADING_ANCHOR = / ?<a class="anchor" aria-hidden="true" id="[^"]*" href="#[^"]*"><\/a>(?=<\/h[1-6]>)/g

/**
 * Renders markdown to sanitised HTML, as POST /markdown and /markdown/raw answer it. md4c parses
 * in time linear in the input whatever its shape (and bounds what link references expand to);
 * boundNesting bounds how deep its HTML nests, which keeps the sanitiser linear too, and
 * postProcess is one pass over the sanitiser's output. Synchronous: the routes run it
 * in the render pool (service.ts), after loadRenderer.
 */
export function renderMarkdown(config: RenderConfig, text: string, opts: RenderOptions = {}): string {
  if (!text) return ''
  let html = mdToHtml(text, { parseFlags: GFM_FLAGS }).replace(HEADING_ANCHOR, '')
  // Raw HTML (only markdown with a `<` has any) may nest or close anything; md4c's own may nest deep.
  if (text.includes('<') || nestsDeeperThan(html)) html = boundNesting(html)
  return postProcess(sanitize(html), linkPlan(config, opts))
}
