import { readdir, stat } from 'node:fs/promises'
import { mapInBatches } from '../lib/batches'
import { join } from 'node:path'
import { git, runGit, type GitRepo } from './run'
import { readPeeledRefs } from './ref-files'
import { isSafeRefName } from './ref-name'
import { objectInfo } from './objects'

/**
 * Ref names taken from URLs. Every ref is checked against SAFE_REF (git check-ref-format rules,
 * never starting with '-', '.' or '/' (`refs/heads/` + `/x` is no ref git would make), no whitespace or control characters) before it reaches git,
 * and then looked up among the repository's refs or resolved by the batch reader (objects.ts), always
 * passed as run.ts `values` (after `--end-of-options`), so nothing from a URL is ever read by git
 * as an option.
 */
const HEX_COMMIT = /^[0-9a-f]{4,40}$/i

const isHexCommit = (name: string): boolean => HEX_COMMIT.test(name)

export type RefKind = 'heads' | 'tags'

/** Commit (peeled for annotated tags) of each existing `refs/<kind>/<name>`, keyed `<kind>/<name>`. */
async function lookupRefs(repo: GitRepo, names: string[], kinds: RefKind[] = ['heads', 'tags']): Promise<Map<string, string>> {
  const found = new Map<string, string>()
  const safe = names.filter(isSafeRefName)
  if (safe.length === 0) return found
  const patterns = kinds.flatMap((k) => safe.map((n) => `refs/${k}/${n}`))
  // Read from the ref files where they tell (no git process), else by git.
  const inFiles = await readPeeledRefs(repo.gitDir, patterns)
  if (inFiles) {
    for (const [ref, id] of inFiles) found.set(ref.slice(5), id)
    return found
  }
  const r = await runGit(['for-each-ref', '--format=%(refname)%00%(objectname)%00%(*objectname)'], { ...repo, values: patterns })
  if (r.code !== 0) return found
  const wanted = new Set(patterns)
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const [ref, id, peeled] = line.split('\0')
    if (ref && wanted.has(ref)) found.set(ref.slice(5), peeled || id!)
  }
  return found
}

/** A hex commit id (4–40 digits, unambiguous) → full commit sha, or null. */
async function resolveHexCommit(repo: GitRepo, hex: string): Promise<string | null> {
  if (!isHexCommit(hex)) return null
  // Asked of the repository's batch reader (objects.ts), as rev-parse would resolve it: null when
  // no commit, or several, begin with it.
  const info = await objectInfo(repo, `${hex}^{commit}`)
  return info?.type === 'commit' ? info.oid : null
}

/** `{ref}` as Gitea reads it in archive URLs: a branch, then a tag, then a 4–40 hex commit id. */
export async function resolveCommitish(repo: GitRepo, ref: string): Promise<string | null> {
  if (isSafeRefName(ref)) {
    const refs = await lookupRefs(repo, [ref])
    const hit = refs.get(`heads/${ref}`) ?? refs.get(`tags/${ref}`)
    if (hit) return hit
  }
  return resolveHexCommit(repo, ref)
}

/**
 * The leading segments of a path that name a ref (the longest matching branch or tag wins, a
 * branch before a tag of the same length; else a commit id in the first segment), and the rest.
 */
export async function resolveRefPrefix(
  repo: GitRepo,
  segments: string[],
  kinds: (RefKind | 'commit')[] = ['heads', 'tags', 'commit'],
): Promise<{ sha: string; ref: string; rest: string[] } | null> {
  const prefixes: string[] = []
  for (let i = 1; i <= segments.length; i++) prefixes.push(segments.slice(0, i).join('/'))
  const refKinds = kinds.filter((k): k is RefKind => k !== 'commit')
  if (refKinds.length) {
    const refs = await lookupRefs(repo, prefixes, refKinds)
    for (let i = prefixes.length - 1; i >= 0; i--) {
      const p = prefixes[i]!
      const sha = refs.get(`heads/${p}`) ?? refs.get(`tags/${p}`)
      if (sha) return { sha, ref: p, rest: segments.slice(i + 1) }
    }
  }
  if (kinds.includes('commit') && segments.length && isHexCommit(segments[0]!)) {
    const sha = await resolveHexCommit(repo, segments[0]!)
    if (sha) return { sha, ref: segments[0]!, rest: segments.slice(1) }
  }
  return null
}

/** Whether `refs/heads/<branch>` exists (false for a name that is not a safe ref name). */
export async function branchExists(repo: GitRepo, branch: string): Promise<boolean> {
  return (await lookupRefs(repo, [branch], ['heads'])).has(`heads/${branch}`)
}

