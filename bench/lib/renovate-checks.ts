/**
 * What `bench/renovate.ts` checks once Renovate has run: its exit and its warnings, the calls
 * Warren's request log shows, and the pull requests it opened (read through the API).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface RequestLine {
  method: string
  path: string
  status: number
  user: string
}

interface RenovateRun {
  code: number
  stderr: string
  log: string
  logFile: string
}

/** The log's calls, one line each: method, path with ids and hashes folded, statuses, count. */
export function foldedCalls(requests: RequestLine[], owner: string): string[] {
  const calls = new Map<string, { statuses: Set<number>; count: number }>()
  for (const r of requests) {
    const path = r.path
      .replace(/[0-9a-f]{40}/g, '{sha}')
      .replace(/\/\d+(?=[/?.]|$)/g, '/{n}')
      .replace(/(page=)\d+/g, '$1{n}')
      .replace(new RegExp(`^/${owner}/`), '/{owner}/')
    const key = `${r.method} ${path}`
    const call = calls.get(key) ?? { statuses: new Set<number>(), count: 0 }
    call.statuses.add(r.status)
    call.count++
    calls.set(key, call)
  }
  return [...calls].map(([key, c]) => `${key}  -> ${[...c.statuses].join(',')}${c.count > 1 ? `  (x${c.count})` : ''}`)
}

const LEVELS: Record<number, string> = { 40: 'WARN', 50: 'ERROR', 60: 'FATAL' }

/** Renovate's JSON log lines at WARN or above, each in one readable line. */
function problems(log: string): string[] {
  return log.split('\n').flatMap((line) => {
    let entry: Record<string, unknown>
    try {
      entry = JSON.parse(line)
    } catch {
      return []
    }
    const level = Number(entry.level)
    if (!(level >= 40)) return []
    const err = (entry.err ?? entry.configError) as { message?: string; statusCode?: number; url?: string; validationError?: string } | undefined
    const detail = err ? ` (${[err.statusCode, err.url, err.message, err.validationError].filter(Boolean).join(' ')})` : ''
    return [`${LEVELS[level] ?? level} ${entry.msg}${detail}`]
  })
}

interface Pull {
  number: number
  title: string
  state: string
  labels: { name: string }[]
  head: { ref: string }
  base: { ref: string }
}

async function diffOf(base: string, owner: string, auth: string, pull: Pull): Promise<{ text: string; via: string }> {
  const res = await fetch(`${base}/api/v1/repos/${owner}/app/pulls/${pull.number}.diff`, { headers: { authorization: auth } })
  if (res.ok) return { text: await res.text(), via: 'the API' }
  // Not served: the branch as git sees it, so the content is still checked.
  const dir = mkdtempSync(join(tmpdir(), 'warren-renovate-diff-'))
  try {
    const git = async (...args: string[]) => {
      const proc = Bun.spawn(['git', ...args], { cwd: dir, stdout: 'pipe', stderr: 'pipe', env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } })
      const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
      if (code !== 0) throw new Error(`git ${args.join(' ')} exited ${code}`)
      return out
    }
    await git('clone', '-q', '--bare', `${base}/${owner}/app.git`, '.')
    return { text: await git('diff', `${pull.base.ref}...${pull.head.ref}`), via: `a clone (pulls/${pull.number}.diff answered ${res.status})` }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

interface Issue {
  number: number
  title: string
  state: string
}

async function getJson<T>(url: string, auth: string): Promise<T | null> {
  const res = await fetch(url, { headers: { authorization: auth } })
  return res.ok ? ((await res.json()) as T) : null
}

export async function checkRun(opts: { base: string; owner: string; auth: string; runs: (RenovateRun & { requests: RequestLine[] })[] }): Promise<boolean> {
  const { base, owner, auth, runs } = opts
  let ok = true
  const check = (pass: boolean, what: string, detail: string[] = []) => {
    console.log(`${pass ? 'PASS' : 'FAIL'}  ${what}`)
    for (const line of detail) console.log(`        ${line}`)
    ok &&= pass
  }
  for (const [i, run] of runs.entries()) {
    check(run.code === 0, `run ${i + 1}: renovate exited ${run.code}`, run.code === 0 ? [] : run.stderr.trim().split('\n').slice(-10))
    const warned = problems(run.log)
    check(warned.length === 0, `run ${i + 1}: renovate logged ${warned.length} WARN/ERROR lines`, warned)
  }
  const [first] = runs
  const served = (method: string, path: string) => first.requests.some((r) => r.method === method && r.path.split('?')[0] === path && r.status === 200)
  check(served('GET', `/api/v1/repos/${owner}/app/contents/renovate.json`), 'renovate read renovate.json through the contents API')
  check(served('GET', `/api/v1/repos/${owner}/presets/contents/default.json`), `renovate read the preset local>${owner}/presets through the contents API`)
  check(served('GET', `/api/v1/repos/${owner}/lib/tags`), `renovate listed ${owner}/lib's tags (gitea-tags datasource)`)

  const pulls = (await getJson<Pull[]>(`${base}/api/v1/repos/${owner}/app/pulls?state=all&limit=50`, auth)) ?? []
  check(pulls.length === 2 && pulls.every((p) => p.state === 'open'), `the pull requests of ${owner}/app, after ${runs.length} runs: ${pulls.map((p) => `#${p.number} ${p.state} "${p.title}" (${p.head.ref})`).join(', ') || 'none'}`)
  const wanted: { what: string; branch: RegExp; change: RegExp }[] = [
    { what: 'npm is-number 6.0.0 -> newer', branch: /is-number/, change: /^\+\s*"is-number": "(?!6\.0\.0")\d+\.\d+\.\d+"/m },
    { what: `gitea-tags ${owner}/lib v1.0.0 -> v1.1.0`, branch: /lib/, change: /^\+LIB_VERSION=v1\.1\.0$/m },
  ]
  for (const w of wanted) {
    const pull = pulls.find((p) => w.branch.test(p.head.ref))
    if (!pull) {
      check(false, `a pull request updates ${w.what}`)
      continue
    }
    const diff = await diffOf(base, owner, auth, pull)
    const changed = w.change.test(diff.text)
    check(changed, `pull request #${pull.number} updates ${w.what} (diff read through ${diff.via})`, changed ? [] : diff.text.split('\n').slice(0, 20))
    check(pull.labels.some((l) => l.name === 'dependencies'), `pull request #${pull.number} carries the preset's label "dependencies"`)
  }
  const issues = (await getJson<Issue[]>(`${base}/api/v1/repos/${owner}/app/issues?state=all&type=issues&limit=50`, auth)) ?? []
  const dashboards = issues.filter((i) => i.title === 'Dependency Dashboard')
  check(dashboards.length === 1 && dashboards[0].state === 'open', `one open Dependency Dashboard issue (issues: ${issues.map((i) => `#${i.number} ${i.state} "${i.title}"`).join(', ') || 'none'})`)
  return ok
}
