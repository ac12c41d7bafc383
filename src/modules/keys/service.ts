import { and, asc, eq, inArray } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { writeTransaction } from '../../db/client'
import { deployKeys, emailAddresses, gpgKeys, publicKeys, users, type GpgKeyRow, type PublicKeyRow } from '../../db/schema'
import { ApiError, forbidden, notFound, unprocessable } from '../../lib/errors'
import { nowUnix } from '../../lib/time'
import { checkRequiredText, MAX_TITLE } from '../../lib/validate'
import type { EmailEntry } from '../../convert/key'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
import { parseSshPublicKey, type SshPublicKey } from './ssh-key'
import type { ParsedGpgKey } from '../../auth/gpg-key'

/** `type` column of public_keys: a user's key (deploy keys use 2). */
const USER_KEY = 1
const MAX_KEY_TEXT = 16 * 1024
const MAX_ARMORED = 256 * 1024

// ---------------------------------------------------------------------------------------------
// SSH keys

/** One page of a user's SSH keys (optionally only the one with `fingerprint`), oldest first. */
export async function listPublicKeys(deps: AppDeps, ownerId: number, page: Page, fingerprint?: string): Promise<Paged<PublicKeyRow>> {
  const where = and(
    eq(publicKeys.ownerId, ownerId),
    eq(publicKeys.type, USER_KEY),
    fingerprint ? eq(publicKeys.fingerprint, fingerprint) : undefined,
  )
  return await selectPage(deps.db, publicKeys, where, asc(publicKeys.id), page)
}

/** A user's SSH key by id: 404 when unknown or not the user's. */
export async function getOwnPublicKey(deps: AppDeps, ownerId: number, id: number): Promise<PublicKeyRow> {
  const key = (await deps.db
    .select()
    .from(publicKeys)
    .where(and(eq(publicKeys.id, id), eq(publicKeys.type, USER_KEY))))[0]
  if (!key || key.ownerId !== ownerId) throw notFound(`public key does not exist [id: ${id}]`)
  return key
}

/**
 * The title and key of a CreateKeyOption (user keys and deploy keys alike), checked: a title of
 * 1–255 characters, a bounded, parsable OpenSSH public key (422 otherwise).
 */
export function checkSshKeyInput(input: { title: string; key: string }): { title: string; parsed: SshPublicKey } {
  const title = checkRequiredText(input.title.trim(), MAX_TITLE, 'Title')
  if (!input.key.trim()) throw unprocessable('Required', 'Key')
  if (input.key.length > MAX_KEY_TEXT) throw unprocessable('Invalid key content: the key is too long')
  return { title, parsed: parseSshPublicKey(input.key) }
}

/**
 * Adds an SSH key to `ownerId`: 422 for unparsable content, a title the owner already uses,
 * or a key that is already registered (by anyone, as a user key or as a deploy key).
 */
export async function addPublicKey(deps: AppDeps, ownerId: number, input: { title: string; key: string }): Promise<PublicKeyRow> {
  const { title, parsed } = checkSshKeyInput(input)
  return await writeTransaction(deps.db, async () => {
    const sameTitle = (await deps.db
      .select({ id: publicKeys.id })
      .from(publicKeys)
      .where(and(eq(publicKeys.ownerId, ownerId), eq(publicKeys.type, USER_KEY), eq(publicKeys.name, title))))[0]
    if (sameTitle) throw unprocessable('Key title has been used', 'Title')
    const sameKey = (await deps.db.select({ id: publicKeys.id }).from(publicKeys).where(eq(publicKeys.fingerprint, parsed.fingerprint)))[0]
    if (sameKey) throw unprocessable('Key content has been used as non-deploy key', 'Key')
    const deployKey = (await deps.db.select({ id: deployKeys.id }).from(deployKeys).where(eq(deployKeys.fingerprint, parsed.fingerprint)))[0]
    if (deployKey) throw unprocessable('Key content has been used as deploy key', 'Key')
    const now = nowUnix()
    return (await deps.db
      .insert(publicKeys)
      .values({
        ownerId,
        name: title,
        fingerprint: parsed.fingerprint,
        content: parsed.normalized,
        keyType: parsed.type,
        type: USER_KEY,
        createdUnix: now,
        updatedUnix: now,
      })
      .returning())[0]
  })
}

