import { and, eq } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { emailAddresses, gpgKeys, publicKeys, users } from '../db/schema'
import { signedCommitsOf, type SignedCommit } from '../git/commit-signature'
import type { GitRepo } from '../git/run'
import { WeightedCache } from '../lib/weighted-cache'
import { parseSshSignature, sshSignatureVerifies, storedKeyBlob } from './ssh-signature'

/**
 * Whether a commit is signed by its committer (Gitea's ParseCommitWithSignature and
 * ParseCommitWithSSHSignature), one rule for the API's commit records, the web's badges and a
 * protection rule's `require_signed_commits` (the push path): the commit's signature (its `gpgsig`
 * header) must be made by a key of the person whose activated e-mail address is the commit's
 * committer address: an OpenPGP signature by a GPG key (or subkey) that names that address or
 * that its owner verified, unexpired when the commit was made; an SSH signature (namespace `git`,
 * git's `gpg.format=ssh`) by one of their SSH keys that they verified (the keys settings page). A
 * commit signed otherwise (a key Warren does not hold, someone else's key) or not at all is
 * unverified, with Gitea's reason.
 */

/** Gitea's PayloadCommitVerification. */
export interface CommitVerification {
  verified: boolean
  /** `{user} / {key id}` when verified, else Gitea's reason (`gpg.error.…`). */
  reason: string
  /** The armored signature ('' when unsigned). */
  signature: string
  /** Who signed (verified only): the account's name, and the committer's address it signed with. */
  signer: { name: string; email: string; username: string } | null
  /** What was signed: the commit object without its signature ('' when unsigned). */
  payload: string
}

/** Gitea's reasons. */
export const NOT_SIGNED = 'gpg.error.not_signed_commit'
const NO_KEY_FOUND = 'gpg.error.no_gpg_keys_found'
const EXTRACT_SIGN = 'gpg.error.extract_sign'

/** A commit without a signature (the server's own: merges, the contents API). */
export const notSigned = (): CommitVerification => ({ verified: false, reason: NOT_SIGNED, signature: '', signer: null, payload: '' })

type GpgKeyRow = typeof gpgKeys.$inferSelect

interface SigningKeys {
  /** The account owning the address (null: none has it activated). */
  owner: string | null
  keys: { key: GpgKeyRow; primary: GpgKeyRow }[]
  /** The owner's verified SSH keys (user keys, not deploy keys). */
  sshKeys: { id: number; fingerprint: string; content: string }[]
}

/**
 * The keys that may sign as `email`, of its activated owner: the GPG keys (with their primary key)
 * naming the address or verified by the owner, and the owner's verified SSH keys.
 */
async function keysNaming(deps: AppDeps, email: string): Promise<SigningKeys> {
  const [owner] = await deps.db
    .select({ id: users.id, name: users.name })
    .from(emailAddresses)
    .innerJoin(users, eq(users.id, emailAddresses.userId))
    .where(and(eq(emailAddresses.lowerEmail, email), eq(emailAddresses.isActivated, true)))
  if (!owner) return { owner: null, keys: [], sshKeys: [] }
  const [rows, sshKeys] = await Promise.all([
    deps.db.select().from(gpgKeys).where(eq(gpgKeys.ownerId, owner.id)),
    deps.db
      .select({ id: publicKeys.id, fingerprint: publicKeys.fingerprint, content: publicKeys.content })
      .from(publicKeys)
      .where(and(eq(publicKeys.ownerId, owner.id), eq(publicKeys.type, USER_KEY), eq(publicKeys.verified, true))),
  ])
  const primaries = new Map(rows.filter((r) => r.primaryKeyId === '').map((r) => [r.keyId, r]))
  const names = (r: GpgKeyRow) => r.verified || (JSON.parse(r.emails) as { email: string }[]).some((e) => e.email.toLowerCase() === email)
  const keys = rows.flatMap((key) => {
    const primary = key.primaryKeyId === '' ? key : primaries.get(key.primaryKeyId)
    return primary && names(primary) ? [{ key, primary }] : []
  })
  return { owner: owner.name, keys, sshKeys }
}

/** `type` of public_keys: a user's key (deploy keys are 2). */
const USER_KEY = 1

/** Of `keys`, those unexpired at `when` (the key and its primary). */
const unexpiredAt = (keys: SigningKeys['keys'], when: number) =>
  keys.filter(({ key, primary }) => [key, primary].every((k) => k.expiredUnix === 0 || k.expiredUnix > when)).map(({ key }) => key)

