import { readdirSync, readFileSync } from 'node:fs'

const MiB = 1024 * 1024

/** Resident memory (bytes) of a process from /proc; 0 when it has ended. */
export function rssOf(pid: number | 'self'): number {
  try {
    return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024
  } catch {
    return 0 // the process ended in between
  }
}

/** The resident memory (bytes) of the children of `pid`, except those in `exclude`. */
export function childrenRss(pid: number | 'self', exclude: Set<number> = new Set()): number {
  let tasks: string[]
  try {
    tasks = readdirSync(`/proc/${pid}/task`)
  } catch {
    return 0
  }
  let total = 0
  for (const task of tasks) {
    let children = ''
    try {
      children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8')
    } catch {}
    for (const child of children.split(' ')) if (child && !exclude.has(Number(child))) total += rssOf(Number(child))
  }
  return total
}

/**
 * Samples every 20 ms the resident memory of a server running as process `pid` and of the
 * processes it spawned (git); `stop()` returns idle (at the start), peak of the server alone and
 * peak of the server with its children, in MiB.
 */
export function sampleProcessTree(pid: number) {
  const idle = rssOf(pid)
  let peak = idle
  let peakWithChildren = idle
  const sample = () => {
    const own = rssOf(pid)
    peak = Math.max(peak, own)
    peakWithChildren = Math.max(peakWithChildren, own + childrenRss(pid))
  }
  const timer = setInterval(sample, 20)
  return {
    stop() {
      clearInterval(timer)
      sample()
      return { idle: idle / MiB, peak: peak / MiB, peakWithChildren: peakWithChildren / MiB }
    },
  }
}

/** This process's resident memory, MiB. */
export const ownRssMiB = () => process.memoryUsage().rss / MiB

/** This process's resident memory (MiB) 5 s from now, after a full collection. */
export async function settledRssMiB(): Promise<number> {
  await Bun.sleep(5000)
  Bun.gc(true)
  await Bun.sleep(50)
  return ownRssMiB()
}

/**
 * This process's resident memory (MiB) around `work`, for benchmarks that run the server in
 * their own process: before it (after a full collection), its peak (sampled every 50 ms), and
 * settledRssMiB after it; with the seconds it took.
 */
export async function measureOwnRss(work: () => Promise<unknown>): Promise<{ before: number; peak: number; after: number; seconds: number }> {
  Bun.gc(true)
  const before = ownRssMiB()
  let peak = before
  const timer = setInterval(() => (peak = Math.max(peak, ownRssMiB())), 50)
  const started = performance.now()
  try {
    await work()
  } finally {
    clearInterval(timer)
  }
  const seconds = (performance.now() - started) / 1000
  peak = Math.max(peak, ownRssMiB())
  return { before, peak, after: await settledRssMiB(), seconds }
}

/** Resident memory (MiB) of `pid` from /proc: total, anonymous (heap, code, caches) and file-backed pages (mostly the executable's own code). */
export function memoryOf(pid: number) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const mib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024
  return { rss: mib('VmRSS'), anon: mib('RssAnon'), file: mib('RssFile') }
}

/** CPU time (user + system, ms) process `pid` has used. */
export function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100
}
