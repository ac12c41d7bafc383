/**
 * Client addresses as the server limits them (src/ssh/limits.ts). Whether the server may connect
 * to an address on a user's behalf is the outbound policy's (src/lib/outbound-policy.ts), whose
 * local-address test is re-exported here for the callers that know it by this module.
 */
export { isLocalAddress } from './outbound-policy'

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
 * The group a client address is limited under: an IPv4 address alone (also when it arrives as
 * IPv4-mapped IPv6, ::ffff:a.b.c.d, as it does on a dual-stack listener), an IPv6 address by its
 * /64 (one client is usually handed a whole /64, so counting single addresses would let it open
 * limits by the billion). Written as `2001:db8:0:1::/64`; anything that is not an address stays
 * as it is (lowercased), a group of its own.
 */
export function addressGroup(ip: string): string {
  const bare = ip.split('%')[0]!
  if (ipv4Bytes(bare)) return ipv4Bytes(bare)!.join('.')
  const g = bare.includes(':') ? ipv6Groups(bare) : null
  if (!g) return ip.toLowerCase()
  const mapped = g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff
  if (mapped) return `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`
  return `${g.slice(0, 4).map((x) => x.toString(16)).join(':')}::/64`
}