/** Deletes an SSH key of `ownerId`: 404 when unknown, 403 when it belongs to someone else. */
export async function deletePublicKey(deps: AppDeps, ownerId: number, id: number): Promise<void> {
  const key = (await deps.db
    .select({ ownerId: publicKeys.ownerId })
    .from(publicKeys)
    .where(and(eq(publicKeys.id, id), eq(publicKeys.type, USER_KEY))))[0]
  if (!key) throw notFound(`public key does not exist [id: ${id}]`)
  if (key.ownerId !== ownerId) throw forbidden('You do not have access to this key')
  await deps.db.delete(publicKeys).where(eq(publicKeys.id, id))
}

/**
 * How often a key's use is written down at most (its `updated_unix`, Gitea's "last used"
 * time), in seconds: a clone every second must not write every second.
 */
export const KEY_USE_RECORD_INTERVAL = 60

/** For the SSH transport: the user key with this fingerprint and its owner, looked up afresh each time. */
export async function userKeyByFingerprint(deps: AppDeps, fingerprint: string): Promise<{ key: PublicKeyRow; owner: UserRow } | undefined> {
  return (await deps.db
    .select({ key: publicKeys, owner: users })
    .from(publicKeys)
    .innerJoin(users, eq(users.id, publicKeys.ownerId))
    .where(and(eq(publicKeys.fingerprint, fingerprint), eq(publicKeys.type, USER_KEY))))[0]
}

/** Records that a user key was used (its updated time), at most once per KEY_USE_RECORD_INTERVAL. */
export async function recordPublicKeyUse(deps: AppDeps, key: { id: number; updatedUnix: number }): Promise<void> {
  const now = nowUnix()
  if (now - key.updatedUnix < KEY_USE_RECORD_INTERVAL) return
  await deps.db.update(publicKeys).set({ updatedUnix: now }).where(eq(publicKeys.id, key.id))
}

// ---------------------------------------------------------------------------------------------
// GPG keys

/** One page of a user's primary GPG keys, oldest first. */
export async function listGpgKeys(deps: AppDeps, ownerId: number, page: Page): Promise<Paged<GpgKeyRow>> {
  return await selectPage(deps.db, gpgKeys, and(eq(gpgKeys.ownerId, ownerId), eq(gpgKeys.primaryKeyId, '')), asc(gpgKeys.id), page)
}

/** A user's GPG key (or subkey) row by id: 404 unless it is theirs. */
export async function getOwnGpgKey(deps: AppDeps, ownerId: number, id: number): Promise<GpgKeyRow> {
  const key = (await deps.db.select().from(gpgKeys).where(eq(gpgKeys.id, id)))[0]
  if (!key || key.ownerId !== ownerId) throw notFound(`GPG key does not exist [id: ${id}]`)
  return key
}

/**
 * Adds an armored OpenPGP public key (and its subkeys) to `user`; the key id must not be
 * registered yet. Without `signature`, its identities must include at least one activated
 * address of the user and it starts unverified; with one (an armored detached signature of the
 * user's verification token by the key, as POST /user/gpg_key_verify takes), it is added
 * verified whatever its identities (422 when the signature does not match).
 */
