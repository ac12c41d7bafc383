import * as openpgp from 'openpgp'
import { unprocessable } from '../lib/errors'

/** What Warren stores of one OpenPGP key or subkey. */
export interface ParsedGpgKey {
  keyId: string
  /** base64 of the binary public-key packet (with its packet header). */
  content: string
  canSign: boolean
  canEncryptComms: boolean
  canEncryptStorage: boolean
  canCertify: boolean
  createdUnix: number
  /** 0 = never expires. */
  expiredUnix: number
}

export interface ParsedGpgPrimaryKey extends ParsedGpgKey {
  /** E-mail addresses of the key's identities, lower-cased, in key order. */
  identityEmails: string[]
  subkeys: ParsedGpgKey[]
}

const FLAG_CERTIFY = 0x01
const FLAG_SIGN = 0x02
const FLAG_ENCRYPT_COMMS = 0x04
const FLAG_ENCRYPT_STORAGE = 0x08

type KeyPacket = openpgp.PublicKeyPacket | openpgp.PublicSubkeyPacket

/** Capabilities from the key-flags subpacket, else from what the algorithm can do. */
function capabilities(packet: KeyPacket, flags: Uint8Array | null | undefined, primary: boolean) {
  if (flags && flags.length > 0) {
    const f = flags[0]!
    return {
      canSign: (f & FLAG_SIGN) !== 0,
      canEncryptComms: (f & FLAG_ENCRYPT_COMMS) !== 0,
      canEncryptStorage: (f & FLAG_ENCRYPT_STORAGE) !== 0,
      canCertify: (f & FLAG_CERTIFY) !== 0,
    }
  }
  const algo = packet.algorithm
  const a = openpgp.enums.publicKey
  const signs = [a.rsaEncryptSign, a.rsaSign, a.dsa, a.ecdsa, a.eddsaLegacy, a.ed25519, a.ed448].includes(algo)
  const encrypts = [a.rsaEncryptSign, a.rsaEncrypt, a.elgamal, a.ecdh, a.x25519, a.x448].includes(algo)
  return { canSign: signs, canEncryptComms: encrypts, canEncryptStorage: encrypts, canCertify: signs && primary }
}

/** The newest of a list of signatures (by creation time). */
function newest(signatures: openpgp.SignaturePacket[]): openpgp.SignaturePacket | undefined {
  return [...signatures].sort((a, b) => (a.created?.getTime() ?? 0) - (b.created?.getTime() ?? 0)).at(-1)
}

const packetBase64 = (packet: KeyPacket): string => {
  const list = new openpgp.PacketList<KeyPacket>()
  list.push(packet)
  return Buffer.from(list.write() as Uint8Array).toString('base64')
}

const unixOf = (d: Date) => Math.floor(d.getTime() / 1000)

async function expiryOf(read: () => Promise<Date | number | null>): Promise<number> {
  try {
    const when = await read()
    return when instanceof Date ? unixOf(when) : 0
  } catch {
    return 0
  }
}

/**
 * Reads an ASCII-armored OpenPGP public key. 422 when the text is not exactly one public key.
 */
export async function parseArmoredGpgKey(armored: string): Promise<ParsedGpgPrimaryKey> {
  let key: openpgp.Key
  try {
    key = await openpgp.readKey({ armoredKey: armored })
  } catch (e) {
    throw unprocessable(`Key parsing failure: ${(e as Error).message}`, 'ArmoredKey')
  }
  if (key.isPrivate()) throw unprocessable('Key parsing failure: this is a private key; send the public key', 'ArmoredKey')
  const primaryPacket = key.keyPacket as openpgp.PublicKeyPacket
  const selfCerts = key.users.flatMap((u) => u.selfCertifications)
  const primaryFlags = newest(selfCerts)?.keyFlags
  const identityEmails = key.users
    .map((u) => u.userID?.email?.trim().toLowerCase() ?? '')
    .filter((email, i, all) => email !== '' && all.indexOf(email) === i)
  const subkeys: ParsedGpgKey[] = []
  for (const sub of key.subkeys) {
    const packet = sub.keyPacket as openpgp.PublicSubkeyPacket
    subkeys.push({
      keyId: sub.getKeyID().toHex().toUpperCase(),
      content: packetBase64(packet),
      ...capabilities(packet, newest(sub.bindingSignatures)?.keyFlags, false),
      createdUnix: unixOf(sub.getCreationTime()),
      expiredUnix: await expiryOf(() => sub.getExpirationTime()),
    })
  }
  return {
    keyId: key.getKeyID().toHex().toUpperCase(),
    content: packetBase64(primaryPacket),
    ...capabilities(primaryPacket, primaryFlags, true),
    createdUnix: unixOf(key.getCreationTime()),
    expiredUnix: await expiryOf(() => key.getExpirationTime()),
    identityEmails,
    subkeys,
  }
}

/** How many signature packets of one armored signature are tried at most. */
const MAX_SIGNATURE_PACKETS = 4

/** A stored key row's packet, read back: undefined when it is not a public key (sub)packet. */
async function storedKeyPacket(content: string): Promise<KeyPacket | undefined> {
  const allowed = { [openpgp.enums.packet.publicKey]: openpgp.PublicKeyPacket, [openpgp.enums.packet.publicSubkey]: openpgp.PublicSubkeyPacket }
  try {
    const list = await openpgp.PacketList.fromBinary(Buffer.from(content, 'base64'), allowed as never)
    return list[0] as KeyPacket | undefined
  } catch {
    return undefined
  }
}

/**
 * Which of `keys` (stored rows: key id and base64 key packet) made the armored detached
 * signature over one of `texts`: its key id, or undefined when none did (or the signature
 * does not parse). Bounded: the caller caps the armor's length, at most
 * MAX_SIGNATURE_PACKETS signature packets are read, and a packet is checked only against the
 * key its issuer id names; a wrong text costs one hash (openpgp compares the digest's first two
 * bytes before any public-key arithmetic), so there is at most one public-key verification
 * per packet.
 */
export async function detachedSigner(
  armoredSignature: string,
  texts: (string | Uint8Array)[],
  keys: { keyId: string; content: string }[],
): Promise<string | undefined> {
  let signature: openpgp.Signature
  try {
    signature = await openpgp.readSignature({ armoredSignature })
  } catch {
    return undefined
  }
  const literals = texts.map((text) => {
    const literal = new openpgp.LiteralDataPacket()
    // setBytes is public in openpgp's code, private only in its typings
    ;(literal as unknown as { setBytes(bytes: Uint8Array, format: openpgp.enums.literal): void }).setBytes(
      typeof text === 'string' ? new TextEncoder().encode(text) : text,
      openpgp.enums.literal.binary,
    )
    return literal
  })
  for (const packet of signature.packets.slice(0, MAX_SIGNATURE_PACKETS)) {
    const issuer = packet.issuerKeyID.toHex().toUpperCase()
    const row = keys.find((k) => k.keyId === issuer)
    const keyPacket = row && (await storedKeyPacket(row.content))
    if (!row || !keyPacket || packet.signatureType === null) continue
    for (const literal of literals) {
      try {
        await packet.verify(keyPacket, packet.signatureType, literal)
        return row.keyId
      } catch {
        // not this text (or not a valid signature at all): try the next
      }
    }
  }
  return undefined
}
