import { and, eq, inArray } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { emailAddresses, gpgKeys } from '../db/schema'
import { runGit, type GitOptions } from '../git/run'
import { isZeroId } from './branch-judge'

/**
 * Whether the commits a change brings to a branch are signed by their committers (a protection
 * rule's `require_signed_commits`, Gitea's verifyCommits of its pre-receive hook): each commit's
 * OpenPGP signature (its `gpgsig` header) must be made by a GPG key (or subkey) of the person
 * whose activated e-mail address is the commit's committer address, a key that names that address
 * or that its owner verified, unexpired when the commit was made. A commit signed otherwise (an
 * SSH signature, a key Warren does not hold) or not at all is unverified, as Gitea answers for a
 * signature it cannot check. The server signs nothing, so its own commits (merges, the contents
 * API) cannot go onto such a branch, as Gitea's without a signing key.
 */

/** Most commits one change may bring to a branch that requires signatures (each one a signature check). */
export const MAX_SIGNED_COMMITS = 1000

/** Longest commit object read for its signature (bytes). */
const MAX_COMMIT_BYTES = 1024 * 1024

/** A commit object split for its signature: the signed payload (the object's bytes without the header), the armored signature, the committer. */
interface SignedCommit {
  payload: Uint8Array
  signature: string | null
  committerEmail: string
  committerUnix: number
}

/**
 * Splits a raw commit object as git does to verify it: the payload is the object without its
 * signature headers (`gpgsig` and `gpgsig-sha256`, each with its continuation lines, which start
 * with a space), byte for byte (a message in another encoding than UTF-8 included); the
 * signature is the first of them.
 */
export function splitSignedCommit(bytes: Uint8Array): SignedCommit {
  // Latin-1 maps each byte to one character and back: the split keeps every byte as it was.
  const raw = Buffer.from(bytes).toString('latin1')
  const end = raw.indexOf('\n\n')
  const headers = (end < 0 ? raw : raw.slice(0, end)).split('\n')
  const body = end < 0 ? '' : raw.slice(end)
  const kept: string[] = []
  let signature: string[] | null = null
  // Inside a signature header: 'first' (the one read), 'other' (left out, not read), or not.
  let inside: 'first' | 'other' | null = null
  let committerEmail = ''
  let committerUnix = 0
  for (const line of headers) {
    if (inside && line.startsWith(' ')) {
      if (inside === 'first') signature!.push(line.slice(1))
      continue
    }
    inside = null
    if (line.startsWith('gpgsig ') || line.startsWith('gpgsig-sha256 ')) {
      inside = signature === null ? 'first' : 'other'
      if (inside === 'first') signature = [line.slice(line.indexOf(' ') + 1)]
      continue
    }
    const committer = /^committer .*<([^<>]*)> (\d+) [+-]\d{4}$/.exec(line)
    if (committer) [committerEmail, committerUnix] = [Buffer.from(committer[1]!, 'latin1').toString('utf8').toLowerCase(), Number(committer[2])]
    kept.push(line)
  }
  return { payload: Buffer.from(kept.join('\n') + body, 'latin1'), signature: signature && signature.join('\n'), committerEmail, committerUnix }
}

type GpgKeyRow = typeof gpgKeys.$inferSelect

/**
 * The GPG keys (with their primary key) that may sign as `email`: those of its activated owner
 * naming it, or verified by that owner. Read once per address a change's commits name.
 */
async function keysNaming(deps: AppDeps, email: string): Promise<{ key: GpgKeyRow; primary: GpgKeyRow }[]> {
  const owners = await deps.db
    .select({ uid: emailAddresses.userId })
    .from(emailAddresses)
    .where(and(eq(emailAddresses.lowerEmail, email), eq(emailAddresses.isActivated, true)))
  if (owners.length === 0) return []
  const rows = await deps.db.select().from(gpgKeys).where(inArray(gpgKeys.ownerId, owners.map((o) => o.uid)))
  const primaries = new Map(rows.filter((r) => r.primaryKeyId === '').map((r) => [r.keyId, r]))
  const names = (r: GpgKeyRow) => r.verified || (JSON.parse(r.emails) as { email: string }[]).some((e) => e.email.toLowerCase() === email)
  return rows.flatMap((key) => {
    const primary = key.primaryKeyId === '' ? key : primaries.get(key.primaryKeyId)
    return primary && names(primary) ? [{ key, primary }] : []
  })
}

