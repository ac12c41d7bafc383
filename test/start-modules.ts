/**
 * Run by test/lazy-load.test.ts in a process of its own (a clean module registry): builds the app
 * as `warren serve` does (configuration from the environment), answers a first request, then asks
 * for the API document (the web pages not loaded by either), then shows a highlighted source file (its lines highlighted in the render
 * pool's workers); prints which of the modules start-up should not load were loaded in this, the
 * main, thread at each step, as one JSON line.
 */
import { loadConfig } from '../src/config'
import { createDeps } from '../src/deps'
import { createApp } from '../src/app'
import { closeDatabase } from '../src/db/client'
import { createAccessToken, createUser } from '../src/modules/users/service'
import { createRepository } from '../src/modules/repos/create'

/** Modules start-up leaves alone, by a piece of their path. */
const LAZY = {
  openapi: '/@elysiajs/openapi/',
  postgres: '/src/db/postgres.ts',
  pgSchema: '/src/db/pg-schema.ts',
  bunSqlDriver: '/drizzle-orm/bun-sql/',
  highlight: '/highlight.js/',
  ssh2: '/ssh2/',
  repoTemplates: '/src/modules/repos/templates/',
  // The web pages, loaded (and their routes registered) by the first request for a page.
  webPages: '/src/web/pages/',
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
const owner = await createUser(deps, { username: 'lazy', password: 'lazy-password-1', email: 'lazy@example.com' })
const { secret } = await createAccessToken(deps, owner.id, 'lazy')
await createRepository(deps, owner, { name: 'code' })
const put = await app.handle(
  new Request('http://localhost/api/v1/repos/lazy/code/contents/main.ts', {
    method: 'POST',
    headers: { authorization: `token ${secret}`, 'content-type': 'application/json' },
    body: JSON.stringify({ content: Buffer.from('export const answer: number = 42\n').toString('base64'), message: 'A file' }),
  }),
)
const view = await app.handle(new Request('http://localhost/lazy/code/src/branch/main/main.ts'))
const viewHtml = await view.text()
const afterFileView = loaded()
await closeDatabase(deps.db)
console.log(
  JSON.stringify({
    versionStatus: version.status,
    documentStatus: doc.status,
    putStatus: put.status,
    fileViewStatus: view.status,
    fileViewHighlighted: viewHtml.includes('<b>export const</b>'),
    atStart,
    afterDocument,
    afterFileView,
  }),
)
