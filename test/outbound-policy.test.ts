// runs in one half: sqlite
import { describe, expect, test } from 'bun:test'
import { lookup } from 'node:dns/promises'
import { addressClass, addressKind, checkOutbound, outboundPolicy, parseSubnet, type AddressClass, type AddressKind } from '../src/lib/outbound-policy'
import { parseHostAllowList } from '../src/lib/host-allow-list'
import { checkRemoteHost } from '../src/modules/migrations/remote-policy'

/**
 * The outbound policy (src/lib/outbound-policy.ts) and its two configurations: webhooks'
 * ALLOWED_HOST_LIST and migrations' ALLOW_LOCALNETWORKS=false. One table of addresses, IPv4 and
 * the IPv6 forms that carry an IPv4 address, against every configuration.
 */

/** The configurations, in the order of the table's flags. */
const configs = {
  external: parseHostAllowList(''),
  loopback: parseHostAllowList('loopback'),
  private: parseHostAllowList('private'),
  everything: parseHostAllowList('*'),
  subnets: parseHostAllowList('10.0.0.0/8, fd00::/8'),
  allIPv4: parseHostAllowList('::ffff:0:0/96'),
}

/**
 * [address, named class, kind, flags]: one flag per configuration above, then the migrations'
 * answer for the address as a clone URL's host ('-' where a migration would look the text up in
 * DNS instead, not being an address literal).
 */
const table: [string, AddressClass | undefined, AddressKind, string][] = [
  // IPv4, each class at its edges
  ['127.0.0.1', 'loopback', 'loopback', '010101 0'],
  ['127.255.255.254', 'loopback', 'loopback', '010101 0'],
  ['0.0.0.0', 'unspecified', 'other', '000101 0'],
  ['169.254.169.254', 'linkLocal', 'other', '000101 0'],
  ['224.0.0.1', 'multicast', 'other', '000101 0'],
  ['240.0.0.1', 'reserved', 'other', '000101 0'],
  ['255.255.255.255', 'reserved', 'other', '000101 0'],
  ['10.0.0.1', 'private', 'private', '001111 0'],
  ['172.16.0.1', 'private', 'private', '001101 0'],
  ['172.31.255.255', 'private', 'private', '001101 0'],
  ['172.15.255.255', undefined, 'external', '100101 1'],
  ['172.32.0.1', undefined, 'external', '100101 1'],
  ['192.168.1.1', 'private', 'private', '001101 0'],
  ['100.64.0.1', 'cgnat', 'private', '001101 0'],
  ['100.127.255.255', 'cgnat', 'private', '001101 0'],
  ['100.63.255.255', undefined, 'external', '100101 1'],
  ['100.128.0.1', undefined, 'external', '100101 1'],
  ['192.0.0.8', 'ietfProtocol', 'private', '001101 0'],
  ['192.0.2.1', 'documentation', 'private', '001101 0'],
  ['198.51.100.1', undefined, 'external', '100101 1'],
  ['203.0.113.1', undefined, 'external', '100101 1'],
  ['198.18.0.1', 'benchmark', 'private', '001101 0'],
  ['198.19.255.255', 'benchmark', 'private', '001101 0'],
  ['198.20.0.1', undefined, 'external', '100101 1'],
  ['8.8.8.8', undefined, 'external', '100101 1'],
  // IPv6
  ['::1', 'loopback', 'loopback', '010100 0'],
  ['::', 'unspecified', 'other', '000100 0'],
  ['fe80::1', 'linkLocal', 'other', '000100 0'],
  ['fe80::1%eth0', 'linkLocal', 'other', '000100 -'],
  ['ff02::1', 'multicast', 'other', '000100 0'],
  ['fc00::1', 'uniqueLocal', 'private', '001100 0'],
  ['FD12::1', 'uniqueLocal', 'private', '001110 0'],
  ['fec0::1', 'siteLocal', 'private', '001100 0'],
  ['2606:4700::1111', undefined, 'external', '100100 1'],
  ['2001:db8::1', undefined, 'external', '100100 1'],
  // IPv4-mapped: the IPv4 address's class; IPv4 subnets match it
  ['::ffff:127.0.0.1', 'loopback', 'loopback', '010101 0'],
  ['::ffff:7f00:1', 'loopback', 'loopback', '010101 0'],
  ['::FFFF:A00:1', 'private', 'private', '001111 0'],
  ['::ffff:8.8.8.8', undefined, 'external', '100101 1'],
  // IPv4-compatible, IPv4-translated, NAT64: the IPv4 address's class, but not in IPv4 subnets
  ['::127.0.0.1', 'loopback', 'loopback', '010100 0'],
  ['::ffff:0:10.0.0.1', 'private', 'private', '001100 0'],
  ['64:ff9b::169.254.169.254', 'linkLocal', 'other', '000100 0'],
  ['64:ff9b::a9fe:a9fe', 'linkLocal', 'other', '000100 0'],
  ['64:ff9b::10.0.0.1', 'private', 'private', '001100 0'],
  ['64:ff9b::808:808', undefined, 'external', '100100 1'],
  // Local-use NAT64 carries no IPv4 address we read: judged as itself
  ['64:ff9b:1::a00:1', undefined, 'external', '100100 1'],
  // Not addresses: only `*` allows them
  ['localhost', undefined, 'other', '000100 0'],
  ['1.2.3', undefined, 'other', '000100 -'],
  ['256.1.1.1', undefined, 'other', '000100 -'],
  ['10.0.0.1%eth0', undefined, 'other', '000100 -'],
  ['', undefined, 'other', '000100 -'],
]

