import { WeightedCache } from '../lib/weighted-cache'
import { readObject } from './objects'
import type { GitRepo } from './run'

/**
 * A commit object as git splits it to check its signature: the signed payload (the object's bytes
 * without its signature headers), the armored signature, the committer's address and time.
 */
export interface SignedCommit {
  payload: Uint8Array
  signature: string | null
  committerEmail: string
  committerUnix: number
}

/** Longest commit object read for its signature (bytes): a longer one counts as unsigned. */
export const MAX_COMMIT_BYTES = 256 * 1024

/**
 * Longest signature read (bytes of its armor): an OpenPGP signature by a 16384-bit RSA key is
 * under 3 KiB, an SSH one as small. A longer one is kept as '' (signed, but unreadable), never
 * parsed: a page of commits each carrying a megabyte of signature packets held the event loop
 * for seconds.
 */
export const MAX_SIGNATURE_BYTES = 16 * 1024

/**
 * Splits a raw commit object as git does to verify it: the payload is the object without its
 * signature headers (`gpgsig` and `gpgsig-sha256`, each with its continuation lines, which start
 * with a space), byte for byte (a message in another encoding than UTF-8 included); the
 * signature is the first of them, each line ending with a newline as Gitea answers it (past
 * MAX_SIGNATURE_BYTES: '', with no payload). The committer is read as git reads it for `%ce`
 * (split_ident_line): its address between the first `<` and the `>` after it, its time after
 * the last `>`, so the committer a signature is checked for is the one the records show (not a
 * second `<…>` on the line); a commit of two committer headers has none.
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
  let committers = 0
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
    if (line.startsWith('committer ')) {
      committers++
      const open = line.indexOf('<')
      const close = open < 0 ? -1 : line.indexOf('>', open)
      ;[committerEmail, committerUnix] =
        close > open ? [Buffer.from(line.slice(open + 1, close), 'latin1').toString('utf8').toLowerCase(), Number(/^ +(\d+)/.exec(line.slice(line.lastIndexOf('>') + 1))?.[1] ?? 0)] : ['', 0]
    }
    kept.push(line)
  }
  // Two committer headers name no one: git shows the last (%ce) where for-each-ref reads the
  // first (the Branch record's head), so the commit is verified for neither.
  if (committers > 1) [committerEmail, committerUnix] = ['', 0]
  const armor = signature && signature.join('\n') + '\n'
  if (armor !== null && armor.length > MAX_SIGNATURE_BYTES) return { payload: new Uint8Array(0), signature: '', committerEmail, committerUnix }
  return { payload: Buffer.from(kept.join('\n') + body, 'latin1'), signature: armor, committerEmail, committerUnix }
}

/**
 * Commits split for their signatures, by id (a commit never changes under its id): an unsigned
 * one weighs its entry only, a signed one its payload and signature too. A page of commits asked
 * again reads no object: without it, a page of 50 commits cost 100 requests to the repository's
 * batch reader, a fifth of the commits API's throughput.
 */
const splits = new WeightedCache<SignedCommit>(8 * 1024 * 1024, (c) => 100 + (c.signature ? c.payload.length + c.signature.length : 0))

/** An unsigned commit as kept: nothing of it is needed but that it is unsigned. */
const UNSIGNED: SignedCommit = { payload: new Uint8Array(0), signature: null, committerEmail: '', committerUnix: 0 }

/**
 * The commits `ids` of `repo` split for their signatures (read through the repository's batch
 * reader, git/objects.ts, unless kept): null for an id that names no commit, or one past
 * MAX_COMMIT_BYTES. The caller has the ids from the repository itself (a history, a branch's
 * head): the same id is the same commit in any repository.
 */
export async function signedCommitsOf(repo: GitRepo, ids: readonly string[]): Promise<(SignedCommit | null)[]> {
  // Those kept are answered at once; only the others wait for the batch reader.
  const found: (SignedCommit | null | undefined)[] = ids.map((id) => splits.get(id))
  const missing = found.flatMap((split, i) => (split ? [] : [i]))
  if (missing.length === 0) return found as SignedCommit[]
  await Promise.all(
    missing.map(async (i) => {
      const object = await readObject(repo, ids[i]!, MAX_COMMIT_BYTES)
      if (object?.type !== 'commit' || !object.content) return (found[i] = null)
      const split = splitSignedCommit(object.content)
      splits.set(ids[i]!, split.signature === null ? UNSIGNED : split)
      found[i] = split
    }),
  )
  return found as (SignedCommit | null)[]
}
