/**
 * git over HTTP against the file-system floor. Builds a bare repository of ≥ 50 MiB of random
 * (incompressible) content in a few commits, pushes it into a Warren started on a temp data
 * folder (`bun src/cli.ts serve`), then times, interleaved:
 *   git clone http://…/benchadmin/big.git   vs   git clone --no-local <Warren's own bare repo>
 *   git ls-remote http://…             vs   git ls-remote <path>
 * and ls-remote against a server replaying Warren's answers from memory (git's HTTP client's own
 * floor), with protocol v2 (as git asks) and v0 (as the peers answer).
 * Targets (PERFORMANCE.md): clone ≤ 1.02×, ls-remote ≤ 2.2×.
 *
 *   bun bench/clone.ts [clone runs = 5] [ls-remote runs = 30] [MiB = 56]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { sampleProcessTree } from './lib/rss'
import { PEAK_RSS_TARGET_MIB } from './lib/autocannon'
import { buildBenchRepo, clientEnv, createRepoOverApi, median, runClient, startBenchServer, waitForServer } from './lib/git'

const cloneRuns = Number(process.argv[2] ?? 5)
const lsRuns = Number(process.argv[3] ?? 30)
const mib = Number(process.argv[4] ?? 56)
const root = resolve(import.meta.dir, '..')
const tmp = mkdtempSync(join(tmpdir(), 'warren-bench-clone-'))
const port = 39700 + Math.floor(Math.random() * 200)
const env = clientEnv(tmp)
const git = (cwd: string, ...args: string[]) => runClient(cwd, env, ['git', ...args])

// 1. A source repository: `mib` MiB of random bytes spread over files in four commits.
const work = join(tmp, 'work')
await buildBenchRepo(git, work, mib)

// 2. Warren, with an admin created on first start; the repository is created over the API and
//    filled with a push over HTTP.
const dataDir = join(tmp, 'data')
const server = startBenchServer(root, dataDir, port)
const base = `http://127.0.0.1:${port}`
try {
  await waitForServer(base, server)
  await createRepoOverApi(base, 'benchadmin', 'bench-password', 'big')
  const pushMemory = sampleProcessTree(server.pid)
  const pushTime = await git(work, 'push', '-q', `http://benchadmin:bench-password@127.0.0.1:${port}/benchadmin/big.git`, '--all')
  await git(work, 'push', '-q', `http://benchadmin:bench-password@127.0.0.1:${port}/benchadmin/big.git`, '--tags')
  const repo: any = await (await fetch(`${base}/api/v1/repos/benchadmin/big`)).json()
  const bare = join(dataDir, 'repositories', 'benchadmin', 'big.git')
  console.log(`repository: ${(repo.size / 1024).toFixed(1)} MiB on disk (pushed in ${(pushTime / 1000).toFixed(2)} s)`)
  const pushRss = pushMemory.stop()
  const memory = sampleProcessTree(server.pid)

  // 3. Interleaved timings (a warm-up of each first).
  const httpUrl = `${base}/benchadmin/big.git`
  const clone = async (src: string, extra: string[]) => {
    const dest = join(tmp, 'clone')
    const ms = await git(tmp, 'clone', '-q', ...extra, src, dest)
    rmSync(dest, { recursive: true, force: true })
    return ms
  }
  await clone(httpUrl, [])
  await clone(bare, ['--no-local'])
  const times = { cloneHttp: [] as number[], cloneFile: [] as number[], lsHttp: [] as number[], lsFile: [] as number[] }
  for (let i = 0; i < cloneRuns; i++) {
    times.cloneHttp.push(await clone(httpUrl, []))
    times.cloneFile.push(await clone(bare, ['--no-local']))
  }
  await git(tmp, 'ls-remote', httpUrl)
  for (let i = 0; i < lsRuns; i++) {
    times.lsHttp.push(await git(tmp, 'ls-remote', httpUrl))
    times.lsFile.push(await git(tmp, 'ls-remote', bare))
  }
  // The client-side floor of HTTP: a server that replays Warren's answers from memory
  // (no auth, no git), to show how much of the ls-remote time is git's HTTP client itself.
  const canned = new Map<string, Uint8Array<ArrayBuffer>>()
  const replay = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const u = new URL(req.url)
      const key = req.method + u.pathname + u.search + ' ' + (req.headers.get('git-protocol') ?? '') // v0 and v2 answer differently
      const body = req.method === 'POST' ? await req.arrayBuffer() : undefined
      let answer = canned.get(key) as Uint8Array<ArrayBuffer> | undefined
      if (!answer) {
        const headers: Record<string, string> = { 'git-protocol': req.headers.get('git-protocol') ?? '' }
        if (body) headers['content-type'] = 'application/x-git-upload-pack-request'
        const r = await fetch(base + u.pathname + u.search, { method: req.method, headers, body })
        answer = new Uint8Array(await r.arrayBuffer())
        canned.set(key, answer)
      }
      const type = u.pathname.endsWith('/info/refs') ? 'advertisement' : 'result'
      return new Response(answer as Uint8Array<ArrayBuffer>, { headers: { 'content-type': `application/x-git-upload-pack-${type}` } })
    },
  })
  const rss = memory.stop()
  const replayUrl = `http://127.0.0.1:${replay.port}/benchadmin/big.git`
  await git(tmp, 'ls-remote', replayUrl)
  const lsReplay: number[] = []
  for (let i = 0; i < lsRuns; i++) lsReplay.push(await git(tmp, 'ls-remote', replayUrl))
  // The same with the client asking for protocol v0: one request (the advertisement) where v2
  // makes two (capabilities, then ls-refs). Gitea 1.3 and Gogs 0.11, the peers' figures, speak v0
  // only; Warren, as Gitea 1.23, answers v2 when asked, and git 2.18+ asks.
  await git(tmp, '-c', 'protocol.version=0', 'ls-remote', replayUrl)
  const lsReplayV0: number[] = []
  for (let i = 0; i < lsRuns; i++) lsReplayV0.push(await git(tmp, '-c', 'protocol.version=0', 'ls-remote', replayUrl))
  replay.stop(true)

  const row = (name: string, http: number[], file: number[], target: number, peers: string) => {
    const ratio = median(http) / median(file)
    console.log(
      `${name.padEnd(10)} http ${median(http).toFixed(1).padStart(8)} ms   file ${median(file).toFixed(1).padStart(8)} ms   ratio ${ratio.toFixed(3)}×  (target ≤ ${target}×) ${ratio <= target ? 'OK' : 'MISSED'}; peers ${peers}`,
    )
  }
  console.log(`medians of ${cloneRuns} clones and ${lsRuns} ls-remotes each (the peers' ratios: PERFORMANCE.md, measured 2026-11-25 in a window of their own):`)
  row('clone', times.cloneHttp, times.cloneFile, 1.02, 'Gogs 0.11 0.93×, Gitea 1.3 0.95×')
  row('ls-remote', times.lsHttp, times.lsFile, 2.2, 'Gogs 0.11 2.83×, Gitea 1.3 2.36×')
  console.log(
    `ls-remote against a replaying in-memory server (git's HTTP client floor): ${median(lsReplay).toFixed(1)} ms = ${(median(lsReplay) / median(times.lsFile)).toFixed(3)}× file` +
      ` (protocol v2, two requests); ${median(lsReplayV0).toFixed(1)} ms = ${(median(lsReplayV0) / median(times.lsFile)).toFixed(3)}× with protocol v0 (one request)`,
  )
  console.log(`Warren over the floor (v2): +${(median(times.lsHttp) - median(lsReplay)).toFixed(1)} ms a ls-remote`)
  for (const [phase, r] of [['the push', pushRss], ['the clones and ls-remotes', rss]] as const)
    console.log(
      `server resident memory during ${phase}: idle ${r.idle.toFixed(0)} MiB, peak ${r.peak.toFixed(0)} MiB, ` +
        `with the git processes it spawned ${r.peakWithChildren.toFixed(0)} MiB (target ≤ ${PEAK_RSS_TARGET_MIB} MiB at peak)`,
    )
} finally {
  server.kill()
  await server.exited
  rmSync(tmp, { recursive: true, force: true })
}
