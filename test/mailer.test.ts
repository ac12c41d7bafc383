/**
 * The mailer, against a real SMTP server (smtp-server, nodemailer's, on a free loopback port):
 * password reset end to end (the mail, its link used once, expiring, voided by a new password,
 * the same answer for an unknown address, the second factor still asked at sign-in), account
 * activation on sign-up, an added address's activation, notification mails by each person's
 * preference, the administrator's test mail, an SMTP server that is down (the mail waits and is
 * sent once it is back, the request answered at once, the queue outliving the job), and CR/LF in
 * what people type reaching no header. Nothing here waits for a time: the job is asked when it
 * has nothing left to send.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SMTPServer } from 'smtp-server'
import { and, eq } from 'drizzle-orm'
import { startTestServer, unitTeam, type TestServer, type TestUser } from './helpers'
import { csrfIn, signInByForm } from './web-session'
import { emailAddresses, mailQueue, userCodes, users } from '../src/db/schema'
import { startMailer } from '../src/jobs/mailer'
import { notifyRound } from '../src/notify/consumer'
import { oneLine } from '../src/mail/messages'
import { FAILED_KEPT_MS, pruneFailedMails } from '../src/mail/queue'
import { enrollTwoFactor, startEnrollment } from '../src/modules/users/two-factor'
import { totpAt, totpStep } from '../src/lib/totp'
import { nowUnix } from '../src/lib/time'

interface Received {
  from: string
  to: string[]
  raw: string
  headers: string
  subject: string
  /** The text part, quoted-printable decoded. */
  text: string
}

/** What the SMTP server was sent, message by message. */
const inbox: Received[] = []
let smtp: SMTPServer
let smtpPort = 0

/** Quoted-printable as nodemailer writes it (soft line breaks, =XX bytes). */
const unQuote = (text: string) =>
  Buffer.from(
    text.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16))),
    'latin1',
  ).toString('utf8')

function parse(raw: string, from: string, to: string[]): Received {
  const split = raw.indexOf('\r\n\r\n')
  const headers = raw.slice(0, split)
  const subject = /^Subject: (.*(?:\r\n[ \t].*)*)/m.exec(headers)?.[1] ?? ''
  // The text/plain part (the first), up to its boundary.
  const part = /Content-Type: text\/plain[^\r\n]*\r\n(?:[^\r\n]+\r\n)*\r\n([\s\S]*?)\r\n--/.exec(raw)?.[1] ?? ''
  return { from, to, raw, headers, subject, text: unQuote(part) }
}

function startSmtp(port: number): Promise<SMTPServer> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, done) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', () => {
        inbox.push(parse(Buffer.concat(chunks).toString('utf8'), session.envelope.mailFrom ? session.envelope.mailFrom.address : '', session.envelope.rcptTo.map((r) => r.address)))
        done()
      })
    },
  })
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve(server))
  })
}

const stopSmtp = (server: SMTPServer) => new Promise<void>((resolve) => server.close(() => resolve()))

let s: TestServer
let job: ReturnType<typeof startMailer>
let alice: TestUser, bob: TestUser, carol: TestUser, dave: TestUser, erin: TestUser

/** Every mail queued so far sent (or failed and waiting): the job's next round found nothing due. */
async function flush() {
  while ((await notifyRound(s.deps)) > 0) {}
  await job.idle()
}

/** The mails `address` got since `from` (an index into the inbox). */
const mailsTo = (address: string, from = 0) => inbox.slice(from).filter((m) => m.to.includes(address))

/** The first link under the server's root URL in a mail's text. */
const linkIn = (mail: Received, path: string) => {
  const found = new RegExp(`${s.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/${path}[^\\s]*`).exec(mail.text)?.[0]
  expect(found).toBeDefined()
  return found!.slice(s.url.length)
}

/** An anonymous visitor's form: the page's pre-session cookie and CSRF token. */
async function anonymousForm(path: string) {
  const res = await fetch(s.url + path, { headers: { accept: 'text/html' }, redirect: 'manual' })
  const html = await res.text()
  const cookie = res.headers.get('set-cookie')?.split(';')[0] ?? ''
  return { cookie, csrf: csrfIn(html)!, html, status: res.status }
}

