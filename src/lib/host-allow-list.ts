import { outboundPolicy, parseSubnet, type AddressKind, type NameMatcher, type OutboundPolicy } from './outbound-policy'
import { compileGlob } from './glob'

/**
 * Where webhooks may be delivered: Gitea's `[webhook] ALLOWED_HOST_LIST`
 * (WARREN_WEBHOOK_ALLOWED_HOST_LIST), a comma-separated list of
 * - `external`: addresses routable on the public internet (the default when the list is empty),
 * - `private`: RFC 1918, carrier-grade NAT, unique-local and the like (src/lib/outbound-policy.ts),
 * - `loopback`: 127.0.0.0/8 and ::1,
 * - `*`: everything,
 * - CIDR ranges (`10.0.0.0/8`, `fd00::/8`), matched against the address connected to,
 * - host names, with `*` and `?` wildcards (`*.example.com`), matched against the URL's host.
 * A delivery is allowed when its host name matches a name, or the address it connects to matches
 * the rest (MatchHostOrIP in Gitea). The list is a configuration of the outbound policy.
 */
export interface HostAllowList extends OutboundPolicy {
  /** The setting as written (for messages). */
  readonly text: string
}

const WORDS = new Set<AddressKind>(['external', 'private', 'loopback'])

/** Parses the setting; throws with the entry that is neither a keyword, a CIDR range nor a host pattern. */
export function parseHostAllowList(text: string): HostAllowList {
  const kinds = new Set<Exclude<AddressKind, 'other'>>()
  const subnets: string[] = []
  const names: NameMatcher[] = []
  let everything = false
  for (const raw of text.split(',')) {
    const entry = raw.trim().toLowerCase()
    if (!entry) continue
    if (entry === '*') everything = true
    else if (WORDS.has(entry as AddressKind)) kinds.add(entry as Exclude<AddressKind, 'other'>)
    else if (entry.includes('/')) {
      if (!parseSubnet(entry)) throw new Error(`"${raw.trim()}" is not a CIDR range`)
      subnets.push(entry)
    } else {
      if (!/^[a-z0-9.*?\-_:[\]]+$/.test(entry)) throw new Error(`"${raw.trim()}" is not a host name pattern`)
      names.push(compileGlob(entry))
    }
  }
  if (!everything && kinds.size === 0 && subnets.length === 0 && names.length === 0) kinds.add('external')
  return { text, ...outboundPolicy({ everything, kinds: [...kinds], subnets, names }) }
}
