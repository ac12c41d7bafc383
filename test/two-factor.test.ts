import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import jsQR from 'jsqr'
import { eq } from 'drizzle-orm'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { csrfIn, webVisitors } from './web-session'
import { contentMark } from './db-snapshot'
import { twoFactors } from '../src/db/schema'
import { totpAt, totpStep } from '../src/lib/totp'
import { nowUnix } from '../src/lib/time'
import { enrollTwoFactor, startEnrollment } from '../src/modules/users/two-factor'

/**
 * Two-factor authentication (TOTP) as Gitea 1.23's: enrolling and disabling it in the settings,
 * signing in by the form with a passcode or the scratch token (no session before), the API's
 * Basic credentials with `X-Gitea-OTP`, git over HTTP refusing the password. Codes are computed
 * here from the secret the enrollment page shows.
 */

let s: TestServer
let alice: TestUser, bob: TestUser, carol: TestUser
let mark: () => Promise<string>
let secret = ''
let scratch = ''
const { page, signIn, submit, expectCsrfRefused } = webVisitors(() => s.url, () => mark())

/**
 * The text of the page's QR code (its `<svg class="qr-code">`: a viewBox of `size` units, one
 * path of unit rectangles `M{x} {y}h{w}v1h{-w}z`), drawn into an image at 4 pixels a module and
 * decoded by jsQR.
 */
function readQrCode(html: string): string | undefined {
  const svg = /<svg class="qr-code"[^>]*viewBox="0 0 (\d+) \1"[^>]*>.*?<path d="([^"]+)"/s.exec(html)
  if (!svg) return undefined
  const size = Number(svg[1])
  const scale = 4
  const width = size * scale
  const pixels = new Uint8ClampedArray(width * width * 4).fill(255)
  for (const [, x, y, w] of svg[2]!.matchAll(/M(\d+) (\d+)h(\d+)v1h-\d+z/g))
    for (let col = Number(x); col < Number(x) + Number(w); col++)
      for (let dy = 0; dy < scale; dy++)
        for (let dx = 0; dx < scale; dx++) {
          const at = ((Number(y) * scale + dy) * width + col * scale + dx) * 4
          pixels[at] = pixels[at + 1] = pixels[at + 2] = 0
        }
  return jsQR(pixels, width, width)?.data
}

/** The code of the step `offset` steps from now. */
const code = (offset = 0) => totpAt(secret, totpStep(nowUnix()) + offset)

beforeAll(async () => {
  s = await startTestServer()
  mark = contentMark(s.deps.db)
  ;[alice, bob, carol] = await Promise.all(['alice', 'bob', 'carol'].map((name) => s.user(name)))
  expect((await s.post('/user/repos', { name: 'code', auto_init: true, private: true }, { token: alice.token })).status).toBe(201)
})
afterAll(async () => {
  await s.stop()
})

const rowOf = async (userId: number) => (await s.deps.db.select().from(twoFactors).where(eq(twoFactors.userId, userId)))[0]

/** The password step of the sign-in form: answers the cookies of the pending sign-in (no session) and the form's CSRF token. */
async function passwordStep(user: TestUser, redirectTo = '/') {
  const form = await fetch(s.url + '/user/login', { headers: { accept: 'text/html' }, redirect: 'manual' })
  const pre = form.headers.get('set-cookie')!.split(';')[0]!
  const csrf = csrfIn(await form.text())!
  const res = await fetch(s.url + '/user/login', {
    method: 'POST',
    headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: csrf, user_name: user.name, password: user.password, redirect_to: redirectTo }),
    redirect: 'manual',
  })
  expect(res.status).toBe(303)
  expect(res.headers.get('location')).toBe('/user/two_factor')
  const set = res.headers.getSetCookie()
  expect(set.some((c) => c.startsWith('warren_session='))).toBe(false)
  const pending = set.find((c) => c.startsWith('warren_twofa='))!
  expect(pending).toContain('HttpOnly')
  return { cookie: `${pre}; ${pending.split(';')[0]}`, csrf }
}