describe('outbound policy', () => {
  test('named classes and kinds, IPv4 and IPv6 forms', () => {
    for (const [address, cls, kind] of table) expect({ address, cls: addressClass(address), kind: addressKind(address) }).toEqual({ address, cls, kind })
  })

  test('every address against every configuration', async () => {
    for (const [address, , , flags] of table) {
      const [hooks, migration] = flags.split(' ') as [string, string]
      const got = Object.values(configs)
        .map((c) => (c.allows('x', address) ? '1' : '0'))
        .join('')
      const migrated = migration === '-' ? '-' : (await checkRemoteHost(address.includes(':') ? `[${address}]` : address, false)).ok ? '1' : '0'
      expect({ address, flags: `${got} ${migrated}` }).toEqual({ address, flags })
      // Local networks allowed: migrations take every host, without a lookup.
      expect(await checkRemoteHost(address || 'x', true)).toEqual({ ok: true })
    }
  })

  test('host names: patterns match the URL host or the address text, never a resolved name', () => {
    const list = parseHostAllowList('*.corp.example, 192.168.*')
    expect([
      list.allows('ci.corp.example', '8.8.8.8'),
      list.allows('[CI.Corp.Example]', '10.0.0.1'),
      list.allows('corp.example', '8.8.8.8'),
      list.allows('x', '192.168.7.7'),
      list.allows('x', '192.169.7.7'),
    ]).toEqual([true, true, false, true, false])
  })

  test('subnets: IPv4 as IPv4-mapped IPv6, prefixes bounded per family', () => {
    expect(parseSubnet('10.0.0.0/8')).toEqual({ network: '::ffff:10.0.0.0', prefix: 104 })
    expect(parseSubnet('FD00::/8')).toEqual({ network: 'fd00::', prefix: 8 })
    expect(parseSubnet('010.1.0.0/16')).toEqual({ network: '::ffff:10.1.0.0', prefix: 112 })
    for (const bad of ['10.0.0.0/33', 'fd00::/129', '10.0.0.0', '10.0.0.0/', '/8', 'host/8', '10.0.0.0/-1', '10.0.0.0/8/8']) expect([bad, parseSubnet(bad)]).toEqual([bad, null])
    expect(() => parseHostAllowList('10.0.0.0/33')).toThrow('"10.0.0.0/33" is not a CIDR range')
    expect(() => outboundPolicy({ subnets: ['fd00::/200'] })).toThrow(/not a CIDR range/)
    // ::/0 covers IPv4 too (one address space), 0.0.0.0/0 only IPv4 and IPv4-mapped.
    const all = parseHostAllowList('::/0')
    const v4 = parseHostAllowList('0.0.0.0/0')
    expect([all.allows('x', '1.2.3.4'), all.allows('x', '2606:4700::1'), v4.allows('x', '1.2.3.4'), v4.allows('x', '::ffff:1.2.3.4'), v4.allows('x', '2606:4700::1')]).toEqual([
      true,
      true,
      true,
      true,
      false,
    ])
  })

  test('checks: literals without a lookup, names refused before a lookup, unresolvable names', async () => {
    const loopback = parseHostAllowList('loopback')
    expect(await checkOutbound('[::1]', loopback, 'any')).toEqual({ ok: true, address: { address: '::1', family: 6 }, addresses: [{ address: '::1', family: 6 }] })
    expect(await checkOutbound('8.8.8.8', loopback, 'any')).toEqual({ ok: false, reason: 'refused', addresses: [{ address: '8.8.8.8', family: 4 }] })
    // A refused name is not looked up: a name that cannot resolve answers 'refused', not 'unresolvable'.
    const refusing = outboundPolicy({ everything: true, refusedName: (h) => h.endsWith('.invalid') })
    expect(await checkOutbound('Nowhere.INVALID', refusing, 'any')).toEqual({ ok: false, reason: 'refused', addresses: [] })
    const unresolvable = await checkOutbound('nowhere.invalid', outboundPolicy({ everything: true }), 'any')
    expect(unresolvable.ok || unresolvable.reason).toBe('unresolvable')
    expect(await checkRemoteHost('nowhere.invalid', false)).toEqual({ ok: false, reason: 'unresolvable' })
    expect(await checkRemoteHost('Sub.LocalHost', false)).toEqual({ ok: false, reason: 'local' })
  })

  test("'any' connects to the first allowed address; 'every' needs them all", async () => {
    const resolved = await lookup('localhost', { all: true, verbatim: true })
    const first = resolved[0]!.address
    // Allows exactly the first address localhost resolves to (a pattern on the address text).
    const onlyFirst = outboundPolicy({ names: [{ matches: (text) => text === first }] })
    const any = await checkOutbound('localhost', onlyFirst, 'any')
    expect(any.ok && any.address.address).toBe(first)
    const every = await checkOutbound('localhost', onlyFirst, 'every')
    expect(every.ok).toBe(resolved.every((a) => a.address === first))
    // Nothing allowed: every resolved address is named in the refusal.
    const none = await checkOutbound('localhost', outboundPolicy({}), 'any')
    expect(none).toEqual({ ok: false, reason: 'refused', addresses: resolved })
  })
})
