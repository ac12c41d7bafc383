import { startGit, type GitRepo } from './run'
import { readTokens } from './tokens'
import { refAnswer } from './ref-answers'

/**
 * The repository's refs whose full names begin with a prefix (Gitea's GetRefsFiltered: a plain
 * string prefix, `refs/heads/ma` lists `refs/heads/main`), read as `for-each-ref` prints them and
 * kept up to a bound. git is asked only for the folder the prefix names (`refs/heads/` for
 * `refs/heads/ma`), so a filter narrows git's work as well as the answer.
 */

export interface RefEntry {
  name: string
  /** The object the ref points at (an annotated tag's own object, not its commit). */
  oid: string
  type: string
}

const FORMAT = '--format=%(refname)%00%(objectname)%00%(objecttype)%00'
/** Longest ref name kept. */
const MAX_REF_CHARS = 1024

/**
 * Refs beginning with `prefix` (which starts with `refs/`), in name order, at most `max`; `more`
 * when there were others. Kept under the ref state (ref-answers.ts) and served again without git
 * while it holds (read only).
 */
export async function refsWithPrefix(repo: GitRepo, prefix: string, max: number): Promise<{ readonly refs: readonly RefEntry[]; more: boolean }> {
  return refAnswer(repo.gitDir, JSON.stringify(['refs', prefix, max]), async () => {
    const read = await forEachRef(repo, prefix, max)
    return { value: read.answer, ok: read.ok, weight: read.answer.refs.reduce((n, r) => n + 80 + r.name.length, 0) }
  })
}

/** refsWithPrefix from git; `ok` false when git failed (nothing kept then). */
async function forEachRef(repo: GitRepo, prefix: string, max: number): Promise<{ answer: { refs: RefEntry[]; more: boolean }; ok: boolean }> {
  const folder = prefix.slice(0, prefix.lastIndexOf('/') + 1)
  const refs: RefEntry[] = []
  let more = false
  let fields: string[] = []
  const read = await readTokens(
    startGit(['for-each-ref', FORMAT], { ...repo, values: folder.length > 'refs/'.length && !/[*?[\\]/.test(folder) ? [folder] : [] }),
    (token) => {
      fields.push(token)
      if (fields.length < 3) return
      const [ref, oid, type] = fields as [string, string, string]
      fields = []
      const name = ref.replace(/^\n/, '')
      if (!name.startsWith(prefix)) return
      if (refs.length >= max) {
        more = true
        return false
      }
      refs.push({ name, oid, type })
    },
    MAX_REF_CHARS,
  )
  return read.code === 0 ? { answer: { refs, more }, ok: true } : { answer: { refs: [], more: false }, ok: false }
}
