import { createHash } from 'node:crypto'
import { lstat, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { runGit, type GitRepo } from './run'
import { listRefEntries, readHeadFile, readRefsUnder } from './ref-files'

/**
 * Every branch and tag of a repository with the object it points to (`{ 'refs/heads/x': sha }`);
 * null when git fails, or when the repository's folder is not there before and after the read:
 * a folder moved away meanwhile (a rename, a transfer) reads as no refs at all, which a sync
 * would record as every branch and tag deleted.
 */
export async function readBranchAndTagRefs(repo: GitRepo): Promise<Record<string, string> | null> {
  // lstat: HEAD as git keeps it, a symbolic link of an old repository to a branch not yet made included.
  const there = () => lstat(join(repo.gitDir, 'HEAD')).then(() => true, () => false)
  if (!(await there())) return null
  const refs = await readRefsOf(repo)
  return refs && (await there()) ? refs : null
}

async function readRefsOf(repo: GitRepo): Promise<Record<string, string> | null> {
  // Read from the ref files where they tell (no git process: this runs twice a push), else by git.
  const inFiles = await readRefsUnder(repo.gitDir, ['refs/heads', 'refs/tags'])
  if (inFiles) return inFiles
  const r = await runGit(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads', 'refs/tags'], repo)
  if (r.code !== 0) return null
  const refs: Record<string, string> = {}
  for (const line of r.stdout.toString('utf8').split('\n')) {
    const space = line.indexOf(' ')
    if (space > 0) refs[line.slice(space + 1)] = line.slice(0, space)
  }
  return refs
}

/** The branch HEAD names (`refs/heads/<x>` → x), or null when HEAD is detached or unreadable. */
export async function headBranchOf(repo: GitRepo): Promise<string | null> {
  // HEAD's file says it where it is git's usual one line (no git process), else git reads it.
  const head = await readHeadFile(repo.gitDir)
  if (head && 'id' in head) return null
  if (head) return head.ref.startsWith('refs/heads/') ? head.ref.slice('refs/heads/'.length) : null
  const r = await runGit(['symbolic-ref', '-q', 'HEAD'], repo)
  const ref = r.stdout.toString('utf8').trim()
  return r.code === 0 && ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null
}

/** At most this many entries of refs/ are looked at; beyond, the fingerprint says "changed" every time. */
const MAX_FINGERPRINT_ENTRIES = 20_000

/**
 * A fingerprint of where git keeps refs, from file metadata alone (no git process): HEAD,
 * packed-refs and every file and folder under refs/ (name, inode, size, modification time).
 * Git writes a ref through a lock file renamed into place, so any ref change (new inode, new
 * folder mtime) changes the fingerprint; an unchanged fingerprint means unchanged refs.
 */
export async function refsFingerprint(gitDir: string): Promise<string> {
  const entries = await listRefEntries(gitDir, 'refs', MAX_FINGERPRINT_ENTRIES)
  if (!entries) return `changing:${Date.now()}:${Math.random()}`
  // The stats run at once (start-up takes one of these per repository), then hash in order.
  const names = ['HEAD', 'packed-refs', 'refs', ...entries.map((e) => e.name)]
  const stats = await Promise.all(names.map((rel) => stat(join(gitDir, rel)).catch(() => null)))
  const hash = createHash('sha1')
  names.forEach((rel, i) => {
    const s = stats[i]
    hash.update(s ? `${rel}\0${s.ino}\0${s.size}\0${s.mtimeMs}\n` : `${rel}\0-\n`)
  })
  return hash.digest('hex')
}
