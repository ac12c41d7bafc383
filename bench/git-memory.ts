/**
 * Resident memory of the server while pack data and downloads stream through it. Starts Warren
 * in this process (so `process.memoryUsage().rss` is the server's; git, curl and the git client
 * run as separate processes), builds a repository of random (incompressible) content — one
 * large file plus many 1 MiB files over several commits — and then, sampling RSS every 50 ms:
 *   push it over HTTP, clone it over HTTP three times, download the large file through
 *   /raw/ and a tar.gz archive of the repository.
 * For each phase: peak RSS while it runs and RSS 5 s after it ended (after Bun.gc(true)).
 * If the peak grows with the size of the data, something buffers it whole.
 *
 *   bun bench/git-memory.ts [total MiB = 200] [large file MiB = 100]
 */
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/deps'
import { startServer } from '../src/server'
import { createUser } from '../src/modules/users/service'
import { PEAK_RSS_TARGET_MIB } from './lib/autocannon'
import { clientEnv, createRepoOverApi, runClient } from './lib/git'
import { measureOwnRss, settledRssMiB } from './lib/rss'

const totalMiB = Number(process.argv[2] ?? 200)
const largeMiB = Math.min(Number(process.argv[3] ?? 100), totalMiB)
const MiB = 1024 * 1024
const tmp = mkdtempSync(join(tmpdir(), 'warren-bench-memory-'))
const env = clientEnv(tmp)
const run = (cwd: string, ...args: string[]) => runClient(cwd, env, args)

/** Writes `mib` MiB of random bytes one MiB at a time (this process never holds more). */
function randomFile(path: string, mib: number) {
  const fd = openSync(path, 'w')
  for (let i = 0; i < mib; i++) writeSync(fd, randomBytes(MiB))
  closeSync(fd)
}

// 1. The source repository: the large file in the first commit, the rest as 1 MiB files
//    spread over four more commits.
const work = join(tmp, 'work')
mkdirSync(work)
await run(work, 'git', 'init', '-q', '--initial-branch=master')
randomFile(join(work, 'large.bin'), largeMiB)
await run(work, 'git', 'add', '-A')
await run(work, 'git', 'commit', '-q', '-m', 'large file')
const rest = totalMiB - largeMiB
for (let c = 0; c < 4; c++) {
  mkdirSync(join(work, `part${c}`))
  const files = Math.floor(rest / 4) + (c < rest % 4 ? 1 : 0)
  for (let f = 0; f < files; f++) randomFile(join(work, `part${c}`, `blob${f}.bin`), 1)
  await run(work, 'git', 'add', '-A')
  await run(work, 'git', 'commit', '-q', '-m', `commit ${c}`)
}

// 2. Warren in this process.
const dataDir = join(tmp, 'data')
const config = loadConfig({}, { dataDir, port: 0, host: '127.0.0.1', logLevel: 'warn' })
const deps = await createDeps(config)
const { server } = startServer(deps, { hostname: '127.0.0.1', port: 0 })
config.baseUrl = `http://127.0.0.1:${server.port}/`
const base = `http://127.0.0.1:${server.port}`
await createUser(deps, { username: 'benchadmin', password: 'bench-password', email: 'admin@example.com', isAdmin: true })
await createRepoOverApi(base, 'benchadmin', 'bench-password', 'big')
const authUrl = `http://benchadmin:bench-password@127.0.0.1:${server.port}/benchadmin/big.git`

interface Phase {
  name: string
  before: number
  peak: number
  after: number
  seconds: number
}
const phases: Phase[] = []
async function phase(name: string, work: () => Promise<unknown>) {
  const { before, peak, after, seconds } = await measureOwnRss(work)
  phases.push({ name, before, peak, after, seconds })
  console.log(`${name.padEnd(22)} before ${before.toFixed(0).padStart(4)} MiB  peak ${peak.toFixed(0).padStart(4)} MiB  5 s after ${after.toFixed(0).padStart(4)} MiB  (${seconds.toFixed(1)} s)`)
}

try {
  const idle = await settledRssMiB()
  console.log(`repository: ${totalMiB} MiB of random content (one file of ${largeMiB} MiB), 5 commits`)
  console.log(`idle (in-process server, after Bun.gc(true)): ${idle.toFixed(0)} MiB`)
  await phase('push', () => run(work, 'git', 'push', '-q', authUrl, 'master'))
  for (let i = 1; i <= 3; i++) {
    const dest = join(tmp, `clone${i}`)
    await phase(`clone ${i}`, () => run(tmp, 'git', 'clone', '-q', '--bare', authUrl, dest))
    rmSync(dest, { recursive: true, force: true })
  }
  const curl = (path: string) => run(tmp, 'curl', '-sSf', '-u', 'benchadmin:bench-password', '-o', '/dev/null', base + path)
  await phase(`raw ${largeMiB} MiB file`, () => curl('/benchadmin/big/raw/branch/master/large.bin'))
  await phase('archive tar.gz', () => curl('/benchadmin/big/archive/master.tar.gz'))
  const worst = Math.max(...phases.map((p) => p.peak))
  console.log(`highest peak ${worst.toFixed(0)} MiB (target ≤ ${PEAK_RSS_TARGET_MIB} MiB) ${worst <= PEAK_RSS_TARGET_MIB ? 'OK' : 'MISSED'}`)
} finally {
  server.stop(true)
  rmSync(tmp, { recursive: true, force: true })
}