async function post(path: string, fields: Record<string, string>, form: { cookie: string; csrf: string }) {
  const res = await fetch(s.url + path, {
    method: 'POST',
    headers: { cookie: form.cookie, accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: form.csrf, ...fields }),
    redirect: 'manual',
  })
  return { status: res.status, location: res.headers.get('location'), cookies: res.headers.getSetCookie(), html: await res.text() }
}

/** Asks for a password reset mail for `email`, as the form does. */
async function askReset(email: string) {
  const form = await anonymousForm('/user/forgot_password')
  return await post('/user/forgot_password', { email }, form)
}

/** The sign-in form's answer for a name and password. */
async function signInAnswer(name: string, password: string) {
  const form = await anonymousForm('/user/login')
  return await post('/user/login', { user_name: name, password, redirect_to: '/' }, form)
}

/** Lets the next reset or activation mail of `user` go out now (Gitea's three-minute resend limit, moved back). */
const forgetResendLimit = (user: TestUser) => s.deps.db.update(userCodes).set({ createdUnix: nowUnix() - 3600 }).where(eq(userCodes.userId, user.user.id))

beforeAll(async () => {
  const probe = await startSmtp(0)
  smtpPort = (probe.server.address() as { port: number }).port
  smtp = probe
  s = await startTestServer({
    webRegistration: true,
    registerEmailConfirm: true,
    minPasswordLength: 8,
    mailer: { protocol: 'smtp', host: '127.0.0.1', port: smtpPort, user: '', passwd: '', from: 'Warren <warren@example.com>', forceTrustServerCert: false, maxAttempts: 1000, retryDelay: 0.02, timeout: 10 },
  })
  job = startMailer(s.deps, { pollMs: 20 })
  ;[alice, bob, carol, dave, erin] = await Promise.all(['alice', 'bob', 'carol', 'dave', 'erin'].map((n) => s.user(n, { admin: n === 'alice' })))
})
afterAll(async () => {
  await job?.stop()
  await s?.stop()
  await stopSmtp(smtp)
})

