import { existsSync } from 'node:fs'
import { mkdir, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { AppDeps } from '../deps'
import type { BranchCheck } from './branch-judge'
import { gitLimitsOf } from '../auth/repo-context'

/**
 * The pre-receive hook of client pushes. Protection checks that need the pushed objects (a
 * protected branch moved: is it a force push, which files does it touch) cannot be made before
 * git has received them, so the push decision hands them to git's pre-receive hook: receive-pack
 * runs with `core.hooksPath` at a folder of Warren's and, in WARREN_PUSH_CHECKS, the path of a
 * file the decision writes its checks to once it has judged the command list (a transport may
 * have started git before: SSH advertises the refs first). No file, no work: the hook exits at
 * once. The file goes when the push is over.
 */

/** The hook program: beside this file from source; in the bundle at its entry point's path. */
function hookProgram(): string {
  const source = fileURLToPath(new URL('./pre-receive-hook.ts', import.meta.url))
  if (existsSync(source)) return source
  const bundled = fileURLToPath(new URL('./push/pre-receive-hook.js', import.meta.url))
  if (existsSync(bundled)) return bundled
  throw new Error(`pre-receive hook program not found (looked for ${source} and ${bundled})`)
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`

const installed = new Map<string, Promise<string>>()
/** Writes the hook folder once per data folder (atomically: a rename); answers its path. */
function hooksDir(deps: AppDeps): Promise<string> {
  const dir = join(deps.config.dataDir, 'hooks')
  let done = installed.get(dir)
  if (!done) {
    done = (async () => {
      await mkdir(join(dir, 'pushes'), { recursive: true })
      const script = `#!/bin/sh\n# Written by Warren (src/push/hook.ts): protection checks needing the pushed objects.\n[ -s "$WARREN_PUSH_CHECKS" ] || exit 0\nexec ${quote(process.execPath)} ${quote(hookProgram())}\n`
      const temp = join(dir, `.pre-receive.${process.pid}`)
      await writeFile(temp, script, { mode: 0o755 })
      await rename(temp, join(dir, 'pre-receive'))
      return dir
    })()
    done.catch(() => installed.delete(dir))
    installed.set(dir, done)
  }
  return done
}

/** A push's hook: the environment receive-pack runs with, the checks handed to it, and the cleanup. */
export interface PushHook {
  env: Record<string, string>
  /** Hands `checks` to the hook (none: it does nothing). */
  arm(checks: BranchCheck[]): Promise<void>
  dispose(): Promise<void>
}

/** A hook for one client push (receive-pack started with `env`). */
export async function pushHook(deps: AppDeps): Promise<PushHook> {
  const dir = await hooksDir(deps)
  const file = join(dir, 'pushes', `${crypto.randomUUID()}.json`)
  return {
    env: { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'core.hooksPath', GIT_CONFIG_VALUE_0: dir, WARREN_PUSH_CHECKS: file },
    async arm(checks) {
      if (checks.length) await writeFile(file, JSON.stringify({ checks, limits: gitLimitsOf(deps) }))
    },
    async dispose() {
      await rm(file, { force: true })
    },
  }
}
