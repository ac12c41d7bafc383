import { readFileSync } from 'node:fs'

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on Linux). */
const TICKS = 100

/** CPU seconds (user + system) a process has used so far, from /proc; 0 when it has ended. */
export function cpuSecondsOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // Fields after the command's closing parenthesis: state is field 3, utime 14 and stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / TICKS
  } catch {
    return 0
  }
}

/** The machine's CPU time so far, all cores: busy and total seconds (/proc/stat's first line). */
export function machineCpu(): { busy: number; total: number } {
  const [, ...ticks] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/)
  // user nice system idle iowait irq softirq steal (guest time is counted in user already).
  const n = ticks.slice(0, 8).map(Number)
  const total = n.reduce((a, b) => a + b, 0)
  // idle and iowait are not busy.
  return { busy: (total - n[3]! - (n[4] ?? 0)) / TICKS, total: total / TICKS }
}

/**
 * CPU seconds each of `pids` used between `start()` and `stop()` (a pid first seen at stop
 * counts from 0: a process started in between), and the machine's busy cores over that time.
 */
export function cpuMeter(pidsAtStart: number[]) {
  const before = new Map(pidsAtStart.map((pid) => [pid, cpuSecondsOf(pid)]))
  const machine = machineCpu()
  const started = performance.now()
  return {
    stop(pidsAtStop: number[]): { byPid: Map<number, number>; busyCores: number; wallSeconds: number } {
      const byPid = new Map<number, number>()
      for (const pid of new Set([...pidsAtStart, ...pidsAtStop])) byPid.set(pid, Math.max(0, cpuSecondsOf(pid) - (before.get(pid) ?? 0)))
      const now = machineCpu()
      const wallSeconds = (performance.now() - started) / 1000
      const cores = (now.total - machine.total) / wallSeconds
      return { byPid, busyCores: ((now.busy - machine.busy) / (now.total - machine.total)) * cores, wallSeconds }
    },
  }
}
