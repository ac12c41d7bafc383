/**
 * The markdown renderers bench/markdown.ts compares, each set up for GitHub-flavoured markdown
 * (tables, strikethrough, task lists, autolinks where it has them) with raw HTML passed through, as
 * Warren needs before sanitising. `warren` is Warren's own renderer (render.ts: its extensions and
 * sanitize-html included), the one the render workers run.
 *
 * Candidates that are not dependencies of Warren are loaded from MARKDOWN_CANDIDATES (a
 * node_modules folder, e.g. one made with `npm i marked markdown-it markdown-it-task-lists micromark
 * micromark-extension-gfm commonmark md4w markdown-wasm` in a scratch folder); missing ones are skipped.
 */
import { join } from 'node:path'

export type Render = (text: string) => string

async function load(name: string): Promise<any> {
  const dir = process.env.MARKDOWN_CANDIDATES
  try {
    return await import(name)
  } catch (error) {
    if (!dir) throw error
    return import(Bun.resolveSync(name, join(dir, '..')))
  }
}

export const CANDIDATES: Record<string, () => Promise<Render>> = {
  async warren() {
    const { loadRenderer, renderMarkdown } = await import('../../src/modules/markdown/render')
    await loadRenderer()
    return (text) => renderMarkdown({ baseUrl: 'http://localhost/' }, text, { mode: 'gfm', context: 'owner/repo' })
  },
  async marked() {
    const { Marked } = await load('marked')
    const marked = new Marked({ gfm: true, async: false })
    return (text) => marked.parse(text) as string
  },
  async 'markdown-it'() {
    const { default: MarkdownIt } = await load('markdown-it')
    const md = new MarkdownIt({ html: true, linkify: true })
    try {
      md.use((await load('markdown-it-task-lists')).default)
    } catch {}
    return (text) => md.render(text)
  },
  async micromark() {
    const { micromark } = await load('micromark')
    const { gfm, gfmHtml } = await load('micromark-extension-gfm')
    return (text) => micromark(text, { allowDangerousHtml: true, extensions: [gfm()], htmlExtensions: [gfmHtml()] })
  },
  async commonmark() {
    const { Parser, HtmlRenderer } = await load('commonmark')
    const parser = new Parser()
    const renderer = new HtmlRenderer()
    return (text) => renderer.render(parser.parse(text))
  },
  async md4w() {
    const md4w = await load('md4w')
    await md4w.init('fast')
    return (text) => md4w.mdToHtml(text)
  },
  async 'bun-markdown'() {
    // Bun's own md4c-derived renderer (an unstable API of the runtime, no package to add).
    const options = { tables: true, strikethrough: true, tasklists: true, autolinks: true }
    return (text) => (Bun as any).markdown.html(text, options)
  },
  async 'markdown-wasm'() {
    const wasm = await load('markdown-wasm')
    await wasm.ready
    return (text) => wasm.parse(text)
  },
}
