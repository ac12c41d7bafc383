import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Elysia } from 'elysia'
import { sucrose } from 'elysia/sucrose'
import { addAreas } from '../src/app'
import { webAreas } from '../src/web'
import { startTestServer, type TestServer } from './helpers'

/**
 * Elysia reads each route's handler and hooks (their source text) to learn which parts of the
 * request they use, and parses only those for each request. A function handed the context whole
 * (`(c) => page(c)`, `({ repo, ...c })`) counts as using all of them: the request's cookies are
 * parsed into a jar and its headers copied into an object at every request, and the jar, even
 * empty, makes Elysia copy a Response the handler answers (the body re-read as a stream) to
 * apply the cookies it never got. No route of Warren's needs either: the session cookie and the
 * headers are read from the request itself (`request.headers`, the pipeline's caller). So every
 * route of the API and of the web pages destructures what it uses, and this test lists any that
 * does not.
 */

let s: TestServer
beforeAll(async () => {
  s = await startTestServer()
})
afterAll(async () => await s.stop())

type Routes = Elysia['routes']

/** The routes for which Elysia would parse the request's cookies or headers, as `METHOD path`. */
function parsingCookiesOrHeaders(routes: Routes): string[] {
  return routes
    .filter((r) => {
      const inference = sucrose({ ...(r.hooks as object), handler: r.handler } as never)
      return inference.cookie || inference.headers
    })
    .map((r) => `${r.method} ${r.path}`)
}

test('no API route has Elysia parse the cookies or headers of each request', () => {
  expect(s.app.routes.length).toBeGreaterThan(400)
  expect(parsingCookiesOrHeaders(s.app.routes)).toEqual([])
})

test("no web page's route has Elysia parse the cookies or headers of each request", () => {
  const web = new Elysia()
  addAreas(web, s.deps, webAreas, { session: true })
  expect(web.routes.length).toBeGreaterThan(300)
  expect(parsingCookiesOrHeaders(web.routes)).toEqual([])
})

test('the check sees a context handed on whole, and not one destructured or read by its members', () => {
  const urlOf = (c: { request: Request }) => c.request.url
  const app = new Elysia()
    .get('/whole', (c) => urlOf(c))
    .get('/members', (c) => c.request.url + JSON.stringify(c.params))
    .get('/rest', ({ request, ...rest }) => String(request.url) + Object.keys(rest).length)
    .get('/destructured', ({ request, params }) => String(request.url) + JSON.stringify(params))
  expect(parsingCookiesOrHeaders(app.routes)).toEqual(['GET /whole', 'GET /rest'])
})