async function secondStep(pending: { cookie: string; csrf: string }, path: string, fields: Record<string, string>) {
  const res = await fetch(s.url + path, {
    method: 'POST',
    headers: { cookie: pending.cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: pending.csrf, ...fields }),
    redirect: 'manual',
  })
  const session = res.headers.getSetCookie().find((c) => c.startsWith('warren_session=') && !c.startsWith('warren_session=;'))
  return { status: res.status, location: res.headers.get('location'), html: await res.text(), session: session?.split(';')[0] }
}

const basic = (user: TestUser, otp?: string) => ({ headers: { authorization: user.basic, ...(otp === undefined ? {} : { 'x-gitea-otp': otp }) } })

describe('enrolling', () => {
  test('the security page is in the settings menu; enrolling needs the right passcode, a wrong one or another user stores nothing', async () => {
    expect((await page('/user/settings/security')).status).toBe(303)
    const security = await (await page('/user/settings/security', await signIn(alice))).text()
    expect(security).toContain('href="/user/settings/security" aria-current="page"')
    expect(security).toContain('Two-factor authentication is not enabled')
    const enroll = await (await page('/user/settings/security/two_factor/enroll', await signIn(alice))).text()
    secret = /<code>([A-Z2-7 ]+)<\/code>/.exec(enroll)![1]!.replace(/ /g, '')
    expect(secret).toHaveLength(32)
    expect(enroll).toContain(`otpauth://totp/127.0.0.1%3A${new URL(s.url).port}:alice?secret=${secret}&amp;issuer=127.0.0.1%3A${new URL(s.url).port}`)
    const enrollment = /name="enrollment" value="([^"]+)"/.exec(enroll)![1]!
    // The QR code, read back as a phone's camera would read it, holds the URI.
    const uri = /<dd class="token-once">(otpauth:[^<]+)<\/dd>/.exec(enroll)![1]!.replaceAll('&amp;', '&')
    expect(uri).toStartWith(`otpauth://totp/127.0.0.1%3A${new URL(s.url).port}:alice?secret=${secret}&`)
    expect(readQrCode(enroll)).toBe(uri)
    const from = '/user/settings/security/two_factor/enroll'

    await signIn(bob)
    const before = await mark()
    await expectCsrfRefused(alice, from, { enrollment, passcode: code() })
    const wrong = await submit(alice, from, { enrollment, passcode: code() === '000000' ? '111111' : '000000' }, { from })
    expect(wrong.status).toBe(422)
    expect(wrong.html).toContain('Your passcode is incorrect.')
    expect(wrong.html).toContain(secret.slice(0, 4) + ' ') // the same secret offered again
    // Bob cannot enroll Alice's secret, nor a forged enrollment.
    expect((await submit(bob, from, { enrollment, passcode: code() }, { from: '/user/settings' })).status).toBe(400)
    expect((await submit(alice, from, { enrollment: 'v1.AAAA.BBBB.CCCC', passcode: code() }, { from })).status).toBe(400)
    expect(await mark()).toBe(before)

    const right = await submit(alice, from, { enrollment, passcode: code() }, { from })
    expect(right.status).toBe(200)
    scratch = /data-scratch>\s*([A-Za-z0-9]+)\s*</.exec(right.html)![1]!
    const row = (await rowOf(alice.user.id))!
    expect(row.secretSealed).not.toContain(secret)
    expect(row.scratchHash).not.toContain(scratch)
    expect(await (await page('/user/settings/security', await signIn(alice))).text()).toContain('Two-factor authentication is enabled')
    // A second enrollment is refused while one is on.
    expect((await page('/user/settings/security/two_factor/enroll', await signIn(alice))).status).toBe(409)
  })
})

