import { createHash } from 'node:crypto'
import { unprocessable } from '../../lib/errors'
import { WireReader } from '../../lib/ssh-wire'

/** A parsed OpenSSH public key. */
export interface SshPublicKey {
  /** The algorithm named inside the blob, e.g. `ssh-ed25519`. */
  type: string
  /** The key blob (wire format). */
  blob: Buffer
  comment: string
  /** `type base64 [comment]`, the line Warren stores and answers (modern Gitea keeps the comment). */
  normalized: string
  /** `SHA256:<base64 without padding>` as `ssh-keygen -lf` prints it. */
  fingerprint: string
}

const EC_POINT_BYTES: Record<string, number> = { nistp256: 65, nistp384: 97, nistp521: 133 }

/** Checks the fields of the blob for its algorithm; throws a plain Error on anything malformed. */
function checkBlob(type: string, blob: Buffer): void {
  const r = new WireReader(blob)
  const inner = r.text()
  if (inner !== type) throw new Error(`key type "${type}" does not match the key data ("${inner}")`)
  const ecPoint = () => {
    const curve = r.text()
    if (`nistp${type.match(/nistp(\d+)/)![1]}` !== curve) throw new Error('curve does not match the key type')
    const q = r.string()
    if (q.length !== EC_POINT_BYTES[curve] || q[0] !== 4) throw new Error('invalid elliptic-curve point')
  }
  switch (type) {
    case 'ssh-rsa': {
      r.mpint() // e
      const n = r.mpint()
      if ((n.length - (n[0] === 0 ? 1 : 0)) * 8 < 1024) throw new Error('RSA key is too short')
      break
    }
    case 'ssh-dss':
      for (let i = 0; i < 4; i++) r.mpint()
      break
    case 'ecdsa-sha2-nistp256':
    case 'ecdsa-sha2-nistp384':
    case 'ecdsa-sha2-nistp521':
      ecPoint()
      break
    case 'sk-ecdsa-sha2-nistp256@openssh.com':
      ecPoint()
      r.text() // application
      break
    case 'ssh-ed25519':
      if (r.string().length !== 32) throw new Error('invalid ed25519 key length')
      break
    case 'sk-ssh-ed25519@openssh.com':
      if (r.string().length !== 32) throw new Error('invalid ed25519 key length')
      r.text() // application
      break
    default:
      throw new Error(`unsupported key type "${type}"`)
  }
  r.end()
}

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/

/** RFC 4716 (`---- BEGIN SSH2 PUBLIC KEY ----`) → [base64, comment]. */
function fromRfc4716(text: string): [string, string] {
  const lines = text.split(/\r?\n/).map((l) => l.trim())
  let comment = ''
  const body: string[] = []
  let continued = false
  for (const line of lines) {
    if (line.startsWith('----') || line === '') continue
    if (continued || /^[A-Za-z-]+:/.test(line)) {
      const header = /^Comment:\s*"?(.*?)"?\\?$/i.exec(line)
      if (header && !continued) comment = header[1]!
      continued = line.endsWith('\\')
      continue
    }
    body.push(line)
  }
  return [body.join(''), comment]
}

/** `SHA256:<base64, unpadded>` of a key's wire form, as ssh-keygen -l prints it (and the SSH server matches keys by). */
export const sshKeyFingerprint = (blob: Uint8Array): string => 'SHA256:' + createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')

/**
 * Parses an SSH public key as a user pastes it: `type base64 [comment]` (OpenSSH), a bare
 * base64 blob, or the RFC 4716 form. 422 "Invalid key content: ..." on anything else.
 */
export function parseSshPublicKey(input: string): SshPublicKey {
  const text = input.trim()
  let typeWord = ''
  let data: string
  let comment = ''
  if (text.includes('BEGIN SSH2 PUBLIC KEY')) {
    ;[data, comment] = fromRfc4716(text)
  } else {
    const parts = text.replace(/\r?\n/g, '').trim().split(/[ \t]+/)
    if (parts.length === 1) data = parts[0]!
    else {
      typeWord = parts[0]!
      data = parts[1]!
      comment = parts.slice(2).join(' ')
    }
  }
  try {
    if (!data || !BASE64.test(data)) throw new Error('the key data is not base64')
    const blob = Buffer.from(data, 'base64')
    if (blob.length < 4) throw new Error('truncated key blob')
    const type = blob.subarray(4, 4 + blob.readUInt32BE(0)).toString('latin1')
    if (typeWord && typeWord !== type) throw new Error(`key type "${typeWord}" does not match the key data ("${type}")`)
    checkBlob(type, blob)
    const base64 = blob.toString('base64')
    const fingerprint = sshKeyFingerprint(blob)
    comment = comment.replace(/[\r\n]/g, '').trim()
    return { type, blob, comment, normalized: comment ? `${type} ${base64} ${comment}` : `${type} ${base64}`, fingerprint }
  } catch (e) {
    throw unprocessable(`Invalid key content: ${(e as Error).message}`)
  }
}
