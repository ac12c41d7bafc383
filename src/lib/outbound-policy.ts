import type { BlockList } from 'node:net'

/**
 * The one outbound network policy: whether the server may open a connection, on a user's behalf,
 * to a resolved address. Webhook delivery (Gitea's `[webhook] ALLOWED_HOST_LIST`,
 * src/lib/host-allow-list.ts) and migrations with pull mirrors (Gitea's `[migrations]
 * ALLOW_LOCALNETWORKS`, src/modules/migrations/remote-policy.ts) are configurations of it, as both
 * are of Gitea's host matcher.
 *
 * Addresses live in one 128-bit space, IPv4 as IPv4-mapped IPv6 (::ffff:a.b.c.d, as a dual-stack
 * socket sees it), and every range test is a `node:net` BlockList over that space: an IPv4 range
 * such as 10.0.0.0/8 is the subnet ::ffff:10.0.0.0/104, so it matches 10.1.2.3 and
 * ::ffff:10.1.2.3 alike and nothing else.
 */

/**
 * Named address classes, each defined once. An IPv4 range counts in every IPv6 form that carries
 * an IPv4 address, because whoever connects reaches that IPv4 address through it: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d) and NAT64
 * (64:ff9b::a.b.c.d, which a NAT64 gateway turns into the IPv4 address). Loopback comes first: ::1
 * is also ::0.0.0.1, inside the IPv4-compatible form of "this network".
 */
