/**
 * CPU time and run-queue wait per thread, from Linux's /proc/<pid>/task/<tid>/schedstat (time on
 * a CPU, time runnable but waiting for one, in nanoseconds), grouped by the thread's name (comm):
 * `bun` (a process's main thread: the API's event loop), `Worker` (worker threads: the webhook
 * thread), `HTTP Client` (Bun's one thread of fetch connections, whichever thread asked),
 * `HeapHelper` (JavaScriptCore's parallel garbage collection, for every thread's heap),
 * `JITWorker` (compilation), the rest as `other`. Threads that ended between two samples drop out of the
 * difference (the webhook thread's are counted while they run). Empty where /proc has no schedstat.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { setPriority } from 'node:os'

export interface ThreadTimes {
  /** ns on a CPU */
  cpu: number
  /** ns runnable, waiting for a CPU */
  wait: number
}
export type Sample = Map<string, ThreadTimes & { group: string; nice: number }>

const GROUPS = new Set(['bun', 'Worker', 'HTTP Client', 'HeapHelper', 'JITWorker'])

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return null
  }
}

/** One reading of every thread of process `pid` ('self' for this one), by thread id. */
export function sampleThreads(pid: number | 'self' = 'self'): Sample {
  const sample: Sample = new Map()
  let tids: string[]
  try {
    tids = readdirSync(`/proc/${pid}/task`)
  } catch {
    return sample
  }
  for (const tid of tids) {
    const stat = read(`/proc/${pid}/task/${tid}/schedstat`)
    const comm = read(`/proc/${pid}/task/${tid}/comm`)?.trim()
    if (!stat || !comm) continue
    const [cpu, wait] = stat.trim().split(' ').map(Number)
    // stat's 19th field, counted after the parenthesised name (which may hold spaces).
    const fields = read(`/proc/${pid}/task/${tid}/stat`)?.split(') ')[1]?.split(' ') ?? []
    sample.set(tid, { cpu: cpu!, wait: wait!, group: GROUPS.has(comm) ? comm : 'other', nice: Number(fields[16] ?? 0) })
  }
  return sample
}

/** What each group of threads used between two samples (threads present in `after`; new ones from zero). */
export function difference(before: Sample, after: Sample): Map<string, ThreadTimes> {
  const groups = new Map<string, ThreadTimes>()
  for (const [tid, a] of after) {
    const b = before.get(tid)
    const g = groups.get(a.group) ?? { cpu: 0, wait: 0 }
    g.cpu += a.cpu - (b?.cpu ?? 0)
    g.wait += a.wait - (b?.wait ?? 0)
    groups.set(a.group, g)
  }
  return groups
}

/** Adds `more` into `into`, group by group. */
export function addTimes(into: Map<string, ThreadTimes>, more: Map<string, ThreadTimes>): void {
  for (const [group, t] of more) {
    const g = into.get(group) ?? { cpu: 0, wait: 0 }
    g.cpu += t.cpu
    g.wait += t.wait
    into.set(group, g)
  }
}

/** The nice values of each group's threads in `sample` ("0", "10", "0/10" when they differ). */
export function nicesOf(sample: Sample): Map<string, string> {
  const by = new Map<string, Set<number>>()
  for (const t of sample.values()) by.set(t.group, (by.get(t.group) ?? new Set()).add(t.nice))
  return new Map([...by].map(([group, nices]) => [group, [...nices].sort((a, b) => a - b).join('/')]))
}

/** Sets every thread of process `pid` to `nice` (Linux: a nice value is a thread's). */
export function reniceProcess(pid: number, nice: number): void {
  for (const tid of readdirSync(`/proc/${pid}/task`)) setPriority(Number(tid), nice)
}
