import { join } from 'node:path'
import { trackWork } from '../lib/in-flight'

/**
 * The only place Warren starts git. Every git process goes through `startGit` (below), which
 * gives it a clean environment, a time limit, its own process group, and a way to die with
 * the request that asked for it.
 *
 * Arguments come in two kinds, kept apart by the API:
 * - `args`: what the code itself writes: the subcommand, its options, and values the code made
 *   or vouches for (server paths, object ids git printed, `refs/heads/<name>` of a name that
 *   passed refs.ts's isSafeRefName and so cannot begin with '-').
 * - `values` (an option of its own): anything a user typed (refs, revisions, paths) that has not
 *   been checked against a strict pattern. The layer places them after `--end-of-options`, so
 *   git never reads one as an option, whatever it begins with. Code never splices a user value
 *   into `args`; a reviewer can check that by looking at `args` alone.
 *
 * Time limits (config `gitQuickTimeout` / `gitTimeout`, seconds): `budget: 'quick'` (the default)
 * for ref reads, cat-file, rev-parse, config and the like; `budget: 'long'` for work that grows
 * with the repository (archives, upload-pack, receive-pack, clones). Past its limit, or when
 * `signal` aborts (a request whose client went away), git and every process it started get
 * SIGTERM (git removes its lock files), then SIGKILL after a grace period.
 *
 * Failures become a GitError whose message is short and safe to show: the first `fatal:` /
 * `error:` line of stderr, with absolute paths hidden. A timeout is its own kind (`timeout`),
 * as is an abort (`aborted`); lib/errors.ts turns a GitError into the API's answer.
 */

/**
 * Environment for every git process: no prompts, no user or system config, fixed locale, and no
 * replace objects: a `refs/replace/*` a client pushed (or a mirror fetched) would otherwise make
 * git show another commit under an id, where everything the server keeps by object id (history
 * pages, blames, comparisons) relies on an id naming one thing for good.
 */
export function gitEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: process.env.HOME ?? '/tmp',
    LANG: 'C',
    LC_ALL: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_NO_REPLACE_OBJECTS: '1',
    ...extra,
  }
}

/** Time limits in seconds (config gitQuickTimeout / gitTimeout). */
export interface GitLimits {
  quick: number
  long: number
}

export const DEFAULT_GIT_LIMITS: GitLimits = { quick: 30, long: 600 }

/** A repository as git functions take it: its folder, the limits, and the request's signal. */
export interface GitRepo {
  gitDir: string
  limits: GitLimits
  /** Aborts (kills git) when the request that wants the answer goes away. */
  signal?: AbortSignal
  /**
   * The objects folder of another repository on this server, read beside this one's (git's
   * GIT_ALTERNATE_OBJECT_DIRECTORIES): a read-only view of both, for a comparison with a fork's
   * branch, that copies nothing into this repository.
   */
  alternates?: string
}

/**
 * The object store an answer kept by object id was read from, for its key beside the ids: the
 * repository and the objects it reads beside its own (alternates), through which an id missing
 * from the repository alone may be found. Every cache of answers by id keys them so.
 */
export const objectStoreOf = (repo: GitRepo): string => `${repo.gitDir}\0${repo.alternates ?? ''}`

export type GitErrorKind = 'failed' | 'timeout' | 'aborted'

/** A git process that failed, ran out of time, or was stopped; `message` is safe to show. */
export class GitError extends Error {
  constructor(
    public readonly kind: GitErrorKind,
    message: string,
    /** The subcommand (`archive`, `upload-pack` ...). */
    public readonly command: string,
  ) {
    super(message)
    this.name = 'GitError'
  }
}

/** A full object id as git prints it (SHA-1, or SHA-256 in a SHA-256 repository). */
const OBJECT_ID = /^[0-9a-f]{40}([0-9a-f]{24})?$/

/** The object id git prints for "no object": a ref created (before) or deleted (after). */
export const ZERO_ID = '0000000000000000000000000000000000000000'

export const isObjectId = (s: string): boolean => OBJECT_ID.test(s)

/** Refuses anything but full object ids before they reach git (as `command`'s failure). */
export function requireObjectIds(command: string, ...ids: string[]): void {
  for (const id of ids) if (!isObjectId(id)) throw new GitError('failed', `not an object id: ${JSON.stringify(id).slice(0, 80)}`, command)
}

/** At most this much of git's stderr is kept (it is a few lines; progress goes elsewhere). */
const STDERR_LIMIT = 64 * 1024
/** Between SIGTERM and SIGKILL of a process group that outlived its limit. */
const KILL_GRACE_MS = 2000

