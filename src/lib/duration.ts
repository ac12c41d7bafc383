/**
 * Go's time.Duration text, as Gitea reads and writes mirror intervals ("8h0m0s", "10m", "1h30m",
 * "0"). Parsed to whole seconds; fractions and units below a second are refused.
 */
const UNIT_SECONDS: Record<string, number> = { h: 3600, m: 60, s: 1 }
/** The longest Go duration (2^63-1 nanoseconds), in whole seconds: Go's ParseDuration refuses more ("invalid duration"). */
const MAX_SECONDS = 9_223_372_036

/** Seconds of a Go duration string, or null when it is not one (or not whole seconds, or longer than Go's longest). */
export function parseGoDuration(text: string): number | null {
  const s = text.trim()
  if (s === '0') return 0
  if (!/^(\d{1,9}(h|m|s))+$/.test(s)) return null
  let total = 0
  for (const [, n, unit] of s.matchAll(/(\d{1,9})(h|m|s)/g)) total += Number(n) * UNIT_SECONDS[unit!]!
  return total <= MAX_SECONDS ? total : null
}
