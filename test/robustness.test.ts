import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { connect } from 'node:net'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, makeWorkRepo, remoteUrl } from './git-fixture'
import { latencyProbe } from './latency-probe'
import { databaseCounts } from './db-snapshot'

/**
 * House rule: bad input gets a clear 4xx in the API's error shape and changes nothing; never a
 * 500. Every operation of the OpenAPI document (plus the git/raw/archive web paths) is sent a
 * bounded set of hostile requests, as the site admin and anonymously.
 */

let s: TestServer
let admin: TestUser
let normal: TestUser
let work: Awaited<ReturnType<typeof makeWorkRepo>>

interface Op {
  method: string
  /** OpenAPI path, `{param}` and `*` placeholders. */
  path: string
  body?: any
}

interface Sent {
  op: string
  method: string
  url: string
  status: number
  contentType: string
  text: string
}

/** Baseline values: they name records that exist, so a request reaches the route's own code. */
const BASE: Record<string, string> = {
  owner: 'root',
  repo: 'pub',
  username: 'normal',
  target: 'root',
  collaborator: 'normal',
  org: 'org1',
  id: '1',
  index: '1',
}
const WILDCARD: Record<string, string> = {
  raw: 'master/README.md',
  archive: 'master.zip',
  editorconfig: 'README.md',
  branches: 'master',
}

/** Odd path segments, already URL-encoded as a hostile client would put them on the wire. */
const ODD_SEGMENTS = [
  'x'.repeat(10_000),
  '..',
  '%2e%2e',
  '%00',
  'a%00b',
  encodeURIComponent('ünï©ødé-😀'),
  '-1',
  '0',
  '99999999999999999999',
  '1e400',
  '1.5',
  'name%20with%20spaces',
  '--option',
  '%',
  '%25',
  encodeURIComponent('@{-1}'),
  encodeURIComponent('master:README.md'),
  '-h',
  encodeURIComponent('--output=/tmp/pwned'),
  encodeURIComponent('HEAD~99999999999999999999'),
  encodeURIComponent('master^{tree}'),
  encodeURIComponent('refs/heads/../../config'),
  'master..dev.zip',
]
const DOT_SEGMENTS = ['..', '%2e%2e']
const ANON_SEGMENTS = ODD_SEGMENTS.filter((_, i) => i % 2 === 0)

const LONG = 'x'.repeat(100_000)
const BAD_QUERY = '?page=-5&limit=abc&state=bogus&unknown=1&q=%00&sort=%27--&since=yesterday&before=-1&type=nope&uid=abc&mode=bad&exclusive=maybe&ref=%00&service=git-upload-pack%00'
const BAD_QUERY_3 =
  '?page=1&page=2&limit=1&limit=2&state=open&state=closed&q=a&q=b&labels=1&labels=2&ref=master&ref=dev&service=git-upload-pack&service=git-receive-pack&since=2020-01-01T00:00:00Z&since=2021-01-01T00:00:00Z&sort=a&sort=b&uid=1&uid=2&mode=fork&mode=source'
const BAD_QUERY_4 = '?q=%&state=%E0%A4%A&limit=%FF&page=1%00&ref=%C0%AE%C0%AE&labels[]=1&service[]=git-upload-pack&__proto__=x&constructor=1'
const BAD_QUERY_2 = '?page=99999999999999999999&limit=100000&state=all&labels=%2C%2C-1&milestones=abc%2C-7&fingerprint=x&service=bogus&ref=--output%3D%2Ftmp%2Fx'

async function pool<T, R>(items: T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++
        out[i] = await fn(items[i]!)
      }
    }),
  )
  return out
}

interface Req {
  op: string
  method: string
  path: string
  auth?: string
  body?: string
  contentType?: string
}

/**
 * HTTP/1.1 over a plain socket, for paths a URL parser would rewrite (`..`, `%2e%2e` dot
 * segments are resolved by fetch, which would send the request to another route).
 */
