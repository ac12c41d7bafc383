import { verify, type KeyObject } from 'node:crypto'
import { ApiError, unauthorized } from '../lib/errors'
import { sshKeyObject, storedKeyBlob } from './ssh-signature'

/**
 * HTTP signatures made with a user's SSH key (draft-cavage-http-signatures, as Gitea's `httpsign`
 * reads them since 1.17; the Go SDK's `UseSSHPubkey`, so `tea login add --ssh-agent-key`): the
 * `Signature` header names the key by its fingerprint (`keyId="SHA256:..."`), lists the signed
 * parts (`headers="(request-target) (created) (expires) digest"`) and carries the signature of
 * those parts, one `name: value` line each. The Go SDK signs ed25519 keys with ed25519 and RSA
 * keys with rsa-sha2-256 when the server reports 1.23 or later (as Warren does), with SHA-1 before
 * (and always, in the SDK versions before that gate: older tea releases); Gitea 1.23 verifies an RSA
 * signature made with SHA-1, SHA-256 or SHA-512, and so does Warren.
 *
 * What Gitea leaves unchecked, Warren refuses: a signature must cover the request line and its
 * time (`(created)` or `(expires)`), live at most MAX_LIFETIME seconds, and cover the `Digest` of a
 * body (which the body parser checks against the bytes it reads: `edge/body-parser.ts`; a release
 * asset's upload, streamed to disk, checks it as it streams), where Gitea leaves every Digest
 * unchecked.
 * SSH certificates (`X-Ssh-Certificate`) would need a trusted certificate authority, which Warren
 * has no setting for: they are refused with that reason.
 */

/** The parts of a `Signature` header Warren reads. */
export interface SignatureParams {
  keyId: string
  signature: Buffer
  /** The signed parts, lower-cased, in order. */
  headers: string[]
  created?: number
  expires?: number
}

/** Longest `Signature` header read (an RSA-4096 signature and a long header list fit many times). */
const MAX_HEADER = 8192
/** Clock difference allowed between client and server, in seconds (go-fed's verifier allows 10). */
const CLOCK_SKEW = 10
/** Longest a signature is accepted for after it was made, in seconds (the Go SDK's last 10). */
const MAX_LIFETIME = 300

const PARAM = /\s*([A-Za-z]+)=(?:"([^"]*)"|(\d{1,15}))\s*(?:,|$)/y

/** Reads a `Signature` header's parameters; 401 with the reason when malformed. */
export function parseSignatureHeader(value: string): SignatureParams {
  if (value.length > MAX_HEADER) throw unauthorized('HTTP signature header too long')
  const found = new Map<string, string>()
  PARAM.lastIndex = 0
  while (PARAM.lastIndex < value.length) {
    const start = PARAM.lastIndex
    const m = PARAM.exec(value)
    if (!m || PARAM.lastIndex === start) throw unauthorized('malformed HTTP signature header')
    found.set(m[1]!, m[2] ?? m[3]!)
  }
  const keyId = found.get('keyId')
  const signature = found.get('signature')
  if (!keyId) throw unauthorized('HTTP signature without keyId')
  if (!signature || !/^[A-Za-z0-9+/]+={0,2}$/.test(signature)) throw unauthorized('HTTP signature without a base64 signature')
  const number = (name: string) => {
    const v = found.get(name)
    return v === undefined || !/^\d{1,15}$/.test(v) ? undefined : Number(v)
  }
  const headers = (found.get('headers') ?? 'date').toLowerCase().split(' ').filter(Boolean)
  return { keyId, signature: Buffer.from(signature, 'base64'), headers, created: number('created'), expires: number('expires') }
}

/**
 * What was signed: one `name: value` line per signed part. `(request-target)` is the method and
 * the path, percent-decoded as Go's `URL.Path`, with the raw query.
 */
export function signingString(request: Request, params: SignatureParams, now: number): string {
  const signed = new Set(params.headers)
  if (!signed.has('(request-target)')) throw unauthorized('HTTP signature must cover (request-target)')
  if (!signed.has('(created)') && !signed.has('(expires)')) throw unauthorized('HTTP signature must cover (created) or (expires)')
  const { created, expires } = params
  if (signed.has('(created)') && created === undefined) throw unauthorized('HTTP signature covers (created) without its value')
  if (signed.has('(expires)') && expires === undefined) throw unauthorized('HTTP signature covers (expires) without its value')
  if (created !== undefined && (created > now + CLOCK_SKEW || created < now - MAX_LIFETIME - CLOCK_SKEW))
    throw unauthorized('HTTP signature created outside the accepted time')
  if (expires !== undefined && (expires < now - CLOCK_SKEW || expires > now + MAX_LIFETIME + CLOCK_SKEW))
    throw unauthorized('HTTP signature expired or valid for too long')
  if (hasBody(request) && !signed.has('digest')) throw unauthorized('HTTP signature of a request with a body must cover its Digest')
  const url = request.url
  const pathStart = url.indexOf('/', url.indexOf('//') + 2)
  const target = pathStart < 0 ? '/' : url.slice(pathStart)
  const q = target.indexOf('?')
  const rawPath = q < 0 ? target : target.slice(0, q)
  let path = rawPath
  try {
    path = decodeURIComponent(rawPath)
  } catch {}
  const lines = params.headers.map((name) => {
    if (name === '(request-target)') return `(request-target): ${request.method.toLowerCase()} ${path}${q < 0 ? '' : target.slice(q)}`
    if (name === '(created)') return `(created): ${created}`
    if (name === '(expires)') return `(expires): ${expires}`
    const value = request.headers.get(name)
    if (value === null) throw unauthorized(`HTTP signature covers the missing header ${name}`)
    return `${name}: ${value.trim()}`
  })
  return lines.join('\n')
}

const hasBody = (request: Request) =>
  request.headers.has('transfer-encoding') || Number(request.headers.get('content-length') ?? '0') > 0

/** The key of a stored SSH public key line (`type base64 [comment]`) and the hashes its signatures may use. */
function verifierOf(content: string): { key: KeyObject; hashes: (string | null)[] } {
  const found = sshKeyObject(storedKeyBlob(content))
  if (found?.type === 'ssh-ed25519') return { key: found.key, hashes: [null] }
  if (found?.type === 'ssh-rsa') return { key: found.key, hashes: RSA_HASHES }
  const type = found?.type ?? (/^\S+/.exec(content.trim())?.[0] ?? 'unknown')
  throw unauthorized(`HTTP signatures are verified for ed25519 and RSA keys, not ${type}`)
}

/** Whether `signature` is the key's signature of `data` (see the algorithms above). */
export function verifiesWith(keyContent: string, data: string, signature: Buffer): boolean {
  let found: ReturnType<typeof verifierOf>
  try {
    found = verifierOf(keyContent)
  } catch (e) {
    if (e instanceof ApiError) throw e
    return false
  }
  const { key, hashes } = found
  const bytes = Buffer.from(data)
  return hashes.some((hash) => {
    try {
      return verify(hash, bytes, key, signature)
    } catch {
      return false
    }
  })
}

/** What an RSA signature's hash may be, as Gitea 1.23 tries them (PKCS #1 v1.5 names its hash, so at most one verifies). */
const RSA_HASHES = ['sha256', 'sha512', 'sha1']
