/**
 * What the webhook thread's writes cost the API's caches: `GET /repos/{o}/{r}` with a token, one
 * request at a time, while a second connection to the database (as the webhook thread's: on
 * PostgreSQL a pool and listener of its own) writes what the thread writes after each batch of
 * deliveries (the tasks' outcomes, the hook's last status, the consumer's position) in one
 * transaction every `every` ms, against no such writes. Printed for each side: the statements
 * the API's connection ran a request (but the change mark's own read on SQLite: a warm request
 * sends none while the caches hold) and the requests' mean and p50 latency. The statement count
 * is the figure to compare: it does not depend on the machine's load.
 *
 *   bun bench/change-mark.ts [requests=2000] [every=2]   (PostgreSQL: WARREN_DATABASE_URL=postgres://...)
 */
import { eq } from 'drizzle-orm'
import { closeDatabase, writeTransaction } from '../src/db/client'
import { eventConsumers, hooks } from '../src/db/schema'
import { openConfiguredDatabase } from '../src/deps'
import { startTestServer } from '../test/helpers'
import { recordStatements } from '../test/query-counter'

const requests = Number(process.argv[2] ?? 2000)
const every = Number(process.argv[3] ?? 2)

const s = await startTestServer()
let counted = 0
recordStatements(s.deps.db, (text) => {
  if (!text.includes('pragma_user_version') && !text.includes('pragma_data_version')) counted++
})
const owner = await s.user('bench')
if ((await s.post('/user/repos', { name: 'kept' }, { token: owner.token })).status !== 201) throw new Error('repository not made')
const hook = await s.post('/repos/bench/kept/hooks', { type: 'gitea', config: { url: 'http://127.0.0.1:9/', content_type: 'json' }, events: ['push'], active: false }, { token: owner.token })
if (hook.status !== 201) throw new Error('hook not made')
const other = await openConfiguredDatabase(s.config)
await other.insert(eventConsumers).values({ name: 'bench' } as never).onConflictDoNothing()

let writes = 0
let writing = false
async function writer(): Promise<void> {
  while (writing) {
    await writeTransaction(other, async () => {
      await other.update(hooks).set({ lastStatus: 1 + (writes % 2) } as never).where(eq(hooks.id, hook.body.id))
      await other.update(eventConsumers).set({ doneId: writes } as never).where(eq(eventConsumers.name, 'bench'))
    })
    writes++
    await Bun.sleep(every)
  }
}

async function side(name: string, withWrites: boolean): Promise<void> {
  for (let i = 0; i < 50; i++) await s.get('/repos/bench/kept', { token: owner.token })
  writing = withWrites
  const written = withWrites ? writer() : Promise.resolve()
  writes = 0
  counted = 0
  const times: number[] = []
  for (let i = 0; i < requests; i++) {
    const start = performance.now()
    const res = await s.get('/repos/bench/kept', { token: owner.token })
    times.push(performance.now() - start)
    if (res.status !== 200) throw new Error(`GET answered ${res.status}`)
  }
  const statements = counted
  writing = false
  await written
  times.sort((a, b) => a - b)
  const mean = times.reduce((a, b) => a + b, 0) / times.length
  console.log(
    `${name.padEnd(28)} ${(statements / requests).toFixed(3)} statements a request   mean ${mean.toFixed(3)} ms  p50 ${times[times.length >> 1]!.toFixed(3)} ms` +
      (withWrites ? `   (${writes} webhook-like commits meanwhile)` : ''),
  )
}

console.log(`${s.deps.db.$runtime.dialect}: GET /repos/{o}/{r} with a token, ${requests} requests one at a time`)
await side('no other writes', false)
await side(`webhook writes every ${every} ms`, true)
await side('no other writes', false)
await side(`webhook writes every ${every} ms`, true)
await closeDatabase(other)
await s.stop()
