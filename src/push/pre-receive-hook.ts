/**
 * The pre-receive hook git runs for a client's push (installed by ./hook.ts): it judges the
 * changes of protected branches the push decision left to it, those needing the pushed objects
 * (force pushes, protected files), with the decision's own judge (./branch-judge.ts) in git's
 * quarantine. A refusal is printed (git relays it to the client as `remote: ...`) and the hook
 * fails, so git refuses the whole push and moves no ref.
 */
import { judgeBranch, type BranchCheck } from './branch-judge'
import type { GitLimits } from '../git/run'

/** Judges the checks in WARREN_PUSH_CHECKS; exits 1 (after printing why) at the first refusal. */
export async function runPreReceiveHook(): Promise<void> {
  const file = process.env.WARREN_PUSH_CHECKS
  if (!file) return
  const { checks, limits } = (await Bun.file(file).json()) as { checks: BranchCheck[]; limits: GitLimits }
  // What git gave the hook: the repository and the quarantine holding the pushed objects.
  const env: Record<string, string> = {}
  for (const name of ['GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_QUARANTINE_PATH']) {
    const value = process.env[name]
    if (value) env[name] = value
  }
  const where = { gitDir: process.cwd(), env, limits }
  for (const check of checks) {
    const refused = await judgeBranch(check, where).catch((e: Error) => `the push could not be checked: ${e.message}`)
    if (refused) {
      process.stderr.write(`refusing to accept ${check.ref}: ${refused}\n`)
      process.exit(1)
    }
  }
}

// Run as a script (from source, or the bundle's entry point); the compiled binary runs it as `warren __pre-receive-hook`.
if (import.meta.main) await runPreReceiveHook()