describe('password reset', () => {
  test('mails a link that sets a new password once; the answer is the same for an unknown address', async () => {
    const from = inbox.length
    const known = await askReset('bob@example.com')
    const unknown = await askReset('nobody@example.com')
    expect(known.status).toBe(200)
    expect(unknown.status).toBe(200)
    // The same page, but for the address typed in.
    const strip = (html: string, email: string) => html.replace(new RegExp(email, 'g'), 'EMAIL').replace(/value="[0-9a-f]{64}"/g, '')
    expect(strip(known.html, 'bob@example.com')).toBe(strip(unknown.html, 'nobody@example.com'))
    expect(known.html).toContain('If an account uses bob@example.com')
    await flush()
    expect(mailsTo('nobody@example.com', from)).toHaveLength(0)
    const mails = mailsTo('bob@example.com', from)
    expect(mails).toHaveLength(1)
    expect(mails[0]!.subject).toBe('Recover your account')
    expect(mails[0]!.raw).toContain('Content-Type: text/html')
    const link = linkIn(mails[0]!, 'user/recover_account\\?code=')

    // The link opens the form (using nothing), which refuses a short password and different ones.
    const page = await anonymousForm(link)
    expect(page.status).toBe(200)
    expect(page.html).toContain('bob@example.com')
    const code = new URL(link, s.url).searchParams.get('code')!
    expect((await post('/user/recover_account', { code, password: 'short', retype: 'short' }, page)).status).toBe(400)
    expect((await post('/user/recover_account', { code, password: 'new-password-1', retype: 'other-password' }, page)).status).toBe(422)
    const done = await post('/user/recover_account', { code, password: 'new-password-1', retype: 'new-password-1' }, page)
    expect(done.status).toBe(303)
    expect(done.location).toBe('/user/login?done=password-reset')
    // No session from the reset: the sign-in that follows is the usual one.
    expect(done.cookies.some((c) => c.startsWith('warren_session='))).toBe(false)
    expect((await signInAnswer('bob', bob.password)).status).toBe(200)
    bob.password = 'new-password-1'
    await signInByForm(s.url, bob)

    // Used once: the link is dead now, for the page and the form alike.
    expect((await anonymousForm(link)).html).toContain('The link is invalid or has expired.')
    const again = await post('/user/recover_account', { code, password: 'new-password-2', retype: 'new-password-2' }, page)
    expect(again.status).toBe(422)
    await signInByForm(s.url, bob)
    // Only the hash of a code is kept.
    expect((await s.deps.db.select().from(userCodes)).some((r) => r.codeHash.includes(code))).toBe(false)
  })

  test('a second request within three minutes sends nothing more, and answers the same', async () => {
    const from = inbox.length
    const first = await askReset('carol@example.com')
    const second = await askReset('carol@example.com')
    expect(second.html.replace(/value="[0-9a-f]{64}"/g, '')).toBe(first.html.replace(/value="[0-9a-f]{64}"/g, ''))
    await flush()
    expect(mailsTo('carol@example.com', from)).toHaveLength(1)
  })

  test('a link expires, and a password changed since voids it', async () => {
    await forgetResendLimit(carol)
    let from = inbox.length
    await askReset('carol@example.com')
    await flush()
    const expiring = linkIn(mailsTo('carol@example.com', from)[0]!, 'user/recover_account\\?code=')
    await s.deps.db.update(userCodes).set({ expiresUnix: nowUnix() - 1 }).where(eq(userCodes.userId, carol.user.id))
    expect((await anonymousForm(expiring)).html).toContain('The link is invalid or has expired.')

    await forgetResendLimit(carol)
    from = inbox.length
    await askReset('carol@example.com')
    await flush()
    const voided = linkIn(mailsTo('carol@example.com', from)[0]!, 'user/recover_account\\?code=')
    const opened = await anonymousForm(voided)
    expect(opened.html).toContain('Choose a new password')
    expect((await s.patch('/admin/users/carol', { password: 'changed-by-admin', login_name: 'carol', source_id: 0 }, { token: alice.token })).status).toBe(200)
    carol.password = 'changed-by-admin'
    const page = await anonymousForm(voided)
    expect(page.html).toContain('The link is invalid or has expired.')
    const code = new URL(voided, s.url).searchParams.get('code')!
    expect((await post('/user/recover_account', { code, password: 'mine-again-1', retype: 'mine-again-1' }, opened)).status).toBe(422)
    await signInByForm(s.url, carol)
  })

  test('a user with a second factor is still asked for it when signing in after a reset', async () => {
    const enrollment = await startEnrollment(s.deps, dave.user)
    await enrollTwoFactor(s.deps, dave.user, enrollment.ticket, totpAt(enrollment.secret, totpStep(nowUnix())))
    const from = inbox.length
    await askReset('dave@example.com')
    await flush()
    const link = linkIn(mailsTo('dave@example.com', from)[0]!, 'user/recover_account\\?code=')
    const page = await anonymousForm(link)
    const code = new URL(link, s.url).searchParams.get('code')!
    expect((await post('/user/recover_account', { code, password: 'dave-new-pass', retype: 'dave-new-pass' }, page)).status).toBe(303)
    const signIn = await signInAnswer('dave', 'dave-new-pass')
    expect(signIn.status).toBe(303)
    expect(signIn.location).toBe('/user/two_factor')
    expect(signIn.cookies.some((c) => c.startsWith('warren_session='))).toBe(false)
  })

  test('the sign-in page links the reset form', async () => {
    expect((await anonymousForm('/user/login')).html).toContain('href="/user/forgot_password"')
  })
})

