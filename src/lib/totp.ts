import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'

/**
 * Time-based one-time passwords (RFC 6238, as authenticator apps and Gitea's pquerna/otp make
 * them): HMAC-SHA1 of the 30-second step counter, 6 digits, a code accepted one step either side
 * of now. Secrets are 160 random bits, given to the user in base32 (RFC 4648, no padding).
 */

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'
const STEP_SECONDS = 30
const DIGITS = 6
/** Steps accepted either side of the current one (clock drift, a code typed as it changes). */
const WINDOW = 1

export function base32Encode(bytes: Uint8Array): string {
  let out = ''
  let bits = 0
  let value = 0
  for (const byte of bytes) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31]
  return out
}

/** The bytes of a base32 text (case, spaces and padding ignored); undefined when it is not base32. */
export function base32Decode(text: string): Buffer | undefined {
  const clean = text.replace(/[\s=]/g, '').toUpperCase()
  const out: number[] = []
  let bits = 0
  let value = 0
  for (const ch of clean) {
    const index = ALPHABET.indexOf(ch)
    if (index < 0) return undefined
    value = ((value << 5) | index) & 0xffff
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff)
      bits -= 8
    }
  }
  return Buffer.from(out)
}

/** A new TOTP secret: 160 random bits, in base32 (32 characters). */
export const newTotpSecret = (): string => base32Encode(randomBytes(20))

/** The code of `secret` (base32) at step `counter`. */
export function totpAt(secret: string, counter: number): string {
  const key = base32Decode(secret)
  if (!key) throw new Error('not a base32 secret')
  const message = Buffer.alloc(8)
  message.writeBigUInt64BE(BigInt(counter))
  const mac = createHmac('sha1', key).update(message).digest()
  const offset = mac[mac.length - 1]! & 0xf
  const binary = mac.readUInt32BE(offset) & 0x7fffffff
  return String(binary % 10 ** DIGITS).padStart(DIGITS, '0')
}

/** The step counter of a time (seconds since the epoch). */
export const totpStep = (unixSeconds: number): number => Math.floor(unixSeconds / STEP_SECONDS)

/** Whether `passcode` is the code of `secret` (base32) within one step of `unixSeconds`. */
export function totpMatches(secret: string, passcode: string, unixSeconds: number): boolean {
  if (!/^[0-9]{6}$/.test(passcode)) return false
  const given = Buffer.from(passcode)
  const now = totpStep(unixSeconds)
  let ok = false
  for (let step = now - WINDOW; step <= now + WINDOW; step++) ok = timingSafeEqual(given, Buffer.from(totpAt(secret, step))) || ok
  return ok
}

/** The `otpauth://` URI authenticator apps read (as a QR code or typed): `otpauth://totp/{issuer}:{account}?secret=…&issuer=…`. */
export function otpauthUri(issuer: string, account: string, secret: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`
  const query = new URLSearchParams({ secret, issuer, algorithm: 'SHA1', digits: String(DIGITS), period: String(STEP_SECONDS) })
  return `otpauth://totp/${label}?${query.toString().replace(/\+/g, '%20')}`
}
