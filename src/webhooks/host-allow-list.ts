import { addressBytes, addressKind } from '../lib/network-guard'
import { compileGlob, type Glob } from './glob'

/**
 * Where webhooks may be delivered: Gitea's `[webhook] ALLOWED_HOST_LIST`
 * (WARREN_WEBHOOK_ALLOWED_HOST_LIST), a comma-separated list of
 * - `external`: addresses routable on the public internet (the default when the list is empty),
 * - `private`: RFC 1918, carrier-grade NAT, unique-local and the like (src/lib/network-guard.ts),
 * - `loopback`: 127.0.0.0/8 and ::1,
 * - `*`: everything,
 * - CIDR ranges (`10.0.0.0/8`, `fd00::/8`), matched against the address connected to,
 * - host names, with `*` and `?` wildcards (`*.example.com`), matched against the URL's host.
 * A delivery is allowed when its host name matches a name, or the address it connects to matches
 * the rest (MatchHostOrIP in Gitea).
 */
export interface HostAllowList {
  /** The setting as written (for messages). */
  readonly text: string
  allows(hostname: string, address: string): boolean
}

type Cidr = { bytes: Uint8Array; bits: number }

const BUILTINS = new Set(['external', 'private', 'loopback'])

function parseCidr(entry: string): Cidr | null {
  const slash = entry.indexOf('/')
  if (slash < 0) return null
  const ip = addressBytes(entry.slice(0, slash))
  const prefix = entry.slice(slash + 1)
  if (!ip || !/^\d{1,3}$/.test(prefix)) return null
  const bits = Number(prefix) + (ip.v4 ? 96 : 0)
  return bits <= 128 ? { bytes: ip.bytes, bits } : null
}

function inCidr(cidr: Cidr, bytes: Uint8Array): boolean {
  for (let bit = 0; bit < cidr.bits; bit += 8) {
    const byte = bit >> 3
    const mask = cidr.bits - bit >= 8 ? 0xff : (0xff << (8 - (cidr.bits - bit))) & 0xff
    if ((cidr.bytes[byte]! & mask) !== (bytes[byte]! & mask)) return false
  }
  return true
}

/** Parses the setting; throws with the entry that is neither a keyword, a CIDR range nor a host pattern. */
export function parseHostAllowList(text: string): HostAllowList {
  const builtins = new Set<string>()
  const cidrs: Cidr[] = []
  const names: Glob[] = []
  let everything = false
  for (const raw of text.split(',')) {
    const entry = raw.trim().toLowerCase()
    if (!entry) continue
    if (entry === '*') everything = true
    else if (BUILTINS.has(entry)) builtins.add(entry)
    else if (entry.includes('/')) {
      const cidr = parseCidr(entry)
      if (!cidr) throw new Error(`"${raw.trim()}" is not a CIDR range`)
      cidrs.push(cidr)
    } else {
      if (!/^[a-z0-9.*?\-_:[\]]+$/.test(entry)) throw new Error(`"${raw.trim()}" is not a host name pattern`)
      names.push(compileGlob(entry))
    }
  }
  if (!everything && builtins.size === 0 && cidrs.length === 0 && names.length === 0) builtins.add('external')
  return {
    text,
    allows(hostname, address) {
      if (everything) return true
      const host = hostname.replace(/^\[|\]$/g, '').toLowerCase()
      if (names.some((n) => n.matches(host) || n.matches(address))) return true
      const kind = addressKind(address)
      if (builtins.has(kind)) return true
      const bytes = addressBytes(address)
      return bytes !== null && cidrs.some((c) => inCidr(c, bytes.bytes))
    },
  }
}
