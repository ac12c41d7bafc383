import { runGit, type GitRepo } from './run'
import { isSafeRefName } from './refs'

/** A branch head as read by one `git for-each-ref` (no spawn per branch). */
export interface BranchHead {
  name: string
  id: string
  message: string
  authorName: string
  authorEmail: string
  authorDate: string
  committerName: string
  committerEmail: string
  committerDate: string
}

/** A commit's fields as git printed them, in this order (absent ones empty). */
export const commitHead = (id: string, an = '', ae = '', ad = '', cn = '', ce = '', cd = '', message = ''): Omit<BranchHead, 'name'> => ({
  id,
  message,
  authorName: an,
  authorEmail: ae,
  authorDate: ad,
  committerName: cn,
  committerEmail: ce,
  committerDate: cd,
})

const FIELDS = [
  '%(refname)',
  '%(objectname)',
  '%(authorname)',
  '%(authoremail:trim)',
  '%(authordate:iso-strict)',
  '%(committername)',
  '%(committeremail:trim)',
  '%(committerdate:iso-strict)',
  '%(contents)',
]
// Every field ends with NUL (messages cannot contain one), so the output splits cleanly even
// though messages contain newlines; for-each-ref's own newline then starts the next refname.
const FORMAT = '--format=' + FIELDS.map((f) => f + '%00').join('')

function parse(out: string): BranchHead[] {
  const parts = out.split('\0')
  const heads: BranchHead[] = []
  for (let i = 0; i + FIELDS.length <= parts.length; i += FIELDS.length) {
    const [ref, id, an, ae, ad, cn, ce, cd, msg] = parts.slice(i, i + FIELDS.length) as string[]
    const refname = ref!.replace(/^\n/, '')
    if (!refname.startsWith('refs/heads/')) continue
    heads.push({ name: refname.slice('refs/heads/'.length), ...commitHead(id!, an, ae, ad, cn, ce, cd, msg) })
  }
  return heads
}

/** Every branch with its head commit, sorted by name. */
export async function listBranchHeads(repo: GitRepo): Promise<BranchHead[]> {
  const r = await runGit(['for-each-ref', FORMAT, 'refs/heads'], repo)
  return r.code === 0 ? parse(r.stdout.toString('utf8')) : []
}

/** One branch (exact name), or null. */
export async function getBranchHead(repo: GitRepo, name: string): Promise<BranchHead | null> {
  if (!isSafeRefName(name)) return null
  const r = await runGit(['for-each-ref', FORMAT], { ...repo, values: [`refs/heads/${name}`] })
  if (r.code !== 0) return null
  return parse(r.stdout.toString('utf8')).find((b) => b.name === name) ?? null
}