/** Points HEAD at a branch (after checking the name); GitError when git fails. */
export async function setHeadBranch(repo: GitRepo, branch: string): Promise<void> {
  if (!isSafeRefName(branch)) return
  await git(['symbolic-ref'], { ...repo, values: ['HEAD', `refs/heads/${branch}`] })
}

/** Which of `names` are branches of the repository (one for-each-ref; unsafe names never are). */
export async function existingBranches(repo: GitRepo, names: string[]): Promise<Set<string>> {
  return new Set([...(await lookupRefs(repo, names, ['heads'])).keys()].map((key) => key.slice('heads/'.length)))
}

/** Which of the full ref names (`refs/...`) exist, in one for-each-ref; an unsafe name never does. */
export async function existingRefs(repo: GitRepo, refs: readonly string[]): Promise<Set<string>> {
  const wanted = new Set(refs.filter((r) => r.startsWith('refs/') && isSafeRefName(r)))
  if (!wanted.size) return new Set()
  const r = await runGit(['for-each-ref', '--format=%(refname)'], { ...repo, values: [...wanted] })
  if (r.code !== 0) return new Set()
  return new Set(r.stdout.toString('utf8').split('\n').filter((ref) => wanted.has(ref)))
}

/** The first `count` branch names in for-each-ref's order (by name). */
async function firstBranches(repo: GitRepo, count: number): Promise<string[]> {
  const r = await runGit(['for-each-ref', `--count=${count}`, '--format=%(refname:strip=2)', 'refs/heads/'], repo)
  return r.code === 0 ? r.stdout.toString('utf8').split('\n').filter(Boolean) : []
}

/** The repository's one branch, or null when it has none or several (two refs read at most). */
export async function soleBranch(repo: GitRepo): Promise<string | null> {
  const names = await firstBranches(repo, 2)
  return names.length === 1 && isSafeRefName(names[0]!) ? names[0]! : null
}

/** The repository's first branch by name, or null when it has none (one ref read). */
export async function firstBranch(repo: GitRepo): Promise<string | null> {
  return (await firstBranches(repo, 1))[0] ?? null
}

/** Past this many loose objects git counts them (`git count-objects -v`) rather than a stat each here. */
const MAX_LOOSE_OBJECTS_STATED = 20_000

/** What a repository's object store holds: its bytes on disk (repositorySize), its packs and loose objects. */
export interface ObjectStore {
  bytes: number
  packs: number
  loose: number
}

/**
 * Bytes the repository's objects take on disk: loose objects (`objects/xx/…`, their disk blocks)
 * plus everything under `objects/pack` (packs, their indexes and any leftovers, their bytes), read
 * from the file system as `git count-objects -v` counts them (its size, size-pack and
 * size-garbage, which it rounds down to KiB), without a git process (it ran after every push); a
 * repository with more loose objects than MAX_LOOSE_OBJECTS_STATED asks git.
 */
export async function repositorySize(repo: GitRepo): Promise<number> {
  return (await objectStoreOf(repo)).bytes
}

/** A loose-object folder (`objects/xx`) as last read: its inode and modification time then, its objects' count and disk bytes. */
interface FolderSum {
  ino: bigint
  mtimeNs: bigint
  count: number
  bytes: number
}

/**
 * The loose-object folders' sums of the last repositories read (objectStoreOf), by repository
 * then folder, at most KEPT_STORES repositories, the least recently read out first. A loose object
 * is written once (a temporary file renamed or linked into its folder) and only ever removed
 * whole, so a folder whose inode and modification time are unchanged holds what it held. A sum
 * is kept only for a folder last changed SETTLED_MS or more before it was read: a change within
 * the same tick of the file system's clock as the read could leave the time as it was.
 */
const folderSums = new Map<string, Map<string, FolderSum>>()
const KEPT_STORES = 64
const SETTLED_MS = 2000
/** Files and folders looked at together. */
const STATS_AT_ONCE = 64

/**
 * The object store's bytes (repositorySize), and how many packs and loose objects it holds (as
 * `gc --auto` counts them). Each loose-object folder is stated; only those changed since the last
 * read (folderSums) are listed and their objects stated, so a push or a contents write, which adds
 * a few objects, reads a few folders, not every object. `objects/pack` is always read whole.
 */
