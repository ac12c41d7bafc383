import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { listRefEntries } from './ref-files'

/**
 * Git's answers that depend only on a repository's refs and its config: upload-pack's ref
 * advertisement (`info/refs`, protocol v0/v1, and v2's capability list) and protocol v2's
 * `ls-refs`, and a page of the branch list with its heads' commits (git/commits.ts; a commit
 * never changes under its id). Git makes each answer once; it is then kept under the state it was made from and
 * served again, without a git process, while that state holds. The state is read from the files
 * git keeps refs in, by content, not by time stamps: HEAD, `packed-refs`, every loose ref under
 * `refs/`, the repository's `config` (hidden refs, `lsrefs.unborn`, `uploadpack.*`) and
 * `shallow`. Objects never change under an id, so a peeled tag stays right. The answer is thus
 * git's own, byte for byte: what `git upload-pack` would print for that state (checked against
 * git in test/ls-remote-fast.test.ts). Reading the state is a few small file reads, against a
 * git process per request.
 *
 * An answer is stored only when the state read after git ran is the state read before it (a ref
 * moved meanwhile: not stored). Bounded: repositories with more loose refs than MAX_LOOSE_REFS or
 * a `packed-refs` past MAX_PACKED_REFS_BYTES are not cached (git answers each time); answers
 * larger than MAX_ANSWER_BYTES neither; the cache keeps at most MAX_CACHE_BYTES, least recently
 * used first out.
 */

const MAX_LOOSE_REFS = 2_000
const MAX_PACKED_REFS_BYTES = 8 * 1024 * 1024
const MAX_ANSWER_BYTES = 1024 * 1024
const MAX_CACHE_BYTES = 8 * 1024 * 1024

/** The files of a repository that decide upload-pack's ref answers, besides those under refs/. */
const STATE_FILES = ['HEAD', 'config', 'packed-refs', 'shallow']

const missing = () => null

/**
 * A digest of the repository's ref state (see above), or null when it cannot be read within
 * the bounds (then nothing is cached).
 */
export async function refStateKey(gitDir: string): Promise<string | null> {
  const loose = await listRefEntries(gitDir, 'refs', MAX_LOOSE_REFS)
  if (!loose) return null
  const names = [...STATE_FILES, ...loose.map((e) => e.name)]
  // A folder under refs/ reads as an error (EISDIR): the same missing mark, whatever it holds is listed itself.
  const contents = await Promise.all(names.map((name) => readFile(join(gitDir, name)).catch(missing)))
  const hash = createHash('sha256')
  for (let i = 0; i < names.length; i++) {
    const content = contents[i]
    if (names[i] === 'packed-refs' && content && content.length > MAX_PACKED_REFS_BYTES) return null
    hash.update(`${names[i]}\0${content ? content.length : -1}\0`)
    if (content) hash.update(content)
  }
  return hash.digest('hex')
}

interface Kept {
  state: string
  body: Buffer<ArrayBuffer>
}

const kept = new Map<string, Kept>()
let keptBytes = 0
let hits = 0

function forget(key: string): void {
  const old = kept.get(key)
  if (!old) return
  kept.delete(key)
  keptBytes -= old.body.length
}

function keep(key: string, entry: Kept): void {
  forget(key)
  if (entry.body.length > MAX_ANSWER_BYTES) return
  kept.set(key, entry)
  keptBytes += entry.body.length
  for (const oldest of kept.keys()) {
    if (keptBytes <= MAX_CACHE_BYTES) break
    forget(oldest)
  }
}

/**
 * The answer to `request` (what the client asked, whole: service, protocol, request body) on
 * the repository at `gitDir`: the kept one if the ref state is unchanged, else `make()`'s (git's),
 * kept when `ok`. `make` throws as git's runner does (a killed git); nothing is kept then.
 */
export async function refAnswer(gitDir: string, request: string, make: () => Promise<{ body: Buffer<ArrayBuffer>; ok: boolean }>): Promise<Buffer<ArrayBuffer>> {
  const key = `${gitDir}\0${request}`
  const before = await refStateKey(gitDir)
  const hit = kept.get(key)
  if (before !== null && hit && hit.state === before) {
    // Most recently used last.
    kept.delete(key)
    kept.set(key, hit)
    hits++
    return hit.body
  }
  const made = await make()
  if (before === null || !made.ok) forget(key)
  else if ((await refStateKey(gitDir)) === before) keep(key, { state: before, body: made.body })
  return made.body
}

/** How many answers were served kept, without git, since the process started (tests). */
export const refAnswerHits = (): number => hits