async function sendRaw(r: Req): Promise<Sent> {
  const { host, port } = new URL(s.url)
  const body = r.body === undefined ? undefined : Buffer.from(r.body)
  const lines = [`${r.method} ${r.path} HTTP/1.1`, `Host: ${host}`, 'Connection: close']
  if (r.auth) lines.push(`Authorization: ${r.auth}`)
  if (body) lines.push(`Content-Type: ${r.contentType ?? 'application/json'}`, `Content-Length: ${body.length}`)
  const chunks: Buffer[] = []
  await new Promise<void>((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: Number(port) }, () => {
      socket.write(lines.join('\r\n') + '\r\n\r\n')
      if (body) socket.write(body)
    })
    socket.on('data', (d) => chunks.push(Buffer.from(d)))
    socket.on('end', () => resolve())
    socket.on('error', reject)
  })
  const raw = Buffer.concat(chunks).toString('latin1')
  const split = raw.indexOf('\r\n\r\n')
  const head = raw.slice(0, split)
  let text = raw.slice(split + 4)
  if (/transfer-encoding:\s*chunked/i.test(head)) {
    let out = ''
    for (let rest = text; ; ) {
      const eol = rest.indexOf('\r\n')
      const size = parseInt(rest.slice(0, eol), 16)
      if (!size) break
      out += rest.slice(eol + 2, eol + 2 + size)
      rest = rest.slice(eol + 4 + size)
    }
    text = out
  }
  const status = Number(head.split(' ')[1])
  const contentType = /content-type:\s*([^\r\n]*)/i.exec(head)?.[1] ?? ''
  return { op: r.op, method: r.method, url: r.path, status, contentType, text: Buffer.from(text, 'latin1').toString() }
}

async function send(r: Req): Promise<Sent> {
  if (/\/(\.\.|%2e%2e)(\/|\?|$)/i.test(r.path)) return sendRaw(r)
  const headers: Record<string, string> = {}
  if (r.auth) headers.authorization = r.auth
  if (r.body !== undefined) headers['content-type'] = r.contentType ?? 'application/json'
  const res = await fetch(s.url + r.path, { method: r.method, headers, body: r.body, redirect: 'manual' })
  const text = r.method === 'HEAD' ? '' : await res.text()
  return { op: r.op, method: r.method, url: r.path, status: res.status, contentType: res.headers.get('content-type') ?? '', text }
}

/** Problems with one answer, per the house rule. */
function problemsOf(sent: Sent): string[] {
  const where = `${sent.method} ${sent.url.slice(0, 160)} (${sent.op}) → ${sent.status}`
  if (sent.status >= 500) return [`${where}: ${sent.text.slice(0, 200)}`]
  const api = sent.url.startsWith('/api/v1/')
  // (HEAD and TRACE answers carry no body.)
  if (api && sent.status >= 400 && sent.status < 500 && sent.method !== 'HEAD' && sent.method !== 'TRACE') {
    let body: any
    try {
      body = JSON.parse(sent.text)
    } catch {
      return [`${where}: 4xx body is not JSON: ${sent.text.slice(0, 120)}`]
    }
    if (typeof body?.message !== 'string') return [`${where}: 4xx body has no string message: ${sent.text.slice(0, 120)}`]
  }
  return []
}

async function run(reqs: Req[]): Promise<string[]> {
  const sent = await pool(reqs, 8, send)
  if (process.env.ROBUST_DEBUG) for (const r of sent) if (process.env.ROBUST_DEBUG === "all" || (r.status < 400 && r.method !== "GET")) console.log("DEBUG", r.status, r.method, r.url.slice(0, 100), process.env.ROBUST_DEBUG === "body" ? JSON.stringify(reqs[sent.indexOf(r)]?.body?.slice(0, 150)) : r.text.slice(0, 100))
  return sent.flatMap(problemsOf)
}

/** Counts per table: a cheap snapshot of the database. */
const snapshot = () => databaseCounts(s.deps.db)

/** Fills an OpenAPI path with values: `{x}` from `values` (or BASE), `*` from WILDCARD. */
function fill(path: string, values: Record<string, string> = {}): string {
  return path.replace(/\{(\w+)\}/g, (_, name) => values[name] ?? BASE[name] ?? '1').replace(/\/([a-z_]+)\/\*$/, (_, seg) => `/${seg}/${values['*'] ?? WILDCARD[seg] ?? 'master'}`)
}

function paramsOf(path: string): string[] {
  const names = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!)
  if (path.endsWith('/*')) names.push('*')
  return names
}

/** The types a (TypeBox / JSON) schema accepts. */
function typesOf(schema: any): string[] {
  if (!schema) return []
  if (Array.isArray(schema.anyOf)) return schema.anyOf.flatMap(typesOf)
  if (Array.isArray(schema.type)) return schema.type
  return schema.type ? [schema.type] : []
}