describe('activation', () => {
  test('a new account waits, inactive, for the link mailed to it; the link activates it once, the sign-in follows', async () => {
    const from = inbox.length
    const form = await anonymousForm('/user/sign_up')
    const made = await post('/user/sign_up', { user_name: 'frank', email: 'frank@example.com', password: 'frank-password', retype: 'frank-password' }, form)
    expect(made.status).toBe(200)
    expect(made.html).toContain('A mail was sent to frank@example.com')
    expect(made.cookies.some((c) => c.startsWith('warren_session='))).toBe(false)
    const row = (await s.deps.db.select().from(users).where(eq(users.lowerName, 'frank')))[0]!
    expect(row.isActive).toBe(false)
    // Signing in with the right password leads to the activation page; the API refuses it.
    const signIn = await signInAnswer('frank', 'frank-password')
    expect(signIn.status).toBe(303)
    expect(signIn.location).toBe('/user/activate')
    expect((await s.get('/user', { basic: ['frank', 'frank-password'] })).status).toBe(403)

    await flush()
    const mails = mailsTo('frank@example.com', from)
    expect(mails).toHaveLength(1)
    const link = linkIn(mails[0]!, 'user/activate\\?code=')
    // The link's page asks for a click (a mail scanner following it uses nothing).
    const page = await anonymousForm(link)
    expect(page.html).toContain('Activate my account')
    const code = new URL(link, s.url).searchParams.get('code')!
    const done = await post('/user/activate', { code }, page)
    expect(done.status).toBe(303)
    // The code alone opens no session (Gitea asks the password too): the sign-in follows, as always.
    expect(done.location).toBe('/user/login?done=account-activated')
    expect(done.cookies.some((c) => c.startsWith('warren_session='))).toBe(false)
    const after = (await s.deps.db.select().from(users).where(eq(users.lowerName, 'frank')))[0]!
    expect(after.isActive).toBe(true)
    const primary = (await s.deps.db.select().from(emailAddresses).where(eq(emailAddresses.userId, after.id)))[0]!
    expect(primary.isActivated).toBe(true)
    expect((await post('/user/activate', { code }, page)).status).toBe(422)
    expect((await s.get('/user', { basic: ['frank', 'frank-password'] })).status).toBe(200)
  })

  test('the activation mail is sent again on request, with the same answer for any address', async () => {
    const form = await anonymousForm('/user/sign_up')
    await post('/user/sign_up', { user_name: 'gina', email: 'gina@example.com', password: 'gina-password', retype: 'gina-password' }, form)
    await flush()
    const user = (await s.deps.db.select().from(users).where(eq(users.lowerName, 'gina')))[0]!
    await s.deps.db.update(userCodes).set({ createdUnix: nowUnix() - 3600 }).where(eq(userCodes.userId, user.id))
    const from = inbox.length
    const page = await anonymousForm('/user/activate')
    const known = await post('/user/activate', { email: 'gina@example.com' }, page)
    const unknown = await post('/user/activate', { email: 'nobody@example.com' }, page)
    const active = await post('/user/activate', { email: 'bob@example.com' }, page)
    for (const r of [known, unknown, active]) expect(r.status).toBe(200)
    expect(known.html.replace('gina@example.com', 'X')).toBe(unknown.html.replace('nobody@example.com', 'X'))
    await flush()
    expect(mailsTo('gina@example.com', from)).toHaveLength(1)
    expect(mailsTo('nobody@example.com', from)).toHaveLength(0)
    expect(mailsTo('bob@example.com', from)).toHaveLength(0)
  })

  test('an added address is activated by the link mailed to it', async () => {
    const cookie = await signInByForm(s.url, erin)
    const settings = await (await fetch(s.url + '/user/settings/account', { headers: { cookie, accept: 'text/html' } })).text()
    const from = inbox.length
    const added = await post('/user/settings/account/email', { email: 'erin.second@example.com' }, { cookie, csrf: csrfIn(settings)! })
    expect(added.status).toBe(303)
    expect(added.location).toBe('/user/settings/account?done=email-added-mailed')
    await flush()
    const mails = mailsTo('erin.second@example.com', from)
    expect(mails).toHaveLength(1)
    const link = linkIn(mails[0]!, 'user/activate_email\\?code=')
    const page = await anonymousForm(link)
    expect(page.html).toContain('erin.second@example.com')
    const code = new URL(link, s.url).searchParams.get('code')!
    expect((await post('/user/activate_email', { code }, page)).status).toBe(200)
    const row = (await s.deps.db.select().from(emailAddresses).where(eq(emailAddresses.lowerEmail, 'erin.second@example.com')))[0]!
    expect(row.isActivated).toBe(true)
    expect((await post('/user/activate_email', { code }, page)).status).toBe(422)
  })
})