describe('signing in by the form', () => {
  test('the password alone makes no session; a wrong passcode is refused and counted; the right one signs in, once', async () => {
    const pending = await passwordStep(alice, '/alice/code')
    // The pending sign-in is no session.
    const settings = await page('/user/settings', pending.cookie)
    expect(settings.status).toBe(303)
    expect(settings.headers.get('location')).toStartWith('/user/login')
    expect(await (await page('/user/two_factor', pending.cookie)).text()).toContain('name="passcode"')
    // Without a pending sign-in there is no passcode form, nor a way to post one.
    expect((await page('/user/two_factor')).headers.get('location')).toBe('/user/login')
    expect((await secondStep({ cookie: pending.cookie.split('; ')[0]!, csrf: pending.csrf }, '/user/two_factor', { passcode: code() })).status).toBe(400)
    expect((await secondStep({ ...pending, csrf: 'f'.repeat(64) }, '/user/two_factor', { passcode: code() })).status).toBe(403)

    const counted = s.deps.auth.failuresTracked().accounts
    const wrong = await secondStep(pending, '/user/two_factor', { passcode: code(1) === '123456' ? '654321' : '123456' })
    expect(wrong.status).toBe(200)
    expect(wrong.html).toContain('Your passcode is incorrect.')
    expect(wrong.session).toBeUndefined()
    expect(s.deps.auth.failuresTracked().accounts).toBe(counted + 1)

    const used = code(1)
    const right = await secondStep(pending, '/user/two_factor', { passcode: used })
    expect(right.status).toBe(303)
    expect(right.location).toBe('/alice/code')
    expect((await page('/user/settings', right.session)).status).toBe(200)
    expect(s.deps.auth.failuresTracked().accounts).toBe(counted)

    // The same passcode does not sign in again; another valid one does.
    const again = await passwordStep(alice)
    const replay = await secondStep(again, '/user/two_factor', { passcode: used })
    expect(replay.status).toBe(200)
    expect(replay.session).toBeUndefined()
    const other = await secondStep(again, '/user/two_factor', { passcode: code(-1) })
    expect(other.status).toBe(303)
    expect(other.session).toBeDefined()
  })

  test('the scratch token signs in once, and is replaced by one nobody has seen', async () => {
    const pending = await passwordStep(alice)
    expect(await (await page('/user/two_factor/scratch', pending.cookie)).text()).toContain('name="token"')
    const wrong = await secondStep(pending, '/user/two_factor/scratch', { token: 'nottheone' })
    expect(wrong.status).toBe(200)
    expect(wrong.html).toContain('Your scratch token is incorrect.')
    const used = await secondStep(pending, '/user/two_factor/scratch', { token: scratch })
    expect(used.status).toBe(303)
    expect(used.location).toBe('/user/settings/security?done=twofa-scratch-used')
    expect(await (await page(used.location!, used.session)).text()).toContain('You have used your scratch token')
    expect(await rowOf(alice.user.id)).toBeDefined()
    const twice = await secondStep(await passwordStep(alice), '/user/two_factor/scratch', { token: scratch })
    expect(twice.status).toBe(200)
    expect(twice.session).toBeUndefined()
  })

  test('a sign-in on its way to an OAuth2 client lets the passcode form end there, as the password form', async () => {
    const redirect = 'http://127.0.0.1:9/cb'
    const app = await s.post('/user/applications/oauth2', { name: 'ci', redirect_uris: [redirect], confidential_client: true }, { token: alice.token })
    expect(app.status).toBe(201)
    const authorize = `/login/oauth/authorize?${new URLSearchParams({ client_id: app.body.client_id, redirect_uri: redirect, response_type: 'code', state: 's' })}`
    const form = await page('/user/two_factor', (await passwordStep(alice, authorize)).cookie)
    expect(form.status).toBe(200)
    expect(form.headers.get('content-security-policy')).toContain("form-action 'self' http://127.0.0.1:9")
  })

  test('a new scratch token is shown once and works', async () => {
    const from = '/user/settings/security'
    await expectCsrfRefused(alice, '/user/settings/security/two_factor/regenerate_scratch', {})
    const made = await submit(alice, '/user/settings/security/two_factor/regenerate_scratch', {}, { from })
    expect(made.status).toBe(200)
    scratch = /data-scratch>\s*([A-Za-z0-9]+)\s*</.exec(made.html)![1]!
    expect((await secondStep(await passwordStep(alice), '/user/two_factor/scratch', { token: scratch })).status).toBe(303)
  })
})