/** A value none of the schema's types accept. */
function wrongValue(schema: any): unknown {
  const types = new Set(typesOf(schema))
  const candidates: unknown[] = [{ nested: [1, 2] }, 12345, 'not-a-thing', true, ['a', 1, null]]
  const typeOf = (v: unknown) => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v === 'number' ? 'number' : typeof v)
  return candidates.find((v) => !types.has(typeOf(v)) && !(typeOf(v) === 'number' && types.has('integer'))) ?? { nested: true }
}

/** A body the schema accepts (required fields only), so that a request gets past validation. */
function validBody(schema: any): string {
  if (!schema || schema.type !== 'object') return '{}'
  const sample: Record<string, unknown> = {}
  for (const key of schema.required ?? []) {
    const type = typesOf(schema.properties?.[key]).find((t) => t !== 'null')
    sample[key] = type === 'integer' || type === 'number' ? 1 : type === 'boolean' ? true : type === 'array' ? [] : type === 'object' ? {} : 'robust'
  }
  return JSON.stringify(sample)
}

/** Every string field (and string-array field) set to 100k characters. */
function longValue(schema: any): unknown | undefined {
  const types = typesOf(schema)
  if (types.includes('string')) return LONG
  if (types.includes('array') && typesOf(schema.items).includes('string')) return [LONG, LONG]
  return undefined
}

beforeAll(async () => {
  s = await startTestServer()
  admin = await s.user('root', { admin: true })
  normal = await s.user('normal')
  expect((await s.post('/orgs', { username: 'org1' }, { token: admin.token })).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'pub' }, { token: admin.token })).status).toBe(201)
  expect((await s.post('/user/repos', { name: 'priv', private: true }, { token: admin.token })).status).toBe(201)
  work = await makeWorkRepo()
  for (const repo of ['pub', 'priv']) await gitOk(work.dir, 'push', '-q', remoteUrl(s.url, `root/${repo}.git`, 'root', admin.token), 'master', 'dev', 'v1.0')
  // A branch with a big incompressible file, so that downloads stream for a while.
  await gitOk(work.dir, 'checkout', '-q', '-b', 'big')
  writeFileSync(join(work.dir, 'big.bin'), randomBytes(6 * 1024 * 1024))
  await gitOk(work.dir, 'add', 'big.bin')
  await gitOk(work.dir, 'commit', '-q', '-m', 'Big file')
  await gitOk(work.dir, 'checkout', '-q', 'master')
  await gitOk(work.dir, 'push', '-q', remoteUrl(s.url, 'root/pub.git', 'root', admin.token), 'big')
  expect((await s.post('/repos/root/pub/issues', { title: 'first issue' }, { token: admin.token })).status).toBe(201)
  expect((await s.post('/repos/root/pub/labels', { name: 'bug', color: '#ff0000' }, { token: admin.token })).status).toBe(201)
  expect((await s.post('/repos/root/pub/milestones', { title: 'v1' }, { token: admin.token })).status).toBe(201)
})
afterAll(async () => {
  await s.stop()
  rmSync(work.dir, { recursive: true, force: true })
})

/** Operations of the OpenAPI document, their body schemas from the routes, plus the web paths. */
async function operations(): Promise<Op[]> {
  const doc = (await (await fetch(s.url + '/swagger.v1.json')).json()) as any
  const bodies = new Map<string, any>()
  for (const r of (s.app as any).routes as any[]) if (r.hooks?.body) bodies.set(`${r.method} ${String(r.path).replace(/:(\w+)/g, '{$1}')}`, r.hooks.body)
  const ops: Op[] = []
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    if (!path.startsWith('/api/v1/')) continue
    for (const method of Object.keys(item)) {
      const m = method.toUpperCase()
      if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(m)) continue
      const body = item[method].requestBody?.content?.['application/json']?.schema ?? bodies.get(`${m} ${path}`)
      ops.push({ method: m, path, body })
    }
  }
  ops.push(
    { method: 'GET', path: '/{owner}/{repo}/raw/*' },
    { method: 'GET', path: '/{owner}/{repo}/archive/*' },
    { method: 'GET', path: '/{owner}/{repo}/info/refs' },
    { method: 'POST', path: '/{owner}/{repo}/git-upload-pack' },
    { method: 'POST', path: '/{owner}/{repo}/git-receive-pack' },
  )
  return ops
}