describe('codes bound to their account', () => {
  test('an activation link of an account with a second factor opens no session: the sign-in asks for the passcode', async () => {
    const henry = await s.user('henry')
    const enrollment = await startEnrollment(s.deps, henry.user)
    await enrollTwoFactor(s.deps, henry.user, enrollment.ticket, totpAt(enrollment.secret, totpStep(nowUnix())))
    // Deactivated by a site administrator; whoever reads henry's mail asks for an activation link.
    expect((await s.patch('/admin/users/henry', { active: false, login_name: 'henry', source_id: 0 }, { token: alice.token })).status).toBe(200)
    const from = inbox.length
    const page = await anonymousForm('/user/activate')
    expect((await post('/user/activate', { email: 'henry@example.com' }, page)).status).toBe(200)
    await flush()
    const link = linkIn(mailsTo('henry@example.com', from)[0]!, 'user/activate\\?code=')
    const code = new URL(link, s.url).searchParams.get('code')!
    const done = await post('/user/activate', { code }, await anonymousForm(link))
    expect(done.status).toBe(303)
    expect(done.cookies.some((c) => c.startsWith('warren_session='))).toBe(false)
    const signIn = await signInAnswer('henry', henry.password)
    expect(signIn.location).toBe('/user/two_factor')
    expect(signIn.cookies.some((c) => c.startsWith('warren_session='))).toBe(false)
  })

  test('a reset link mailed before the primary address changed is void', async () => {
    const ivan = await s.user('ivan')
    const from = inbox.length
    await askReset('ivan@example.com')
    await flush()
    const link = linkIn(mailsTo('ivan@example.com', from)[0]!, 'user/recover_account\\?code=')
    const opened = await anonymousForm(link)
    expect(opened.html).toContain('Choose a new password')
    // The address is given up (another becomes the primary one): what was mailed to the old one opens nothing.
    expect((await s.patch('/admin/users/ivan', { email: 'ivan.new@example.com', login_name: 'ivan', source_id: 0 }, { token: alice.token })).status).toBe(200)
    expect((await anonymousForm(link)).html).toContain('The link is invalid or has expired.')
    const code = new URL(link, s.url).searchParams.get('code')!
    expect((await post('/user/recover_account', { code, password: 'taken-over-1', retype: 'taken-over-1' }, opened)).status).toBe(422)
    expect((await s.get('/user', { basic: ['ivan', ivan.password] })).status).toBe(200)
  })
})

