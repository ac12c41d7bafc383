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
 * once. The file goes when the push is over. Git's other hooks are not run for client pushes
 * (Warren installs none); a repository's own pre-receive is run after the checks.
 */

/**
 * How the hook program is run: the script beside this file from source; in the bundle at its
 * entry point's path; in the compiled binary (no file of its own), as `warren __pre-receive-hook`.
 */
function hookCommand(): string[] {
  // Files embedded in a compiled binary live in its own file system, which only the binary reads.
  if (import.meta.url.includes('$bunfs') || import.meta.url.includes('~BUN')) return [process.execPath, '__pre-receive-hook']
  const source = fileURLToPath(new URL('./pre-receive-hook.ts', import.meta.url))
  if (existsSync(source)) return [process.execPath, source]
  const bundled = fileURLToPath(new URL('./push/pre-receive-hook.js', import.meta.url))
  if (existsSync(bundled)) return [process.execPath, bundled]
  return [process.execPath, '__pre-receive-hook']
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
      // The repository's own pre-receive hook, if any, still runs after the checks (core.hooksPath
      // replaces the folder git would look in; the hook runs in the bare repository).
      const script = [
        '#!/bin/sh',
        '# Written by Warren (src/push/hook.ts): protection checks needing the pushed objects.',
        `if [ -s "$WARREN_PUSH_CHECKS" ]; then ${hookCommand().map(quote).join(' ')} || exit 1; fi`,
        'if [ -x hooks/pre-receive ]; then exec hooks/pre-receive; fi',
        'exit 0',
        '',
      ].join('\n')
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
