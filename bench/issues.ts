/**
 * The issue tracker under load: listing page 2 of the open issues of a repository holding
 * 10,000 labelled issues, and filing issues with 16 concurrent writers.
 * Starts Warren in this process on a temp data folder (port 0); the issues are bulk-inserted
 * through the database for a quick setup. autocannon (16 connections) runs in its own process.
 * Issues are filed twice: with a token of scope `all` (what tokens made before scopes became) and
 * with one scoped to `write:issue` (the pipeline checks the issue category for it), with the same
 * index-counter check after each; then comments posted to one issue by the same 16 writers, its
 * comment count checked against its comments.
 * Targets: listing ≥ 3,000 req/s; creating ≥ 1,500 issues/s with 0 errors; on PostgreSQL every
 * scenario, commenting too, ≥ 0.5× SQLite's (bench/postgres.ts sets them side by side).
 * Runs on SQLite, or on a fresh PostgreSQL database when WARREN_DATABASE_URL is set (lib/database.ts).
 * Request log lines are off (logLevel warn): one line per request would measure the log, not the server.
 *
 *   bun bench/issues.ts [seconds=10]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { and, count, eq, sql } from 'drizzle-orm'
import { loadConfig } from '../src/config'
import { createDeps } from '../src/deps'
import { writeTransaction } from '../src/db/client'
import { comments, issueIndexes, issueLabels, issues, labels, repositories } from '../src/db/schema'
import { startServer } from '../src/server'
import { createAccessToken, createUser } from '../src/modules/users/service'
import { createRepository } from '../src/modules/repos/create'
import { autocannon, durationFromArgv, printRssSummary, reportLine } from './lib/autocannon'
import { analyze, benchDatabase, closeBenchDatabase } from './lib/database'

const seconds = durationFromArgv()
const ISSUES = 10_000

const dataDir = mkdtempSync(join(tmpdir(), 'warren-bench-issues-'))
const database = await benchDatabase()
const config = loadConfig({}, { dataDir, databaseUrl: database.url, port: 0, host: '127.0.0.1', logLevel: 'warn' })
const deps = await createDeps(config)
console.log(`database: ${database.label}`)
const user = await createUser(deps, { username: 'planner', password: 'bench-password', email: 'planner@example.com' })
const { secret } = await createAccessToken(deps, user.id, 'bench')
const { secret: issueToken } = await createAccessToken(deps, user.id, 'bench-issues', ['write:issue'])
const repo = await createRepository(deps, user, { name: 'roadmap' })

// 10,000 issues (one in ten closed), each with one or two of five labels.
const started = performance.now()
await writeTransaction(deps.db, async () => {
  const now = Math.floor(Date.now() / 1000)
  const labelIds: number[] = []
  for (const [i, name] of ['bug', 'feature', 'docs', 'ui', 'perf'].entries())
    labelIds.push(
      (await deps.db
        .insert(labels)
        .values({ repoId: repo.id, name, color: `#${String(i).repeat(6)}`, createdUnix: now, updatedUnix: now })
        .returning())[0]!.id,
    )
  const CHUNK = 500
  let closed = 0
  for (let start = 1; start <= ISSUES; start += CHUNK) {
    const batch = []
    for (let index = start; index < start + CHUNK && index <= ISSUES; index++) {
      const isClosed = index % 10 === 0
      if (isClosed) closed++
      batch.push({ repoId: repo.id, index, posterId: user.id, title: `Issue number ${index}`, content: `Body of issue ${index}`, isClosed, createdUnix: now - ISSUES + index, updatedUnix: now, closedUnix: isClosed ? now : 0 })
    }
    const rows: { id: number; index: number }[] = await deps.db.insert(issues).values(batch).returning({ id: issues.id, index: issues.index })
    const links = rows.flatMap((r) => (r.index % 3 === 0 ? [labelIds[r.index % 5]!, labelIds[(r.index + 1) % 5]!] : [labelIds[r.index % 5]!]).map((labelId) => ({ issueId: r.id, labelId })))
    await deps.db.insert(issueLabels).values(links)
  }
  await deps.db.insert(issueIndexes).values({ repoId: repo.id, maxIndex: ISSUES })
  await deps.db.update(repositories).set({ numIssues: ISSUES, numClosedIssues: closed }).where(eq(repositories.id, repo.id))
  await deps.db
    .update(labels)
    .set({
      numIssues: sql`(select count(*) from ${issueLabels} where ${issueLabels.labelId} = ${labels.id})`,
      numClosedIssues: sql`(select count(*) from ${issueLabels} join ${issues} on ${issues.id} = ${issueLabels.issueId} where ${issueLabels.labelId} = ${labels.id} and ${eq(issues.isClosed, true)})`,
    })
    .where(eq(labels.repoId, repo.id))
})
await analyze(deps.db)
console.log(`setup: ${ISSUES.toLocaleString('en')} labelled issues in ${Math.round(performance.now() - started)} ms`)

const { server } = startServer(deps, { hostname: '127.0.0.1', port: 0 })
const base = `http://127.0.0.1:${server.port}/api/v1/repos/planner/roadmap/issues`

async function run(label: string, url: string, args: string[]) {
  const r = await autocannon(url, seconds, args)
  console.log(reportLine(label, r, 34, true))
  return r
}

try {
  const listUrl = `${base}?state=open&page=2`
  const check = await fetch(listUrl)
  const page: any[] = (await check.json()) as any[]
  if (check.status !== 200 || page.length !== 30 || page.some((i) => i.labels.length === 0))
    throw new Error(`list check failed: ${check.status}, ${page.length} issues`)
  console.log(`16 connections, ${seconds} s each`)
  await run('GET issues?state=open&page=2', listUrl, [])
  // Read together under the write lock, so a request still in flight cannot commit in between.
  const counts = () =>
    writeTransaction(deps.db, async () => [
      (await deps.db.select({ n: count() }).from(issues))[0]!.n,
      (await deps.db.select().from(issueIndexes).where(eq(issueIndexes.repoId, repo.id)))[0]!.maxIndex,
    ])
  for (const [label, token] of [
    ['POST issues (16 writers, scope all)', secret],
    ['POST issues (16 writers, write:issue)', issueToken],
  ] as const) {
    const [before, indexBefore] = await counts()
    const created = await run(label, base, [
      '-m',
      'POST',
      '-H',
      `Authorization: token ${token}`,
      '-H',
      'Content-Type: application/json',
      '-b',
      JSON.stringify({ title: 'Filed under load', body: 'Benchmark issue' }),
    ])
    const [after, maxIndex] = await counts()
    console.log(
      `created ${after - before} issues (autocannon saw ${created['2xx']} 2xx, ${created.non2xx} non-2xx); index counter ${maxIndex} = ${indexBefore} + ${maxIndex - indexBefore}` +
        (maxIndex - indexBefore === after - before ? ', no gaps' : ', MISMATCH'),
    )
  }
  // Comments on one issue, the same 16 writers: the issue's count must match its comments.
  const target = ISSUES
  const commentedIssueId = (await deps.db.select({ id: issues.id }).from(issues).where(and(eq(issues.repoId, repo.id), eq(issues.index, target))))[0]!.id
  const commentsOf = () =>
    writeTransaction(deps.db, async () => [
      (await deps.db.select({ n: count() }).from(comments).where(eq(comments.issueId, commentedIssueId)))[0]!.n,
      (await deps.db.select({ n: issues.numComments }).from(issues).where(eq(issues.id, commentedIssueId)))[0]!.n,
    ])
  const [commentsBefore] = await commentsOf()
  const commented = await run(`POST issues/${target}/comments`, `${base}/${target}/comments`, [
    '-m',
    'POST',
    '-H',
    `Authorization: token ${issueToken}`,
    '-H',
    'Content-Type: application/json',
    '-b',
    JSON.stringify({ body: 'Commented under load' }),
  ])
  const [commentsAfter, counted] = await commentsOf()
  console.log(
    `created ${commentsAfter - commentsBefore} comments (autocannon saw ${commented['2xx']} 2xx, ${commented.non2xx} non-2xx); the issue counts ${counted}` +
      (counted === commentsAfter ? ', matching' : ', MISMATCH'),
  )
  printRssSummary()
} finally {
  await server.stop(true)
  await Bun.sleep(200) // let requests still in flight when the load ended finish before the database closes
  await closeBenchDatabase(deps.db, database)
  rmSync(dataDir, { recursive: true, force: true })
}