describe('notification mails', () => {
  test('go to watchers and participants by their preference: all, mentions only, none; never the actor', async () => {
    expect((await s.post('/user/repos', { name: 'proj', auto_init: true }, { token: alice.token })).status).toBe(201)
    for (const u of [carol, dave, erin]) expect((await s.put('/repos/alice/proj/subscription', undefined, { token: u.token })).status).toBe(200)
    expect((await s.patch('/user/settings', { email_notifications_preference: 'onmention' }, { token: dave.token })).body.email_notifications_preference).toBe('onmention')
    expect((await s.patch('/user/settings', { email_notifications_preference: 'sometimes' }, { token: dave.token })).status).toBe(422)
    // erin chooses none through the account page's form.
    const cookie = await signInByForm(s.url, erin)
    const settings = await (await fetch(s.url + '/user/settings/account', { headers: { cookie, accept: 'text/html' } })).text()
    expect(settings).toContain('name="preference"')
    expect((await post('/user/settings/account/email', { _method: 'NOTIFICATION', preference: 'disabled' }, { cookie, csrf: csrfIn(settings)! })).status).toBe(303)
    expect((await s.get('/user/settings', { token: erin.token })).body.email_notifications_preference).toBe('disabled')

    let from = inbox.length
    const issue = await s.post('/repos/alice/proj/issues', { title: 'Crash <b>on</b> start', body: 'It breaks. cc @dave <script>x</script>' }, { token: bob.token })
    expect(issue.status).toBe(201)
    await flush()
    expect(mailsTo('alice@example.com', from)).toHaveLength(1)
    expect(mailsTo('carol@example.com', from)).toHaveLength(1)
    expect(mailsTo('dave@example.com', from)).toHaveLength(1)
    expect(mailsTo('erin@example.com', from)).toHaveLength(0)
    expect(mailsTo('bob@example.com', from)).toHaveLength(0)
    const mail = mailsTo('carol@example.com', from)[0]!
    expect(mail.subject).toBe('[alice/proj] Crash <b>on</b> start (#1)')
    expect(mail.text).toContain(`${s.url}/alice/proj/issues/1`)
    // The HTML part escapes what was typed.
    const html = unQuote(mail.raw.slice(mail.raw.indexOf('Content-Type: text/html')))
    expect(html).toContain('&lt;script&gt;x&lt;/script&gt;')
    expect(html).not.toContain('<script>')

    // A comment that mentions nobody: dave (mentions only) gets no mail.
    from = inbox.length
    expect((await s.post('/repos/alice/proj/issues/1/comments', { body: 'Fixed on main.' }, { token: carol.token })).status).toBe(201)
    await flush()
    expect(mailsTo('alice@example.com', from)).toHaveLength(1)
    expect(mailsTo('bob@example.com', from)).toHaveLength(1)
    expect(mailsTo('dave@example.com', from)).toHaveLength(0)
    expect(mailsTo('carol@example.com', from)).toHaveLength(0)
    expect(mailsTo('bob@example.com', from)[0]!.text).toContain('Fixed on main.')
    expect(mailsTo('bob@example.com', from)[0]!.text).toMatch(/#issuecomment-\d+/)
  })
})

describe('notification mails, by the unit of what they tell', () => {
  test("a watcher whose team gives the repository's code but not its issues gets no mail of its issues, nor may be asked to review; one given them does", async () => {
    const [fred, gina] = await Promise.all([s.user('unitfred'), s.user('unitgina')])
    const token = { token: alice.token }
    expect((await s.post('/orgs', { username: 'units', visibility: 'private' }, token)).status).toBe(201)
    expect((await s.post('/orgs/units/repos', { name: 'secret', private: true, auto_init: true }, token)).status).toBe(201)
    await unitTeam(s, alice, 'units', 'coders', { 'repo.code': 'read', 'repo.issues': 'none', 'repo.pulls': 'none' }, [fred])
    await unitTeam(s, alice, 'units', 'trackers', { 'repo.code': 'read', 'repo.issues': 'read', 'repo.pulls': 'read' }, [gina])
    for (const u of [fred, gina]) expect((await s.put('/repos/units/secret/subscription', undefined, { token: u.token })).status).toBe(200)

    const from = inbox.length
    expect((await s.post('/repos/units/secret/issues', { title: 'The secret plan', body: 'cc @unitfred @unitgina' }, token)).status).toBe(201)
    await flush()
    expect(mailsTo('unitgina@example.com', from).map((m) => m.subject)).toEqual(['[units/secret] The secret plan (#1)'])
    expect(mailsTo('unitfred@example.com', from)).toEqual([])

    // Review requests: the reviewers offered, and who may be asked, are those who read the pull requests.
    const file = { content: Buffer.from('x\n').toString('base64'), message: 'X', branch: 'main', new_branch: 'change' }
    expect((await s.post('/repos/units/secret/contents/x.txt', file, token)).status).toBe(201)
    expect((await s.post('/repos/units/secret/pulls', { head: 'change', base: 'main', title: 'Change' }, token)).status).toBe(201)
    const offered = (await s.get('/repos/units/secret/reviewers', token)).body.map((u: { login: string }) => u.login)
    expect(offered).toContain('unitgina')
    expect(offered).not.toContain('unitfred')
    const asked = await s.post('/repos/units/secret/pulls/2/requested_reviewers', { reviewers: ['unitfred'] }, token)
    expect([asked.status, asked.body.message]).toEqual([422, "unitfred can't read the repository"])
    expect((await s.post('/repos/units/secret/pulls/2/requested_reviewers', { reviewers: ['unitgina'] }, token)).status).toBe(201)
  })
})

describe('delivery', () => {
  test('an SMTP server that is down delays the mail, never the request, and loses nothing, across a restart of the job', async () => {
    await stopSmtp(smtp)
    const from = inbox.length
    await forgetResendLimit(bob)
    const asked = await askReset('bob@example.com')
    expect(asked.status).toBe(200)
    const admin = await signInByForm(s.url, alice)
    const config = await (await fetch(s.url + '/-/admin/config', { headers: { cookie: admin, accept: 'text/html' } })).text()
    const test = await post('/-/admin/config/test_mail', { email: 'ops@example.com' }, { cookie: admin, csrf: csrfIn(config)! })
    expect(test.status).toBe(303)
    expect(test.location).toBe('/-/admin/config?done=test-mail-queued')
    // The job tries until it has failed at least once for each; the mails stay queued.
    while (true) {
      await job.idle()
      const rows = await s.deps.db.select().from(mailQueue).where(eq(mailQueue.status, 'waiting'))
      if (rows.length === 2 && rows.every((r) => r.attempts > 0)) break
    }
    expect(inbox.length).toBe(from)
    // The process's job stops (as at a restart) while the server is down; the next one sends them.
    await job.stop()
    smtp = await startSmtp(smtpPort)
    // Their next attempt comes due (the wait the back-off chose, passed).
    await s.deps.db.update(mailQueue).set({ nextAttemptMs: 0 }).where(eq(mailQueue.status, 'waiting'))
    job = startMailer(s.deps, { pollMs: 20 })
    while (mailsTo('ops@example.com', from).length === 0 || mailsTo('bob@example.com', from).length === 0) await job.idle()
    expect(mailsTo('bob@example.com', from)).toHaveLength(1)
    expect(mailsTo('ops@example.com', from)[0]!.subject).toBe('Warren test mail')
    expect(await s.deps.db.select().from(mailQueue).where(eq(mailQueue.status, 'waiting'))).toHaveLength(0)
  })

  test('a mail given up is kept a week for the operator to read, then deleted; waiting ones are not', async () => {
    const now = Date.now()
    const row = (recipient: string, status: string, nextAttemptMs: number) => ({ recipient, subject: 's', textBody: 't', htmlBody: 'h', status, nextAttemptMs, createdUnix: 1, lastError: 'refused' })
    const week = FAILED_KEPT_MS
    await s.deps.db.insert(mailQueue).values([
      row('old@example.com', 'failed', now - week - 1000),
      row('recent@example.com', 'failed', now - week + 60_000),
      row('late@example.com', 'waiting', now + week),
    ])
    expect(await pruneFailedMails(s.deps.db, now)).toBe(1)
    const left = (await s.deps.db.select().from(mailQueue)).map((r) => r.recipient)
    expect(left).toContain('recent@example.com')
    expect(left).toContain('late@example.com')
    expect(left).not.toContain('old@example.com')
    expect(await pruneFailedMails(s.deps.db, now)).toBe(0)
    // A week later the other one goes too.
    expect(await pruneFailedMails(s.deps.db, now + 120_000)).toBe(1)
    await s.deps.db.delete(mailQueue).where(eq(mailQueue.recipient, 'late@example.com'))
  })

  test('the test mail form is for site administrators only', async () => {
    const cookie = await signInByForm(s.url, bob)
    const home = await (await fetch(s.url + '/', { headers: { cookie, accept: 'text/html' } })).text()
    expect((await post('/-/admin/config/test_mail', { email: 'ops@example.com' }, { cookie, csrf: csrfIn(home)! })).status).toBe(403)
  })
})

describe('header injection', () => {
  test('CR and LF in titles and addresses reach no header', async () => {
    expect(oneLine('Hello\r\nBcc: evil@example.com')).toBe('Hello Bcc: evil@example.com')
    const from = inbox.length
    // An address with a line break is no address: no mail, the same answer.
    const asked = await askReset('bob@example.com\r\nBcc: evil@example.com')
    expect(asked.status).toBe(200)
    const title = 'Title\r\nBcc: evil@example.com\r\nX-Injected: yes'
    const issue = await s.post('/repos/alice/proj/issues', { title, body: 'body\r\nBcc: evil@example.com' }, { token: bob.token })
    await flush()
    if (issue.status === 201) expect(mailsTo('alice@example.com', from)).toHaveLength(1)
    for (const mail of inbox.slice(from)) {
      expect(mail.to.every((a) => !a.includes('evil'))).toBe(true)
      expect(mail.headers).not.toMatch(/^(Bcc|X-Injected):/im)
    }
    expect(inbox.slice(from).some((m) => m.to.includes('evil@example.com'))).toBe(false)
    expect(await s.deps.db.select().from(mailQueue).where(and(eq(mailQueue.status, 'waiting')))).toHaveLength(0)
  })
})
