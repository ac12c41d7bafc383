/**
 * Release assets: resident memory of the server and throughput while a large asset is uploaded
 * (multipart, streamed to disk) and downloaded (streamed from disk). Starts Warren in this
 * process (so `process.memoryUsage().rss` is the server's; curl runs as a separate process),
 * writes a file of random bytes, then, sampling RSS every 50 ms: uploads it with
 * `curl -F attachment=@file` and downloads it from its browser_download_url. For each phase:
 * peak RSS, RSS 5 s after (after Bun.gc(true)) and MiB/s. If the peak grows with the size of the
 * asset, something buffers it whole.
 *
 *   bun bench/assets.ts [asset MiB = 200]
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/deps'
import { startServer } from '../src/server'
import { createUser } from '../src/modules/users/service'
import { PEAK_RSS_TARGET_MIB } from './lib/autocannon'
import { BENCH_ADMIN, clientEnv, runClient } from './lib/git'
import { measureOwnRss, ownRssMiB } from './lib/rss'

const sizeMiB = Number(process.argv[2] ?? 200)
const MiB = 1024 * 1024
const tmp = mkdtempSync(join(tmpdir(), 'warren-bench-assets-'))
const env = clientEnv(tmp)

const file = join(tmp, 'asset.bin')
const fd = openSync(file, 'w')
for (let i = 0; i < sizeMiB; i++) writeSync(fd, randomBytes(MiB))
closeSync(fd)

const config = loadConfig({}, { dataDir: join(tmp, 'data'), port: 0, host: '127.0.0.1', logLevel: 'warn', maxAttachmentSize: (sizeMiB + 1) * MiB })
const deps = await createDeps(config)
const { server } = startServer(deps, { hostname: '127.0.0.1', port: 0 })
config.baseUrl = `http://127.0.0.1:${server.port}/`
const api = `http://127.0.0.1:${server.port}/api/v1`
const auth = 'Basic ' + Buffer.from(`${BENCH_ADMIN.user}:${BENCH_ADMIN.password}`).toString('base64')
await createUser(deps, { username: BENCH_ADMIN.user, password: BENCH_ADMIN.password, email: 'admin@example.com', isAdmin: true })
const post = async (path: string, body: unknown) => {
  const res = await fetch(api + path, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`)
  return res.json() as Promise<any>
}
await post('/user/repos', { name: 'big', auto_init: true })
const release = await post(`/repos/${BENCH_ADMIN.user}/big/releases`, { tag_name: 'v1' })

async function phase(name: string, work: () => Promise<unknown>) {
  const { before, peak, after, seconds } = await measureOwnRss(work)
  console.log(
    `${name.padEnd(10)} before ${before.toFixed(0).padStart(4)} MiB  peak ${peak.toFixed(0).padStart(4)} MiB  5 s after ${after.toFixed(0).padStart(4)} MiB  ${(sizeMiB / seconds).toFixed(0)} MiB/s`,
  )
  return peak
}

try {
  console.log(`asset: ${sizeMiB} MiB of random bytes; idle ${ownRssMiB().toFixed(0)} MiB`)
  const out = join(tmp, 'upload.json')
  const up = await phase('upload', () =>
    runClient(tmp, env, ['curl', '-sSf', '-H', `authorization: ${auth}`, '-F', `attachment=@${file}`, '-o', out, `${api}/repos/${BENCH_ADMIN.user}/big/releases/${release.id}/assets`]),
  )
  const asset = await Bun.file(out).json()
  const down = await phase('download', () => runClient(tmp, env, ['curl', '-sSf', '-o', '/dev/null', asset.browser_download_url]))
  const worst = Math.max(up, down)
  console.log(`highest peak ${worst.toFixed(0)} MiB (target ≤ ${PEAK_RSS_TARGET_MIB} MiB) ${worst <= PEAK_RSS_TARGET_MIB ? 'OK' : 'MISSED'}`)
} finally {
  server.stop(true)
  rmSync(tmp, { recursive: true, force: true })
}