/**
 * The first `fatal:` / `error:` line of git's stderr (else its first line), at most 200
 * characters, with absolute paths (the data folder's layout) replaced by `<path>`.
 */
export function safeGitMessage(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.trim()).filter(Boolean)
  const line = lines.find((l) => /^(fatal|error):/.test(l)) ?? lines[0] ?? 'no message'
  return line.replace(/(^|[\s'"(=:])\/[^\s'"),]*/g, '$1<path>').slice(0, 200)
}

export interface GitOptions {
  /** The bare repository (sets GIT_DIR). */
  gitDir?: string
  cwd?: string
  /** User values: placed after `--end-of-options` (see the top of this file). */
  values?: readonly string[]
  /**
   * What git reads on stdin: text, bytes, or a stream (a request body); `'pipe'`: the caller
   * writes it as it goes (GitProcess.stdin), for a long-lived git answering one request at a time.
   */
  input?: string | Uint8Array | ReadableStream<Uint8Array> | 'pipe' | null
  env?: Record<string, string>
  /** Another repository's objects folder read beside this one's (GitRepo.alternates). */
  alternates?: string
  /** Which time limit applies; 'quick' unless said. */
  budget?: 'quick' | 'long'
  limits?: GitLimits
  signal?: AbortSignal
  /**
   * A socket at git's fd 3, which its children (hooks) inherit: the other end is handed to
   * `channel` as soon as git started, for the caller to talk to them over and to close (it is
   * close-on-exec on this side, so no other process holds it).
   */
  channel?: (fd: number) => void
}

/** A running git: its stdout, and how it ended (with the GitError when it was killed). */
export interface GitProcess {
  stdout: ReadableStream<Uint8Array>
  /** git's stdin when started with `input: 'pipe'` (ended with `end()`). */
  stdin?: import('bun').FileSink
  /** Stops git and its children now (a reader went away). */
  kill: () => void
  done: Promise<{ code: number; stderr: string; killed?: GitError }>
}

/** The full argument list: trusted args, then `--end-of-options` and the values, if any. */
const commandLine = (args: readonly string[], values: readonly string[] | undefined): string[] =>
  values && values.length ? ['git', ...args, '--end-of-options', ...values] : ['git', ...args]

async function collectStderr(stream: ReadableStream<Uint8Array>): Promise<string> {
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = stream.getReader()
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    if (size < STDERR_LIMIT) chunks.push(r.value)
    size += r.value.length
  }
  return Buffer.concat(chunks).toString('utf8').slice(0, STDERR_LIMIT)
}

/** Signals every process of a group (git's own children too); false when none is left. */
function signalGroup(pgid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pgid, signal)
    return true
  } catch {
    return false
  }
}

