/**
 * Go's time.Duration text, as Gitea reads and writes mirror intervals ("8h0m0s", "10m", "1h30m",
 * "0"). Parsed to whole seconds; fractions and units below a second are refused.
 */
const UNIT_SECONDS: Record<string, number> = { h: 3600, m: 60, s: 1 }

/** Seconds of a Go duration string, or null when it is not one (or not whole seconds). */
export function parseGoDuration(text: string): number | null {
  const s = text.trim()
  if (s === '0') return 0
  if (!/^(\d{1,9}(h|m|s))+$/.test(s)) return null
  let total = 0
  for (const [, n, unit] of s.matchAll(/(\d{1,9})(h|m|s)/g)) total += Number(n) * UNIT_SECONDS[unit!]!
  return Number.isSafeInteger(total) ? total : null
}

/** Go's String() of a duration of whole seconds: "8h0m0s", "10m0s", "0s". */
export function formatGoDuration(seconds: number): string {
  if (seconds === 0) return '0s'
  const h = Math.floor(seconds / 3600)
  const m = Math.floor((seconds % 3600) / 60)
  const s = seconds % 60
  return h ? `${h}h${m}m${s}s` : m ? `${m}m${s}s` : `${s}s`
}
