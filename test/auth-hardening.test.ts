import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from './helpers'
import { FailureLimiter } from '../src/auth/failure-limiter'
import { addressKey } from '../src/auth/caller'

/**
 * Sign-in hardening: limits on failed password attempts (per account, per address, over git too),
 * the same cost for known and unknown accounts, and bounded memory for the counters.
 */

const basic = (name: string, password: string) => 'Basic ' + Buffer.from(`${name}:${password}`).toString('base64')
const WINDOW_MS = 1500

/** Small per-account limit, no per-address limit, a short window, room for 50 accounts. */
let limits: TestServer
/** Small per-address limit, no per-account limit. */
let perAddress: TestServer
/** Production password hashing, no limits: for timing. */
let timing: TestServer

beforeAll(async () => {
  ;[limits, perAddress, timing] = await Promise.all([
    startTestServer({ loginFailuresPerAccount: 3, loginFailuresPerAddress: 0, loginFailureWindowMs: WINDOW_MS, loginFailureCapacity: 50 }),
    startTestServer({ loginFailuresPerAccount: 0, loginFailuresPerAddress: 6, loginFailureWindowMs: 60_000 }),
    startTestServer({ loginFailuresPerAccount: 0, loginFailuresPerAddress: 0, passwordMemoryCost: 19456, passwordTimeCost: 2 }),
  ])
})
afterAll(async () => {
  await Promise.all([limits, perAddress, timing].map((s) => s?.stop()))
})

describe('failed password limits', () => {
  test('repeated wrong passwords for one account: 429 with Retry-After after the limit', async () => {
    const carol = await limits.user('carol')
    for (let i = 0; i < 3; i++) expect((await limits.get('/user', { basic: ['carol', 'wrong'] })).status).toBe(401)
    const locked = await limits.get('/user', { basic: ['carol', 'wrong'] })
    expect(locked.status).toBe(429)
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(Number(locked.headers.get('retry-after'))).toBeLessThanOrEqual(Math.ceil(WINDOW_MS / 1000))
    expect(locked.body.message).toContain('Too many failed sign-in attempts')
    expect(locked.body.url).toBe(limits.config.baseUrl + 'api/swagger')
    // The same account reached by its e-mail address is the same account.
    expect((await limits.get('/user', { basic: ['carol@example.com', 'wrong'] })).status).toBe(429)
    // The right password is refused while locked...
    const right = await limits.get('/user', { basic: ['carol', carol.password] })
    expect(right.status).toBe(429)
    // ... a token still works (it is not a password guess, and no address limit is set here) ...
    expect((await limits.get('/user', { token: carol.token })).body.login).toBe('carol')
    // ... and after the window the password works again.
    await Bun.sleep(WINDOW_MS + 100)
    const after = await limits.get('/user', { basic: ['carol', carol.password] })
    expect([after.status, after.body.login]).toEqual([200, 'carol'])
  })

  test('a success clears the account counter', async () => {
    const dan = await limits.user('dan')
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 2; i++) expect((await limits.get('/user', { basic: ['dan', 'wrong'] })).status).toBe(401)
      expect((await limits.get('/user', { basic: ['dan', dan.password] })).status).toBe(200)
    }
  })

  test('unknown names and organisations are locked the same way as users', async () => {
    const owner = await limits.user('orgowner')
    expect((await limits.post('/orgs', { username: 'lockorg' }, { token: owner.token })).status).toBe(201)
    for (const name of ['nobody-here', 'lockorg']) {
      const statuses: number[] = []
      for (let i = 0; i < 4; i++) statuses.push((await limits.get('/user', { basic: [name, 'wrong'] })).status)
      expect(statuses).toEqual([401, 401, 401, 429])
    }
  })

  test('concurrent guesses cannot all pass the check before the first fails', async () => {
    await limits.user('erin')
    const answers = await Promise.all(Array.from({ length: 40 }, () => limits.get('/user', { basic: ['erin', 'wrong'] })))
    const statuses = answers.map((a) => a.status)
    expect(statuses.filter((s) => s === 401).length).toBe(3)
    expect(statuses.filter((s) => s === 429).length).toBe(37)
  })

  test("a client's parallel requests with the right password all pass, beyond the limit too", async () => {
    const gina = await limits.user('gina')
    const answers = await Promise.all(Array.from({ length: 12 }, () => limits.get('/user', { basic: ['gina', gina.password] })))
    expect(answers.map((a) => a.status)).toEqual(Array(12).fill(200))
  })

  test('git over HTTP: wrong passwords get 401 with WWW-Authenticate, then 429 with Retry-After', async () => {
    const frank = await limits.user('frank')
    expect((await limits.post('/user/repos', { name: 'code', private: true }, { token: frank.token })).status).toBe(201)
    const refs = () =>
      fetch(`${limits.url}/frank/code.git/info/refs?service=git-upload-pack`, { headers: { authorization: basic('frank', 'wrong') } })
    for (let i = 0; i < 3; i++) {
      const res = await refs()
      expect(res.status).toBe(401)
      expect(res.headers.get('www-authenticate')).toBe('Basic realm="."')
    }
    const res = await refs()
    expect(res.status).toBe(429)
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    expect(res.headers.get('www-authenticate')).toBeNull()
    expect((await res.json()).message).toContain('Too many failed sign-in attempts')
  })

  test('wrong passwords spread over many accounts from one address hit the per-address limit', async () => {
    const users = await Promise.all(['p1', 'p2', 'p3', 'p4'].map((n) => perAddress.user(n)))
    // Failed token guesses count too: a bad token in a header, in the query, and as a Basic user name.
    expect((await perAddress.get('/user', { token: 'f'.repeat(40) })).status).toBe(401)
    expect((await perAddress.get('/user?token=' + 'e'.repeat(40))).status).toBe(401)
    expect((await perAddress.get('/user', { basic: ['d'.repeat(40), 'x-oauth-basic'] })).status).toBe(401)
    for (const u of users.slice(0, 3)) expect((await perAddress.get('/user', { basic: [u.name, 'wrong'] })).status).toBe(401)
    const locked = await perAddress.get('/user', { basic: [users[3]!.name, 'wrong'] })
    expect(locked.status).toBe(429)
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(1)
    // While the address is locked every credential from it is refused, right ones too...
    expect((await perAddress.get('/user', { basic: [users[3]!.name, users[3]!.password] })).status).toBe(429)
    expect((await perAddress.get('/user', { token: users[0]!.token })).status).toBe(429)
    // ... and requests without credentials go on as anonymous.
    expect((await perAddress.get('/version')).status).toBe(200)
    expect(perAddress.deps.auth.failuresTracked().addresses).toBe(1)
  })

  test("a feed's address (`/{user}.rss`, rewritten before the app) is counted by the client's address too", async () => {
    const s = await startTestServer({ loginFailuresPerAccount: 0, loginFailuresPerAddress: 2 })
    try {
      const names = ['f1', 'f2', 'f3']
      await Promise.all(names.map((n) => s.user(n)))
      const at = (name: string) => fetch(`${s.url}/${name}.rss`, { headers: { authorization: basic(name, 'wrong') } })
      expect((await at('f1')).status).toBe(401)
      expect((await at('f2')).status).toBe(401)
      expect((await at('f3')).status).toBe(429)
      expect(s.deps.auth.failuresTracked().addresses).toBe(1)
    } finally {
      await s.stop()
    }
  })

  test('successes from an address give their attempt back', async () => {
    const s = await startTestServer({ loginFailuresPerAccount: 0, loginFailuresPerAddress: 2 })
    try {
      const u = await s.user('busy')
      for (let i = 0; i < 10; i++) {
        expect((await s.get('/user', { basic: ['busy', u.password] })).status).toBe(200)
        expect((await s.get('/user', { token: u.token })).status).toBe(200)
      }
      expect((await s.get('/user', { basic: ['busy', 'wrong'] })).status).toBe(401)
      expect((await s.get('/user', { basic: ['busy', u.password] })).status).toBe(200)
    } finally {
      await s.stop()
    }
  })
})

