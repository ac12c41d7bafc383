import type http from 'node:http'
import { checkOutbound, isIP } from '../lib/outbound-policy'
import { WARREN_VERSION } from '../version'
import { deliveryBody, eventName, type HookEventType } from './events'
import type { HostAllowList } from '../lib/host-allow-list'

/**
 * One HTTP attempt of one delivery: POST of the stored text (JSON, or a form
 * with one `payload` field), Gitea's, Gogs' and GitHub's headers, the signature computed with
 * the hook's current secret. The target's name is resolved here, the address checked against the
 * allow-list, and the connection made to that very address (a lookup that answers it and nothing
 * else), so a DNS answer cannot change between the check and the connection. No redirect is
 * followed. The whole attempt — connect, send, read the answer — has one time limit.
 */

/** What an attempt is given: the task's text and event, the hook's target and credentials. */
export interface Delivery {
  uuid: string
  eventType: HookEventType
  payload: string
  url: string
  contentType: string
  secret: string
  authorizationHeader: string
}

export interface Attempt {
  ok: boolean
  /** Worth trying again later: the receiver was unreachable, too slow, or answered 5xx. */
  retry: boolean
  request: { url: string; http_method: string; headers: Record<string, string> }
  response: { status: number; headers: Record<string, string>; body: string }
  durationMs: number
}

/** Characters of a receiver's answer kept on the task. */
const MAX_RESPONSE_KEPT = 64 * 1024

/**
 * The signature headers' value: lower-case hex HMAC of the text, or '' without a secret (as Gitea).
 * Bun's own hasher: node:crypto's Hmac is a stream, and took 10-11 µs for a payload of 8 KB where
 * this takes 5-6 (two a delivery).
 */
export function signature(algorithm: 'sha256' | 'sha1', secret: string, text: string): string {
  return secret ? new Bun.CryptoHasher(algorithm, secret).update(text).digest('hex') : ''
}

/** Every header of a delivery (the body's Content-Type included). */
export function deliveryHeaders(d: Delivery): Record<string, string> {
  const event = eventName(d.eventType)
  const sha256 = signature('sha256', d.secret, d.payload)
  const headers: Record<string, string> = {
    'User-Agent': `Warren/${WARREN_VERSION}`,
    'Content-Type': d.contentType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json',
    'X-Gitea-Delivery': d.uuid,
    'X-Gitea-Event': event,
    'X-Gitea-Event-Type': d.eventType,
    'X-Gitea-Signature': sha256,
    'X-Gogs-Delivery': d.uuid,
    'X-Gogs-Event': event,
    'X-Gogs-Event-Type': d.eventType,
    'X-Gogs-Signature': sha256,
    'X-GitHub-Delivery': d.uuid,
    'X-GitHub-Event': event,
    'X-GitHub-Event-Type': d.eventType,
    'X-Hub-Signature': `sha1=${signature('sha1', d.secret, d.payload)}`,
    'X-Hub-Signature-256': `sha256=${sha256}`,
  }
  if (d.authorizationHeader) headers.Authorization = d.authorizationHeader
  return headers
}


type Allowed = { address: string; family: number } | { refused: string }

/** Answers for address literals, by allow-list: a literal resolves to itself, so its answer never changes (names are resolved at each attempt). */
const literalAnswers = new WeakMap<HostAllowList, Map<string, Allowed>>()
/** Literals kept per allow-list. */
const LITERALS_KEPT = 1024

/** An address of `hostname` the allow-list accepts, or why there is none. */
async function allowedAddress(hostname: string, allow: HostAllowList): Promise<Allowed> {
  const host = hostname.replace(/^\[|\]$/g, '')
  if (!isIP(host)) return await checkedAddress(host, allow)
  let kept = literalAnswers.get(allow)
  if (!kept) literalAnswers.set(allow, (kept = new Map()))
  let answer = kept.get(host)
  if (!answer) {
    answer = await checkedAddress(host, allow)
    if (kept.size >= LITERALS_KEPT) kept.clear()
    kept.set(host, answer)
  }
  return answer
}

async function checkedAddress(host: string, allow: HostAllowList): Promise<Allowed> {
  const check = await checkOutbound(host, allow, 'any')
  if (check.ok) return check.address
  if (check.reason === 'unresolvable') return { refused: `cannot resolve ${host}: ${check.error}` }
  const shown = check.addresses.map((a) => a.address).join(', ')
  return { refused: `webhook can only call allowed HTTP servers (check the WARREN_WEBHOOK_ALLOWED_HOST_LIST setting), deny '${host}(${shown})'` }
}

const headerRecord = (raw: http.IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : String(v ?? '')]))

type Answer = { status: number; headers: Record<string, string>; body: string }