export async function addGpgKey(deps: AppDeps, user: UserRow, armored: string, signature?: string): Promise<GpgKeyRow> {
  if (!armored.trim()) throw unprocessable('Required', 'ArmoredPublicKey')
  if (armored.length > MAX_ARMORED) throw unprocessable('Key parsing failure: the key is too long', 'ArmoredPublicKey')
  // openpgp costs ~25 MiB of resident memory: load it on the first key added, not at start-up.
  const { parseArmoredGpgKey } = await import('../../auth/gpg-key')
  const parsed = await parseArmoredGpgKey(armored)
  const verified = !!signature
  if (signature) await checkTokenSignature(user, signature, [parsed, ...parsed.subkeys])
  return await writeTransaction(deps.db, async () => {
    const activated = new Set(
      (await deps.db
        .select({ lower: emailAddresses.lowerEmail })
        .from(emailAddresses)
        .where(and(eq(emailAddresses.userId, user.id), eq(emailAddresses.isActivated, true))))
        .map((e) => e.lower),
    )
    const emails: EmailEntry[] = parsed.identityEmails.filter((e) => activated.has(e)).map((email) => ({ email, verified: true }))
    if (emails.length === 0 && !verified)
      throw new ApiError(
        422,
        `None of the emails attached to the GPG key could be found. It may still be added if you provide a valid signature for the token: ${gpgVerificationToken(user, 1)}`,
      )
    const allIds = [parsed.keyId, ...parsed.subkeys.map((s) => s.keyId)]
    const taken = (await deps.db.select({ id: gpgKeys.id }).from(gpgKeys).where(inArray(gpgKeys.keyId, allIds)))[0]
    if (taken) throw unprocessable('A key with the same id already exists', 'ArmoredPublicKey')
    const now = nowUnix()
    const row = (k: ParsedGpgKey, primaryKeyId: string, emailsJson: string) => ({
      ownerId: user.id,
      keyId: k.keyId,
      primaryKeyId,
      content: k.content,
      emails: emailsJson,
      canSign: k.canSign,
      canEncryptComms: k.canEncryptComms,
      canEncryptStorage: k.canEncryptStorage,
      canCertify: k.canCertify,
      verified: verified && primaryKeyId === '',
      createdUnix: k.createdUnix,
      expiredUnix: k.expiredUnix,
      addedUnix: now,
    })
    const primary = (await deps.db.insert(gpgKeys).values(row(parsed, '', JSON.stringify(emails))).returning())[0]
    if (parsed.subkeys.length) await deps.db.insert(gpgKeys).values(parsed.subkeys.map((s) => row(s, parsed.keyId, '[]')))
    return primary
  })
}

/** Deletes a GPG key with its subkeys: 404 when unknown, 403 when it is someone else's. */
export async function deleteGpgKey(deps: AppDeps, ownerId: number, id: number): Promise<void> {
  const key = (await deps.db.select().from(gpgKeys).where(eq(gpgKeys.id, id)))[0]
  if (!key) throw notFound(`GPG key does not exist [id: ${id}]`)
  if (key.ownerId !== ownerId) throw forbidden('You do not have access to this key')
  await writeTransaction(deps.db, async () => {
    await deps.db.delete(gpgKeys).where(eq(gpgKeys.id, id))
    if (!key.primaryKeyId)
      await deps.db
        .delete(gpgKeys)
        .where(and(eq(gpgKeys.ownerId, ownerId), eq(gpgKeys.primaryKeyId, key.keyId)))
  })
}

/** Longest armored detached signature POST /user/gpg_key_verify reads (a signature is well under 2 KiB). */
export const MAX_TOKEN_SIGNATURE = 16 * 1024

/** Go's RFC1123Z of an instant, in UTC. */
const rfc1123z = (ms: number) => new Date(ms).toUTCString().replace(/ GMT$/, ' +0000')

/**
 * The text a user signs to prove they hold a GPG key (Gitea's VerificationToken): a SHA-256 of
 * the minute (shifted by `minutes`) and who the user is. It changes every minute; the
 * one handed out is for the next minute, and that one and the current minute's are accepted.
 */
export function gpgVerificationToken(user: UserRow, minutes: number, nowMs = Date.now()): string {
  const minute = Math.floor(nowMs / 60_000) * 60_000 + minutes * 60_000
  const text = `${rfc1123z(minute)}:${rfc1123z(user.createdUnix * 1000)}:${user.name}:${user.email}:${user.id}`
  return new Bun.CryptoHasher('sha256').update(text).digest('hex')
}

/** The signed texts Gitea accepts for a token: as is, or with the line end a signing tool added. */
const signedForms = (token: string) => [token, `${token}\n`, `${token}\r\n`, `${token}\n\n`]

