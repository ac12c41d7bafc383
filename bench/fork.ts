/**
 * Forking a large repository. Builds ≥ 50 MiB of random (incompressible) content in four commits,
 * pushes it into a Warren started on a temp data folder (`bun src/cli.ts serve`), then forks it
 * over the API into an organisation of the admin's, deletes the fork, and again, `runs` times:
 *   - fork time: the POST /repos/{o}/{r}/forks request, end to end (202 answered);
 *   - extra disk: `du -sk parent fork` (du counts a hard-linked file once) minus `du -sk parent`.
 * Targets: fork ≤ 0.5 s, extra disk ≤ 1 MiB.
 *
 *   bun bench/fork.ts [runs = 5] [MiB = 52]
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { randomBytes } from 'node:crypto'
import { clientEnv, createRepoOverApi, median, runClient, startBenchServer, waitForServer } from './lib/git'

const runs = Number(process.argv[2] ?? 5)
const mib = Number(process.argv[3] ?? 52)
const root = resolve(import.meta.dir, '..')
const tmp = mkdtempSync(join(tmpdir(), 'warren-bench-fork-'))
const port = 39900 + Math.floor(Math.random() * 90)
const env = clientEnv(tmp)
const git = (cwd: string, ...args: string[]) => runClient(cwd, env, ['git', ...args])

const work = join(tmp, 'work')
mkdirSync(work)
await git(work, 'init', '-q', '--initial-branch=master')
for (let c = 0; c < 4; c++) {
  mkdirSync(join(work, `part${c}`), { recursive: true })
  for (let f = 0; f < Math.ceil(mib / 4); f++) writeFileSync(join(work, `part${c}`, `blob${f}.bin`), randomBytes(1 << 20))
  await git(work, 'add', '-A')
  await git(work, 'commit', '-q', '-m', `commit ${c}`)
}

const dataDir = join(tmp, 'data')
const server = startBenchServer(root, dataDir, port)
const base = `http://127.0.0.1:${port}`
const auth = { authorization: 'Basic ' + Buffer.from('benchadmin:bench-password').toString('base64'), 'content-type': 'application/json' }
const api = (method: string, path: string, body?: unknown) =>
  fetch(`${base}/api/v1${path}`, { method, headers: auth, body: body === undefined ? undefined : JSON.stringify(body) })

/** Kibibytes `du -sk` counts for these folders together (each hard-linked file once). */
async function duKib(...paths: string[]): Promise<number> {
  const proc = Bun.spawn(['du', '-skc', ...paths], { stdout: 'pipe' })
  const out = await new Response(proc.stdout).text()
  await proc.exited
  return Number(/^(\d+)\s+total$/m.exec(out)![1])
}

try {
  await waitForServer(base, server)
  await createRepoOverApi(base, 'benchadmin', 'bench-password', 'big')
  await git(work, 'push', '-q', `http://benchadmin:bench-password@127.0.0.1:${port}/benchadmin/big.git`, '--all')
  const created = await api('POST', '/orgs', { username: 'forkers' })
  if (created.status !== 201) throw new Error(`create org: ${created.status} ${await created.text()}`)
  const parent = join(dataDir, 'repositories', 'benchadmin', 'big.git')
  const fork = join(dataDir, 'repositories', 'forkers', 'big.git')
  const parentKib = await duKib(parent)
  console.log(`repository: ${(parentKib / 1024).toFixed(1)} MiB on disk`)

  const times: number[] = []
  const extras: number[] = []
  for (let i = 0; i < runs; i++) {
    const started = performance.now()
    const r = await api('POST', '/repos/benchadmin/big/forks', { organization: 'forkers' })
    const ms = performance.now() - started
    if (r.status !== 202) throw new Error(`fork: ${r.status} ${await r.text()}`)
    await r.arrayBuffer()
    times.push(ms)
    extras.push((await duKib(parent, fork)) - parentKib)
    const d = await api('DELETE', '/repos/forkers/big')
    if (d.status !== 204) throw new Error(`delete fork: ${d.status}`)
  }
  const forkS = median(times) / 1000
  const extraMib = Math.max(...extras) / 1024
  console.log(`fork time: median ${forkS.toFixed(3)} s over ${runs} (${times.map((t) => (t / 1000).toFixed(3)).join(', ')}), target ≤ 0.5 s ${forkS <= 0.5 ? 'ok' : 'MISSED'}`)
  console.log(`extra disk per fork: ${Math.max(...extras)} KiB at most (${extras.join(', ')}), target ≤ 1 MiB ${extraMib <= 1 ? 'ok' : 'MISSED'}`)
} finally {
  server.kill()
  await server.exited
  rmSync(tmp, { recursive: true, force: true })
}
