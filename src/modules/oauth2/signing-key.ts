import { createHash, createPrivateKey, createPublicKey, generateKeyPair, sign, type KeyObject } from 'node:crypto'
import { chmodSync, existsSync, linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'

/**
 * The key that signs id_tokens (RS256, so that every OpenID Connect library verifies them against
 * `/login/oauth/keys`). Made on first start (makeSigningKeyIfMissing) in the data folder (`jwt/private.pem`, mode 0600, as
 * Gitea keeps its `jwt/private.pem`) and read from there afterwards, so every process behind the
 * same data folder signs with the same key and tokens outlive a restart.
 */
export interface SigningKey {
  /** The key's id: its RFC 7638 thumbprint. */
  kid: string
  /** The public half as a JWK (`kty`, `n`, `e`, with `kid`, `alg`, `use`). */
  jwk: Record<string, string>
  /** A signed JWT (header.payload.signature) of these claims. */
  signJwt(claims: Record<string, unknown>): string
}

const keys = new Map<string, Promise<SigningKey>>()

/** The signing key of a data folder (made there if it has none); one load per folder and process. */
export function signingKey(dataDir: string): Promise<SigningKey> {
  let key = keys.get(dataDir)
  if (!key) {
    key = loadOrCreate(dataDir)
    // A failure (a read-only folder) is tried again on the next call rather than remembered.
    key.catch(() => keys.delete(dataDir))
    keys.set(dataDir, key)
  }
  return key
}

/**
 * Makes the data folder's key when it has none, in the background (RSA key generation takes a
 * while: `warren serve` starts it once it listens, so neither its first answer nor a first sign-in
 * waits for it). A key already there is read on its first use (well under a millisecond), so a
 * start loads no RSA code for it.
 */
export function makeSigningKeyIfMissing(dataDir: string): void {
  if (!existsSync(join(dataDir, 'jwt', 'private.pem'))) void signingKey(dataDir).catch(() => {})
}

async function loadOrCreate(dataDir: string): Promise<SigningKey> {
  const folder = join(dataDir, 'jwt')
  const path = join(folder, 'private.pem')
  let pem: string
  try {
    pem = readFileSync(path, 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
    mkdirSync(folder, { recursive: true, mode: 0o700 })
    // Generated off the main thread (RSA key generation takes a while).
    const { privateKey } = await promisify(generateKeyPair)('rsa', { modulusLength: 2048 })
    const made = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string
    // Written whole under a temporary name, then linked into place: a crash leaves no half key,
    // and of two processes starting at once the first link wins and both read the same key.
    const temporary = `${path}.${process.pid}.${Date.now()}.tmp`
    writeFileSync(temporary, made, { mode: 0o600 })
    try {
      linkSync(temporary, path)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
    } finally {
      unlinkSync(temporary)
    }
    pem = readFileSync(path, 'utf8')
  }
  chmodSync(path, 0o600)
  return fromPem(pem)
}

const base64url = (data: Buffer | string) => Buffer.from(data).toString('base64url')

function fromPem(pem: string): SigningKey {
  const privateKey: KeyObject = createPrivateKey(pem)
  const { n, e, kty } = createPublicKey(privateKey).export({ format: 'jwk' }) as { n: string; e: string; kty: string }
  // RFC 7638: the SHA-256 of the required members in lexicographic order, without spaces.
  const kid = base64url(createHash('sha256').update(JSON.stringify({ e, kty, n })).digest())
  const header = base64url(JSON.stringify({ alg: 'RS256', kid, typ: 'JWT' }))
  return {
    kid,
    jwk: { kty, n, e, kid, alg: 'RS256', use: 'sig' },
    signJwt(claims) {
      const input = `${header}.${base64url(JSON.stringify(claims))}`
      // One RSA-2048 signature: bounded work, well under a millisecond's order.
      return `${input}.${base64url(sign('sha256', Buffer.from(input), privateKey))}`
    },
  }
}
