import { badRequest, unprocessable } from '../../lib/errors'

/** Largest avatar accepted, in bytes (Gitea's setting.Avatar.MaxFileSize, 1 MiB). */
export const AVATAR_MAX_BYTES = 1024 * 1024
/** Largest width and height accepted (Gitea's setting.Avatar.MaxWidth / MaxHeight). */
export const AVATAR_MAX_DIMENSION = 4096
/** Longest `image` text read at all: the base64 of a little more than the largest avatar (its refusal names the size). */
export const AVATAR_MAX_BASE64 = 2 * 4 * Math.ceil(AVATAR_MAX_BYTES / 3)

export type AvatarType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp'

export interface AvatarImage {
  bytes: Uint8Array
  type: AvatarType
  width: number
  height: number
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/**
 * The bytes of an `image` option: standard base64 with its padding, as Go's
 * base64.StdEncoding reads it (line breaks skipped); anything else is 400, as in Gitea.
 */
export function decodeBase64Image(text: string): Uint8Array {
  const compact = text.replace(/[\r\n]/g, '')
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) throw badRequest('the image is not valid base64')
  return Buffer.from(compact, 'base64')
}

const be16 = (b: Uint8Array, i: number) => (b[i]! << 8) | b[i + 1]!
const le16 = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8)
const le24 = (b: Uint8Array, i: number) => b[i]! | (b[i + 1]! << 8) | (b[i + 2]! << 16)
const be32 = (b: Uint8Array, i: number) => ((b[i]! << 24) >>> 0) + ((b[i + 1]! << 16) | (b[i + 2]! << 8) | b[i + 3]!)
const ascii = (b: Uint8Array, i: number, text: string) => {
  if (b.length < i + text.length) return false
  for (let k = 0; k < text.length; k++) if (b[i + k] !== text.charCodeAt(k)) return false
  return true
}

/** The type a file's first bytes say (PNG, JPEG, GIF, WebP), or undefined. */
export function avatarTypeOf(b: Uint8Array): AvatarType | undefined {
  if (ascii(b, 0, '\x89PNG\r\n\x1a\n')) return 'image/png'
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return 'image/jpeg'
  if (ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a')) return 'image/gif'
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WEBP')) return 'image/webp'
  return undefined
}

/** Width and height of a JPEG: the first start-of-frame marker's, found segment by segment (linear in the bytes). */
function jpegSize(b: Uint8Array): [number, number] | undefined {
  let i = 2
  while (i + 4 <= b.length) {
    if (b[i] !== 0xff) return undefined
    const marker = b[i + 1]!
    // Fill bytes, and markers without a length (RSTn, TEM).
    if (marker === 0xff) {
      i++
      continue
    }
    if ((marker >= 0xd0 && marker <= 0xd7) || marker === 0x01) {
      i += 2
      continue
    }
    const length = be16(b, i + 2)
    if (length < 2) return undefined
    // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      if (i + 9 > b.length) return undefined
      return [be16(b, i + 7), be16(b, i + 5)]
    }
    // The image data begins: no frame header came first.
    if (marker === 0xda || marker === 0xd9) return undefined
    i += 2 + length
  }
  return undefined
}

/** Width and height of a WebP: from its first chunk (VP8, VP8L or VP8X). */
function webpSize(b: Uint8Array): [number, number] | undefined {
  if (ascii(b, 12, 'VP8 ') && b.length >= 30 && b[23] === 0x9d && b[24] === 0x01 && b[25] === 0x2a)
    return [le16(b, 26) & 0x3fff, le16(b, 28) & 0x3fff]
  if (ascii(b, 12, 'VP8L') && b.length >= 25 && b[20] === 0x2f) {
    const bits = (b[21]! | (b[22]! << 8) | (b[23]! << 16) | (b[24]! << 24)) >>> 0
    return [(bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1]
  }
  if (ascii(b, 12, 'VP8X') && b.length >= 30) return [le24(b, 24) + 1, le24(b, 27) + 1]
  return undefined
}

/** Width and height as the image's header says, or undefined when the header is cut or wrong. */
function sizeOf(b: Uint8Array, type: AvatarType): [number, number] | undefined {
  switch (type) {
    case 'image/png':
      return b.length >= 24 && ascii(b, 12, 'IHDR') ? [be32(b, 16), be32(b, 20)] : undefined
    case 'image/gif':
      return b.length >= 10 ? [le16(b, 6), le16(b, 8)] : undefined
    case 'image/jpeg':
      return jpegSize(b)
    case 'image/webp':
      return webpSize(b)
  }
}

/**
 * Checks an uploaded avatar as Gitea's avatar.ProcessAvatarImage does before it decodes one: at
 * most AVATAR_MAX_BYTES, a PNG, JPEG, GIF or WebP (by its bytes, whatever it claims), with a
 * readable header of at most AVATAR_MAX_DIMENSION pixels each way. Refusals are 422 (Gitea
 * answers its errors here with a 500). Only the header is read: the image is kept as sent.
 */
export function checkAvatarImage(bytes: Uint8Array): AvatarImage {
  if (bytes.byteLength > AVATAR_MAX_BYTES) throw unprocessable(`the image is larger than ${AVATAR_MAX_BYTES} bytes`, 'image')
  const type = avatarTypeOf(bytes)
  if (!type) throw unprocessable('the image is not a PNG, JPEG, GIF or WebP image', 'image')
  const size = sizeOf(bytes, type)
  if (!size || size[0] === 0 || size[1] === 0) throw unprocessable('the image header cannot be read', 'image')
  const [width, height] = size
  if (width > AVATAR_MAX_DIMENSION) throw unprocessable(`image width is too large: ${width} > ${AVATAR_MAX_DIMENSION}`, 'image')
  if (height > AVATAR_MAX_DIMENSION) throw unprocessable(`image height is too large: ${height} > ${AVATAR_MAX_DIMENSION}`, 'image')
  return { bytes, type, width, height }
}