let ops: Op[] = []
const opName = (op: Op) => `${op.method} ${op.path}`
const isMutation = (op: Op) => op.method !== 'GET'
const anonAuth = undefined
const adminAuth = () => `token ${admin.token}`

/**
 * The operations of one part of a sweep. The operations on one path stay together: a PUT that one
 * odd value makes valid (a topic named `0`) is undone by the DELETE of the same path, and each
 * part checks that the database is as it was.
 */
function inPart(list: Op[], part: number, parts: number): Op[] {
  const paths = [...new Set(list.map((o) => o.path))]
  return list.filter((o) => paths.indexOf(o.path) % parts === part)
}

/** How many parts the odd-path sweep is run in. */
const ODD_PATH_PARTS = 16
/** How many parts the odd-string sweep is run in. */
const ODD_STRING_PARTS = 4

describe('hostile input on every operation', () => {
  test('the OpenAPI document lists the operations', async () => {
    ops = await operations()
    expect(ops.length).toBeGreaterThan(100)
    expect(ops.filter((o) => o.body).length).toBeGreaterThan(25)
  })

  // Every path parameter of every operation times every odd segment is tens of thousands of
  // requests: the sweep is cut into parts (operations taken in turn), each under its own limit, so
  // that a loaded machine slows each part without any one of them nearing its limit.
  for (let part = 0; part < ODD_PATH_PARTS; part++) {
    test(`odd path parameters (part ${part + 1} of ${ODD_PATH_PARTS}): no 5xx, 4xx in the error shape, nothing changed`, async () => {
      const before = await snapshot()
      const reqs: Req[] = []
      for (const op of inPart(ops, part, ODD_PATH_PARTS)) {
        for (const name of paramsOf(op.path)) {
          for (const [auth, segments] of [
            [adminAuth(), ODD_SEGMENTS],
            [anonAuth, ANON_SEGMENTS],
          ] as const) {
            for (const odd of segments) {
              // Dot segments are resolved before routing (RFC 3986; Bun does it to request.url as
              // fetch and curl do): on a mutation they name another, real resource.
              if (isMutation(op) && DOT_SEGMENTS.includes(odd)) continue
              const path = fill(op.path, { [name]: odd })
              const withBody = op.body !== undefined || ['POST', 'PUT', 'PATCH'].includes(op.method)
              reqs.push({ op: opName(op), method: op.method, path, auth, body: withBody ? validBody(op.body) : undefined })
            }
          }
        }
      }
      const problems = await run(reqs)
      expect(problems).toEqual([])
      expect(await snapshot()).toEqual(before)
    }, 240_000)
  }

  test('malformed and wrong-typed bodies: 4xx in the error shape, nothing changed', async () => {
    const before = await snapshot()
    const reqs: Req[] = []
    for (const op of ops.filter((o) => o.body && o.path.startsWith('/api/'))) {
      const bodies: string[] = ['{"title": "x",', '[1,2,3]', '"just a string"', '42', 'nul', '{"a":1}}']
      const props = op.body.properties as Record<string, any> | undefined
      if (props && Object.keys(props).length) bodies.push(JSON.stringify(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, wrongValue(v)]))))
      if (op.body.type === 'string') continue // raw text bodies: anything is text
      for (const auth of [adminAuth(), anonAuth]) for (const body of bodies) reqs.push({ op: opName(op), method: op.method, path: fill(op.path), auth, body })
    }
    expect(reqs.length).toBeGreaterThan(200)
    const problems = await run(reqs)
    expect(problems).toEqual([])
    expect(await snapshot()).toEqual(before)
  }, 240_000)

  test('null bodies and over-long strings in every string field: never a 5xx', async () => {
    const reqs: Req[] = []
    for (const op of ops.filter((o) => o.body && o.path.startsWith('/api/'))) {
      if (op.method === 'DELETE' && !op.path.endsWith('/emails')) continue
      const props = (op.body.properties ?? {}) as Record<string, any>
      const long: Record<string, unknown> = JSON.parse(validBody(op.body))
      for (const [k, v] of Object.entries(props)) {
        const value = longValue(v)
        if (value !== undefined) long[k] = value
      }
      const bodies = op.body.type === 'string' ? [LONG] : ['null', JSON.stringify(long)]
      for (const auth of [adminAuth(), anonAuth]) for (const body of bodies) reqs.push({ op: opName(op), method: op.method, path: fill(op.path), auth, body })
    }
    const problems = await run(reqs)
    expect(problems).toEqual([])
    // Nothing that bad input could have reached was lost: the fixtures still answer.
    expect((await s.get('/repos/root/pub', { token: admin.token })).status).toBe(200)
    expect((await s.get('/repos/root/pub/issues/1', { token: admin.token })).status).toBe(200)
  }, 240_000)

  test('huge, negative and fractional numbers in every numeric field: never a 5xx', async () => {
    const reqs: Req[] = []
    for (const op of ops.filter((o) => o.body?.type === 'object' && o.method !== 'DELETE')) {
      const numeric = Object.entries((op.body.properties ?? {}) as Record<string, any>).filter(([, v]) => {
        const types = typesOf(v)
        return types.includes('integer') || types.includes('number') || (types.includes('array') && typesOf(v.items).some((t) => t === 'integer' || t === 'number'))
      })
      if (!numeric.length) continue
      for (const n of ['99999999999999999999', '9223372036854775808', '-9223372036854775809', '-1', '1.5', '1e400', '"99999999999999999999"']) {
        const body = JSON.parse(validBody(op.body))
        const fields = numeric.map(([k, v]) => `"${k}": ${typesOf(v).includes('array') ? `[${n}]` : n}`)
        const text = JSON.stringify(body).replace(/}$/, (Object.keys(body).length ? ',' : '') + fields.join(',') + '}')
        reqs.push({ op: opName(op), method: op.method, path: fill(op.path), auth: adminAuth(), body: text })
      }
    }
    expect(reqs.length).toBeGreaterThan(30)
    const problems = await run(reqs)
    expect(problems).toEqual([])
  }, 240_000)

  test('unknown and wrong-typed query parameters on every read: no 5xx', async () => {
    const reqs: Req[] = []
    for (const op of ops.filter((o) => !isMutation(o)))
      for (const auth of [adminAuth(), anonAuth]) for (const q of [BAD_QUERY, BAD_QUERY_2, BAD_QUERY_3, BAD_QUERY_4]) reqs.push({ op: opName(op), method: op.method, path: fill(op.path) + q, auth })
    const problems = await run(reqs)
    expect(problems).toEqual([])
  }, 240_000)
})

