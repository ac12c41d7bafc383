import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { WeightedCache } from '../lib/weighted-cache'
import { listRefEntries, readRefStateNow, type NowBounds } from './ref-files'

/**
 * Git's answers that depend only on a repository's refs and its config: upload-pack's ref
 * advertisement (`info/refs`, protocol v0/v1, and v2's capability list) and protocol v2's
 * `ls-refs` (bytes), and records: a page of the branch list with its heads' commits
 * (git/commits.ts), of the tag list (git/tags.ts), of the commit graph (modules/commits/graph.ts);
 * a commit never changes under its id. Git makes each answer once; it is then kept under the state
 * it was made from and served again, without a git process, while that state holds. The state is read from the files
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
 * weighing more than MAX_ANSWER_BYTES (bytes, or characters about) neither; the cache keeps at
 * most MAX_CACHE_BYTES, least recently used first out.
 */

const MAX_LOOSE_REFS = 2_000
const MAX_PACKED_REFS_BYTES = 8 * 1024 * 1024
const MAX_ANSWER_BYTES = 1024 * 1024
const MAX_CACHE_BYTES = 8 * 1024 * 1024
/** What a kept answer weighs besides its own weight and its key (the entry, its state's digest). */
const ENTRY_OVERHEAD = 200
/**
 * The state of a small repository is read at once, without awaiting (readRefStateNow): at most
 * 64 entries under refs/, 256 KiB of files in all, each folder within 8 KiB (ext4's two blocks of
 * entries). Bun's asynchronous file calls each wait for a thread of its pool (about 80 µs apiece
 * here: a state read took 400 µs, most of an `info/refs` answer's time); the same reads made at
 * once take 30-70 µs. Bounded, so the event loop is held no longer than that; a larger state is
 * read as before, awaited.
 */
const NOW_BOUNDS: NowBounds = { entries: 64, bytes: 256 * 1024, folderBytes: 8 * 1024 }

/** The files of a repository that decide upload-pack's ref answers, besides those under refs/. */
const STATE_FILES = ['HEAD', 'config', 'packed-refs', 'shallow']

const missing = () => null

let stateReads = 0

/** How many times a ref state was read since the process started (tests). */
export const refStateReads = (): number => stateReads

/** The digest of a state: each file's name, length (-1: missing, or a folder) and content, in order. */
function digestOf(names: readonly string[], contents: readonly (Uint8Array | null)[]): string | null {
  const hash = createHash('sha256')
  for (let i = 0; i < names.length; i++) {
    const content = contents[i]
    if (names[i] === 'packed-refs' && content && content.length > MAX_PACKED_REFS_BYTES) return null
    hash.update(`${names[i]}\0${content ? content.length : -1}\0`)
    if (content) hash.update(content)
  }
  return hash.digest('hex')
}

/**
 * A digest of the repository's ref state (see above), or null when it cannot be read within
 * the bounds (then nothing is cached). Read at once where the state is small (readRefStateNow),
 * else awaited: the same digest either way.
 */
async function refStateKey(gitDir: string): Promise<string | null> {
  stateReads++
  const now = readRefStateNow(gitDir, STATE_FILES, NOW_BOUNDS)
  if (now) return digestOf(now.names, now.contents)
  const loose = await listRefEntries(gitDir, 'refs', MAX_LOOSE_REFS)
  if (!loose) return null
  const names = [...STATE_FILES, ...loose.map((e) => e.name)]
  // A folder under refs/ reads as an error (EISDIR): the same missing mark, whatever it holds is listed itself.
  const contents = await Promise.all(names.map((name) => readFile(join(gitDir, name)).catch(missing)))
  return digestOf(names, contents)
}

/** The ref state an answer was made under (refStateKey; null: not readable within the bounds, nothing kept). */
export interface RefState {
  key: string | null
}

/** Reads the ref state once, for a request that asks several answers of it (each would read it again). */
export const readRefState = async (gitDir: string): Promise<RefState> => ({ key: await refStateKey(gitDir) })

/** What `make` answers: the value, whether it may be kept (git succeeded), and what it weighs (bytes, or about). */
export interface MadeAnswer<T> {
  value: T
  ok: boolean
  weight: number
}

/**
 * Answers kept by request, each with its state, weighed as made (a Buffer by its bytes, records
 * by their characters, about). A kept value is shared by every request it answers: records are
 * frozen (deeply) when kept, so a reader that changed one would fail loudly, not change the next
 * answer.
 */
const kept = new WeightedCache<{ state: string; value: unknown; weight: number }>(MAX_CACHE_BYTES, (entry) => entry.weight)
let hits = 0

/** Freezes `value` and everything in it (a Buffer's bytes cannot be frozen: they are kept as they are). */
function deepFreeze<T>(value: T): T {
  if (typeof value !== 'object' || value === null || ArrayBuffer.isView(value) || Object.isFrozen(value)) return value
  for (const inner of Object.values(value)) deepFreeze(inner)
  return Object.freeze(value)
}

/**
 * The answer to `request` (what the client asked, whole: service, protocol, request body) on
 * the repository at `gitDir`: the kept one if the ref state is unchanged, else `make()`'s (git's),
 * kept when `ok`. `make` throws as git's runner does (a killed git); nothing is kept then. `state`:
 * the request's own reading of it (readRefState), when it asks several answers.
 */
export async function refAnswer<T>(gitDir: string, request: string, make: () => Promise<MadeAnswer<T>>, state?: RefState): Promise<T> {
  const key = `${gitDir}\0${request}`
  const before = state ? state.key : await refStateKey(gitDir)
  const hit = kept.get(key)
  if (before !== null && hit && hit.state === before) {
    hits++
    return hit.value as T
  }
  // Frozen whether kept or not: a reader that changes what it got fails every time, not only when it was kept.
  const made = await make()
  const value = deepFreeze(made.value)
  // An answer weighs at least its key and a record's overhead: empty answers (a missing branch, a
  // page past the end) are weighed too, so that they leave in turn.
  const weight = made.weight + key.length + ENTRY_OVERHEAD
  if (before === null || !made.ok || weight > MAX_ANSWER_BYTES) kept.delete(key)
  else if ((await refStateKey(gitDir)) === before) kept.set(key, { state: before, value, weight })
  return value
}

/** The weight the kept answers hold now (tests). */
export const refAnswersWeight = (): number => kept.weight

/** How many answers were served kept, without git, since the process started (tests). */
export const refAnswerHits = (): number => hits