describe('no timing difference between known and unknown accounts', () => {
  // The work, not the clock: each wrong password costs one verification against a hash of the
  // same parameters whoever it names (a user, an unknown name, an organisation, an unknown
  // e-mail). bench/sign-in-timing.ts measures the times themselves.
  test('a wrong password costs one verification with the same hash parameters for a user, an unknown name and an organisation', async () => {
    const known = await timing.user('timed')
    expect((await timing.post('/orgs', { username: 'timedorg' }, { token: known.token })).status).toBe(201)
    const names = ['timed', 'no-such-user', 'timedorg', 'ghost@example.com']
    const verify = Bun.password.verify
    const verified: string[] = []
    ;(Bun.password as any).verify = (password: string, hash: string, ...rest: unknown[]) => {
      verified.push(hash)
      return (verify as any).call(Bun.password, password, hash, ...rest)
    }
    try {
      const work: Record<string, string[]> = {}
      for (const name of names) {
        verified.length = 0
        expect((await timing.get('/user', { basic: [name, 'wrong'] })).status).toBe(401)
        // `$argon2id$v=19$m=...,t=...,p=...$salt$hash`: the parameters, not the salt or the hash.
        work[name] = verified.map((hash) => hash.split('$').slice(0, 4).join('$'))
      }
      for (const name of names) expect({ name, work: work[name] }).toEqual({ name, work: work.timed! })
      expect(work.timed).toEqual(['$argon2id$v=19$m=19456,t=2,p=1'])
    } finally {
      ;(Bun.password as any).verify = verify
    }
  })
})

describe('bounded memory', () => {
  test('the failure map keeps at most its capacity under 100,000 distinct names', () => {
    let now = 0
    const limiter = new FailureLimiter(3, 60_000, 1000, () => now)
    for (let i = 0; i < 100_000; i++) {
      expect(limiter.take(`name:${i}`)).toBe(0)
      now += 0.01
    }
    expect(limiter.size).toBe(1000)
    // The newest keys are the ones kept: the last name can still be locked.
    for (let i = 0; i < 2; i++) limiter.take('name:99999')
    expect(limiter.take('name:99999')).toBe(60)
    // Expired entries are dropped as new failures come.
    now += 60_001
    limiter.take('fresh')
    expect(limiter.size).toBe(1)
  })

  test('over HTTP, distinct unknown names never grow the map past its capacity', async () => {
    for (let i = 0; i < 120; i += 8)
      await Promise.all(Array.from({ length: 8 }, (_, j) => limits.get('/user', { basic: [`flood-${i + j}-${'x'.repeat(200)}`, 'wrong'] })))
    expect(limits.deps.auth.failuresTracked().accounts).toBeLessThanOrEqual(50)
    expect(limits.deps.auth.failuresTracked().accounts).toBeGreaterThan(0)
  })

  test('client addresses: IPv4 as is (also mapped), IPv6 by /64', () => {
    expect(addressKey('127.0.0.1')).toBe('127.0.0.1')
    expect(addressKey('::ffff:10.1.2.3')).toBe('10.1.2.3')
    expect(addressKey('2001:db8:0:1:aaaa:bbbb:cccc:dddd')).toBe('2001:db8:0:1::/64')
    expect(addressKey('2001:DB8::1')).toBe('2001:db8:0:0::/64')
    expect(addressKey('::1')).toBe('0:0:0:0::/64')
  })
})
