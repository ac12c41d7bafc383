import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { join } from 'node:path'
import { utils } from 'ssh2'

/**
 * The SSH server's host key: an Ed25519 key made on first start and kept in the data folder
 * (`{data}/ssh/warren.ed25519`, mode 0600, with `.pub` beside it), so clients that trusted it
 * keep trusting it across restarts. Made with node:crypto and written in OpenSSH's own private
 * key format (what ssh-keygen writes, unencrypted), so no ssh-keygen is needed at run time.
 */
export interface HostKey {
  /** The private key file's text (OpenSSH format), as the SSH library takes it. */
  privateKey: string
  /** `ssh-ed25519 AAAA… warren`: what goes in a client's known_hosts. */
  publicKey: string
  path: string
}

const HOST_KEY_FILE = 'warren.ed25519'

/** An SSH wire `string`: its length (uint32, big-endian), then its bytes. */
function sshString(value: Uint8Array | string): Buffer {
  const bytes = Buffer.from(value)
  const length = Buffer.alloc(4)
  length.writeUInt32BE(bytes.length)
  return Buffer.concat([length, bytes])
}

const uint32 = (n: number) => {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n >>> 0)
  return b
}

/** A new Ed25519 key pair as OpenSSH writes it (`-----BEGIN OPENSSH PRIVATE KEY-----`) and its public line. */
export function newEd25519HostKey(comment = 'warren'): { privateKey: string; publicKey: string } {
  const { privateKey } = generateKeyPairSync('ed25519')
  const jwk = privateKey.export({ format: 'jwk' })
  const seed = Buffer.from(jwk.d!, 'base64url')
  const pub = Buffer.from(jwk.x!, 'base64url')
  const publicBlob = Buffer.concat([sshString('ssh-ed25519'), sshString(pub)])
  const check = randomBytes(4)
  let secret = Buffer.concat([check, check, sshString('ssh-ed25519'), sshString(pub), sshString(Buffer.concat([seed, pub])), sshString(comment)])
  // Padded with 1, 2, 3 … to the cipher's block size (8 for "none").
  const padding = Buffer.from(Array.from({ length: (8 - (secret.length % 8)) % 8 }, (_, i) => i + 1))
  secret = Buffer.concat([secret, padding])
  const body = Buffer.concat([
    Buffer.from('openssh-key-v1\0', 'latin1'),
    sshString('none'),
    sshString('none'),
    sshString(''),
    uint32(1),
    sshString(publicBlob),
    sshString(secret),
  ])
  const lines = body.toString('base64').match(/.{1,70}/g)!
  return {
    privateKey: `-----BEGIN OPENSSH PRIVATE KEY-----\n${lines.join('\n')}\n-----END OPENSSH PRIVATE KEY-----\n`,
    publicKey: `ssh-ed25519 ${publicBlob.toString('base64')} ${comment}`,
  }
}

/** The host key in `{dataDir}/ssh/`, made (and written atomically, private to this user) when missing. */
export function loadOrCreateHostKey(dataDir: string): HostKey {
  const dir = join(dataDir, 'ssh')
  const path = join(dir, HOST_KEY_FILE)
  if (!existsSync(path)) {
    mkdirSync(dir, { recursive: true, mode: 0o700 })
    const made = newEd25519HostKey()
    const temp = `${path}.${process.pid}.tmp`
    writeFileSync(temp, made.privateKey, { mode: 0o600 })
    writeFileSync(`${path}.pub`, made.publicKey + '\n', { mode: 0o644 })
    renameSync(temp, path)
  }
  const privateKey = readFileSync(path, 'utf8')
  // The public half from the private key itself (the .pub file is for people).
  const parsed = utils.parseKey(privateKey)
  if (parsed instanceof Error) throw new Error(`the SSH host key ${path} cannot be read: ${parsed.message}`)
  const key = Array.isArray(parsed) ? parsed[0]! : parsed
  return { privateKey, publicKey: `${key.type} ${key.getPublicSSH().toString('base64')}`, path }
}