const CLASSES = {
  loopback: { v4: ['127.0.0.0/8'], v6: ['::1/128'] },
  /** "This network" (0.0.0.0/8) and ::, which reach the local host on most systems. */
  unspecified: { v4: ['0.0.0.0/8'], v6: ['::/128'] },
  /** Link-local, the cloud metadata services' 169.254.169.254 among them. */
  linkLocal: { v4: ['169.254.0.0/16'], v6: ['fe80::/10'] },
  multicast: { v4: ['224.0.0.0/4'], v6: ['ff00::/8'] },
  /** Reserved for future use, and the limited broadcast 255.255.255.255. */
  reserved: { v4: ['240.0.0.0/4'], v6: [] },
  /** RFC 1918. */
  private: { v4: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16'], v6: [] },
  /** Carrier-grade NAT (shared address space). */
  cgnat: { v4: ['100.64.0.0/10'], v6: [] },
  /** IETF protocol assignments. */
  ietfProtocol: { v4: ['192.0.0.0/24'], v6: [] },
  /**
   * Documentation: TEST-NET-1. TEST-NET-2 and -3 (198.51.100.0/24, 203.0.113.0/24) and
   * 2001:db8::/32 are not in it and answer as external, as they always have here.
   */
  documentation: { v4: ['192.0.2.0/24'], v6: [] },
  /** Network benchmarking. */
  benchmark: { v4: ['198.18.0.0/15'], v6: [] },
  uniqueLocal: { v4: [], v6: ['fc00::/7'] },
  /** Site-local, deprecated but still routed inside some sites. */
  siteLocal: { v4: [], v6: ['fec0::/10'] },
} as const satisfies Record<string, { v4: readonly string[]; v6: readonly string[] }>

export type AddressClass = keyof typeof CLASSES

/**
 * `node:net` (and the streams it loads), loaded once a policy first reads an address: every start
 * builds the webhooks' policy from its configuration (src/config.ts) but connects nowhere, and a
 * server that never delivers nor migrates never needs it.
 */
let net: typeof import('node:net') | undefined
const netModule = () => (net ??= require('node:net') as typeof import('node:net'))
/** `node:net`'s isIP, the module loaded at the first call (for callers outside this file too: webhooks/deliver.ts). */
export const isIP = (text: string): number => netModule().isIP(text)

/**
 * What kind of address `ip` is, in Gitea's ALLOWED_HOST_LIST words: `loopback`; `private` (RFC 1918,
 * carrier-grade NAT, IETF protocol assignments, TEST-NET-1, benchmarking, unique-local and
 * site-local); `external` (routable on the public internet); `other` (unspecified, link-local,
 * multicast, reserved, or not an address we understand), which no word but `*` allows.
 */
export type AddressKind = 'loopback' | 'private' | 'external' | 'other'

const KIND_OF_CLASS: Record<AddressClass, Exclude<AddressKind, 'external'>> = {
  loopback: 'loopback',
  unspecified: 'other',
  linkLocal: 'other',
  multicast: 'other',
  reserved: 'other',
  private: 'private',
  cgnat: 'private',
  ietfProtocol: 'private',
  documentation: 'private',
  benchmark: 'private',
  uniqueLocal: 'private',
  siteLocal: 'private',
}

/** The IPv6 forms an IPv4 address is reached through (see CLASSES). */
const IPV4_CARRIERS = ['::ffff:', '::', '::ffff:0:', '64:ff9b::']

/** An address as the policy compares it: IPv6 text, IPv4 as ::ffff:a.b.c.d. */
export interface CanonicalAddress {
  /** As given, lowercased, without a zone and with an IPv4 address's leading zeros dropped. */
  address: string
  family: 4 | 6
  /** The IPv6 text BlockLists check. */
  v6: string
}

const DOTTED = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/

/** Dotted IPv4 with each part read as a decimal number (leading zeros allowed), or null. */
function dottedQuad(text: string): string | null {
  const m = DOTTED.exec(text)
  if (!m) return null
  const parts = m.slice(1).map(Number)
  return parts.every((p) => p <= 255) ? parts.join('.') : null
}

/** Reads an IPv4 or IPv6 address (an IPv6 address's zone, `%eth0`, is dropped); null when `text` is none. */
export function canonicalAddress(text: string): CanonicalAddress | null {
  const v4 = dottedQuad(text)
  if (v4) return { address: v4, family: 4, v6: `::ffff:${v4}` }
  if (!text.includes(':')) return null
  const bare = text.split('%')[0]!.toLowerCase()
  // An embedded IPv4 tail is read as leniently as a plain IPv4 address.
  const tail = /^(.*:)(\d+\.\d+\.\d+\.\d+)$/.exec(bare)
  const quad = tail ? dottedQuad(tail[2]!) : null
  const address = tail ? (quad === null ? null : tail[1]! + quad) : bare
  return address !== null && isIP(address) === 6 ? { address, family: 6, v6: address } : null
}

/** A CIDR subnet (`10.0.0.0/8`, `fd00::/8`) as a BlockList takes it, in the IPv6 space; null when `text` is none. */
export function parseSubnet(text: string): { network: string; prefix: number } | null {
  const slash = text.indexOf('/')
  if (slash < 0) return null
  const ip = canonicalAddress(text.slice(0, slash))
  const bits = text.slice(slash + 1)
  if (!ip || !/^\d{1,3}$/.test(bits)) return null
  const prefix = Number(bits) + (ip.family === 4 ? 96 : 0)
  return prefix <= 128 ? { network: ip.v6, prefix } : null
}

/** A BlockList of subnets (already checked); an IPv4 subnet also in each IPv4-carrying IPv6 form when `carriers`. */
function subnetList(v4: readonly string[], v6: readonly string[], carriers: readonly string[]): BlockList {
  const list = new (netModule().BlockList)()
  for (const cidr of v6) {
    const s = parseSubnet(cidr)!
    list.addSubnet(s.network, s.prefix, 'ipv6')
  }
  for (const cidr of v4) {
    const [network, bits] = cidr.split('/') as [string, string]
    for (const carrier of carriers) list.addSubnet(carrier + network, 96 + Number(bits), 'ipv6')
  }
  return list
}

let classLists: (readonly [AddressClass, BlockList])[] | undefined
/** The named classes' lists, built on first use. */
const CLASS_LISTS = () =>
  (classLists ??= (Object.keys(CLASSES) as AddressClass[]).map((name) => [name, subnetList(CLASSES[name].v4, CLASSES[name].v6, IPV4_CARRIERS)] as const))

/** The named class `ip` belongs to; undefined for an address in none (external) or for what is not an address. */
export function addressClass(ip: string | CanonicalAddress): AddressClass | undefined {
  const a = typeof ip === 'string' ? canonicalAddress(ip) : ip
  if (!a) return undefined
  return CLASS_LISTS().find(([, list]) => list.check(a.v6, 'ipv6'))?.[0]
}

export function addressKind(ip: string): AddressKind {
  const a = canonicalAddress(ip)
  if (!a) return 'other' // not an address we understand: refuse
  const c = addressClass(a)
  return c ? KIND_OF_CLASS[c] : 'external'
}

/** True for addresses a server must not reach for a user unless local networks are allowed. */
export const isLocalAddress = (ip: string): boolean => addressKind(ip) !== 'external'

/** Matches a host name (or an address's text) against a pattern; the webhooks' globs are such. */
export interface NameMatcher {
  matches(text: string): boolean
}

/** What a configuration allows; anything it does not allow is refused. */
export interface OutboundRules {
  /** Every address (Gitea's `*`). */
  everything?: boolean
  /** Address kinds allowed (Gitea's words `external`, `private`, `loopback`). */
  kinds?: readonly Exclude<AddressKind, 'other'>[]
  /** CIDR subnets allowed, matched against the address connected to (checked with parseSubnet first). */
  subnets?: readonly string[]
  /** Host name patterns allowed, matched against the URL's host and against the address's text. */
  names?: readonly NameMatcher[]
  /** Host names refused before they are looked up, whatever they would resolve to. */
  refusedName?: (host: string) => boolean
}

export interface OutboundPolicy {
  /** May a connection to `address`, reached through the URL host `hostname`, be made? */
  allows(hostname: string, address: string): boolean
  /** Is `hostname` refused by name alone (before any lookup)? */
  refusesName(hostname: string): boolean
}

const bareHost = (hostname: string) => hostname.replace(/^\[|\]$/g, '').toLowerCase()

/** Builds a policy; throws on a subnet parseSubnet refuses. */
export function outboundPolicy(rules: OutboundRules): OutboundPolicy {
  const kinds = new Set<AddressKind>(rules.kinds ?? [])
  const parsed = (rules.subnets ?? []).map((text) => {
    const s = parseSubnet(text)
    if (!s) throw new Error(`"${text}" is not a CIDR range`)
    return s
  })
  // The list itself on the first check (a start reads the rules, see netModule).
  let list: BlockList | undefined
  const subnets = () => {
    if (!list) {
      list = new (netModule().BlockList)()
      for (const s of parsed) list.addSubnet(s.network, s.prefix, 'ipv6')
    }
    return list
  }
  const names = rules.names ?? []
  return {
    allows(hostname, address) {
      if (rules.everything) return true
      const host = bareHost(hostname)
      if (names.some((n) => n.matches(host) || n.matches(address))) return true
      if (kinds.has(addressKind(address))) return true
      const a = canonicalAddress(address)
      return a !== null && subnets().check(a.v6, 'ipv6')
    },
    refusesName: (hostname) => rules.refusedName?.(bareHost(hostname)) ?? false,
  }
}

export interface ResolvedAddress {
  address: string
  family: number
}

export type OutboundCheck =
  /** `address` is the one to connect to: the first allowed one. */
  | { ok: true; address: ResolvedAddress; addresses: ResolvedAddress[] }
  /** Refused by name, or for its addresses (all of them listed; none when refused by name). */
  | { ok: false; reason: 'refused'; addresses: ResolvedAddress[] }
  | { ok: false; reason: 'unresolvable'; error: string }

/**
 * Resolves a URL's host (an address literal as itself, a name through every address DNS gives)
 * and applies the policy. `need: 'any'` passes when some address is allowed: the caller then
 * connects to that very address (a second lookup could answer differently). `need: 'every'` passes
 * only when all of them are, for callers whose connection (git's) makes its own lookup.
 */
export async function checkOutbound(hostname: string, policy: OutboundPolicy, need: 'any' | 'every'): Promise<OutboundCheck> {
  const host = hostname.replace(/^\[|\]$/g, '')
  if (policy.refusesName(host)) return { ok: false, reason: 'refused', addresses: [] }
  let addresses: ResolvedAddress[]
  if (isIP(host)) addresses = [{ address: host, family: isIP(host) }]
  else {
    try {
      const { lookup } = await import('node:dns/promises')
      addresses = await lookup(host, { all: true, verbatim: true })
    } catch (e) {
      return { ok: false, reason: 'unresolvable', error: (e as NodeJS.ErrnoException).code ?? (e as Error).message }
    }
    if (addresses.length === 0) return { ok: false, reason: 'unresolvable', error: 'no address' }
  }
  const allowed = addresses.filter((a) => policy.allows(host, a.address))
  const ok = need === 'any' ? allowed.length > 0 : allowed.length === addresses.length
  return ok ? { ok: true, address: allowed[0]!, addresses } : { ok: false, reason: 'refused', addresses }
}
