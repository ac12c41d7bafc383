/**
 * Every benchmark in turn, each in its own process (`npm run bench`, or `bun bench/run.ts
 * [seconds]`: the duration of each load scenario, default 10). Each prints its own figures
 * against the targets of PERFORMANCE.md.
 */
import { resolve } from 'node:path'

const seconds = process.argv[2]
const plan: [name: string, args: string[]][] = [
  ['startup', []],
  ['memory', seconds ? [seconds] : []],
  ['users', seconds ? [seconds] : []],
  ['repos', seconds ? [seconds] : []],
  ['issues', seconds ? [seconds] : []],
  ['postgres', seconds ? [seconds] : []],
  ['git-trees', seconds ? [seconds] : []],
  ['clone', []],
  ['ssh-clone', []],
  ['git-memory', []],
  ['assets', []],
  ['contents', seconds ? [seconds] : []],
  ['markdown', []],
  ['web', seconds ? [seconds] : []],
  ['protection', []],
  ['notifications', seconds ? ['60', seconds] : []],
  ['scale', seconds ? ['--seconds', seconds] : []],
]

let failed = 0
for (const [name, args] of plan) {
  console.log(`\n=== bench/${name}.ts ${args.join(' ')}`)
  const proc = Bun.spawn([process.execPath, resolve(import.meta.dir, `${name}.ts`), ...args], { stdout: 'inherit', stderr: 'inherit' })
  if ((await proc.exited) !== 0) {
    failed++
    console.log(`bench/${name}.ts failed`)
  }
}
process.exit(failed ? 1 : 0)