describe('hostile requests at the application level', () => {
  test('5 MB of garbage declared as JSON is a 4xx', async () => {
    const before = await snapshot()
    const garbage = Buffer.alloc(5 * 1024 * 1024, 0x7b).toString() // '{{{{…'
    for (const path of ['/api/v1/user/repos', '/api/v1/repos/root/pub/issues', '/api/v1/markdown']) {
      const sent = await send({ op: 'garbage', method: 'POST', path, auth: adminAuth(), body: garbage })
      expect(sent.status).toBeGreaterThanOrEqual(400)
      expect(problemsOf(sent)).toEqual([])
    }
    const binary = await fetch(s.url + '/api/v1/user/repos', {
      method: 'POST',
      headers: { authorization: adminAuth(), 'content-type': 'application/json' },
      body: new Uint8Array(5 * 1024 * 1024).map((_, i) => (i * 131) % 256),
    })
    expect(binary.status).toBeGreaterThanOrEqual(400)
    expect(binary.status).toBeLessThan(500)
    expect(typeof ((await binary.json()) as any).message).toBe('string')
    expect(await snapshot()).toEqual(before)
  })

  test('broken bodies of every kind are 4xx', async () => {
    const before = await snapshot()
    const deep = '['.repeat(200_000) + ']'.repeat(200_000)
    const cases: { type: string; body: string }[] = [
      { type: 'application/json', body: deep },
      { type: 'application/json', body: '{"name": "a", "name": {"x": 1}, "private": "yes"}' },
      { type: 'application/json', body: '\uFEFF{"name": "bom"' },
      { type: 'application/json; charset=latin-9', body: '{"name": 1}' },
      { type: 'application/x-www-form-urlencoded', body: 'name=%zz&private=maybe&&=' },
      { type: 'multipart/form-data; boundary=xyz', body: '--xyz\r\nContent-Disposition: form-data; name="name"\r\n\r\nbroken' },
      { type: 'multipart/form-data', body: 'no boundary at all' },
      { type: 'text/plain', body: 'just text' },
      { type: 'application/octet-stream', body: '\u0000\u0001\u0002' },
      { type: 'application/x-git-upload-pack-request', body: '{"name": "x"}' },
    ]
    const reqs: Req[] = []
    for (const c of cases)
      for (const path of ['/api/v1/user/repos', '/api/v1/repos/root/pub/issues', '/api/v1/repos/root/pub', '/api/v1/markdown', '/api/v1/markdown/raw'])
        reqs.push({ op: 'body', method: path.endsWith('/pub') ? 'PATCH' : 'POST', path, auth: adminAuth(), body: c.body, contentType: c.type })
    const sent = await pool(reqs, 4, send)
    expect(sent.flatMap(problemsOf)).toEqual([])
    // Creations need fields none of these bodies carries (a text/plain PATCH reads as no field).
    for (const r of sent.filter((r) => r.method === 'POST' && !r.url.includes('/markdown'))) expect(r.status).toBeGreaterThanOrEqual(400)
    expect((await s.get('/repos/root/pub', { token: admin.token })).body.name).toBe('pub')
    expect(await snapshot()).toEqual(before)
  })

  test('garbage git protocol data is refused without a 5xx, refs unchanged', async () => {
    const refs = async () => (await s.get('/repos/root/pub/branches', { token: admin.token })).body.map((b: any) => `${b.name} ${b.commit.id}`).sort()
    const before = await refs()
    const reqs: Req[] = []
    for (const service of ['upload-pack', 'receive-pack'])
      for (const body of ['garbage', '0000', '00a4want 0000000000000000000000000000000000000000\n0000', 'ffff' + 'x'.repeat(70_000), '0032ffffffffffffffffffffffffffffffffffffffff refs/heads/master\n0000PACK\u0000\u0000'])
        for (const encoding of [undefined, 'application/json'])
          reqs.push({ op: `git-${service}`, method: 'POST', path: `/root/pub.git/git-${service}`, auth: adminAuth(), body, contentType: encoding ?? `application/x-git-${service}-request` })
    const sent = await pool(reqs, 4, send)
    expect(sent.flatMap(problemsOf)).toEqual([])
    const gz = await fetch(`${s.url}/root/pub.git/git-upload-pack`, {
      method: 'POST',
      headers: { authorization: adminAuth(), 'content-type': 'application/x-git-upload-pack-request', 'content-encoding': 'gzip' },
      body: 'not gzip at all',
    })
    expect(gz.status).toBeLessThan(500)
    await gz.text()
    expect(await refs()).toEqual(before)
  })

  test('clients that hang up in the middle of a download or a fetch leave the server healthy', async () => {
    const rejections: unknown[] = []
    const onRejection = (reason: unknown) => rejections.push(reason)
    process.on('unhandledRejection', onRejection)
    try {
      const downloads = [
        '/root/pub/archive/big.tar.gz',
        '/root/pub/archive/big.zip',
        '/root/pub/raw/big/big.bin',
        '/api/v1/repos/root/pub/archive/big.tar.gz',
        '/api/v1/repos/root/pub/raw/big.bin?ref=big',
      ]
      for (const path of downloads) {
        const controller = new AbortController()
        const res = await fetch(s.url + path, { headers: { authorization: adminAuth() }, signal: controller.signal })
        expect(res.status).toBe(200)
        const reader = res.body!.getReader()
        await reader.read()
        controller.abort()
        await reader.read().catch(() => undefined)
      }
      // A fetch whose client goes away after sending its wants.
      const head = (await gitOk(work.dir, 'rev-parse', 'big')).trim()
      const want = `want ${head} ofs-delta\n`
      const pkt = (line: string) => (line.length + 4).toString(16).padStart(4, '0') + line
      const controller = new AbortController()
      const res = await fetch(`${s.url}/root/pub.git/git-upload-pack`, {
        method: 'POST',
        headers: { authorization: adminAuth(), 'content-type': 'application/x-git-upload-pack-request' },
        body: pkt(want) + '0000' + pkt('done\n'),
        signal: controller.signal,
      })
      expect(res.status).toBe(200)
      await res.body!.getReader().read()
      controller.abort()
      await Bun.sleep(200)
      expect(rejections).toEqual([])
      expect((await s.get('/version')).status).toBe(200)
      const whole = await fetch(s.url + '/root/pub/raw/big/big.bin', { headers: { authorization: adminAuth() } })
      expect((await whole.arrayBuffer()).byteLength).toBe(6 * 1024 * 1024)
    } finally {
      process.off('unhandledRejection', onRejection)
    }
  })

  test('odd Authorization headers are 4xx (or ignored), never 5xx', async () => {
    const forms = [
      'garbage',
      'Basic',
      'Basic !!!not-base64!!!',
      'Basic ' + Buffer.from('no-colon').toString('base64'),
      'Basic ' + Buffer.from(':').toString('base64'),
      'Basic ' + Buffer.from('root:').toString('base64'),
      'Basic ' + Buffer.from('\u0000:\u0000').toString('base64'),
      'Basic ' + Buffer.from('x'.repeat(5000) + ':y').toString('base64'),
      'token',
      'token ',
      'token ' + 'z'.repeat(5000),
      'Bearer %00',
      'Bearer ' + admin.token + ' extra',
      'Digest username="root"',
    ]
    const reqs: Req[] = []
    for (const auth of forms)
      for (const path of ['/api/v1/user', '/api/v1/repos/root/pub', '/api/v1/repos/root/priv', '/root/priv.git/info/refs?service=git-upload-pack'])
        reqs.push({ op: 'auth', method: 'GET', path, auth })
    const sent = await pool(reqs, 8, send)
    expect(sent.flatMap(problemsOf)).toEqual([])
    // None of them is taken for the admin.
    for (const r of sent.filter((r) => r.url === '/api/v1/repos/root/priv')) expect([401, 404]).toContain(r.status)
  })

  test('?sudo= as a non-admin or anonymous is refused, never 5xx', async () => {
    const reqs: Req[] = []
    for (const sudo of ['root', 'nobody', '', '%00', 'x'.repeat(10_000)])
      for (const auth of [`token ${normal.token}`, anonAuth, adminAuth()]) reqs.push({ op: 'sudo', method: 'GET', path: `/api/v1/user?sudo=${sudo}`, auth })
    const sent = await pool(reqs, 8, send)
    expect(sent.flatMap(problemsOf)).toEqual([])
    const statusOf = (auth: string | undefined, sudo: string) => sent.find((r) => r.url === `/api/v1/user?sudo=${sudo}` && reqs[sent.indexOf(r)]!.auth === auth)!.status
    // Only a site admin may act as someone else; an unknown target is a 404.
    expect(statusOf(`token ${normal.token}`, 'root')).toBe(403)
    expect(statusOf(anonAuth, 'root')).toBe(403)
    expect(statusOf(adminAuth(), 'nobody')).toBe(404)
    expect(statusOf(adminAuth(), '%00')).toBe(404)
    const asNormal = await s.get('/user?sudo=normal', { token: admin.token })
    expect([asNormal.status, asNormal.body.login]).toEqual([200, 'normal'])
  })

  test('HEAD, OPTIONS and unknown methods: never 5xx', async () => {
    const paths = ['/api/v1/version', '/api/v1/repos/root/pub', '/api/v1/repos/root/pub/issues', '/api/v1/user', '/root/pub/raw/master/README.md', '/root/pub.git/info/refs?service=git-upload-pack', '/swagger.v1.json', '/nope']
    const reqs: Req[] = []
    for (const path of paths)
      for (const method of ['HEAD', 'OPTIONS', 'PROPFIND', 'TRACE', 'FOO', 'PATCH', 'CONNECT'])
        for (const auth of [adminAuth(), anonAuth]) reqs.push({ op: 'method', method, path, auth })
    const sent = await pool(reqs, 8, async (r) => {
      try {
        return await send(r)
      } catch (e) {
        // fetch refuses some methods (CONNECT, TRACE) on the client side: nothing reached the server
        return { op: r.op, method: r.method, url: r.path, status: 0, contentType: '', text: String(e) }
      }
    })
    expect(sent.flatMap(problemsOf)).toEqual([])
    for (const r of sent.filter((r) => r.method === 'HEAD' && r.url === '/api/v1/version')) expect(r.status).toBe(200)
  })
})

