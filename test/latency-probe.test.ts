// runs in one half: sqlite
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { latencyProbe } from './latency-probe'

/**
 * The probe other tests rely on to say "this hostile request did not hold the event loop" must
 * itself tell a held loop from a free one: a server (in a process of its own, as Warren's is in
 * the other tests) that spins on its loop is caught; one that waits asynchronously as long is not.
 */
const SERVER = `
let spun = 0
const server = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(request) {
    const path = new URL(request.url).pathname
    const ms = Number(new URL(request.url).searchParams.get('ms'))
    if (path === '/spin') {
      const until = performance.now() + ms
      while (performance.now() < until) {}
    } else if (path === '/wait') await Bun.sleep(ms)
    else if (path === '/spin-once') {
      // Spins at its first request only, as a stall of the machine would come once.
      const until = performance.now() + (spun++ === 0 ? ms : 0)
      while (performance.now() < until) {}
    }
    return new Response('{}')
  },
})
console.log(server.port)
`
let child: ReturnType<typeof Bun.spawn<'ignore', 'pipe', 'inherit'>>
let base: string
beforeAll(async () => {
  child = Bun.spawn([process.execPath, '-e', SERVER], { stdin: 'ignore', stdout: 'pipe', stderr: 'inherit' })
  const reader = child.stdout.getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error('the probe test server exited before saying its port')
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  base = `http://127.0.0.1:${text.trim()}`
})
afterAll(() => child?.kill())

test('a request that spins on the server loop is reported as holding it; one that waits is not', async () => {
  // A fixed scale, so the spin lasts twice as long as a stall must to count whatever the load.
  const probe = latencyProbe(base, { referenceMs: 10 })
  const ms = Math.ceil(2 * probe.heldAfterMs)
  await probe.during('wait', () => fetch(`${base}/wait?ms=${ms}`).then((r) => r.text()))
  await probe.during('spin', () => fetch(`${base}/spin?ms=${ms}`).then((r) => r.text()))
  const { held, answers } = await probe.stop()
  expect(answers).toBeGreaterThan(0)
  expect(held).toEqual(['spin'])
})

test('confirmed: a stall that comes once is not reported; work done on the loop at every request is', async () => {
  const probe = latencyProbe(base, { referenceMs: 10 })
  const ms = Math.ceil(2 * probe.heldAfterMs)
  await probe.during('spin', () => fetch(`${base}/spin?ms=${ms}`).then((r) => r.text()))
  await probe.during('spin once', () => fetch(`${base}/spin-once?ms=${ms}`).then((r) => r.text()))
  const { held } = await probe.stop({ confirm: true })
  expect(held).toEqual(['spin'])
})
