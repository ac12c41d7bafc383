import { join } from 'node:path'

/**
 * The only place Warren starts git. Arguments are passed as an array (never through a shell);
 * callers put user input after `--` or check it against a strict pattern first (see refs.ts).
 */

/** Environment for every git process: no prompts, no user or system config, fixed locale. */
export function gitEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    LANG: 'C',
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    ...extra,
  }
}

export interface GitResult {
  code: number
  stdout: Buffer
  stderr: string
}

class GitError extends Error {
  constructor(
    public readonly args: string[],
    public readonly code: number,
    public readonly stderr: string,
  ) {
    super(`git ${args[0]} failed (${code}): ${stderr.trim().slice(0, 500)}`)
  }
}

export interface GitOptions {
  /** The bare repository (sets GIT_DIR). */
  gitDir?: string
  cwd?: string
  input?: string | Uint8Array
  env?: Record<string, string>
}

/** Runs git to completion and returns its output; does not throw on a non-zero exit. */
export async function runGit(args: string[], opts: GitOptions = {}): Promise<GitResult> {
  let proc
  try {
    proc = Bun.spawn(['git', ...args], {
      cwd: opts.cwd ?? opts.gitDir,
      env: gitEnv({ ...(opts.gitDir ? { GIT_DIR: opts.gitDir } : {}), ...(opts.env ?? {}) }),
      stdin: opts.input !== undefined ? new Blob([opts.input as any]) : 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
    })
  } catch (e) {
    // Git could not even start (the repository folder is missing): a failure like git's own.
    return { code: 128, stdout: Buffer.alloc(0), stderr: `fatal: cannot start git: ${(e as Error).message}` }
  }
  const [stdout, stderr, code] = await Promise.all([
    new Response(proc.stdout).arrayBuffer(),
    new Response(proc.stderr).text(),
    proc.exited,
  ])
  return { code, stdout: Buffer.from(stdout), stderr }
}

/** Runs git and returns stdout as text; throws GitError on a non-zero exit. */
export async function git(args: string[], opts: GitOptions = {}): Promise<string> {
  const r = await runGit(args, opts)
  if (r.code !== 0) throw new GitError(args, r.code, r.stderr)
  return r.stdout.toString('utf8')
}

/** Where a repository lives on disk: `{data}/repositories/{owner}/{name}.git`, lower-cased. */
export function repoPath(dataDir: string, ownerName: string, repoName: string): string {
  return join(dataDir, 'repositories', ownerName.toLowerCase(), `${repoName.toLowerCase()}.git`)
}
