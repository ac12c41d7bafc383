/**
 * Run by test/lazy-load.test.ts in a process of its own (a clean module registry): builds the app
 * as `warren serve` does (configuration from the environment), answers a first request, then asks
 * for the API document; prints which of the modules start-up should not load were loaded at each
 * step, as one JSON line.
 */
import { loadConfig } from '../src/config'
import { createDeps } from '../src/deps'
import { createApp } from '../src/app'
import { closeDatabase } from '../src/db/client'

/** Modules start-up leaves alone, by a piece of their path. */
const LAZY = {
  openapi: '/@elysiajs/openapi/',
  postgres: '/src/db/postgres.ts',
  pgSchema: '/src/db/pg-schema.ts',
  bunSqlDriver: '/drizzle-orm/bun-sql/',
  highlight: '/highlight.js/',
  ssh2: '/ssh2/',
}

const loaded = () => {
  const paths = Object.keys(require.cache)
  return Object.fromEntries(Object.entries(LAZY).map(([name, piece]) => [name, paths.some((p) => p.includes(piece))]))
}

const deps = await createDeps(loadConfig())
const app = createApp(deps)
const version = await app.handle(new Request('http://localhost/api/v1/version'))
const atStart = loaded()
const doc = await app.handle(new Request('http://localhost/swagger.v1.json'))
const afterDocument = loaded()
await closeDatabase(deps.db)
console.log(JSON.stringify({ versionStatus: version.status, documentStatus: doc.status, atStart, afterDocument }))
