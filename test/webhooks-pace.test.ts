import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { runWebhookLoops } from '../src/webhooks/loops'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { recordStatements } from './query-counter'
import { until } from './webhook-receiver'

/**
 * The pace of the webhook consumer's rounds while events keep coming (src/webhooks/loops.ts): a
 * round that made deliveries is followed after a short gap, one whose events no hook wanted after
 * the idle poll's interval, so a busy site without hooks where its events happen pays for a few
 * rounds a second, not a hundred. Counted by the rounds' reads of the outbox, never by a clock: a
 * busy machine only makes fewer rounds.
 */

let s: TestServer
let alice: TestUser
const delivered: string[] = []
const receiver = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(req) {
    delivered.push(((await req.json()) as { issue?: { title: string } }).issue?.title ?? '')
    return new Response('ok')
  },
})

beforeAll(async () => {
  s = await startTestServer({ webhookAllowedHostList: 'loopback', webhookDeliverTimeout: 30 })
  alice = await s.user('alice')
  const as = { token: alice.token }
  expect((await s.post('/user/repos', { name: 'quiet' }, as)).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'hooked' }, as)).status).toBe(201)
  const hook = { type: 'gitea', config: { url: `http://127.0.0.1:${receiver.port}/`, content_type: 'json' }, events: ['issues'], active: true }
  expect((await s.post('/repos/alice/hooked/hooks', hook, as)).status).toBe(201)
})
afterAll(async () => {
  receiver.stop(true)
  await s.stop()
})

describe('the webhook rounds while events keep coming', () => {
  test('after a round no hook wanted the next waits for the idle interval; after one with deliveries it follows at once', async () => {
    // Each round reads the outbox after the consumer's position once (eventsAfterDone).
    let rounds = 0
    recordStatements(s.deps.db, (text) => {
      if (/from "events" where "events"\."id" > /i.test(text) && /order by/i.test(text)) rounds++
    })
    const loops = await runWebhookLoops(s.deps, { pollMs: 600_000 })
    try {
      // Woken until `done` holds (a wake while a round runs does nothing: it ends one waiting).
      const wakeUntil = (done: () => boolean, what: string) =>
        until(async () => {
          if (done()) return true
          await loops.wake()
          return false
        }, what)
      const file = async (repo: string, title: string) => expect((await s.post(`/repos/alice/${repo}/issues`, { title }, { token: alice.token })).status).toBe(201)
      // The first round takes what the set-up recorded (nothing of it is for the hook); the
      // second, woken, the first issue filed in the repository without hooks. Neither made a
      // delivery, so no round follows on its own while more issues are filed there.
      await until(() => rounds >= 1, 'the first round')
      await Bun.sleep(200)
      const settled = rounds
      await file('quiet', 'quiet 0')
      await wakeUntil(() => rounds > settled, 'the second round')
      for (let i = 1; i < 20; i++) await file('quiet', `quiet ${i}`)
      await Bun.sleep(300)
      expect(rounds).toBe(settled + 1)
      expect(delivered).toEqual([])

      // An issue the hook wants: delivered once woken, and the round after it follows unwoken.
      const quiet = rounds
      await file('hooked', 'wanted')
      await wakeUntil(() => rounds > quiet, 'the round of the wanted issue')
      await until(() => delivered.includes('wanted'), 'the delivery')
      await until(() => rounds > quiet + 1, 'the round after the one that delivered')
      expect(delivered).toEqual(['wanted'])
    } finally {
      await loops.stop()
    }
  })
})
