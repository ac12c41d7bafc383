import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from './helpers'

/** The OpenAPI document and the docs page as this server serves them (their content is test/docs.test.ts's). */

let s: TestServer
beforeAll(async () => {
  s = await startTestServer()
})
afterAll(() => s.stop())

describe('API document', () => {
  test('OpenAPI document and docs page are served without a CDN', async () => {
    const res = await fetch(`${s.url}/swagger.v1.json`)
    expect(res.status).toBe(200)
    const spec: any = await res.json()
    expect(spec.paths['/api/v1/version'].get.operationId).toBe('getVersion')
    const page = await s.get('/api/swagger')
    expect(page.status).toBe(200)
    expect(page.text).toContain('/api/swagger/assets/swagger-ui-bundle.js')
    expect(page.text).not.toContain('unpkg.com')
    const asset = await fetch(`${s.url}/api/swagger/assets/swagger-ui-bundle.js`)
    expect(asset.status).toBe(200)
  })

  test('markdown answers are documented as text/html', async () => {
    const doc: any = await (await fetch(`${s.url}/swagger.v1.json`)).json()
    for (const path of ['/api/v1/markdown', '/api/v1/markdown/raw']) {
      const op = doc.paths[path].post
      expect(Object.keys(op.responses['200'].content)).toEqual(['text/html'])
      expect(op['x-content-type']).toBeUndefined()
    }
    expect(Object.keys(doc.paths['/api/v1/markdown/raw'].post.requestBody.content)).toEqual(['text/plain'])
    // Served twice (cached document): still right.
    const again: any = await (await fetch(`${s.url}/swagger.v1.json`)).json()
    expect(Object.keys(again.paths['/api/v1/markdown'].post.responses['200'].content)).toEqual(['text/html'])
  })
})
