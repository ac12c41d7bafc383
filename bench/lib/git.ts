import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'

/** The environment of the git (and curl) clients a benchmark runs: no user config, fixed identity. */
export function clientEnv(home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: 'Bench',
    GIT_AUTHOR_EMAIL: 'bench@example.com',
    GIT_COMMITTER_NAME: 'Bench',
    GIT_COMMITTER_EMAIL: 'bench@example.com',
  }
}

/** Runs a command to completion (throws with its stderr on failure); returns the milliseconds it took. */
export async function runClient(cwd: string, env: Record<string, string>, args: string[]): Promise<number> {
  return (await runClientUsage(cwd, env, args)).ms
}

/**
 * runClient, also returning the CPU time (user + system, ms) of the command and of every process
 * it waited for (git clone: its ssh client, index-pack; with --no-local, upload-pack too).
 */
export async function runClientUsage(cwd: string, env: Record<string, string>, args: string[]): Promise<{ ms: number; cpuMs: number }> {
  const started = performance.now()
  const proc = Bun.spawn(args, { cwd, env, stdout: 'ignore', stderr: 'pipe' })
  const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
  if (code !== 0) throw new Error(`${args.join(' ')} failed: ${err}`)
  const ms = performance.now() - started
  return { ms, cpuMs: Number(proc.resourceUsage()?.cpuTime.total ?? 0n) / 1000 }
}

/** Creates repository `name` over the API as `user` (Basic auth with the password). */
export async function createRepoOverApi(base: string, user: string, password: string, name: string): Promise<void> {
  const created = await fetch(`${base}/api/v1/user/repos`, {
    method: 'POST',
    headers: { authorization: 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64'), 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  })
  if (created.status !== 201) throw new Error(`create repo: ${created.status} ${await created.text()}`)
}

/** The admin a benchmark's Warren creates on first start. */
export const BENCH_ADMIN = { user: 'benchadmin', password: 'bench-password' } as const

/** Starts `warren serve` from the checkout `root` on `port`, data in `dataDir`, with BENCH_ADMIN (and `env`'s other settings). */
export function startBenchServer(root: string, dataDir: string, port: number, env: Record<string, string> = {}) {
  return Bun.spawn([process.execPath, 'src/cli.ts', 'serve'], {
    cwd: root,
    env: {
      ...process.env,
      ...env,
      WARREN_DATA: dataDir,
      WARREN_PORT: String(port),
      WARREN_HOST: '127.0.0.1',
      WARREN_ADMIN_USER: BENCH_ADMIN.user,
      WARREN_ADMIN_PASSWORD: BENCH_ADMIN.password,
      WARREN_ADMIN_EMAIL: 'admin@example.com',
    },
    stdout: 'ignore',
    stderr: 'inherit',
  })
}

/** Waits until the Warren at `base` answers (throws when its process `server` exited or it took over 10 s). */
export async function waitForServer(base: string, server: { exitCode: number | null }): Promise<void> {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/api/v1/version`)).ok) return
    } catch {}
    if (server.exitCode !== null || i > 2000) throw new Error('server did not start')
    await Bun.sleep(5)
  }
}

/**
 * A working repository in `work` (made here) of `mib` MiB of random (incompressible) bytes spread
 * over files in four commits, with a tag v1 and a branch side: the repository the clone
 * benchmarks push and clone.
 */
export async function buildBenchRepo(git: (cwd: string, ...args: string[]) => Promise<number>, work: string, mib: number): Promise<void> {
  mkdirSync(work)
  await git(work, 'init', '-q', '--initial-branch=master')
  const perCommit = Math.ceil(mib / 4)
  for (let c = 0; c < 4; c++) {
    mkdirSync(join(work, `part${c}`), { recursive: true })
    for (let f = 0; f < perCommit; f++) writeFileSync(join(work, `part${c}`, `blob${f}.bin`), randomBytes(1 << 20))
    writeFileSync(join(work, 'README.md'), `# Bench\n\ncommit ${c}\n`)
    await git(work, 'add', '-A')
    await git(work, 'commit', '-q', '-m', `commit ${c}`)
  }
  await git(work, 'tag', 'v1')
  await git(work, 'branch', 'side')
}

/** The median of a list of timings. */
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
