import { createHash } from 'node:crypto'
import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { runGit, type GitRepo } from './run'
import { readRefsUnder } from './ref-files'

/** Every branch and tag of a repository with the object it points to (`{ 'refs/heads/x': sha }`); null when git fails. */
export async function readBranchAndTagRefs(repo: GitRepo): Promise<Record<string, string> | null> {
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
  const head = await readFile(join(repo.gitDir, 'HEAD'), 'utf8').catch(() => null)
  const named = head && /^ref: refs\/heads\/([^\n]+)\n?$/.exec(head)
  if (named) return named[1]!
  if (head && /^([0-9a-f]{40}|[0-9a-f]{64})\n?$/.test(head)) return null
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
  let entries: string[] = []
  try {
    entries = (await readdir(join(gitDir, 'refs'), { recursive: true })).sort()
  } catch {}
  if (entries.length > MAX_FINGERPRINT_ENTRIES) return `changing:${Date.now()}:${Math.random()}`
  // The stats run at once (start-up takes one of these per repository), then hash in order.
  const names = ['HEAD', 'packed-refs', 'refs', ...entries.map((e) => join('refs', e))]
  const stats = await Promise.all(names.map((rel) => stat(join(gitDir, rel)).catch(() => null)))
  const hash = createHash('sha1')
  names.forEach((rel, i) => {
    const s = stats[i]
    hash.update(s ? `${rel}\0${s.ino}\0${s.size}\0${s.mtimeMs}\n` : `${rel}\0-\n`)
  })
  return hash.digest('hex')
}