export async function objectStoreOf(repo: GitRepo): Promise<ObjectStore> {
  const objects = join(repo.gitDir, 'objects')
  const startedNs = BigInt(Date.now()) * 1_000_000n
  const folders = (await readdir(objects).catch(() => [] as string[])).filter((folder) => /^[0-9a-f]{2}$/.test(folder))
  const kept = folderSums.get(repo.gitDir)
  folderSums.delete(repo.gitDir)
  const stats = await mapInBatches(folders, STATS_AT_ONCE, (folder) => stat(join(objects, folder), { bigint: true }).catch(() => null))
  const sums = new Map<string, FolderSum>()
  const changed: { folder: string; ino: bigint; mtimeNs: bigint }[] = []
  for (let i = 0; i < folders.length; i++) {
    const st = stats[i]
    if (!st?.isDirectory()) continue
    const was = kept?.get(folders[i]!)
    if (was && was.ino === st.ino && was.mtimeNs === st.mtimeNs) sums.set(folders[i]!, was)
    else changed.push({ folder: folders[i]!, ino: st.ino, mtimeNs: st.mtimeNs })
  }
  const listed = await mapInBatches(['pack', ...changed.map((c) => c.folder)], STATS_AT_ONCE, (folder) => readdir(join(objects, folder)).catch(() => [] as string[]))
  const packNames = listed[0]!
  let loose = 0
  for (const sum of sums.values()) loose += sum.count
  for (const names of listed.slice(1)) loose += names.length
  const packs = packNames.filter((name) => name.endsWith('.pack')).length
  if (loose > MAX_LOOSE_OBJECTS_STATED) return { bytes: await countedSize(repo), packs, loose }
  // As git counts them: a loose object by the disk blocks it takes, a pack's files by their bytes.
  const files = listed.flatMap((names, i) => names.map((name) => ({ i, path: join(objects, i === 0 ? 'pack' : changed[i - 1]!.folder, name) })))
  const sizes = await mapInBatches(files, STATS_AT_ONCE, ({ i, path }) => stat(path).then((st) => (!st.isFile() ? 0 : i === 0 ? st.size : st.blocks * 512), () => 0))
  const changedBytes = new Array<number>(listed.length).fill(0)
  for (let f = 0; f < files.length; f++) changedBytes[files[f]!.i]! += sizes[f]!
  let bytes = changedBytes[0]!
  for (const sum of sums.values()) bytes += sum.bytes
  const settledBefore = startedNs - BigInt(SETTLED_MS) * 1_000_000n
  changed.forEach((c, i) => {
    bytes += changedBytes[i + 1]!
    if (c.mtimeNs < settledBefore) sums.set(c.folder, { ino: c.ino, mtimeNs: c.mtimeNs, count: listed[i + 1]!.length, bytes: changedBytes[i + 1]! })
  })
  folderSums.set(repo.gitDir, sums)
  for (const gitDir of folderSums.keys()) {
    if (folderSums.size <= KEPT_STORES) break
    folderSums.delete(gitDir)
  }
  return { bytes, packs, loose }
}

/** repositorySize as `git count-objects -v` says it (KiB). */
async function countedSize(repo: GitRepo): Promise<number> {
  const r = await runGit(['count-objects', '-v'], repo)
  if (r.code !== 0) return 0
  let kib = 0
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const m = /^(size|size-pack|size-garbage): (\d+)$/.exec(line)
    if (m) kib += Number(m[2])
  }
  return kib * 1024
}

/** The commit `refs/tags/<name>` names (peeled when annotated), or null when there is no such tag. */
export async function tagCommit(repo: GitRepo, name: string): Promise<string | null> {
  return (await lookupRefs(repo, [name], ['tags'])).get(`tags/${name}`) ?? null
}

/**
 * Whether another ref of `kind` stands where `refs/<kind>/<name>` would go, so that git would
 * refuse to create it: one named by a leading part of it (`v1` for `v1/rc`) or one below it
 * (`v1/rc` for `v1`). The name must pass isSafeRefName (it holds no glob characters).
 */
export async function refNameClash(repo: GitRepo, kind: RefKind, name: string): Promise<boolean> {
  const parts = name.split('/')
  const patterns = parts.map((_, i) => `refs/${kind}/${parts.slice(0, i + 1).join('/')}`)
  const own = patterns.pop()!
  const leading = new Set(patterns)
  // for-each-ref matches a pattern literally or as a leading part up to a slash: `own` lists the
  // refs below it, the leading parts list their own refs (kept only when literal).
  const r = await runGit(['for-each-ref', '--format=%(refname)'], { ...repo, values: [own, ...patterns] })
  return r.stdout.toString('utf8').split('\n').some((ref) => leading.has(ref) || ref.startsWith(own + '/'))
}

/** refNameClash among the tags. */
export const tagNameClash = (repo: GitRepo, name: string): Promise<boolean> => refNameClash(repo, 'tags', name)