describe('the API and git', () => {
  test('Basic with the password needs a valid X-Gitea-OTP; tokens do not', async () => {
    for (const otp of [undefined, '', '000000x', code(5)]) {
      const refused = await s.get('/user', basic(alice, otp))
      expect(refused.status).toBe(401)
      expect(refused.body.message).toBe('invalid provided OTP')
    }
    const ok = await s.get('/user', basic(alice, code()))
    expect(ok.status).toBe(200)
    expect(ok.body.login).toBe('alice')
    expect((await s.get('/user', { token: alice.token })).status).toBe(200)
    // A token as Basic credentials needs no passcode either.
    expect((await s.get('/user', { basic: [alice.token, ''] })).status).toBe(200)
    // Users without a second factor are not asked.
    expect((await s.get('/user', basic(bob))).status).toBe(200)
  })

  test('git over HTTP refuses the password of a user with a second factor, and takes a token', async () => {
    const path = '/alice/code.git/info/refs?service=git-upload-pack'
    const refused = await fetch(s.url + path, { headers: { authorization: alice.basic, 'x-gitea-otp': code() } })
    expect(refused.status).toBe(401)
    expect((await refused.json()).message).toContain('Users with two-factor authentication enabled cannot perform HTTP/HTTPS operations')
    const withToken = await fetch(s.url + path, { headers: { authorization: 'Basic ' + Buffer.from(`alice:${alice.token}`).toString('base64') } })
    expect(withToken.status).toBe(200)
  })
})

describe('disabling', () => {
  test('another user cannot touch it; disabling needs the CSRF token; then the password alone works again', async () => {
    const before = await mark()
    // Bob has no second factor: his forms refer to his own account only.
    const bobs = await submit(bob, '/user/settings/security/two_factor/disable', {}, { from: '/user/settings/security' })
    expect(bobs.status).toBe(409)
    expect(bobs.html).toContain('not enabled')
    expect((await submit(bob, '/user/settings/security/two_factor/regenerate_scratch', {}, { from: '/user/settings/security' })).status).toBe(409)
    expect(await mark()).toBe(before)
    await expectCsrfRefused(alice, '/user/settings/security/two_factor/disable', {})
    const off = await submit(alice, '/user/settings/security/two_factor/disable', {}, { from: '/user/settings/security' })
    expect(off.status).toBe(303)
    expect(off.location).toBe('/user/settings/security?done=twofa-disabled')
    expect(await rowOf(alice.user.id)).toBeUndefined()
    expect((await s.get('/user', basic(alice))).status).toBe(200)
  })

  test('wrong codes are counted as failed sign-ins; the second factor goes with its user', async () => {
    const enrollment = await startEnrollment(s.deps, carol.user)
    await enrollTwoFactor(s.deps, carol.user, enrollment.ticket, totpAt(enrollment.secret, totpStep(nowUnix())))
    expect(await rowOf(carol.user.id)).toBeDefined()
    // Wrong codes count as failed sign-ins: past the account's limit even the right one waits.
    const right = totpAt(enrollment.secret, totpStep(nowUnix()))
    const wrong = right === '000000' ? '111111' : '000000'
    for (let i = 0; i < s.deps.config.loginFailuresPerAccount; i++) expect((await s.get('/user', basic(carol, wrong))).status).toBe(401)
    const locked = await s.get('/user', basic(carol, right))
    expect(locked.status).toBe(429)
    expect(locked.headers.get('retry-after')).toBeTruthy()
    const root = await s.user('root', { admin: true })
    expect((await s.request('DELETE', '/admin/users/carol', { token: root.token })).status).toBe(204)
    expect(await rowOf(carol.user.id)).toBeUndefined()
  })
})
