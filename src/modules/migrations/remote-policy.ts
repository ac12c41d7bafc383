import { checkOutbound, outboundPolicy } from '../../lib/outbound-policy'

/**
 * Where migrations and pull mirrors may fetch from: Gitea's `[migrations] ALLOW_LOCALNETWORKS`
 * (WARREN_MIGRATIONS_ALLOW_LOCALNETWORKS) as a configuration of the outbound policy. Without it
 * only external addresses are allowed, `localhost` and its subdomains are refused by name, and a
 * host name passes only when every address it resolves to does: git makes its own lookup when it
 * connects, and may pick any of them.
 *
 * Caveat (DNS rebinding): that second lookup is git's, so a name whose answers change between the
 * two can slip through. Accepted for migrations; webhook delivery connects to the very address it
 * checked (src/webhooks/deliver.ts).
 */
const externalOnly = outboundPolicy({
  kinds: ['external'],
  refusedName: (host) => host === 'localhost' || host.endsWith('.localhost'),
})

export type HostCheck = { ok: true } | { ok: false; reason: 'local' | 'unresolvable' }

/**
 * Checks a clone URL's host name: an address literal directly, a name through every address DNS
 * gives for it. `allowLocal` skips the check (and the lookup: git makes its own).
 */
export async function checkRemoteHost(hostname: string, allowLocal: boolean): Promise<HostCheck> {
  if (allowLocal) return { ok: true }
  const check = await checkOutbound(hostname, externalOnly, 'every')
  if (check.ok) return { ok: true }
  return { ok: false, reason: check.reason === 'refused' ? 'local' : 'unresolvable' }
}