describe('slow requests', () => {
  test('while hostile inputs are sent, a second client polling /version keeps being answered', async () => {
    const probe = latencyProbe(s.url)
    const markdown = (text: string, mode?: string): Req => ({ op: 'markdown', method: 'POST', path: '/api/v1/markdown', body: JSON.stringify({ Text: text, Mode: mode, Context: 'root/pub' }), contentType: 'application/json' })
    const reqs: Req[] = [
      { op: 'markdown-raw', method: 'POST', path: '/api/v1/markdown/raw', body: 'a\n'.repeat(53_248), contentType: 'text/plain' },
      markdown('['.repeat(32_768), 'gfm'),
      markdown('>'.repeat(16_384)),
      markdown('*a _b '.repeat(4096), 'gfm'),
      markdown('`a``'.repeat(8192)),
      markdown('<a '.repeat(20_000), 'gfm'),
      { op: 'garbage', method: 'POST', path: '/api/v1/user/repos', auth: adminAuth(), body: '{'.repeat(5 * 1024 * 1024), contentType: 'application/json' },
      { op: 'deep-json', method: 'POST', path: '/api/v1/repos/root/pub/issues', auth: adminAuth(), body: '['.repeat(200_000) + ']'.repeat(200_000), contentType: 'application/json' },
      { op: 'editorconfig', method: 'GET', path: `/api/v1/repos/root/pub/editorconfig/${'a'.repeat(4000)}` },
    ]
    const sent = await pool(reqs, 4, (r) => probe.during(r.op, () => send(r)))
    const { held, answers } = await probe.stop()
    expect(sent.flatMap(problemsOf)).toEqual([])
    expect(answers).toBeGreaterThan(0)
    expect(held).toEqual([])
  }, 240_000)
})

