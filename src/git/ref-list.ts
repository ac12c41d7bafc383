import { startGit, type GitRepo } from './run'
import { readTokens } from './tokens'

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

/** Refs beginning with `prefix` (which starts with `refs/`), in name order, at most `max`; `more` when there were others. */
export async function refsWithPrefix(repo: GitRepo, prefix: string, max: number): Promise<{ refs: RefEntry[]; more: boolean }> {
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
  return read.code === 0 ? { refs, more } : { refs: [], more: false }
}
