import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'

/**
 * Which network addresses the server may reach on a user's behalf (migrations now, webhooks
 * later): Gitea's [migrations] ALLOW_LOCALNETWORKS. Loopback, link-local, private (RFC 1918,
 * carrier-grade NAT), unique-local, unspecified and multicast addresses are "local"; a host name
 * is local when any address it resolves to is.
 *
 * Caveat (DNS rebinding): the name is resolved here and again by whoever connects (git), so a
 * name whose answers change between the two lookups can slip through. Accepted for migrations;
 * webhook delivery connects to the address it checked (src/webhooks/deliver.ts).
 */

/** Parses dotted IPv4 into four bytes, or null. */
function ipv4Bytes(ip: string): number[] | null {
  const parts = ip.split('.')
  if (parts.length !== 4) return null
  const bytes = parts.map((p) => (/^\d{1,3}$/.test(p) ? Number(p) : NaN))
  return bytes.every((b) => b >= 0 && b <= 255) ? bytes : null
}

/** Expands an IPv6 address into eight 16-bit groups, or null. */
function ipv6Groups(ip: string): number[] | null {
  let text = ip.split('%')[0]!.toLowerCase()
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes two hex groups.
  const v4 = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(text)
  if (v4) {
    const b = ipv4Bytes(v4[2]!)
    if (!b) return null
    text = `${v4[1]}${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`
  }
  const halves = text.split('::')
  if (halves.length > 2) return null
  const parse = (s: string) => (s === '' ? [] : s.split(':').map((g) => (/^[0-9a-f]{1,4}$/.test(g) ? parseInt(g, 16) : NaN)))
  const head = parse(halves[0]!)
  const rest = halves.length === 2 ? parse(halves[1]!) : []
  if (head.concat(rest).some(Number.isNaN)) return null
  const known = head.length + rest.length
  if (halves.length === 1 ? known !== 8 : known > 7) return null
  return [...head, ...Array(8 - known).fill(0), ...rest]
}

/**
 * An address as 16 bytes (IPv4 as IPv4-mapped IPv6, ::ffff:a.b.c.d), with `v4` telling which it
 * was written as; null when `ip` is not an address. For CIDR ranges (src/webhooks/host-allow-list.ts).
 */
export function addressBytes(ip: string): { bytes: Uint8Array; v4: boolean } | null {
  const v4 = ipv4Bytes(ip)
  if (v4) return { bytes: Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, ...v4]), v4: true }
  if (!ip.includes(':')) return null
  const g = ipv6Groups(ip)
  return g ? { bytes: Uint8Array.from(g.flatMap((x) => [x >> 8, x & 255])), v4: false } : null
}

/**
 * What kind of address `ip` is: `loopback`; `private` (RFC 1918, carrier-grade NAT, IETF protocol
 * assignments, TEST-NET-1, benchmarking, unique-local and site-local); `external` (routable on
 * the public internet); `other` (unspecified, link-local, multicast, reserved, or not an address
 * we understand). Gitea's ALLOWED_HOST_LIST names the first three (src/webhooks/host-allow-list.ts).
 */
export type AddressKind = 'loopback' | 'private' | 'external' | 'other'

export function addressKind(ip: string): AddressKind {
  const v4 = ipv4Bytes(ip)
  if (v4) {
    const [a, b] = v4 as [number, number, number, number]
    if (a === 127) return 'loopback'
    if (a === 0 || (a === 169 && b === 254) || a >= 224) return 'other' // "this" network, link-local, multicast, reserved, broadcast
    if (
      a === 10 ||
      (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168) ||
      (a === 192 && b === 0 && (v4[2] === 0 || v4[2] === 2)) || // IETF protocol assignments, TEST-NET-1
      (a === 198 && (b === 18 || b === 19)) // benchmarking
    )
      return 'private'
    return 'external'
  }
  const g = ipv6Groups(ip)
  if (!g) return 'other' // not an address we understand: refuse
  if (g.every((x) => x === 0)) return 'other' // ::
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return 'loopback' // ::1
  // Forms that carry an IPv4 address in their last 32 bits: judge that address. IPv4-mapped
  // (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d) and NAT64
  // (64:ff9b::a.b.c.d, which a NAT64 gateway turns into the IPv4 address).
  const embedsV4 =
    (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) ||
    (g.slice(0, 4).every((x) => x === 0) && g[4] === 0xffff && g[5] === 0) ||
    (g[0] === 0x64 && g[1] === 0xff9b && g.slice(2, 6).every((x) => x === 0))
  if (embedsV4) return addressKind(`${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`)
  const first = g[0]!
  if ((first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfec0) return 'private' // unique-local fc00::/7, site-local (deprecated)
  if ((first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00) return 'other' // link-local fe80::/10, multicast
  return 'external'
}

/** True for addresses a server must not reach for a user unless local networks are allowed. */
export const isLocalAddress = (ip: string): boolean => addressKind(ip) !== 'external'

export type HostCheck = { ok: true } | { ok: false; reason: 'local' | 'unresolvable' }

/**
 * Checks a URL's host name: an address literal directly, a name through every address DNS
 * gives for it. `allowLocal` skips the check (the resolution is still needed by nobody then).
 */
export async function checkRemoteHost(hostname: string, allowLocal: boolean): Promise<HostCheck> {
  if (allowLocal) return { ok: true }
  const host = hostname.replace(/^\[|\]$/g, '')
  if (isIP(host)) return isLocalAddress(host) ? { ok: false, reason: 'local' } : { ok: true }
  if (host.toLowerCase() === 'localhost' || host.toLowerCase().endsWith('.localhost')) return { ok: false, reason: 'local' }
  let addresses: { address: string }[]
  try {
    addresses = await lookup(host, { all: true, verbatim: true })
  } catch {
    return { ok: false, reason: 'unresolvable' }
  }
  if (addresses.length === 0) return { ok: false, reason: 'unresolvable' }
  return addresses.some((a) => isLocalAddress(a.address)) ? { ok: false, reason: 'local' } : { ok: true }
}

/**
 * The group a client address is limited under: an IPv4 address alone (also when it arrives as
 * IPv4-mapped IPv6, ::ffff:a.b.c.d, as it does on a dual-stack listener), an IPv6 address by its
 * /64 (one client is usually handed a whole /64, so counting single addresses would let it open
 * limits by the billion). Written as `2001:db8:0:1::/64`; anything that is not an address stays
 * as it is (lowercased), a group of its own.
 */
export function addressGroup(ip: string): string {
  const parsed = addressBytes(ip.split('%')[0]!)
  if (!parsed) return ip.toLowerCase()
  const b = parsed.bytes
  const mapped = b.subarray(0, 10).every((x) => x === 0) && b[10] === 0xff && b[11] === 0xff
  if (mapped) return `${b[12]}.${b[13]}.${b[14]}.${b[15]}`
  const groups = [0, 2, 4, 6].map((i) => ((b[i]! << 8) | b[i + 1]!).toString(16))
  return `${groups.join(':')}::/64`
}
