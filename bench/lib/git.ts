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
  const started = performance.now()
  const proc = Bun.spawn(args, { cwd, env, stdout: 'ignore', stderr: 'pipe' })
  const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()])
  if (code !== 0) throw new Error(`${args.join(' ')} failed: ${err}`)
  return performance.now() - started
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

/** Starts `warren serve` from the checkout `root` on `port`, data in `dataDir`, with BENCH_ADMIN. */
export function startBenchServer(root: string, dataDir: string, port: number) {
  return Bun.spawn([process.execPath, 'src/cli.ts', 'serve'], {
    cwd: root,
    env: {
      ...process.env,
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