/** The first MAX_RESPONSE_KEPT bytes of a body as text (the rest is read and dropped). */
async function keptText(body: ReadableStream<Uint8Array> | null): Promise<string> {
  if (!body) return ''
  const chunks: Uint8Array[] = []
  let kept = 0
  const reader = body.getReader()
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    if (kept < MAX_RESPONSE_KEPT) chunks.push(r.value)
    kept += r.value.length
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, MAX_RESPONSE_KEPT)
}

/**
 * Plain HTTP: fetch to the checked address itself, the URL's host in the Host header. Bun's fetch
 * keeps the connection open and sends the next attempt to the same address over it (keep-alive).
 */
async function sendPlain(url: URL, address: string, headers: Record<string, string>, body: string, signal: AbortSignal): Promise<Answer> {
  const target = new URL(url.href)
  target.hostname = address.includes(':') ? `[${address}]` : address
  const res = await fetch(target, { method: 'POST', headers: { ...headers, Host: url.host }, body, redirect: 'manual', signal })
  const answerHeaders: Record<string, string> = {}
  res.headers.forEach((value, key) => (answerHeaders[key] = value))
  return { status: res.status, headers: answerHeaders, body: await keptText(res.body) }
}

/**
 * HTTPS: node's client with a lookup that answers the checked address, so SNI and the certificate
 * check keep the host name. node:https (and node:http under it) is imported at the first HTTPS
 * delivery, not when the server starts: the module is on the main thread's start-up path (the
 * hooks' test delivery), which needs neither.
 */
async function sendTls(url: URL, target: { address: string; family: number }, headers: Record<string, string>, body: Buffer, signal: AbortSignal): Promise<Answer> {
  const https = await import('node:https')
  return await new Promise<Answer>((resolve, reject) => {
    const req = https.request(
      {
        host: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || undefined,
        path: url.pathname + url.search,
        method: 'POST',
        headers: { ...headers, 'Content-Length': String(body.length) },
        lookup: ((_host: string, o: { all?: boolean }, cb: (...args: unknown[]) => void) =>
          o?.all ? cb(null, [{ address: target.address, family: target.family }]) : cb(null, target.address, target.family)) as never,
        signal,
      },
      (res) => {
        const chunks: Buffer[] = []
        let kept = 0
        res.on('data', (chunk: Buffer) => {
          if (kept < MAX_RESPONSE_KEPT) chunks.push(chunk)
          kept += chunk.length
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: headerRecord(res.headers), body: Buffer.concat(chunks).toString('utf8').slice(0, MAX_RESPONSE_KEPT) }))
        res.on('error', reject)
      },
    )
    req.on('error', reject)
    req.end(body)
  })
}

/** Makes one attempt; never throws (a failure is an Attempt with ok false). */
export async function attemptDelivery(d: Delivery, opts: { allow: HostAllowList; timeoutMs: number; signal?: AbortSignal }): Promise<Attempt> {
  const started = performance.now()
  const headers = deliveryHeaders(d)
  const shownHeaders = { ...headers, ...(headers.Authorization ? { Authorization: '******' } : {}) }
  const request = { url: d.url, http_method: 'POST', headers: shownHeaders }
  const failed = (body: string, retry: boolean, status = 0, responseHeaders: Record<string, string> = {}): Attempt => ({
    ok: false,
    retry,
    request,
    response: { status, headers: responseHeaders, body },
    durationMs: Math.round(performance.now() - started),
  })
  let url: URL
  try {
    url = new URL(d.url)
  } catch {
    return failed('Delivery: invalid URL', false)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return failed(`Delivery: unsupported scheme ${url.protocol}`, false)
  const controller = new AbortController()
  const timer = setTimeout(() => controller.abort(), opts.timeoutMs)
  const stop = () => controller.abort()
  opts.signal?.addEventListener('abort', stop)
  try {
    const target = await allowedAddress(url.hostname, opts.allow)
    if ('refused' in target) return failed(`Delivery: ${target.refused}`, false)
    if (controller.signal.aborted) return failed(`Delivery: timed out after ${opts.timeoutMs} ms`, true)
    const body = deliveryBody(d)
    const answer =
      url.protocol === 'http:' ? await sendPlain(url, target.address, headers, body, controller.signal) : await sendTls(url, target, headers, Buffer.from(body), controller.signal)
    const ok = answer.status >= 200 && answer.status < 300
    return { ok, retry: answer.status >= 500, request, response: answer, durationMs: Math.round(performance.now() - started) }
  } catch (e) {
    const reason = controller.signal.aborted ? `timed out after ${opts.timeoutMs} ms` : ((e as Error).message ?? String(e))
    return failed(`Delivery: ${reason}`, true)
  } finally {
    clearTimeout(timer)
    opts.signal?.removeEventListener('abort', stop)
  }
}
