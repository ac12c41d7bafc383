import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { loadConfig } from '../src/config'
import { startWebhookWorker } from '../src/jobs/webhook-worker'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { hmacHex, startReceiver, until, type Receiver, type Received } from './webhook-receiver'

/**
 * Where a hook's secret goes. By default (as Gitea since 1.15) only into the signature headers:
 * no body carries it. WARREN_WEBHOOK_PAYLOAD_SECRET=true brings back Gitea 1.3–1.14's `secret`
 * field, first in gitea/gogs payloads.
 */

const SECRET = 'k3y-that-must-not-travel'

/** Every object key anywhere in a JSON value. */
function keysOf(value: unknown, into: string[] = []): string[] {
  if (Array.isArray(value)) value.forEach((v) => keysOf(v, into))
  else if (value && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) {
      into.push(k)
      keysOf(v, into)
    }
  return into
}

/** The signature headers a receiver checks, computed over the payload text with the secret. */
function expectSigned(r: Received, secret: string) {
  const sha256 = hmacHex(secret, r.text)
  expect(r.headers['x-gitea-signature']).toBe(sha256)
  expect(r.headers['x-gogs-signature']).toBe(sha256)
  expect(r.headers['x-hub-signature-256']).toBe(`sha256=${sha256}`)
  expect(r.headers['x-hub-signature']).toBe(`sha1=${hmacHex(secret, r.text, 'sha1')}`)
  // Another key does not verify.
  expect(r.headers['x-gitea-signature']).not.toBe(hmacHex(`${secret}x`, r.text))
}

interface World {
  s: TestServer
  worker: ReturnType<typeof startWebhookWorker>
  rx: Receiver
  alice: TestUser
}

async function world(payloadSecret?: boolean): Promise<World> {
  const s = await startTestServer({ webhookAllowedHostList: 'loopback', webhookRetryDelay: 0.05, ...(payloadSecret === undefined ? {} : { webhookPayloadSecret: payloadSecret }) })
  const worker = startWebhookWorker(s.deps, { pollMs: 10 })
  const rx = await startReceiver()
  return { s, worker, rx, alice: await s.user('alice') }
}

async function close(w: World) {
  await w.worker.stop()
  w.rx.stop()
  await w.s.stop()
}

/** A repository with a json and a form gitea hook, both with SECRET; an issue filed; both deliveries. */
async function issueDeliveries(w: World, repo: string): Promise<{ json: Received; form: Received; hookId: number }> {
  const token = { token: w.alice.token }
  expect((await w.s.post('/user/repos', { name: repo, auto_init: true }, token)).status).toBe(201)
  let hookId = 0
  for (const type of ['json', 'form']) {
    const made = await w.s.post(`/repos/alice/${repo}/hooks`, { type: 'gitea', config: { url: w.rx.url(`/${repo}/${type}`), content_type: type, secret: SECRET }, events: ['issues'], active: true }, token)
    expect(made.status).toBe(201)
    hookId ||= made.body.id
  }
  expect((await w.s.post(`/repos/alice/${repo}/issues`, { title: 'signed, not told' }, token)).status).toBe(201)
  const at = (path: string) => until(() => w.rx.received.find((r) => r.path === path), `a delivery at ${path}`)
  return { json: await at(`/${repo}/json`), form: await at(`/${repo}/form`), hookId }
}

describe('the secret signs deliveries and stays out of their bodies (the default)', () => {
  let w: World
  beforeAll(async () => (w = await world()))
  afterAll(() => close(w))

  test('the setting is off unless WARREN_WEBHOOK_PAYLOAD_SECRET turns it on', () => {
    expect(loadConfig({}).webhookPayloadSecret).toBe(false)
    expect(loadConfig({ WARREN_WEBHOOK_PAYLOAD_SECRET: 'true' }).webhookPayloadSecret).toBe(true)
    expect(loadConfig({ WARREN_WEBHOOK_PAYLOAD_SECRET: 'false' }).webhookPayloadSecret).toBe(false)
    expect(() => loadConfig({ WARREN_WEBHOOK_PAYLOAD_SECRET: 'maybe' })).toThrow('WARREN_WEBHOOK_PAYLOAD_SECRET')
  })

  test('json and form deliveries: no secret anywhere in the body; every signature header verifies with it', async () => {
    const { json, form } = await issueDeliveries(w, 'quiet')
    for (const r of [json, form]) {
      expect(r.body).not.toContain(SECRET)
      expect(r.text).not.toContain(SECRET)
      expect(keysOf(r.payload)).not.toContain('secret')
      expect(r.payload).toMatchObject({ action: 'opened', issue: { title: 'signed, not told' } })
      expectSigned(r, SECRET)
    }
    expect(json.headers['content-type']).toBe('application/json')
    expect(form.headers['content-type']).toBe('application/x-www-form-urlencoded')
    // The form's payload field is the very text the json hook got.
    expect(form.text).toBe(json.text)
  })

  test('a test delivery and the delivery history do not carry it either', async () => {
    const { hookId } = await issueDeliveries(w, 'history')
    expect((await w.s.post(`/repos/alice/history/hooks/${hookId}/tests`, undefined, { token: w.alice.token })).status).toBe(204)
    const test = await until(() => w.rx.received.filter((r) => r.path === '/history/json')[1], 'the test delivery')
    expect(test.headers['x-gitea-event']).toBe('push')
    expect(test.body).not.toContain(SECRET)
    expectSigned(test, SECRET)
    const list = await until(async () => {
      const r = await w.s.get(`/repos/alice/history/hooks/${hookId}/deliveries`, { token: w.alice.token })
      return r.body.length === 2 && r.body.every((d: any) => d.delivered) ? r : null
    }, 'both deliveries recorded')
    expect(list.text).not.toContain(SECRET)
  })
})

describe('WARREN_WEBHOOK_PAYLOAD_SECRET=true: Gitea 1.3–1.14\'s `secret` field', () => {
  let w: World
  beforeAll(async () => (w = await world(true)))
  afterAll(() => close(w))

  test('gitea payloads (json and form) carry the secret first; the signature headers still verify', async () => {
    const { json, form } = await issueDeliveries(w, 'legacy')
    for (const r of [json, form]) {
      expect(Object.keys(r.payload)[0]).toBe('secret')
      expect(r.payload).toMatchObject({ secret: SECRET, action: 'opened', issue: { title: 'signed, not told' } })
      expectSigned(r, SECRET)
    }
    expect(form.text).toBe(json.text)
  })
})
