import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { nowUnix } from './time'

/**
 * Secrets Warren must give back later (a mirror's remote password), sealed with AES-256-GCM under
 * a key kept in a file of its own beside the database (`{data}/secret.key`, mode 0600), so a copy
 * of the database alone does not reveal them. The key is made on first use.
 */
const keys = new Map<string, Buffer>()

function keyOf(dataDir: string): Buffer {
  const cached = keys.get(dataDir)
  if (cached) return cached
  const file = join(dataDir, 'secret.key')
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true })
    try {
      writeFileSync(file, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' })
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
    }
  }
  chmodSync(file, 0o600)
  const key = Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')
  if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte key`)
  keys.set(dataDir, key)
  return key
}

/** `v1.<iv>.<tag>.<ciphertext>`, base64 parts. */
export function sealSecret(dataDir: string, plain: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', keyOf(dataDir), iv)
  const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
  return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.')
}

/** The plain text of a sealed secret; throws when it was not sealed with this data folder's key. */
export function openSecret(dataDir: string, sealed: string): string {
  const [version, iv, tag, body] = sealed.split('.')
  if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('not a sealed secret')
  const decipher = createDecipheriv('aes-256-gcm', keyOf(dataDir), Buffer.from(iv, 'base64'))
  decipher.setAuthTag(Buffer.from(tag, 'base64'))
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8')
}

/**
 * A short-lived state a client keeps for the server (a sign-in waiting for its second factor, a
 * TOTP secret being enrolled): `value` sealed with its `kind` and an expiry, so the client can
 * neither read nor forge it, nor use one kind as another. Answers the sealed text.
 */
export function sealTicket(dataDir: string, kind: string, value: unknown, lifetimeSeconds: number): string {
  return sealSecret(dataDir, JSON.stringify({ k: kind, e: nowUnix() + lifetimeSeconds, v: value })).replace(/\+/g, '-').replace(/\//g, '_')
}

/** The value of a ticket of `kind` sealed here and not yet expired; undefined for anything else. */
export function openTicket(dataDir: string, kind: string, sealed: string | undefined): unknown {
  if (!sealed || sealed.length > 4096) return undefined
  try {
    const ticket = JSON.parse(openSecret(dataDir, sealed.replace(/-/g, '+').replace(/_/g, '/'))) as { k?: unknown; e?: unknown; v?: unknown }
    return ticket.k === kind && typeof ticket.e === 'number' && ticket.e > nowUnix() ? ticket.v : undefined
  } catch {
    return undefined
  }
}
