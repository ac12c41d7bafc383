import { closeSync, constants, fstatSync, openSync, readdirSync, readSync, statSync } from 'node:fs'
import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * Refs read from the files git keeps them in, without a git process: a loose ref is a file under
 * `refs/` holding its object id, else the ref is a line of `packed-refs` (`<id> <ref>`, followed by
 * `^<id>` for an annotated tag, the object it peels to, in a file whose header says
 * `fully-peeled`). That is git's "files" ref store, which every repository Warren makes uses; the
 * loose file is read first, then packed-refs, as git reads them (git writes each through a lock
 * file renamed into place, so a read sees a whole file, old or new).
 *
 * Each answer is null where git must answer instead (the callers then run git as before): a
 * symbolic ref, a file that is not an id, an unreadable file, a `packed-refs` past
 * MAX_PACKED_REFS_BYTES or without `fully-peeled`, more loose refs than MAX_LOOSE_REFS, a
 * repository whose refs are kept otherwise (`reftable/`), and, where peeled ids are asked for,
 * a loose tag (whether its object is an annotated tag, and what it peels to, only git's object
 * store says; a loose branch or other ref is taken to name a commit, as Warren's always do).
 */

const MAX_PACKED_REFS_BYTES = 4 * 1024 * 1024
const MAX_LOOSE_REFS = 2_000
const OBJECT_ID = /^([0-9a-f]{40}|[0-9a-f]{64})\n?$/

/** The file could not be there: no such file, a folder (`refs/heads/a` of `a/b`), or a file above it (`a` of `a/b`). */
const absent = (e: unknown): boolean => ['ENOENT', 'EISDIR', 'ENOTDIR'].includes((e as { code?: string }).code ?? '')

/** A loose ref's id: the id, `absent`, or null (not an id: git must read it). */
async function looseRef(gitDir: string, ref: string): Promise<string | 'absent' | null> {
  try {
    const m = OBJECT_ID.exec(await readFile(join(gitDir, ref), 'latin1'))
    return m ? m[1]! : null
  } catch (e) {
    return absent(e) ? 'absent' : null
  }
}

interface PackedRefs {
  text: string
}

/** packed-refs, '' when there is none; null when git must read it (too large, not fully peeled, unreadable). */
async function packedRefs(gitDir: string): Promise<PackedRefs | null> {
  let text: string
  try {
    const bytes = await readFile(join(gitDir, 'packed-refs'))
    if (bytes.length > MAX_PACKED_REFS_BYTES) return null
    text = bytes.toString('latin1')
  } catch (e) {
    return absent(e) ? { text: '' } : null
  }
  if (!text) return { text }
  const header = text.startsWith('# pack-refs with:') ? text.slice(0, text.indexOf('\n')) : ''
  return / fully-peeled( |$)/.test(header) ? { text } : null
}

/** `ref`'s line of packed-refs: its id and the id it peels to (the id itself when not an annotated tag); undefined when absent. */
function packedRef(packed: PackedRefs, ref: string): { id: string; peeled: string } | undefined {
  const { text } = packed
  for (let at = text.indexOf(` ${ref}\n`); at >= 0; at = text.indexOf(` ${ref}\n`, at + 1)) {
    const lineStart = text.lastIndexOf('\n', at) + 1
    const id = text.slice(lineStart, at)
    if (!/^([0-9a-f]{40}|[0-9a-f]{64})$/.test(id)) continue
    const next = at + ref.length + 2
    const peeled = text[next] === '^' ? /^\^([0-9a-f]{40}|[0-9a-f]{64})$/m.exec(text.slice(next, next + 66))?.[1] : undefined
    return { id, peeled: peeled ?? id }
  }
  return undefined
}

/** Whether the repository keeps its refs in git's files (not a reftable). */
async function filesRefStore(gitDir: string): Promise<boolean> {
  return readdir(join(gitDir, 'reftable')).then(
    () => false,
    (e) => absent(e),
  )
}

/** An entry under a repository's `refs/` folder: its path from the repository (`refs/heads/x`), and whether it is a file (else a folder). */
export interface RefEntry {
  name: string
  file: boolean
}

/**
 * Every file and folder under `<gitDir>/<under>` (`refs`, `refs/heads`), sorted by name byte for
 * byte; [] when the folder is not there; null when it cannot be read or holds more than `max`
 * entries. The one walk of the loose refs: the ref readers here, upload-pack's answer cache
 * (ref-answers.ts) and the push sync's fingerprint (ref-state.ts) each take it.
 */
export async function listRefEntries(gitDir: string, under: string, max: number): Promise<RefEntry[] | null> {
  let dirents
  try {
    dirents = await readdir(join(gitDir, under), { recursive: true, withFileTypes: true })
  } catch (e) {
    return absent(e) ? [] : null
  }
  if (dirents.length > max) return null
  const entries = dirents.map((d) => ({ name: join(d.parentPath, d.name).slice(gitDir.length + 1), file: d.isFile() }))
  return entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/** What readRefStateNow reads at most: entries under refs/, bytes of files in all, and a folder's size as its file system gives it. */
export interface NowBounds {
  entries: number
  bytes: number
  folderBytes: number
}

/**
 * `files` of the repository, then every file and folder under `refs/` (in listRefEntries' order),
 * with each one's content (null: missing, a folder, or unreadable), read at once, without awaiting
 * (no call waits for a thread of the file pool): for a small state, the same answer as awaiting
 * each read, made in a fraction of the time. Null, nothing held longer, when the state is past its
 * bounds or holds something that is neither a file nor a folder (a FIFO, a device: opened without
 * waiting, never read): the caller reads it awaited then. A folder is listed whole (Bun's
 * `opendirSync` too reads it whole), so one is listed only when its size is within
 * `folderBytes`: the size of a folder grows with what it holds on the file systems git runs on
 * (ext4's 4 KiB blocks of entries, which never shrink; the bytes of the names on tmpfs, btrfs, xfs).
 */
export function readRefStateNow(gitDir: string, files: readonly string[], bounds: NowBounds): { names: string[]; contents: (Uint8Array | null)[] } | null {
  const entries: RefEntry[] = []
  const walk = (folder: string): boolean => {
    const path = join(gitDir, folder)
    let dirents
    try {
      if (statSync(path).size > bounds.folderBytes) return false
      dirents = readdirSync(path, { withFileTypes: true })
    } catch (e) {
      return folder === 'refs' && absent(e)
    }
    for (const d of dirents) {
      if (entries.length >= bounds.entries) return false
      const name = `${folder}/${d.name}`
      entries.push({ name, file: d.isFile() })
      if (d.isDirectory() && !walk(name)) return false
    }
    return true
  }
  if (!walk('refs')) return null
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  const names = [...files, ...entries.map((e) => e.name)]
  const contents: (Uint8Array | null)[] = []
  let budget = bounds.bytes
  for (const name of names) {
    let fd
    try {
      fd = openSync(join(gitDir, name), constants.O_RDONLY | constants.O_NONBLOCK)
    } catch (e) {
      if (!absent(e)) return null
      contents.push(null)
      continue
    }
    try {
      const stat = fstatSync(fd)
      if (stat.isDirectory()) {
        contents.push(null)
        continue
      }
      if (!stat.isFile() || stat.size > budget) return null
      const bytes = new Uint8Array(stat.size)
      // A file being rewritten in place (git renames a new one into place instead) is read as it is now.
      let read = 0
      for (let n = 1; read < bytes.length && n > 0; read += n) n = readSync(fd, bytes, read, bytes.length - read, read)
      budget -= read
      contents.push(read === bytes.length ? bytes : bytes.subarray(0, read))
    } catch {
      return null
    } finally {
      closeSync(fd)
    }
  }
  return { names, contents }
}

/**
 * What HEAD's file says: the ref it names (`{ ref: 'refs/heads/main' }`, git's usual one line), the
 * object it holds when detached (`{ id }`), or null when git must read it (another form, unreadable).
 */
export async function readHeadFile(gitDir: string): Promise<{ ref: string } | { id: string } | null> {
  const head = await readFile(join(gitDir, 'HEAD'), 'utf8').catch(() => null)
  if (head === null) return null
  const named = /^ref: (refs\/[^\n]+)\n?$/.exec(head)
  if (named) return { ref: named[1]! }
  const id = OBJECT_ID.exec(head)
  return id ? { id: id[1]! } : null
}

/**
 * The object each existing ref of `refs` (full names, `refs/heads/x`) points to, peeled for
 * annotated tags; refs that do not exist are left out. Null when git must answer (see above: a
 * loose tag among them, since it may need peeling). The names must be safe ref names (they are
 * paths under the repository's folder).
 */
export async function readPeeledRefs(gitDir: string, refs: readonly string[]): Promise<Map<string, string> | null> {
  const [filesStore, ...loose] = await Promise.all([filesRefStore(gitDir), ...refs.map((ref) => looseRef(gitDir, ref))])
  if (!filesStore) return null
  const found = new Map<string, string>()
  let packed: PackedRefs | null | undefined
  for (let i = 0; i < refs.length; i++) {
    const ref = refs[i]!
    const id = loose[i]!
    if (id === null) return null
    if (id !== 'absent') {
      if (ref.startsWith('refs/tags/')) return null
      found.set(ref, id)
      continue
    }
    packed ??= await packedRefs(gitDir)
    if (!packed) return null
    const line = packedRef(packed, ref)
    if (line) found.set(ref, line.peeled)
  }
  return found
}

/**
 * Every ref under the folders `prefixes` name (`refs/heads`, `refs/tags`) with the object it points
 * to (not peeled), as `git for-each-ref --format='%(objectname) %(refname)' <prefixes>` lists
 * them; null when git must answer.
 */
export async function readRefsUnder(gitDir: string, prefixes: readonly string[]): Promise<Record<string, string> | null> {
  if (!(await filesRefStore(gitDir))) return null
  const loose: string[] = []
  for (const prefix of prefixes) {
    const entries = await listRefEntries(gitDir, prefix, MAX_LOOSE_REFS - loose.length)
    if (!entries) return null
    const names = entries.filter((e) => e.file).map((e) => e.name)
    // A lock file (a ref being written) or another name git would not read as a ref: git says.
    if (names.some((name) => name.endsWith('.lock') || name.split('/').some((part) => part.startsWith('.')))) return null
    loose.push(...names)
  }
  const packed = await packedRefs(gitDir)
  if (!packed) return null
  const refs: Record<string, string> = {}
  for (const line of packed.text.split('\n')) {
    const m = /^([0-9a-f]{40}|[0-9a-f]{64}) (refs\/.+)$/.exec(line)
    if (m && prefixes.some((p) => m[2]!.startsWith(p + '/'))) refs[m[2]!] = m[1]!
  }
  const ids = await Promise.all(loose.map((ref) => looseRef(gitDir, ref)))
  for (let i = 0; i < loose.length; i++) {
    const id = ids[i]!
    // Gone between the listing and the read: deleted, or packed (pack-refs writes packed-refs,
    // then removes the loose file) after packed-refs was read here. Git says which.
    if (id === null || id === 'absent') return null
    refs[loose[i]!] = id
  }
  // In git's order (by name, byte for byte).
  return Object.fromEntries(Object.entries(refs).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}
