import { requireObjectIds, runGit, type GitRepo } from './run'

/** The id git uses for "no ref" in a command: created refs come from it, deleted refs go to it. */
const isZeroId = (id: string) => /^0+$/.test(id)

/**
 * Moves `ref` from `old` to `new` only if it still points to `old` (git's own compare-and-swap
 * under the ref lock): a zero `old` creates a ref that must not exist yet, a zero `new` deletes
 * it. False when the ref was not at `old` (a concurrent push, or a name git refuses beside the
 * existing refs): nothing changed. The ref name must have passed the push decision.
 */
export async function swapRef(repo: GitRepo, ref: string, neu: string, old: string): Promise<boolean> {
  requireObjectIds('update-ref', neu, old)
  if (isZeroId(old) && isZeroId(neu)) return false
  const r = isZeroId(neu)
    ? await runGit(['update-ref', '-d'], { ...repo, values: [ref, old] })
    : await runGit(['update-ref'], { ...repo, values: [ref, neu, isZeroId(old) ? '' : old] })
  return r.code === 0
}
