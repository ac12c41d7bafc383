/**
 * Shares a half's test files out among `bun test` processes (scripts/test.sh): reads the files,
 * one a line, on stdin and prints each as `<process index> <file>`, the longest first, each to the
 * process with the least time so far (the times of test/timings.json, what `WARREN_TEST_TIMINGS`
 * recorded: a file's longer time of the two halves, in milliseconds; a file not in it counts as
 * the median), so the processes end about together.
 *
 *   bun scripts/test-shards.ts <processes> < files
 *
 * `record` writes test/timings.json from the files `WARREN_TEST_TIMINGS=<prefix>` left (bun's
 * --timings JSON, one a process: `<prefix>.<half>.<index>.json`), each file's longest time:
 *
 *   bun scripts/test-shards.ts record <prefix>.*.json
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

const TIMINGS = join(import.meta.dir, '..', 'test', 'timings.json')

if (process.argv[2] === 'record') {
  const longest: Record<string, number> = {}
  for (const path of process.argv.slice(3)) {
    const { files } = JSON.parse(readFileSync(path, 'utf8')) as { files: Record<string, number> }
    for (const [file, ms] of Object.entries(files)) longest[file] = Math.max(longest[file] ?? 0, Math.round(ms))
  }
  const sorted = Object.fromEntries(Object.entries(longest).sort(([a], [b]) => (a < b ? -1 : 1)))
  writeFileSync(TIMINGS, JSON.stringify(sorted, null, 2) + '\n')
  process.exit(0)
}

const processes = Number(process.argv[2])
if (!Number.isInteger(processes) || processes < 1) throw new Error(`processes must be a positive integer, got "${process.argv[2]}"`)
const files = (await new Response(Bun.stdin.stream()).text()).split('\n').filter(Boolean)

let recorded: Record<string, number> = {}
try {
  recorded = JSON.parse(readFileSync(TIMINGS, 'utf8')) as Record<string, number>
} catch {}
const known = Object.values(recorded).sort((a, b) => a - b)
const median = known.length ? known[Math.floor(known.length / 2)]! : 1
const timeOf = (file: string) => recorded[file.replace(/^\.\//, '')] ?? median

const loads = Array.from({ length: processes }, () => 0)
const order = [...files].sort((a, b) => timeOf(b) - timeOf(a) || (a < b ? -1 : 1))
const lines: string[] = []
for (const file of order) {
  const least = loads.indexOf(Math.min(...loads))
  loads[least]! += timeOf(file)
  lines.push(`${least} ${file}`)
}
console.log(lines.join('\n'))
