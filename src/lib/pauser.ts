/**
 * A loop's pause that can be cut short: `pause(ms)` waits `ms` or until `wake()`, whichever comes
 * first (`wake()` while not pausing does nothing). For the polling loops of the outbox's consumers.
 */
export function pauser() {
  let wake = null as (() => void) | null
  return {
    pause: (ms: number) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(() => ((wake = null), resolve()), ms)
        wake = () => (clearTimeout(timer), (wake = null), resolve())
      }),
    wake: () => wake?.(),
  }
}