describe('odd strings in every string field (runs last: some are valid and change things)', () => {
  // In parts, as the odd-path sweep is, each under its own limit.
  for (let part = 0; part < ODD_STRING_PARTS; part++) {
    test(`names and refs made of dots, NULs, options and control characters (part ${part + 1} of ${ODD_STRING_PARTS}): never a 5xx`, async () => {
      const odd = ['', ' ', '..', '../../etc/passwd', 'a\u0000b', '--upload-pack=touch /tmp/pwned', '-', '\u202egnp.exe', 'a\nb', 'HEAD', 'refs/heads/x', 'x.git', '😀', '%00']
      const reqs: Req[] = []
      const withBodies = ops.filter((o) => o.body?.type === 'object' && o.method !== 'DELETE' && o.path.startsWith('/api/'))
      for (const op of inPart(withBodies, part, ODD_STRING_PARTS)) {
        const strings = Object.entries((op.body.properties ?? {}) as Record<string, any>).filter(([, v]) => typesOf(v).includes('string'))
        for (const [field] of strings)
          for (const value of odd) reqs.push({ op: opName(op), method: op.method, path: fill(op.path), auth: adminAuth(), body: JSON.stringify({ ...JSON.parse(validBody(op.body)), [field]: value }) })
      }
      expect(reqs.length).toBeGreaterThan(300 / ODD_STRING_PARTS)
      // Sequential per operation order matters little; a modest width keeps SQLite writers queued.
      const problems = await run(reqs)
      expect(problems).toEqual([])
      expect((await s.get('/version')).status).toBe(200)
    }, 240_000)
  }
})

