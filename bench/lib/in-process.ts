/**
 * A Warren in the bench's own process (the benches of protection, notifications and scale): a temp
 * data folder, the bench's database (lib/database.ts: SQLite, or a fresh PostgreSQL database when
 * WARREN_DATABASE_URL is set), cheap password hashing, quiet logs, the server on a free loopback
 * port with its base URL set; `close()` stops it and removes what it made (`keep`: leaves the data
 * for EXPLAIN and says where).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/config'
import { createDeps } from '../../src/deps'
import { startServer } from '../../src/server'
import { closeDatabase } from '../../src/db/client'
import { benchDatabase, closeBenchDatabase } from './database'

export async function inProcessWarren(name: string) {
  const tmp = mkdtempSync(join(tmpdir(), `warren-bench-${name}-`))
  const database = await benchDatabase()
  const config = loadConfig({}, { dataDir: join(tmp, 'data'), databaseUrl: database.url, port: 0, host: '127.0.0.1', logLevel: 'warn', passwordMemoryCost: 64, passwordTimeCost: 1 })
  const deps = await createDeps(config)
  const { server } = startServer(deps, { hostname: '127.0.0.1', port: 0 })
  const base = `http://127.0.0.1:${server.port}`
  config.baseUrl = `${base}/`
  return {
    tmp,
    database,
    config,
    deps,
    server,
    base,
    async close(opts: { keep?: boolean } = {}) {
      server.stop(true)
      await Bun.sleep(200) // requests still in flight when the load ended finish before the database closes
      if (opts.keep) {
        await closeDatabase(deps.db)
        console.log(`kept: ${database.url ?? join(tmp, 'data')}`)
        return
      }
      await closeBenchDatabase(deps.db, database)
      rmSync(tmp, { recursive: true, force: true })
    },
  }
}
