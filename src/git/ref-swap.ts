import { requireObjectIds, runGit, type GitRepo } from './run'

/** The id git uses for "no ref" in a command: created refs come from it, deleted refs go to it. */
const isZeroId = (id: string) => /^0+$/.test(id)

/** One ref to move: from `old` to `new` (zeros: created, or deleted). */
export interface RefSwap {
  ref: string
  old: string
  new: string
}

/**
 * Moves `ref` from `old` to `new` only if it still points to `old` (git's own compare-and-swap
 * under the ref lock): a zero `old` creates a ref that must not exist yet, a zero `new` deletes
 * it. False when the ref was not at `old` (a concurrent push, or a name git refuses beside the
 * existing refs): nothing changed. The ref name must have passed the push decision.
 */
export async function swapRef(repo: GitRepo, ref: string, neu: string, old: string): Promise<boolean> {
  return await swapRefs(repo, [{ ref, new: neu, old }])
}

/**
 * Moves every ref of `swaps` in one git transaction (`update-ref --stdin`: all of them or none),
 * each only if it still points to its `old`, as swapRef does for one. False when one of them
 * could not move: then nothing changed. The ref names must have passed the push decision (they
 * reach git on its standard input, one command a line, so they hold no whitespace).
 */
export async function swapRefs(repo: GitRepo, swaps: readonly RefSwap[]): Promise<boolean> {
  if (!swaps.length) return false
  for (const s of swaps) {
    requireObjectIds('update-ref', s.new, s.old)
    if ((isZeroId(s.old) && isZeroId(s.new)) || /\s/.test(s.ref)) return false
  }
  if (swaps.length === 1) {
    const [s] = swaps as [RefSwap]
    const r = isZeroId(s.new)
      ? await runGit(['update-ref', '-d'], { ...repo, values: [s.ref, s.old] })
      : await runGit(['update-ref'], { ...repo, values: [s.ref, s.new, isZeroId(s.old) ? '' : s.old] })
    return r.code === 0
  }
  const commands = swaps.map((s) =>
    isZeroId(s.new) ? `delete ${s.ref} ${s.old}` : isZeroId(s.old) ? `create ${s.ref} ${s.new}` : `update ${s.ref} ${s.new} ${s.old}`,
  )
  const r = await runGit(['update-ref', '--stdin'], { ...repo, input: commands.join('\n') + '\n' })
  return r.code === 0
}

/**
 * Moves the refs of `swaps` one after the other, each as swapRef does, for moves git cannot make
 * in one transaction (a branch renamed to a name below its own, `a` to `a/b`: the old ref must be
 * gone before the new one can be made). When one cannot move, those already moved are moved back
 * (each from its new value to its old, in reverse order) and the answer is false.
 */
export async function swapRefsInTurn(repo: GitRepo, swaps: readonly RefSwap[]): Promise<boolean> {
  const done: RefSwap[] = []
  for (const s of swaps) {
    if (!(await swapRef(repo, s.ref, s.new, s.old))) {
      for (const d of done.reverse()) await swapRef(repo, d.ref, d.old, d.new)
      return false
    }
    done.push(s)
  }
  return true
}
