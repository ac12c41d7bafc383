import { readdirSync, readFileSync } from 'node:fs'
import { setPriority } from 'node:os'

/**
 * Background work at a lower CPU priority than the request path. On Linux a nice value belongs to
 * a thread, not to the process: `setPriority(0, n)` from a thread lowers that thread alone (and the
 * threads it starts afterwards), so a worker thread can step aside for the API's event loop while
 * the event loop keeps its own priority. Elsewhere (macOS, Windows) the same call would lower the
 * whole process, so nothing is done there. A thread's priority can only go down (raising it back
 * needs a privilege), which suits threads that do background work only.
 */

/** The nice value of background threads: CFS gives a runnable nice-0 thread about 9 times the CPU of a nice-10 one. */
export const BACKGROUND_NICE = 10

const lowers = process.platform === 'linux'

/** Lowers the calling thread (and threads it starts from now on) to `nice`; false where not done. */
export function lowerThisThread(nice = BACKGROUND_NICE): boolean {
  if (!lowers) return false
  try {
    setPriority(0, nice)
    return true
  } catch {
    return false
  }
}

/**
 * Lowers this process's threads named `name` (their `comm`, as `ps -L` shows it) to `nice`;
 * answers how many were found. Bun's fetch connections all run on one thread of the process,
 * `HTTP Client`, whichever thread calls fetch: a worker thread that delivers through fetch lowers
 * that one too, or its requests' work would run at the event loop's priority.
 */
export function lowerThreadsNamed(name: string, nice = BACKGROUND_NICE): number {
  if (!lowers) return 0
  let found = 0
  let tids: string[]
  try {
    tids = readdirSync('/proc/self/task')
  } catch {
    return 0
  }
  for (const tid of tids) {
    try {
      if (readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() !== name) continue
      setPriority(Number(tid), nice)
      found++
    } catch {
      // The thread ended meanwhile.
    }
  }
  return found
}

/** The name of Bun's thread of fetch connections. */
export const FETCH_THREAD = 'HTTP Client'
