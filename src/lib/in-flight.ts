/**
 * Work that may outlive the request that started it (a git process, a push being recorded after
 * its client hung up): registered here so that shutdown (src/ops/shutdown.ts) can wait for it,
 * and cut it off (its `cancel`) when the grace period is over, before the database closes.
 */
interface Work {
  done: Promise<unknown>
  cancel?: () => void
}

const works = new Set<Work>()

/** Registers work until `done` settles; `cancel` stops it early (shutdown past its grace period). */
export function trackWork(done: Promise<unknown>, cancel?: () => void): void {
  const work: Work = { done, cancel }
  works.add(work)
  const remove = () => works.delete(work)
  done.then(remove, remove)
}

/** How much tracked work is still running. */
export const workInFlight = (): number => works.size

/** Cancels every tracked work that can be; returns how many were asked to stop. */
export function cancelAllWork(): number {
  let n = 0
  for (const work of works)
    if (work.cancel) {
      work.cancel()
      n++
    }
  return n
}

/** Resolves true once no tracked work is left (work started meanwhile included), false at `deadline` (ms since epoch). */
export async function workSettled(deadline: number): Promise<boolean> {
  while (works.size > 0) {
    const left = deadline - Date.now()
    if (left <= 0) return false
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise((resolve) => (timer = setTimeout(resolve, left)))
    await Promise.race([Promise.allSettled([...works].map((w) => w.done)), timeout])
    clearTimeout(timer)
  }
  return true
}
