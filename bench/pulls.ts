/**
 * Pull requests under load. Builds (git fast-import) a repository of 10,000 commits on main,
 * plus one branch per pull request, pushes it into a Warren started in this process on a temp
 * data folder, then:
 *   - merge latency: opens MERGES pull requests and merges them one after the other (each merge
 *     a real merge commit on a main the previous merge moved), timing POST …/merge end to end;
 *   - list: opens 1,000 pull requests (POST, 4 at a time) and loads GET …/pulls?state=open
 *     (30 per page) with autocannon (16 connections, its own process).
 * Targets (PERFORMANCE.md): merge ≤ 100 ms p50; list ≥ 3,000 req/s.
 *
 *   bun bench/pulls.ts [seconds=10]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/deps'
import { startServer } from '../src/server'
import { createAccessToken, createUser } from '../src/modules/users/service'
import { createRepository } from '../src/modules/repos/create'
import { autocannon, durationFromArgv, printRssSummary, reportLine } from './lib/autocannon'
import { clientEnv, runClient } from './lib/git'

const seconds = durationFromArgv()
const COMMITS = 10_000
const MERGES = 21
const LISTED = 1_000

const tmp = mkdtempSync(join(tmpdir(), 'warren-bench-pulls-'))
const config = loadConfig({}, { dataDir: join(tmp, 'data'), port: 0, host: '127.0.0.1', logLevel: 'warn' })
const deps = await createDeps(config)
const user = await createUser(deps, { username: 'dev', password: 'bench-password', email: 'dev@example.com' })
const { secret } = await createAccessToken(deps, user.id, 'bench')
await createRepository(deps, user, { name: 'big' })
const { server } = startServer(deps, { hostname: '127.0.0.1', port: 0 })
const base = `http://127.0.0.1:${server.port}`
config.baseUrl = `${base}/`
const headers = { authorization: `token ${secret}`, 'content-type': 'application/json' }
const api = (method: string, path: string, body?: unknown) =>
  fetch(`${base}/api/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })

/** The fast-import stream: main with COMMITS commits over 200 files, and branches off its tip. */
function importStream(branches: string[]): string {
  const parts: string[] = []
  const data = (s: string) => `data ${Buffer.byteLength(s)}\n${s}\n`
  let when = 1_600_000_000
  for (let i = 1; i <= COMMITS; i++) {
    parts.push(`commit refs/heads/main\nmark :${i}\ncommitter Bench <bench@example.com> ${when++} +0000\n${data(`commit ${i}`)}`)
    if (i > 1) parts.push(`from :${i - 1}\n`)
    parts.push(`M 100644 inline src/file${i % 200}.txt\n${data(`line ${i}\n`)}\n`)
  }
  for (const b of branches) {
    parts.push(`commit refs/heads/${b}\ncommitter Bench <bench@example.com> ${when++} +0000\n${data(`work on ${b}`)}from :${COMMITS}\n`)
    parts.push(`M 100644 inline work/${b}.txt\n${data(`${b}\n`)}\n`)
  }
  return parts.join('')
}

try {
  const work = join(tmp, 'work')
  const env = clientEnv(tmp)
  await runClient(tmp, env, ['git', 'init', '-q', '--bare', work])
  const mergeBranches = Array.from({ length: MERGES }, (_, i) => `merge-${i}`)
  const listBranches = Array.from({ length: LISTED }, (_, i) => `list-${i}`)
  let started = performance.now()
  const fi = Bun.spawn(['git', 'fast-import', '--quiet'], { cwd: work, env: { ...env, GIT_DIR: work }, stdin: 'pipe', stdout: 'ignore', stderr: 'inherit' })
  fi.stdin.write(importStream([...mergeBranches, ...listBranches]))
  await fi.stdin.end()
  if ((await fi.exited) !== 0) throw new Error('fast-import failed')
  const remote = `http://dev:bench-password@127.0.0.1:${server.port}/dev/big.git`
  await runClient(work, { ...env, GIT_DIR: work }, ['git', 'push', '-q', remote, '--all'])
  console.log(`setup: ${COMMITS.toLocaleString('en')} commits and ${MERGES + LISTED} branches imported and pushed in ${((performance.now() - started) / 1000).toFixed(1)} s`)

  // Merge latency.
  const times: number[] = []
  for (const [i, b] of mergeBranches.entries()) {
    const pr = await api('POST', '/repos/dev/big/pulls', { head: b, base: 'main', title: `Merge ${b}` })
    if (pr.status !== 201) throw new Error(`open: ${pr.status} ${await pr.text()}`)
    const { number } = (await pr.json()) as { number: number }
    const t0 = performance.now()
    const merged = await api('POST', `/repos/dev/big/pulls/${number}/merge`, { Do: i % 2 ? 'squash' : 'merge' })
    const ms = performance.now() - t0
    if (merged.status !== 200) throw new Error(`merge: ${merged.status} ${await merged.text()}`)
    await merged.arrayBuffer()
    times.push(ms)
  }
  const sorted = [...times].sort((a, b) => a - b)
  const p50 = sorted[Math.floor(sorted.length / 2)]!
  console.log(
    `merge on a ${COMMITS.toLocaleString('en')}-commit repository (merge and squash alternately, ${MERGES} runs): p50 ${p50.toFixed(1)} ms, ` +
      `min ${sorted[0]!.toFixed(1)} ms, max ${sorted.at(-1)!.toFixed(1)} ms; target ≤ 100 ms p50 ${p50 <= 100 ? 'ok' : 'MISSED'}`,
  )

  // 1,000 open pull requests, then the list under load.
  started = performance.now()
  let next = 0
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < listBranches.length) {
        const b = listBranches[next++]!
        const r = await api('POST', '/repos/dev/big/pulls', { head: b, base: 'main', title: `Change ${b}`, body: 'A change worth reviewing.' })
        if (r.status !== 201) throw new Error(`open: ${r.status} ${await r.text()}`)
        await r.arrayBuffer()
      }
    }),
  )
  const openS = (performance.now() - started) / 1000
  console.log(`opened ${LISTED.toLocaleString('en')} pull requests in ${openS.toFixed(1)} s (${Math.round(LISTED / openS)}/s, each checked for mergeability before its answer)`)
  const url = `${base}/api/v1/repos/dev/big/pulls?state=open`
  const check = await fetch(url)
  const page = (await check.json()) as unknown[]
  if (check.status !== 200 || page.length !== 30 || check.headers.get('x-total-count') !== String(LISTED)) throw new Error(`list: ${check.status}, ${page.length} records`)
  const r = await autocannon(url, seconds)
  console.log(reportLine('GET pulls?state=open', r, 22, true) + `   target ≥ 3,000 req/s ${r.requests.average >= 3000 ? 'ok' : 'MISSED'}`)
  printRssSummary()
} finally {
  server.stop(true)
  deps.db.$client.close()
  rmSync(tmp, { recursive: true, force: true })
}
