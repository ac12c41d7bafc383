/**
 * Markdown render time on hostile inputs, by family, at 16, 64 and 256 KB, beside plain prose of
 * the same size (bench/lib/markdown-families.ts). For each renderer (bench/lib/markdown-candidates.ts)
 * it prints the time of each render and its ratio to prose of the same size: a renderer linear on
 * a family keeps that ratio flat as the size grows; one that is not sees it climb, until a render
 * passes the limit (printed `>limit`; larger sizes of that family are then skipped) or overflows
 * the stack (`stack`). Each render runs in a worker thread that is replaced after such a failure;
 * the time is the fastest of a few runs.
 *
 *   bun bench/markdown.ts [candidate,...] [--limit=ms] [--sizes=16,64,256] [--families=name,...]
 *   MARKDOWN_CANDIDATES=/tmp/md-cand/node_modules bun bench/markdown.ts warren,marked,markdown-it,micromark,commonmark,md4w,markdown-wasm
 *
 * Default: `warren` (Warren's renderer with its extensions and sanitize-html) only.
 *
 * What chose the renderer (a shared 2-core machine under heavy load, limit 3000 ms, 16/64/256 KB):
 * - md4w (md4c in WebAssembly): every family within a few × prose at 256 KB, ratios not climbing;
 *   reference expansion bounded (1 MB of HTML from 256 KB).
 * - marked: brackets, emphasis, backticks, `<`, entities ×20–30 prose at 16 and 64 KB; nested
 *   quotes overflow the stack, nested lists and one long paragraph pass the limit.
 * - markdown-it: brackets climb (×4–11, 1.8–2.1 s at 256 KB); reference expansion runs out of string.
 * - micromark: passes the limit at 64 KB on brackets, nesting, references, tables.
 * - commonmark: unclosed links pass the limit at 64 KB (and it has no GFM tables).
 * - markdown-wasm (an older md4c): reference expansion unbounded (×151 at 16 KB, past the limit at 64 KB).
 * - Bun.markdown: fast, but reference expansion unbounded (×66 at 256 KB, past 5 s at 1 MB).
 * Warren's pipeline on md4w keeps every family at 256 KB in the same range as prose, but for
 * tables of many rows and runs of `<`, whose HTML is 5–8 times the input (all of it sanitised).
 */
import { HOSTILE_FAMILIES, prose } from './lib/markdown-families'
import { CANDIDATES } from './lib/markdown-candidates'

const args = process.argv.slice(2)
const option = (name: string) => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)
const names = (args.find((a) => !a.startsWith('--')) ?? 'warren').split(',')
const limitMs = Number(option('limit') ?? 10_000)
const sizes = (option('sizes') ?? '16,64,256').split(',').map((kb) => Number(kb) * 1024)
const onlyFamilies = option('families')?.split(',')
for (const name of names) if (!CANDIDATES[name]) throw new Error(`unknown candidate "${name}" (known: ${Object.keys(CANDIDATES).join(', ')})`)

type Outcome = { ms: number; bytes: number } | { error: string }

/** One worker per candidate, replaced when a render overruns the limit or fails. */
class Runner {
  private worker: Worker | undefined
  constructor(private readonly candidate: string) {}

  private async start(): Promise<Worker> {
    const worker = new Worker(new URL('./lib/markdown-bench-worker.ts', import.meta.url).href)
    const ready = await new Promise<any>((resolve) => {
      worker.onmessage = (event) => resolve(event.data)
      worker.onerror = (event) => resolve({ error: event.message })
      worker.postMessage({ candidate: this.candidate })
    })
    if (ready.error) throw new Error(`${this.candidate}: ${ready.error}`)
    return worker
  }

  async render(text: string): Promise<Outcome> {
    const worker = (this.worker ??= await this.start())
    const outcome = await new Promise<Outcome>((resolve) => {
      const timer = setTimeout(() => resolve({ error: `>${limitMs}` }), limitMs)
      worker.onmessage = (event) => {
        clearTimeout(timer)
        resolve(event.data)
      }
      worker.onerror = (event) => {
        clearTimeout(timer)
        event.preventDefault?.()
        resolve({ error: event.message || 'crashed' })
      }
      worker.postMessage({ text })
    })
    if ('error' in outcome) {
      worker.terminate()
      this.worker = undefined
    }
    return outcome
  }

  /** Fastest of up to three runs (one when a run takes a second or more). */
  async time(text: string): Promise<Outcome> {
    let best: Outcome | undefined
    for (let run = 0; run < 3; run++) {
      const outcome = await this.render(text)
      if ('error' in outcome) return outcome
      if (!best || ('ms' in best && outcome.ms < best.ms)) best = outcome
      if (outcome.ms >= 1000) break
    }
    return best!
  }

  stop() {
    this.worker?.terminate()
  }
}

const families = Object.entries(HOSTILE_FAMILIES).filter(([name]) => !onlyFamilies || onlyFamilies.includes(name))
const pad = (s: string, n: number) => s.padEnd(n)
const cell = (o: Outcome | undefined, base: Outcome | undefined) => {
  if (!o) return pad('skipped', 20)
  if ('error' in o) return pad(o.error.slice(0, 19), 20)
  const ratio = base && 'ms' in base ? ` ×${(o.ms / Math.max(base.ms, 0.01)).toFixed(1)}` : ''
  return pad(`${o.ms.toFixed(1)} ms${ratio}`, 20)
}

for (const name of names) {
  let runner: Runner
  try {
    runner = new Runner(name)
    await runner.render('warm *up*')
  } catch (error) {
    console.log(`\n${name}: not available (${String(error).slice(0, 120)})`)
    continue
  }
  console.log(`\n${name}: ms per render (× prose of the same size), limit ${limitMs} ms`)
  console.log(pad('family', 28) + sizes.map((s) => pad(`${s / 1024} KB`, 20)).join(''))
  const control = new Map<number, Outcome>()
  for (const size of sizes) control.set(size, await runner.time(prose(size)))
  console.log(pad('prose (control)', 28) + sizes.map((s) => cell(control.get(s), undefined)).join(''))
  for (const [family, make] of families) {
    const row: (Outcome | undefined)[] = []
    let failed = false
    for (const size of sizes) {
      if (failed) {
        row.push(undefined)
        continue
      }
      const outcome = await runner.time(make(size))
      failed = 'error' in outcome
      row.push(outcome)
    }
    console.log(pad(family, 28) + row.map((o, i) => cell(o, control.get(sizes[i]!))).join(''))
  }
  runner.stop()
}
process.exit(0)
