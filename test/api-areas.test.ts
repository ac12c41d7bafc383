import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { addAreas } from '../src/app'
import { area, type AreaApp } from '../src/auth/pipeline'
import { startTestServer, type TestServer, type TestUser } from './helpers'

/**
 * The API's areas add their routes to the app itself (src/app.ts `addAreas`, src/auth/pipeline.ts
 * `area`): under the API's prefix, with the area's OpenAPI details and the pipeline's needs, the
 * app's own prefix and details put back after each area; an area that adds a hook to the app
 * itself (which would reach every route added after it) is refused.
 */

let s: TestServer
let alice: TestUser

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
})
afterAll(async () => await s.stop())

const whoAmI = (deps: unknown, api: AreaApp) =>
  area(api, { tags: ['user'] }).get('/whoami', ({ caller }) => ({ name: caller.user?.name ?? null }), { caller: true, detail: { operationId: 'whoAmI' } })
const plain = (deps: unknown, api: AreaApp) => area(api).get('/plain', () => 'plain')

test("an area's routes are the app's own: under the API's prefix, with the area's details and the pipeline's needs", async () => {
  const app = new Elysia()
  addAreas(app, s.deps, [whoAmI, plain])
  app.get('/after', () => 'after')
  const routes = app.routes.map((r) => `${r.method} ${r.path} ${JSON.stringify((r.hooks as { detail?: unknown }).detail ?? null)}`)
  expect(routes).toEqual([
    expect.stringMatching(/^GET \/api\/v1\/whoami \{"tags":\["user"\],"operationId":"whoAmI"/),
    'GET /api/v1/plain null',
    'GET /after null',
  ])
  const asAlice = await app.handle(new Request('http://localhost/api/v1/whoami', { headers: { authorization: `token ${alice.token}` } }))
  expect(await asAlice.json()).toEqual({ name: 'alice' })
  const anonymous = await app.handle(new Request('http://localhost/api/v1/whoami'))
  expect(await anonymous.json()).toEqual({ name: null })
  expect(await (await app.handle(new Request('http://localhost/after'))).text()).toBe('after')
})

test('an area that adds a hook to the app itself stops the start', () => {
  const hooking = (deps: unknown, api: AreaApp) => area(api).onBeforeHandle(() => {}).get('/guarded', () => 'x')
  expect(() => addAreas(new Elysia(), s.deps, [plain, hooking])).toThrow(/an area of routes \(hooking\) added a hook to the app itself/)
})

test("the server's API routes are each registered once, and its areas' routes have their tags", () => {
  const seen = new Set<string>()
  for (const r of s.app.routes) {
    const key = `${r.method} ${r.path}`
    expect(seen.has(key)).toBe(false)
    seen.add(key)
  }
  const untagged = s.app.routes.filter((r) => r.path.startsWith('/api/v1/') && !((r.hooks as { detail?: { tags?: unknown; hide?: boolean } }).detail?.tags || (r.hooks as { detail?: { hide?: boolean } }).detail?.hide))
  expect(untagged.map((r) => `${r.method} ${r.path}`)).toEqual([])
})