/** GIT_ALTERNATE_OBJECT_DIRECTORIES's value for one folder: a list separated by ':', so a path holding one (or a quote) is C-quoted, as git reads it. */
const alternatesValue = (dir: string): string => (/[:"\\]/.test(dir) ? `"${dir.replace(/[\\"]/g, '\\$&')}"` : dir)

/** Starts git with a time limit, in its own process group; the base of everything below. */
export function startGit(args: readonly string[], opts: GitOptions = {}): GitProcess {
  const command = args[0] ?? ''
  const stdinStream = opts.input instanceof ReadableStream ? opts.input : null
  const limit = (opts.limits ?? DEFAULT_GIT_LIMITS)[opts.budget ?? 'quick']
  if (opts.signal?.aborted) {
    stdinStream?.cancel().catch(() => {})
    return failedToStart(new GitError('aborted', 'git was stopped: the request was aborted', command))
  }
  let proc: Bun.Subprocess<any, 'pipe', 'pipe'>
  try {
    const stdin = opts.input == null ? 'ignore' : opts.input === 'pipe' ? 'pipe' : stdinStream ?? new Blob([opts.input as any])
    proc = Bun.spawn(commandLine(args, opts.values), {
      cwd: opts.cwd ?? opts.gitDir,
      env: gitEnv({ ...(opts.gitDir ? { GIT_DIR: opts.gitDir } : {}), ...(opts.alternates ? { GIT_ALTERNATE_OBJECT_DIRECTORIES: alternatesValue(opts.alternates) } : {}), ...(opts.env ?? {}) }),
      stdin,
      stdout: 'pipe',
      stderr: 'pipe',
      ...(opts.channel ? { stdio: [stdin, 'pipe', 'pipe', 'pipe'] } : {}),
      // setsid(): git leads a process group of its own, so its children can be killed with it.
      detached: true,
    }) as Bun.Subprocess<any, 'pipe', 'pipe'>
  } catch (e) {
    // Git could not even start (the repository folder is missing): a failure like git's own.
    stdinStream?.cancel().catch(() => {})
    return { ...failedToStart(null), done: Promise.resolve({ code: 128, stderr: `fatal: cannot start git: ${(e as Error).message}` }) }
  }
  if (opts.channel) opts.channel((proc.stdio as unknown as number[])[3]!)
  let killed: GitError | undefined
  let exited = false
  let graceTimer: ReturnType<typeof setTimeout> | undefined
  const stop = (reason: GitError) => {
    if (exited || killed) return
    killed = reason
    signalGroup(proc.pid, 'SIGTERM')
    graceTimer = setTimeout(() => signalGroup(proc.pid, 0) && signalGroup(proc.pid, 'SIGKILL'), KILL_GRACE_MS)
    graceTimer.unref?.()
  }
  const timer = setTimeout(
    () => stop(new GitError('timeout', `git took longer than ${limit} s`, command)),
    Math.max(1, limit * 1000),
  )
  const onAbort = () => stop(new GitError('aborted', 'git was stopped: the request was aborted', command))
  opts.signal?.addEventListener('abort', onAbort, { once: true })
  const stderr = collectStderr(proc.stderr)
  const done = Promise.all([proc.exited, stderr]).then(([code, text]) => {
    exited = true
    clearTimeout(timer)
    // A killed git's children may outlive it for the grace period; the timer stays for them.
    if (!killed && graceTimer) clearTimeout(graceTimer)
    opts.signal?.removeEventListener('abort', onAbort)
    return { code, stderr: text, ...(killed ? { killed } : {}) }
  })
  // Shutdown waits for every git process, and stops the ones still running past its grace period.
  trackWork(done, () => stop(new GitError('aborted', 'git was stopped: the server is shutting down', command)))
  const stdin = opts.input === 'pipe' ? (proc.stdin as unknown as import('bun').FileSink) : undefined
  return { stdout: proc.stdout, ...(stdin ? { stdin } : {}), kill: () => stop(new GitError('aborted', 'git was stopped: its reader went away', command)), done }
}

function failedToStart(error: GitError | null): GitProcess {
  return {
    stdout: new ReadableStream({ start: (c) => c.close() }),
    kill: () => {},
    done: Promise.resolve({ code: 128, stderr: '', ...(error ? { killed: error } : {}) }),
  }
}

export interface GitResult {
  code: number
  stdout: Buffer
  stderr: string
}

/**
 * Runs git to completion and returns its output; does not throw on a non-zero exit (callers
 * read that as "not found"), but throws GitError when git was killed (time limit, abort).
 */
export async function runGit(args: readonly string[], opts: GitOptions = {}): Promise<GitResult> {
  const p = startGit(args, opts)
  const [stdout, r] = await Promise.all([new Response(p.stdout).arrayBuffer(), p.done])
  if (r.killed) throw r.killed
  return { code: r.code, stdout: Buffer.from(stdout), stderr: r.stderr }
}

/** Runs git and returns stdout as text; throws GitError on a non-zero exit. */
export async function git(args: readonly string[], opts: GitOptions = {}): Promise<string> {
  const r = await runGit(args, opts)
  if (r.code !== 0) throw new GitError('failed', `git ${args[0]} failed: ${safeGitMessage(r.stderr)}`, args[0] ?? '')
  return r.stdout.toString('utf8')
}

/** Where an owner's repositories live on disk: `{data}/repositories/{owner}`, lower-cased. */
export function ownerPath(dataDir: string, ownerName: string): string {
  return join(dataDir, 'repositories', ownerName.toLowerCase())
}

/** Where a repository lives on disk: `{data}/repositories/{owner}/{name}.git`, lower-cased. */
export function repoPath(dataDir: string, ownerName: string, repoName: string): string {
  return join(ownerPath(dataDir, ownerName), `${repoName.toLowerCase()}.git`)
}

/** Where a repository's wiki lives on disk, beside it: `{data}/repositories/{owner}/{name}.wiki.git` (Gitea's layout). */
export function wikiPathOf(gitDir: string): string {
  return gitDir.replace(/\.git$/, '.wiki.git')
}
