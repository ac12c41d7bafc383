import { startGit, type GitRepo } from './run'
import { MAX_FIELD_CHARS, readTokens } from './tokens'
import { isSafeRefName } from './ref-name'
import { refAnswer, type RefState } from './ref-answers'

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

/** A window of a name-ordered list: skip `offset` entries, keep at most `limit`. */
export interface RefWindow {
  offset: number
  limit: number
}

/**
 * The branches in name order within `window`, with their head commits, and how many there are
 * in all. git's output is read as it arrives (one `for-each-ref`, no spawn per branch): only the
 * window's heads are kept, and each field of theirs to MAX_FIELD_CHARS, so memory stays bounded
 * whatever the number of branches or the size of their messages.
 */
export async function listBranchHeads(repo: GitRepo, window: RefWindow, state?: RefState): Promise<{ readonly heads: readonly BranchHead[]; total: number }> {
  // Kept under the repository's ref state (refAnswer: HEAD, packed-refs and the loose refs, by
  // content) and served again without a git process while no ref moved: a commit never changes
  // under its id, so the heads' fields are what git would print again. A page is bounded
  // (MAX_FIELD_CHARS a field), and so is what refAnswer keeps.
  const request = `branch-heads\0${window.offset}\0${window.limit}\0${repo.alternates ?? ''}`
  return refAnswer(
    repo.gitDir,
    request,
    async () => {
      const { heads, total, ok } = await readBranchHeads(repo, ['refs/heads'], window)
      return { value: { heads, total }, ok, weight: heads.reduce((n, h) => n + headWeight(h), 0) }
    },
    state,
  )
}

/** What a head weighs kept (its characters, about). */
const headWeight = (h: BranchHead): number => 100 + h.name.length + h.message.length + h.authorName.length + h.committerName.length

/**
 * Branch heads of the refs `patterns` name (for-each-ref's patterns, passed as values), within
 * `window`; with `only`, the one branch of that exact name (a pattern also names the refs below it).
 */
async function readBranchHeads(repo: GitRepo, patterns: string[], window: RefWindow, only?: string): Promise<{ heads: BranchHead[]; total: number; ok: boolean }> {
  const heads: BranchHead[] = []
  let total = 0
  let fields: string[] = []
  // Records are FIELDS.length tokens; for-each-ref's newline after each record starts the next
  // refname (and stands alone as the output's last token, which completes no record).
  const r = await readTokens(
    startGit(['for-each-ref', FORMAT], { ...repo, values: patterns }),
    (token) => {
      fields.push(token)
      if (fields.length < FIELDS.length) return
      const [ref, id, an, ae, ad, cn, ce, cd, msg] = fields
      fields = []
      const refname = ref!.replace(/^\n/, '')
      if (!refname.startsWith('refs/heads/')) return
      if (only !== undefined && refname !== `refs/heads/${only}`) return
      const index = total++
      if (index >= window.offset && index < window.offset + window.limit)
        heads.push({ name: refname.slice('refs/heads/'.length), ...commitHead(id!, an, ae, ad, cn, ce, cd, msg) })
    },
    MAX_FIELD_CHARS,
  )
  return r.code === 0 ? { heads, total, ok: true } : { heads: [], total: 0, ok: false }
}

/** One branch (exact name), or null; kept under the ref state as the list is (read only). */
export async function getBranchHead(repo: GitRepo, name: string): Promise<Readonly<BranchHead> | null> {
  if (!isSafeRefName(name)) return null
  const request = `branch-head\0${name}\0${repo.alternates ?? ''}`
  return refAnswer(repo.gitDir, request, async () => {
    const { heads, ok } = await readBranchHeads(repo, [`refs/heads/${name}`], { offset: 0, limit: 1 }, name)
    const head = heads[0] ?? null
    return { value: head, ok, weight: head ? headWeight(head) : 1 }
  })
}
