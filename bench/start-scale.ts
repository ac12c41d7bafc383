/**
 * Start-up at scale: `warren serve` (the bundle `npm start` runs) on a data folder holding N
 * repositories (rows and bare git folders, each with its refs recorded, as a server that ran
 * leaves them), for N = 1,000, 10,000 and 100,000: time to the first answer, resident memory
 * once idle (1 s after it) and once the background sweep has read every repository, the CPU the
 * process used. Start time and idle memory must not grow with N.
 * Targets (PERFORMANCE.md): start ≤ 1 s at 100,000 repositories, flat memory.
 *
 * The data is made once per size under $TMPDIR/warren-bench-scale-<N> (rows bulk-inserted, git
 * folders written as files: a minimal bare repository) and kept for the next run.
 * On SQLite, or on a fresh PostgreSQL database when WARREN_DATABASE_URL is set (lib/database.ts;
 * made again on each run).
 *
 *   bun bench/start-scale.ts [sizes=1000,10000,100000] [runs=3]
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/deps'
import { closeDatabase, writeTransaction } from '../src/db/client'
import { repoGitStates, repositories, users } from '../src/db/schema'
import { repoPath } from '../src/git/run'
import { refsFingerprint } from '../src/git/ref-state'
import { createUser } from '../src/modules/users/service'
import { eq } from 'drizzle-orm'
import { benchDatabase } from './lib/database'
import { SWEEP_DELAY_MS } from '../src/jobs/repository-sweep'
import { memoryOf, cpuMsOf } from './lib/rss'
import { freePort } from './lib/port'

const sizes = (process.argv[2] ?? '1000,10000,100000').split(',').map(Number)
const runs = Number(process.argv[3] ?? 3)
const root = resolve(import.meta.dir, '..')
const OWNERS = 100

/** Makes (or finds) a data folder with `n` repositories spread over OWNERS owners. */
async function dataFolder(n: number, databaseUrl: string | null): Promise<string> {
  const dataDir = join(tmpdir(), `warren-bench-scale-${n}${databaseUrl ? '-pg' : ''}`)
  const done = join(dataDir, '.seeded')
  if (!databaseUrl && existsSync(done)) return dataDir
  mkdirSync(dataDir, { recursive: true })
  const deps = await createDeps(loadConfig({}, { dataDir, databaseUrl, logLevel: 'warn', passwordMemoryCost: 64, passwordTimeCost: 1 }))
  const started = performance.now()
  const owners: { id: number; name: string }[] = []
  for (let o = 0; o < OWNERS; o++) {
    const name = `owner${o}`
    const existing = (await deps.db.select({ id: users.id }).from(users).where(eq(users.lowerName, name)))[0]
    owners.push({ id: existing?.id ?? (await createUser(deps, { username: name, password: 'bench-password', email: `${name}@example.com` })).id, name })
  }
  const now = Math.floor(Date.now() / 1000)
  const CHUNK = 500
  for (let start = 0; start < n; start += CHUNK) {
    const values: (typeof repositories.$inferInsert)[] = []
    for (let i = start; i < Math.min(n, start + CHUNK); i++) {
      const owner = owners[i % OWNERS]!
      const name = `repo${i}`
      values.push({ ownerId: owner.id, ownerName: owner.name, name, lowerName: name, isEmpty: true, createdUnix: now, updatedUnix: now })
      const gitDir = repoPath(dataDir, owner.name, name)
      for (const sub of ['objects/pack', 'objects/info', 'refs/heads', 'refs/tags']) mkdirSync(join(gitDir, sub), { recursive: true })
      writeFileSync(join(gitDir, 'HEAD'), 'ref: refs/heads/main\n')
      writeFileSync(join(gitDir, 'config'), '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = true\n')
    }
    await writeTransaction(deps.db, async () => {
      const rows = await deps.db.insert(repositories).values(values).returning({ id: repositories.id, ownerName: repositories.ownerName, name: repositories.name })
      const states = await Promise.all(rows.map(async (r) => ({ repoId: r.id, refs: '{}', fingerprint: await refsFingerprint(repoPath(dataDir, r.ownerName, r.name)), updatedUnix: now })))
      await deps.db.insert(repoGitStates).values(states)
    })
  }
  for (const owner of owners) await deps.db.update(users).set({ numRepos: Math.ceil(n / OWNERS) }).where(eq(users.id, owner.id))
  await closeDatabase(deps.db)
  writeFileSync(done, '')
  console.log(`  seeded ${n} repositories in ${((performance.now() - started) / 1000).toFixed(1)} s`)
  return dataDir
}