describe('racing requests', () => {
  test('concurrent creations of the same name: one wins, the rest are 4xx; issue numbers stay distinct', async () => {
    const race = (f: () => Promise<{ status: number; body: any }>) => Promise.all(Array.from({ length: 12 }, f))
    const unique = [
      await race(() => s.post('/user/repos', { name: 'raced' }, { token: admin.token })),
      await race(() => s.post('/orgs', { username: 'racedorg' }, { token: admin.token })),
      await race(() => s.post('/admin/users', { username: 'raceduser', email: 'raced@example.com', password: 'secret-123' }, { token: admin.token })),
      await race(() => s.post('/user/emails', { emails: ['raced-mail@example.com'] }, { token: normal.token })),
      await race(() => s.patch('/repos/root/raced', { name: 'raced2' }, { token: admin.token })),
    ]
    for (const answers of unique) {
      expect(answers.filter((r) => r.status >= 500)).toEqual([])
      expect(answers.filter((r) => r.status < 300).length).toBe(1)
    }
    const issues = await race(() => s.post('/repos/root/raced2/issues', { title: 'raced' }, { token: admin.token }))
    expect(issues.map((r) => r.status)).toEqual(issues.map(() => 201))
    expect(new Set(issues.map((r) => r.body.number)).size).toBe(issues.length)
    const deletes = await race(() => s.del('/repos/root/raced2', undefined, { token: admin.token }))
    expect(deletes.map((r) => r.status).sort()).toEqual([204, ...Array(11).fill(404)])
  })
})