/**
 * Signature checks made, by commit id and the rows of the keys it was checked against (a key row
 * never changes but for the verified mark, which decides whether it is among them): the key id
 * that verified it, or '' for none. A page of signed commits asked again costs no public-key
 * arithmetic, and a key added, verified, expired or deleted checks the commit again.
 */
const checks = new WeightedCache<string>(1024 * 1024, (keyId) => 200 + keyId.length)

/**
 * A verifier of commits for one request or one push: the keys of each committer address are read
 * once, however many of its commits are checked. Each commit costs at most one signature check
 * (auth/gpg-key.ts detachedSigner: the key its signature names), none when the same commit was
 * checked against the same keys before (`id` given).
 */
export function commitVerifier(deps: AppDeps): (commit: SignedCommit, id?: string) => Promise<CommitVerification> {
  const keysOf = new Map<string, Promise<SigningKeys>>()
  return async (commit, id) => {
    const signature = commit.signature
    if (signature === null) return notSigned()
    // Past MAX_SIGNATURE_BYTES (git/commit-signature.ts): signed, but not read.
    if (signature === '') return { verified: false, reason: EXTRACT_SIGN, signature: '', signer: null, payload: '' }
    const signed = { signature, signer: null, payload: Buffer.from(commit.payload).toString('utf8') }
    const ssh = signature.includes('-----BEGIN SSH SIGNATURE-----')
    if (!ssh && !signature.includes('-----BEGIN PGP SIGNATURE-----')) return { verified: false, reason: EXTRACT_SIGN, ...signed }
    let named = keysOf.get(commit.committerEmail)
    if (!named) keysOf.set(commit.committerEmail, (named = keysNaming(deps, commit.committerEmail)))
    const { owner, keys, sshKeys } = await named
    if (ssh) {
      const parsed = parseSshSignature(signature)
      if (!parsed) return { verified: false, reason: EXTRACT_SIGN, ...signed }
      const key = sshKeys.find((k) => storedKeyBlob(k.content).equals(parsed.publicKey))
      if (!owner || !key) return { verified: false, reason: NO_KEY_FOUND, ...signed }
      const checked = id && `${id}\0ssh\0${key.id}`
      let ok = checked ? checks.get(checked) : undefined
      if (ok === undefined) {
        ok = sshSignatureVerifies(parsed, commit.payload, 'git', storedKeyBlob(key.content)) ? key.fingerprint : ''
        if (checked) checks.set(checked, ok)
      }
      if (!ok) return { verified: false, reason: NO_KEY_FOUND, ...signed }
      return { ...signed, verified: true, reason: `${owner} / ${key.fingerprint}`, signer: { name: owner, email: commit.committerEmail, username: owner } }
    }
    const usable = unexpiredAt(keys, commit.committerUnix)
    if (!owner || usable.length === 0) return { verified: false, reason: NO_KEY_FOUND, ...signed }
    const checked = id && `${id}\0${usable.map((k) => k.id).join(',')}`
    let keyId = checked ? checks.get(checked) : undefined
    if (keyId === undefined) {
      const { detachedSigner } = await import('./gpg-key')
      keyId = (await detachedSigner(signature, [commit.payload], usable)) ?? ''
      if (checked) checks.set(checked, keyId)
    }
    if (!keyId) return { verified: false, reason: NO_KEY_FOUND, ...signed }
    return { ...signed, verified: true, reason: `${owner} / ${keyId}`, signer: { name: owner, email: commit.committerEmail, username: owner } }
  }
}

/**
 * The verifications of the commits `ids` of `repo` (a page of them: the caller bounds their
 * number), by id; an id that names no commit readable for it (missing, past the commit size
 * limit) is unsigned.
 */
export async function commitVerifications(deps: AppDeps, repo: GitRepo, ids: readonly string[]): Promise<Map<string, CommitVerification>> {
  const unique = [...new Set(ids)]
  const commits = await signedCommitsOf(repo, unique)
  const verify = commitVerifier(deps)
  // Unsigned ones (most) are answered without a turn of their own.
  const found = commits.map((c, i) => (c?.signature != null ? verify(c, unique[i]) : notSigned()))
  const settled = found.some((v) => v instanceof Promise) ? await Promise.all(found) : (found as CommitVerification[])
  return new Map(unique.map((id, i) => [id, settled[i]!]))
}
