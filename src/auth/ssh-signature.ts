import { createHash, createPublicKey, verify, type KeyObject } from 'node:crypto'
import { WireReader } from '../lib/ssh-wire'

/**
 * SSH keys as signers: a stored key's public key object (HTTP signatures, auth/http-signature.ts),
 * and OpenSSH's signature format (PROTOCOL.sshsig, what `ssh-keygen -Y sign` makes and git writes
 * with `gpg.format=ssh`): a commit's signature (namespace `git`) and the signed verification token
 * by which a user shows they hold a key (namespace `gitea`, Gitea's VerifySSHKey).
 */

const CURVES: Record<string, { crv: string; bytes: number; hash: string }> = {
  nistp256: { crv: 'P-256', bytes: 32, hash: 'sha256' },
  nistp384: { crv: 'P-384', bytes: 48, hash: 'sha384' },
  nistp521: { crv: 'P-521', bytes: 66, hash: 'sha512' },
}

/** An unsigned big-endian integer without its leading zeros, base64url (JWK's form). */
const jwkInteger = (b: Buffer) => {
  let i = 0
  while (i < b.length - 1 && b[i] === 0) i++
  return b.subarray(i).toString('base64url')
}

/** The public key of an SSH key blob (wire format): ed25519, RSA or ECDSA; null for another type or a malformed blob. */
export function sshKeyObject(blob: Buffer): { type: string; key: KeyObject; curve?: (typeof CURVES)[string] } | null {
  try {
    const r = new WireReader(blob)
    const type = r.text()
    if (type === 'ssh-ed25519') return { type, key: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: r.string().toString('base64url') }, format: 'jwk' }) }
    if (type === 'ssh-rsa') {
      const e = r.mpint()
      const n = r.mpint()
      return { type, key: createPublicKey({ key: { kty: 'RSA', n: jwkInteger(n), e: jwkInteger(e) }, format: 'jwk' }) }
    }
    const ec = /^ecdsa-sha2-(nistp\d+)$/.exec(type)
    const curve = ec && CURVES[ec[1]!]
    if (curve && r.text() === ec![1]) {
      const q = r.string()
      if (q.length !== 1 + 2 * curve.bytes || q[0] !== 4) return null
      const x = q.subarray(1, 1 + curve.bytes).toString('base64url')
      const y = q.subarray(1 + curve.bytes).toString('base64url')
      return { type, curve, key: createPublicKey({ key: { kty: 'EC', crv: curve.crv, x, y }, format: 'jwk' }) }
    }
    return null
  } catch {
    return null
  }
}

/** The longest armored SSH signature read (bytes): an RSA-8192 signature's armor is under 3 KiB. */
const MAX_ARMOR = 16 * 1024
const BEGIN = '-----BEGIN SSH SIGNATURE-----'
const END = '-----END SSH SIGNATURE-----'

/** An SSH signature's fields (PROTOCOL.sshsig). */
export interface SshSignature {
  /** The signer's public key blob. */
  publicKey: Buffer
  namespace: string
  reserved: Buffer
  hash: 'sha256' | 'sha512'
  /** The inner signature's algorithm (`ssh-ed25519`, `rsa-sha2-512`, `ecdsa-sha2-nistp256`, ...) and bytes. */
  algorithm: string
  bytes: Buffer
}

/** Parses an armored SSH signature; null when it is not one (or is too long, or of another version). */
export function parseSshSignature(armored: string): SshSignature | null {
  if (armored.length > MAX_ARMOR) return null
  const text = armored.trim()
  if (!text.startsWith(BEGIN) || !text.endsWith(END)) return null
  try {
    const blob = Buffer.from(text.slice(BEGIN.length, -END.length).replace(/\s+/g, ''), 'base64')
    if (blob.subarray(0, 6).toString('latin1') !== 'SSHSIG' || blob.length < 10 || blob.readUInt32BE(6) !== 1) return null
    const r = new WireReader(blob.subarray(10))
    const publicKey = r.string()
    const namespace = r.text()
    const reserved = r.string()
    const hash = r.text()
    const inner = new WireReader(r.string())
    r.end()
    if (hash !== 'sha256' && hash !== 'sha512') return null
    const algorithm = inner.text()
    const bytes = inner.string()
    return { publicKey, namespace, reserved, hash, algorithm, bytes }
  } catch {
    return null
  }
}

const wireString = (b: Uint8Array) => {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(b.length)
  return Buffer.concat([length, b])
}

/** An ECDSA signature's (mpint r, mpint s) as IEEE P1363 (each padded to the curve's size); null when malformed. */
function p1363Of(bytes: Buffer, size: number): Buffer | null {
  try {
    const r = new WireReader(bytes)
    const parts = [r.mpint(), r.mpint()].map((n) => {
      let i = 0
      while (i < n.length - 1 && n[i] === 0) i++
      return n.subarray(i)
    })
    r.end()
    if (parts.some((n) => n.length > size)) return null
    return Buffer.concat(parts.map((n) => Buffer.concat([Buffer.alloc(size - n.length), n])))
  } catch {
    return null
  }
}

/**
 * Whether `signature` is a valid signature of `message` in `namespace` by the key of `keyBlob`
 * (its own public key must be that key): ed25519, RSA with SHA-256 or SHA-512, ECDSA. Linear in
 * the message (one hash), one public-key verification.
 */
export function sshSignatureVerifies(signature: SshSignature, message: Uint8Array, namespace: string, keyBlob: Buffer): boolean {
  if (signature.namespace !== namespace || !signature.publicKey.equals(keyBlob)) return false
  const found = sshKeyObject(keyBlob)
  if (!found) return false
  const signed = Buffer.concat([
    Buffer.from('SSHSIG'),
    wireString(Buffer.from(signature.namespace)),
    wireString(signature.reserved),
    wireString(Buffer.from(signature.hash)),
    wireString(createHash(signature.hash).update(message).digest()),
  ])
  try {
    if (found.type === 'ssh-ed25519') return signature.algorithm === 'ssh-ed25519' && verify(null, signed, found.key, signature.bytes)
    if (found.type === 'ssh-rsa') {
      const hash = signature.algorithm === 'rsa-sha2-256' ? 'sha256' : signature.algorithm === 'rsa-sha2-512' ? 'sha512' : null
      return hash !== null && verify(hash, signed, found.key, signature.bytes)
    }
    if (found.curve && signature.algorithm === found.type) {
      const p1363 = p1363Of(signature.bytes, found.curve.bytes)
      return p1363 !== null && verify(found.curve.hash, signed, { key: found.key, dsaEncoding: 'ieee-p1363' }, p1363)
    }
  } catch {
    return false
  }
  return false
}

/** The blob of a stored key line (`type base64 [comment]`). */
export const storedKeyBlob = (content: string): Buffer => Buffer.from(content.trim().split(/\s+/)[1] ?? '', 'base64')
