import { closeSync, constants, writeSync } from 'node:fs'
import { access, chmod, lstat, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { AppDeps } from '../deps'
import type { GitRepo } from '../git/run'
import type { HookOptions } from '../git/smart-http'
import { judgeBranch, type BranchCheck, type SignatureJudge } from './branch-judge'
import { signatureJudge } from './protection-rules'
import { swapRef } from '../git/ref-swap'
import { loggerOf } from '../lib/log'

/**
 * The pre-receive hook of client pushes. Protection checks that need the pushed objects (a
 * protected branch moved: is it a force push, which files does it touch) cannot be made before
 * git has received them, so the push decision hands them to git's pre-receive hook, and the hook
 * hands them back to the server that started git, which judges them in its own process with the
 * decision's judge (./branch-judge.ts) in git's quarantine. The hook is a few lines of POSIX sh
 * (no process of Warren's to start); receive-pack runs with `core.hooksPath` at its folder.
 *
 * How the hook and the server talk: receive-pack is started with a socket at fd 3 (the git
 * layer's `channel`), which git hands down to the hook as it is; the server's end is
 * close-on-exec, so only that receive-pack and its children hold the other one. No address, no
 * secret, nothing another process could reach: only the server's own receive-pack can ask, and
 * only about its own push. The hook writes what git gave it (the quarantine's environment:
 * GIT_OBJECT_DIRECTORY, GIT_ALTERNATE_OBJECT_DIRECTORIES, GIT_QUARANTINE_PATH, each ended by a
 * NUL) and reads one line back: `accepted`, or the refusal to print. Anything else (the server
 * gone: the socket ends; a broken channel) makes the hook fail, and git then refuses the whole
 * push: a push is never accepted unjudged. The judge's git commands run under the quick time
 * limit, so an answer always comes. Git runs no hook it cannot find and then accepts: so the
 * hooks are checked (a stat and a read) before every receive-pack and written again when missing
 * or altered (hooksDir), and a push whose checks the hook never asked for is moved back before
 * it is recorded (undoUnjudged).
 *
 * Whether there is anything to judge is known once the decision is made, which a transport may
 * make after git started (SSH advertises the refs first): the decision then writes an empty file
 * whose path is in WARREN_PUSH_CHECKS. No file, no work: the hook asks nothing. The file goes when
 * the push is over. The repository's own pre-receive, update and post-receive (Gitea's
 * `hooks/{name}.d/{name}`, edited through src/modules/git-hooks, and the plain `hooks/{name}`)
 * run after the checks, with git's arguments and stdin.
 */

/**
 * Runs the repository's own hook `name` with the arguments and stdin git gave: Gitea's
 * `hooks/{name}.d/{name}` (src/modules/git-hooks), then the plain `hooks/{name}`, each when it is
 * executable (git runs hooks in the repository's folder). With both, stdin is read once and given
 * to each; a pre-receive or update that fails refuses the push.
 */
const runOwn = (name: string) => [
  `d=hooks/${name}.d/${name}; o=hooks/${name}`,
  'if [ -x "$d" ] && [ -x "$o" ]; then',
  '  input=$(cat)',
  // $(...) drops the last newline: given back, so a hook reading lines reads the last one.
  `  printf '%s\\n' "$input" | "$d" "$@" || exit 1`,
  `  printf '%s\\n' "$input" | exec "$o" "$@"`,
  'fi',
  'if [ -x "$d" ]; then exec "$d" "$@"; fi',
  'if [ -x "$o" ]; then exec "$o" "$@"; fi',
  'exit 0',
]

/** The hooks, by name: pre-receive asks the server when the decision left checks to it (`accepted` or a refusal); each then runs the repository's own. */
const HOOK_SCRIPTS: Record<string, string> = {
  'pre-receive': [
    '#!/bin/sh',
    '# Written by Warren (src/push/hook.ts): protection checks needing the pushed objects, judged by the server',
    "# that started git, over the socket at fd 3; then the repository's own pre-receive.",
    'if [ -e "$WARREN_PUSH_CHECKS" ]; then',
    `  printf '%s\\0%s\\0%s\\0' "$GIT_OBJECT_DIRECTORY" "$GIT_ALTERNATE_OBJECT_DIRECTORIES" "$GIT_QUARANTINE_PATH" 2>/dev/null >&3 || { echo 'the push could not be checked: no channel to the server' >&2; exit 1; }`,
    '  if ! IFS= read -r verdict <&3; then echo "the push could not be checked: the server did not answer" >&2; exit 1; fi',
    '  if [ "$verdict" != accepted ]; then printf \'%s\\n\' "$verdict" >&2; exit 1; fi',
    'fi',
    'exec 3>&-',
    ...runOwn('pre-receive'),
    '',
  ].join('\n'),
  ...Object.fromEntries(
    (['update', 'post-receive'] as const).map((name) => [
      name,
      ['#!/bin/sh', `# Written by Warren (src/push/hook.ts): the repository's own ${name}.`, 'exec 3>&-', ...runOwn(name), ''].join('\n'),
    ]),
  ),
}

/** The most the hook may write (three paths): more is not a hook of ours. */
const MAX_ASK_BYTES = 3 * 4096 + 3

/** The hooks git runs at each ref (update) and after the push (post-receive): run only for a repository that has its own. */
const LATER_HOOKS = ['update', 'post-receive'] as const

/**
 * Whether the repository in `gitDir` has an update or post-receive of its own (executable): a
 * push to one that has none runs no process per ref nor after the push (a hook set meanwhile is
 * run from the next push on).
 */
async function hasLaterHooks(gitDir: string): Promise<boolean> {
  for (const name of LATER_HOOKS)
    for (const path of [join(gitDir, 'hooks', `${name}.d`, name), join(gitDir, 'hooks', name)]) {
      try {
        await access(path, constants.X_OK)
        return true
      } catch {}
    }
  return false
}

/** The hooks of a folder: pre-receive alone, or with `later` the update and post-receive too. */
const hookNames = (later: boolean) => Object.keys(HOOK_SCRIPTS).filter((name) => later || name === 'pre-receive')

/** A hook folder, below the data folder: without or with the later hooks. */
const hookFolder = (later: boolean) => join('hooks', later ? 'channel-2-all' : 'channel-2')

/**
 * Which of a hook folder's hooks are not as Warren writes them (missing, another content, not a
 * regular file, not executable): git runs no hook it cannot find, and would then accept a push
 * unjudged. A stat and a read of a few hundred bytes per hook.
 */
async function hooksAltered(dir: string, later: boolean): Promise<string[]> {
  const altered: string[] = []
  for (const name of hookNames(later)) {
    const path = join(dir, name)
    const stat = await lstat(path).catch(() => null)
    const content = stat?.isFile() && (stat.mode & 0o777) === 0o755 ? await readFile(path, 'utf8').catch(() => null) : null
    if (content !== HOOK_SCRIPTS[name]) altered.push(name)
  }
  return altered
}

/** Writes each hook of `names` in `dir` atomically (a rename), with the folder of the pushes' files. */
async function writeHooks(dir: string, names: string[]): Promise<void> {
  await mkdir(join(dir, 'pushes'), { recursive: true, mode: 0o700 })
  for (const name of names) {
    const temp = join(dir, `.${name}.${process.pid}.${crypto.randomUUID()}`)
    await writeFile(temp, HOOK_SCRIPTS[name]!, { mode: 0o755 })
    await chmod(temp, 0o755)
    await rename(temp, join(dir, name))
  }
}

/**
 * Answers the hook folder of a push, its hooks checked before every receive-pack and written
 * again when one is missing or altered (a file deleted or edited while the server runs would
 * otherwise let git accept a push unjudged): pre-receive alone, or with `later` the update and
 * post-receive too. The folder is named by the hook's protocol, so a process of an older Warren
 * sharing the data folder keeps its own.
 */
async function hooksDir(deps: AppDeps, later: boolean): Promise<string> {
  const dir = join(deps.config.dataDir, hookFolder(later))
  const altered = await hooksAltered(dir, later)
  if (altered.length || !(await access(join(dir, 'pushes')).then(() => true, () => false))) await writeHooks(dir, altered)
  return dir
}

/**
 * `warren doctor`'s check of the hook folders of `dataDir`: the hooks found missing or altered in
 * a folder that exists (one no push has needed yet is written by the first), each written again
 * with `fix`. Answers the paths found (relative to the data folder).
 */
export async function checkPushHooks(dataDir: string, fix: boolean): Promise<string[]> {
  const found: string[] = []
  for (const later of [false, true]) {
    const dir = join(dataDir, hookFolder(later))
    if (!(await access(dir).then(() => true, () => false))) continue
    const altered = await hooksAltered(dir, later)
    found.push(...altered.map((name) => join(hookFolder(later), name)))
    if (fix && altered.length) await writeHooks(dir, altered)
  }
  return found
}

/** A push's hook: what receive-pack runs with, the checks handed to it, and the cleanup. */
export interface PushHook {
  /** receive-pack's hook options: the environment and the channel (serviceRpc, serviceSession). */
  git: HookOptions
  /** Hands `checks` to the hook (none: it does nothing). */
  arm(checks: BranchCheck[]): Promise<void>
  /**
   * Once git is over, before the push is recorded: when checks were handed to the hook and it
   * never asked for them (git ran no hook of ours: it was deleted or altered between its check
   * and git's run), the refs those checks cover are moved back where they were (a
   * compare-and-swap each, so a ref git did not move is left). Answers the refs moved back.
   */
  undoUnjudged(): Promise<string[]>
  dispose(): Promise<void>
}

/**
 * What the hook asks, read from `reader` (the channel): the quarantine's environment; null when
 * the channel ended first (git failed before running the hook, or the push is over); else why it
 * cannot be read.
 */
async function readAsk(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<Record<string, string> | string | null> {
  const chunks: Uint8Array[] = []
  let size = 0
  let fields: string[] = []
  while (fields.length < 4) {
    const next = await reader.read()
    if (next.done) return null
    chunks.push(next.value)
    size += next.value.length
    if (size > MAX_ASK_BYTES) return 'the hook asked too much'
    fields = Buffer.concat(chunks).toString('utf8').split('\0')
  }
  const env: Record<string, string> = {}
  const [objects, alternates, quarantine] = fields
  if (objects) env.GIT_OBJECT_DIRECTORY = objects
  if (alternates) env.GIT_ALTERNATE_OBJECT_DIRECTORIES = alternates
  if (quarantine) env.GIT_QUARANTINE_PATH = quarantine
  return env
}

/** The verdict on `checks` in git's quarantine `env`: null, or the refusal the client sees. */
async function verdictOf(checks: BranchCheck[], repo: GitRepo, env: Record<string, string>, signatures: SignatureJudge): Promise<string | null> {
  const where = { gitDir: repo.gitDir, limits: repo.limits, env }
  const refusals = await Promise.all(checks.map((check) => judgeBranch(check, where, signatures).catch((e: Error) => `the push could not be checked: ${e.message}`)))
  const at = refusals.findIndex((r) => r !== null)
  return at < 0 ? null : `refusing to accept ${checks[at]!.ref}: ${refusals[at]}`
}

/** A hook for one client push to `repo` (its receive-pack started with `git`). */
export async function pushHook(deps: AppDeps, repo: GitRepo): Promise<PushHook> {
  const dir = await hooksDir(deps, await hasLaterHooks(repo.gitDir))
  const file = join(dir, 'pushes', crypto.randomUUID())
  let checks: BranchCheck[] = []
  let channel: number | null = null
  let reader: ReadableStreamDefaultReader<Uint8Array> | null = null
  let served: Promise<void> | null = null
  let closed = false
  let asked = false
  /** Answers the hook's one question, then closes the channel; begins once there are checks and git started. */
  const serve = () => {
    if (served || channel === null || !checks.length) return
    const fd = channel
    const stream = Bun.file(fd).stream()
    reader = stream.getReader()
    served = (async () => {
      const ask = await readAsk(reader!).catch((e: Error) => `the hook could not be read: ${e.message}`)
      if (ask === null || closed) return
      asked = true
      const verdict = typeof ask === 'string' ? `the push could not be checked: ${ask}` : await verdictOf(checks, repo, ask, signatureJudge(deps))
      if (closed) return
      // One short line into an empty socket buffer: written at once. Refusals are on one line.
      try {
        writeSync(fd, `${verdict === null ? 'accepted' : verdict.replace(/[\r\n]+/g, ' ')}\n`)
      } catch {
        // The hook is gone: git has failed already.
      }
    })()
  }
  return {
    git: {
      // receive-pack's own `git maintenance run --auto` (two processes after every push, which
      // most often find nothing to do) is left to the push's sync, which runs `gc --auto` only
      // once git's limits are passed (push/sync.ts).
      env: { GIT_CONFIG_COUNT: '2', GIT_CONFIG_KEY_0: 'core.hooksPath', GIT_CONFIG_VALUE_0: dir, GIT_CONFIG_KEY_1: 'receive.autogc', GIT_CONFIG_VALUE_1: 'false', WARREN_PUSH_CHECKS: file },
      channel(fd) {
        channel = fd
        serve()
      },
    },
    async arm(deferred) {
      if (!deferred.length) return
      checks = deferred
      await writeFile(file, '', { mode: 0o600 })
      serve()
    },
    async undoUnjudged() {
      if (!checks.length) return []
      // The hook waits for the verdict, written after its question was read (asked): once git is
      // over, a hook that ran has been seen.
      if (asked) return []
      const undone: string[] = []
      for (const check of checks) if (await swapRef(repo, check.ref, check.old, check.new)) undone.push(check.ref)
      if (undone.length)
        loggerOf(deps.config).error('a push was accepted by git without the server judging it (its pre-receive hook did not run): moved back', { gitDir: repo.gitDir, refs: undone.join(' ') })
      return undone
    },
    async dispose() {
      // Git is over (or never got the push): the channel's reader stops before its fd is closed.
      closed = true
      await reader?.cancel().catch(() => {})
      await served?.catch(() => {})
      if (channel !== null) closeSync(channel)
      channel = null
      await rm(file, { force: true })
    },
  }
}
