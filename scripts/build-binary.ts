/**
 * `npm run binary`: the single binary, dist/warren, in two passes. The first build carries the
 * code's bytecode; it is then started once on an empty data folder (until its first answer and a
 * moment after) with BUN_BYTECODE_ORDER_OUT, which writes the order in which its functions ran;
 * the second build lays the bytecode out in that order, so a start reads (and keeps resident) the
 * pages it needs together rather than pages scattered through the whole file.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const root = resolve(import.meta.dir, '..')
const outfile = join(root, 'dist/warren')
const ENTRIES = ['src/cli.ts', 'src/modules/markdown/render-worker.ts', 'src/webhooks/worker-thread.ts', 'src/db/read-thread-worker.ts']

function build(extra: string[]): void {
  const args = ['build', ...ENTRIES, '--compile', '--bytecode', '--format=esm', '--minify-syntax', '--minify-identifiers', ...extra, '--outfile', outfile]
  const r = Bun.spawnSync([process.execPath, ...args], { cwd: root, stdout: 'inherit', stderr: 'inherit' })
  if (r.exitCode !== 0) process.exit(r.exitCode ?? 1)
}

/** A free loopback port. */
function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
  const port = probe.port!
  probe.stop(true)
  return port
}

build([])
const scratch = mkdtempSync(join(tmpdir(), 'warren-binary-order-'))
const order = join(scratch, 'order')
try {
  const port = freePort()
  const server = Bun.spawn([outfile, 'serve'], {
    cwd: scratch,
    env: { PATH: process.env.PATH ?? '', WARREN_DATA: join(scratch, 'data'), WARREN_PORT: String(port), WARREN_HOST: '127.0.0.1', WARREN_LOG_LEVEL: 'warn', BUN_BYTECODE_ORDER_OUT: order },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  const deadline = Date.now() + 60_000
  while (!(await fetch(`http://127.0.0.1:${port}/api/v1/version`).then((r) => r.ok, () => false))) {
    if (Date.now() > deadline || server.exitCode !== null) throw new Error('the first build did not answer: no order recorded')
    await Bun.sleep(20)
  }
  await Bun.sleep(500)
  server.kill('SIGTERM')
  if ((await server.exited) !== 0) throw new Error('the first build did not stop cleanly: no order recorded')
  build([`--bytecode-order=${order}`])
} finally {
  rmSync(scratch, { recursive: true, force: true })
}
