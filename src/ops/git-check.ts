import { runGit } from '../git/run'

/** The oldest git Warren works with: `--end-of-options` (src/git/run.ts) came in git 2.24. */
export const MIN_GIT_VERSION = [2, 24, 0] as const

export type GitCheck = { ok: true; version: string } | { ok: false; version?: string; problem: string }

/** Whether git is installed (on PATH) and recent enough. */
export async function checkGit(): Promise<GitCheck> {
  let out: string
  try {
    const r = await runGit(['--version'])
    if (r.stderr.includes('cannot start git')) return { ok: false, problem: 'git is not installed (no git command on PATH)' }
    if (r.code !== 0) return { ok: false, problem: `git --version failed: ${r.stderr.trim().slice(0, 200)}` }
    out = r.stdout.toString('utf8').trim()
  } catch (e) {
    return { ok: false, problem: `git could not be run: ${(e as Error).message}` }
  }
  if (out === '') return { ok: false, problem: 'git is not installed (no git on PATH)' }
  const m = /git version (\d+)\.(\d+)(?:\.(\d+))?/.exec(out)
  if (!m) return { ok: false, problem: `unrecognised git version: ${out}` }
  const version = `${m[1]}.${m[2]}.${m[3] ?? 0}`
  const have = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)]
  for (let i = 0; i < 3; i++) {
    if (have[i]! > MIN_GIT_VERSION[i]!) break
    if (have[i]! < MIN_GIT_VERSION[i]!) return { ok: false, version, problem: `git ${version} is too old: Warren needs git ${MIN_GIT_VERSION.join('.')} or later` }
  }
  return { ok: true, version }
}