interface Sample {
  firstAnswer: number
  /** CPU used until the first answer (ms): what the start cost, whatever the machine's load. */
  startCpu: number
  idle: number
  swept: number
  cpu: number
}

async function once(dataDir: string, databaseUrl: string | null): Promise<Sample> {
  const port = freePort()
  const started = performance.now()
  const proc = Bun.spawn([process.execPath, join(root, 'dist/bin/cli.js'), 'serve'], {
    cwd: dataDir,
    env: { ...process.env, WARREN_DATA: dataDir, WARREN_PORT: String(port), WARREN_HOST: '127.0.0.1', WARREN_LOG_LEVEL: 'warn', ...(databaseUrl ? { WARREN_DATABASE_URL: databaseUrl } : {}) },
    stdout: 'ignore',
    stderr: 'inherit',
  })
  let firstAnswer = 0
  let startCpu = 0
  let exited = false
  void proc.exited.then(() => (exited = true))
  for (;;) {
    if (exited) throw new Error(`warren serve exited (${proc.exitCode}) before answering`)
    const ok = await fetch(`http://127.0.0.1:${port}/api/v1/version`).then((r) => r.ok, () => false)
    if (ok) {
      firstAnswer = performance.now() - started
      startCpu = cpuMsOf(proc.pid)
      break
    }
    await Bun.sleep(2)
    if (performance.now() - started > 120_000) throw new Error('server did not answer within 120 s')
  }
  await Bun.sleep(1000)
  const idle = memoryOf(proc.pid).rss
  // The sweep reads every repository in the background once SWEEP_DELAY_MS have passed: wait
  // until it began and the process is idle again (no CPU used in half a second), then read its memory.
  await Bun.sleep(SWEEP_DELAY_MS + 1000)
  let cpu = cpuMsOf(proc.pid)
  for (;;) {
    await Bun.sleep(500)
    const now = cpuMsOf(proc.pid)
    if (now - cpu < 5) break
    cpu = now
  }
  const sample = { firstAnswer, startCpu, idle, swept: memoryOf(proc.pid).rss, cpu: cpuMsOf(proc.pid) }
  proc.kill()
  await proc.exited
  return sample
}

const build = Bun.spawnSync([process.execPath, 'run', 'build'], { cwd: root, stdout: 'ignore', stderr: 'pipe' })
if (build.exitCode !== 0) throw new Error(`bun run build failed: ${build.stderr.toString()}`)
console.log(`load: ${(await Bun.file('/proc/loadavg').text()).trim()}`)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
for (const n of sizes) {
  const database = await benchDatabase()
  try {
    const dataDir = await dataFolder(n, database.url)
    const samples: Sample[] = []
    for (let i = 0; i < runs; i++) samples.push(await once(dataDir, database.url))
    const m = (f: (s: Sample) => number) => median(samples.map(f))
    console.log(
      `${database.label}, ${n.toLocaleString('en')} repositories: start to first answer median ${(m((s) => s.firstAnswer) / 1000).toFixed(3)} s ` +
        `(min ${(Math.min(...samples.map((s) => s.firstAnswer)) / 1000).toFixed(3)} s, CPU until then ${m((s) => s.startCpu).toFixed(0)} ms), idle RSS ${m((s) => s.idle).toFixed(1)} MiB, ` +
        `after the background sweep ${m((s) => s.swept).toFixed(1)} MiB, CPU with the sweep ${m((s) => s.cpu).toFixed(0)} ms`,
    )
  } finally {
    await database.drop()
  }
}
console.log(`load: ${(await Bun.file('/proc/loadavg').text()).trim()}`)
console.log('targets: start ≤ 1 s at 100,000 repositories (issue: 20.9 s, 189 MiB idle before), idle memory flat')