/** Of `keys`, those unexpired at `when` (the key and its primary). */
const unexpiredAt = (keys: { key: GpgKeyRow; primary: GpgKeyRow }[], when: number) =>
  keys.filter(({ key, primary }) => [key, primary].every((k) => k.expiredUnix === 0 || k.expiredUnix > when)).map(({ key }) => key)

/** Most bytes of commit objects one change's check reads (its commits' objects in one read). */
const MAX_COMMITS_BYTES = 16 * 1024 * 1024

/**
 * The objects of `ids` (commits), read by one `git cat-file --batch` once one `--batch-check` has
 * bounded their sizes; null when one is missing, not a commit, or they are too large to check.
 */
async function commitObjects(where: GitOptions, ids: string[]): Promise<Buffer[] | null> {
  const input = ids.join('\n') + '\n'
  const checked = await runGit(['cat-file', '--batch-check=%(objecttype) %(objectsize)'], { ...where, input })
  if (checked.code !== 0) return null
  const sizes = checked.stdout.toString('utf8').split('\n').filter(Boolean).map((line) => Number(/^commit (\d+)$/.exec(line)?.[1] ?? NaN))
  if (sizes.length !== ids.length || sizes.some((n) => !(n <= MAX_COMMIT_BYTES))) return null
  if (sizes.reduce((sum, n) => sum + n, 0) > MAX_COMMITS_BYTES) return null
  const read = await runGit(['cat-file', '--batch'], { ...where, input })
  if (read.code !== 0) return null
  // Each object: its header line (`<id> commit <size>`), its bytes, a newline.
  const objects: Buffer[] = []
  let at = 0
  for (const n of sizes) {
    const start = read.stdout.indexOf(10, at) + 1
    if (start === 0 || start + n > read.stdout.length) return null
    objects.push(read.stdout.subarray(start, start + n))
    at = start + n + 1
  }
  return objects
}

/**
 * The refusal of the first commit `old`..`now` brings (for a new branch: those no branch has) that
 * is not verified, or null when all are. `where` is the repository, or git's quarantine in the
 * pre-receive hook. Bounded: at most MAX_SIGNED_COMMITS commits, read by two gits whatever their
 * number, the keys read once per committer address, one signature check a commit.
 */
export async function unverifiedCommit(deps: AppDeps, where: GitOptions, branch: string, old: string, now: string): Promise<string | null> {
  const listed = isZeroId(old)
    ? await runGit(['rev-list', `--max-count=${MAX_SIGNED_COMMITS + 1}`, '--not', '--branches', '--not'], { ...where, values: [now] })
    : await runGit(['rev-list', `--max-count=${MAX_SIGNED_COMMITS + 1}`], { ...where, values: [`^${old}`, now] })
  if (listed.code !== 0) throw new Error(`git rev-list failed: ${listed.stderr.trim().slice(0, 200)}`)
  const ids = listed.stdout.toString('utf8').split('\n').filter(Boolean)
  if (ids.length > MAX_SIGNED_COMMITS) return `branch ${branch} requires signed commits: a push of more than ${MAX_SIGNED_COMMITS} commits cannot be checked`
  if (ids.length === 0) return null
  const objects = await commitObjects(where, ids)
  if (!objects) return `branch ${branch} requires signed commits: the commits pushed could not be read to check them`
  const { detachedSigner } = await import('../auth/gpg-key')
  const keysOf = new Map<string, Promise<{ key: GpgKeyRow; primary: GpgKeyRow }[]>>()
  for (const [i, id] of ids.entries()) {
    const commit = splitSignedCommit(objects[i]!)
    if (!commit.signature?.includes('BEGIN PGP SIGNATURE')) return `branch ${branch} is protected from unverified commit ${id}`
    let named = keysOf.get(commit.committerEmail)
    if (!named) keysOf.set(commit.committerEmail, (named = keysNaming(deps, commit.committerEmail)))
    const keys = unexpiredAt(await named, commit.committerUnix)
    if (keys.length === 0 || !(await detachedSigner(commit.signature, [commit.payload], keys))) return `branch ${branch} is protected from unverified commit ${id}`
  }
  return null
}