/**
 * Passes when `signature` is an armored detached signature of `user`'s current (or last minute's)
 * verification token by one of `keys` (key ids and base64 key packets); 422 otherwise.
 */
async function checkTokenSignature(user: UserRow, signature: string, keys: { keyId: string; content: string }[]): Promise<void> {
  const token = gpgVerificationToken(user, 1)
  const mismatch = () =>
    unprocessable(`The provided GPG key, signature and token do not match or token is out of date. Provide a valid signature for the token: ${token}`)
  if (!signature.trim() || signature.length > MAX_TOKEN_SIGNATURE) throw mismatch()
  const { detachedSigner } = await import('../../auth/gpg-key')
  const texts = [token, gpgVerificationToken(user, 0)].flatMap(signedForms)
  if (!(await detachedSigner(signature, texts, keys))) throw mismatch()
}

/**
 * Marks `user`'s GPG key `keyIdInput` verified when `signature` is an armored detached signature
 * of their current (or last minute's) verification token by that key or one of its subkeys.
 * 404 for a key id that is not one of the user's keys, 422 for a signature that does not match.
 */
export async function verifyGpgKey(deps: AppDeps, user: UserRow, keyIdInput: string, signature: string): Promise<GpgKeyRow> {
  // Gitea trims leading zeros of the id it is given; ids are stored as 16 hex digits.
  const trimmed = keyIdInput.trim().replace(/^0+/, '').toUpperCase()
  if (!/^[0-9A-F]{1,16}$/.test(trimmed)) throw notFound('GPG key does not exist')
  const keyId = trimmed.padStart(16, '0')
  const key = (await deps.db
    .select()
    .from(gpgKeys)
    .where(and(eq(gpgKeys.ownerId, user.id), eq(gpgKeys.keyId, keyId))))[0]
  if (!key) throw notFound(`GPG key does not exist [key_id: ${keyId}]`)
  const subkeys = key.primaryKeyId
    ? []
    : await deps.db
        .select()
        .from(gpgKeys)
        .where(and(eq(gpgKeys.ownerId, user.id), eq(gpgKeys.primaryKeyId, key.keyId)))
  await checkTokenSignature(user, signature, [key, ...subkeys])
  return (await deps.db.update(gpgKeys).set({ verified: true }).where(eq(gpgKeys.id, key.id)).returning())[0]!
}

/**
 * Marks `user`'s SSH key of `fingerprint` verified when `signature` is an armored SSH signature
 * (`ssh-keygen -Y sign -n gitea`) of their current (or last minute's) verification token by that
 * key (Gitea's VerifySSHKey): a verified key's SSH signatures then verify the user's commits
 * (auth/commit-verification.ts). 404 for a fingerprint that is not one of the user's keys, 422
 * for a signature that does not match.
 */
export async function verifySshKey(deps: AppDeps, user: UserRow, fingerprint: string, signature: string): Promise<PublicKeyRow> {
  const key = fingerprint.length <= 100
    ? (await deps.db
        .select()
        .from(publicKeys)
        .where(and(eq(publicKeys.ownerId, user.id), eq(publicKeys.type, USER_KEY), eq(publicKeys.fingerprint, fingerprint.trim()))))[0]
    : undefined
  if (!key) throw notFound('SSH key does not exist')
  const token = gpgVerificationToken(user, 1)
  const { parseSshSignature, sshSignatureVerifies, storedKeyBlob } = await import('../../auth/ssh-signature')
  const parsed = signature.length <= MAX_TOKEN_SIGNATURE ? parseSshSignature(signature) : null
  const blob = storedKeyBlob(key.content)
  const texts = [token, gpgVerificationToken(user, 0)].flatMap(signedForms)
  if (!parsed || !texts.some((text) => sshSignatureVerifies(parsed, Buffer.from(text), 'gitea', blob)))
    throw unprocessable(`The provided SSH key, signature and token do not match or token is out of date. Provide a valid signature for the token: ${token}`)
  return (await deps.db.update(publicKeys).set({ verified: true }).where(eq(publicKeys.id, key.id)).returning())[0]!
}
