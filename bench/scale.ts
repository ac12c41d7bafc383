/**
 * Lists at scale: the same pages at 1k, 10k and 100k rows, which should stay flat (±20%).
 *
 * A Warren in this process; rows are added straight into the database through Drizzle (big
 * transactions), growing one data set to each size in turn (the sizes are totals):
 *   - `viewer/big` (a real git repository): N issues (one in ten closed, a third labelled), NEEDLES
 *     of them titled `Needle issue <i>` whatever N (the issue searches by text, in the repository
 *     and across repositories, ask for `needle`);
 *   - `viewer/prs` (a real git repository with a branch `feature`): N pull requests of feature
 *     into main (one in ten closed), so each page's diff stats are read from git as usual;
 *   - N repositories over 50 owners, for the search: NEEDLES of them named `needle-<i>` whatever
 *     N (the search asks for `needle`: a page and a count of the same 50 at every size), the
 *     others `project-<i>`;
 *   - N stars, one of each repository by another owner, and the viewer's of the NEEDLES (the
 *     viewer's starred list asks for those: the same 50 at every size); the viewer's own list
 *     (/user/repos) is its two repositories at every size;
 *   - N notification threads, one per issue of big (a third read): VIEWER_THREADS of them the
 *     viewer's, whose list is asked for (its length the same at every size: a count of a
 *     user's own threads grows with them, as Gitea's does), the others the owners';
 * At each size, for each page: requests per second under 16 connections (autocannon, its own
 * process) on one URL, as a client repeating it sees it (pull and repository pages are served
 * from the page cache after the first: `db/page-cache.ts`; the issue search's count is kept for
 * the pages of one search, so each of its pages below is a search of its own, a `before` past
 * every issue), and p50 of sequential requests
 * of 30 different pages (pages 1–30, 10 rows a page: never asked before, so never cached; the
 * repository home, which has no pages: 30 requests of it) with the CPU this process spent a page;
 * the server's resident memory after each size (after a full collection). Then, under 16
 * connections asking the issue search across repositories without a text (a count of every visible
 * issue, on SQLite run off the event loop: db/read-thread.ts; each request a search of its own,
 * lib/varied-load.ts, as the pages of one search share its count), the time of GET /version asked
 * meanwhile from this process (target, PERFORMANCE.md: ≤ 50 ms p99 while any other request runs).
 * Prints the ratio 100k ÷ 1k (or largest ÷ smallest) of each; target (PERFORMANCE.md): flat
 * within ±20% on both databases.
 * On SQLite, or on a fresh PostgreSQL database when WARREN_DATABASE_URL is set (lib/database.ts).
 *
 * `--keep` leaves the data (the SQLite file, or the PostgreSQL database) for EXPLAIN and prints where.
 *
 *   bun bench/scale.ts [--sizes 1000,10000,100000] [--seconds 5] [--keep]
 */
import { parseArgs } from 'node:util'
import { eq, sql } from 'drizzle-orm'
import { writeTransaction } from '../src/db/client'
import { issueIndexes, issueLabels, issues, labels, notifications, pullRequests, repositories, stars, users } from '../src/db/schema'
import { createAccessToken, createUser } from '../src/modules/users/service'
import { createRepository } from '../src/modules/repos/create'
import { autocannon, reportLine } from './lib/autocannon'
import { futureTime, variedLoad } from './lib/varied-load'
import { inProcessWarren } from './lib/in-process'
import { loadAverages, percentile } from './lib/latency'

const { values: args } = parseArgs({ options: { sizes: { type: 'string', default: '1000,10000,100000' }, seconds: { type: 'string', default: '5' }, keep: { type: 'boolean', default: false } } })
const sizes = args.sizes!.split(',').map(Number)
const seconds = Number(args.seconds)
if (!sizes.length || sizes.some((n, i) => !Number.isInteger(n) || n < 400 || (i > 0 && n <= sizes[i - 1]!)) || !(seconds > 0))
  throw new Error('usage: bun bench/scale.ts [--sizes 1000,10000,100000 (increasing, each ≥ 400: 30 pages of 10 open rows)] [--seconds 5]')
const OWNERS = 50
const PAGES = 30
const CHUNK = 2000
const FLAT = 0.2
/** Notification threads of the viewer (the list asked for); the table's other rows are other people's. */
const VIEWER_THREADS = 1000
/** Repositories the search finds, the same at every size. */
const NEEDLES = 50

const warren = await inProcessWarren('list-scale')
const { database, deps, base } = warren

/** Inserts `rows` in chunks (inside the caller's transaction); answers the ids in order. */
async function insertAll(table: any, rows: Record<string, unknown>[], returning = false): Promise<number[]> {
  const ids: number[] = []
  for (let i = 0; i < rows.length; i += CHUNK) {
    const query = deps.db.insert(table).values(rows.slice(i, i + CHUNK) as any)
    if (returning) ids.push(...((await query.returning({ id: (table as typeof issues).id })) as { id: number }[]).map((r) => r.id))
    else await query
  }
  return ids
}

interface Scenario {
  label: string
  /** The URL loaded by autocannon. */
  url: string
  /** The URL of page `n` (10 rows), for the uncached sequential figure; none for a page without pages. */
  page?: (n: number) => string
  headers: Record<string, string>
}
interface Figures {
  perSecond: number
  p50: number
  /** CPU this process (server and the client's fetch) spent per uncached page: steadier than p50 on a loaded machine. */
  cpuMs: number
}

try {
  console.log(`database: ${database.label}; sizes ${sizes.map((n) => n.toLocaleString('en')).join(', ')}; ${seconds} s per load; ${await loadAverages()}`)
  const viewer = await createUser(deps, { username: 'viewer', password: 'bench-password', email: 'viewer@example.com' })
  const token = (await createAccessToken(deps, viewer.id, 'bench')).secret
  const auth = { authorization: `token ${token}` }
  const big = await createRepository(deps, viewer, { name: 'big', autoInit: true, defaultBranch: 'main' })
  const prs = await createRepository(deps, viewer, { name: 'prs', autoInit: true, defaultBranch: 'main' })
  const put = await fetch(`${base}/api/v1/repos/viewer/prs/contents/feature.txt`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ content: Buffer.from('a feature\n').toString('base64'), message: 'A feature', branch: 'main', new_branch: 'feature' }),
  })
  if (put.status !== 201) throw new Error(`feature branch: ${put.status} ${await put.text()}`)
  const shaOf = async (branch: string) => ((await (await fetch(`${base}/api/v1/repos/viewer/prs/branches/${branch}`, { headers: auth })).json()) as any).commit.id as string
  const [mainSha, featureSha] = [await shaOf('main'), await shaOf('feature')]

  const now = Math.floor(Date.now() / 1000)
  const owners = await writeTransaction(deps.db, async () =>
    insertAll(
      users,
      Array.from({ length: OWNERS }, (_, o) => ({ name: `owner${o}`, lowerName: `owner${o}`, email: `owner${o}@example.com`, createdUnix: now, updatedUnix: now })),
      true,
    ),
  )
  const labelIds = await writeTransaction(deps.db, async () =>
    insertAll(labels, ['bug', 'feature', 'docs'].map((name, i) => ({ repoId: big.id, name, color: `#${String(i).repeat(6)}`, createdUnix: now, updatedUnix: now })), true),
  )

  /** Whether row `i` (1-based) of a list is one of the NEEDLES the searches find, the same at every size. */
  const isNeedle = (i: number) => i % Math.floor(sizes[0]! / NEEDLES) === 0 && i <= sizes[0]!

  /** Grows every list from `from` rows to `to`. */
  async function grow(from: number, to: number): Promise<void> {
    await writeTransaction(deps.db, async () => {
      const range = Array.from({ length: to - from }, (_, k) => from + k + 1)
      const issueIds = await insertAll(
        issues,
        range.map((index) => ({ repoId: big.id, index, posterId: viewer.id, title: `${isNeedle(index) ? 'Needle issue' : 'Issue number'} ${index}`, content: `Body of issue ${index}`, isClosed: index % 10 === 0, createdUnix: now - to + index, updatedUnix: now - to + index, closedUnix: index % 10 === 0 ? now : 0 })),
        true,
      )
      await insertAll(issueLabels, issueIds.flatMap((id, k) => (range[k]! % 3 === 0 ? [{ issueId: id, labelId: labelIds[range[k]! % 3]! }] : [])))
      // The viewer's threads are the first VIEWER_THREADS issues'; the others' go to the owners in turn.
      await insertAll(
        notifications,
        issueIds.map((issueId, k) => ({ userId: range[k]! <= VIEWER_THREADS ? viewer.id : owners[range[k]! % OWNERS]!, repoId: big.id, status: range[k]! % 3 === 0 ? 2 : 1, source: 1, issueId, updatedBy: viewer.id, lastEventId: 0, createdUnix: now - to + range[k]!, updatedUnix: now - to + range[k]! })),
      )
      const pullIssueIds = await insertAll(
        issues,
        range.map((index) => ({ repoId: prs.id, index, posterId: viewer.id, title: `Pull request ${index}`, content: `Change ${index}`, isPull: true, isClosed: index % 10 === 0, createdUnix: now - to + index, updatedUnix: now - to + index, closedUnix: index % 10 === 0 ? now : 0 })),
        true,
      )
      await insertAll(
        pullRequests,
        pullIssueIds.map((issueId, k) => ({ issueId, index: range[k]!, baseRepoId: prs.id, baseBranch: 'main', headRepoId: prs.id, headBranch: 'feature', headSha: featureSha, baseSha: mainSha, mergeBase: mainSha, status: 'mergeable' })),
      )
      const repoIds = await insertAll(
        repositories,
        range.map((i) => {
          const o = i % OWNERS
          const name = isNeedle(i) ? `needle-${i}` : `project-${i}`
          return { ownerId: owners[o]!, ownerName: `owner${o}`, name, lowerName: name, description: `Project ${i}`, isEmpty: true, createdUnix: now, updatedUnix: now }
        }),
        true,
      )
      // Each repository starred by the next owner; the needles by the viewer too.
      await insertAll(
        stars,
        repoIds.flatMap((repoId, k) => [
          { userId: owners[(range[k]! + 1) % OWNERS]!, repoId, createdUnix: now },
          ...(isNeedle(range[k]!) ? [{ userId: viewer.id, repoId, createdUnix: now }] : []),
        ]),
      )
      const closed = Math.floor(to / 10)
      await deps.db.update(repositories).set({ numIssues: to, numClosedIssues: closed }).where(eq(repositories.id, big.id))
      await deps.db.update(repositories).set({ numPulls: to, numClosedPulls: closed }).where(eq(repositories.id, prs.id))
      for (const repoId of [big.id, prs.id]) {
        await deps.db.delete(issueIndexes).where(eq(issueIndexes.repoId, repoId))
        await deps.db.insert(issueIndexes).values({ repoId, maxIndex: to })
      }
      await deps.db.update(users).set({ numRepos: sql`${users.numRepos} + ${Math.ceil((to - from) / OWNERS)}` }).where(sql`${users.id} IN (${sql.join(owners.map((o) => sql`${o}`), sql`, `)})`)
      await deps.db
        .update(labels)
        .set({ numIssues: sql`(select count(*) from ${issueLabels} where ${issueLabels.labelId} = ${labels.id})` })
        .where(eq(labels.repoId, big.id))
    })
    // PostgreSQL: VACUUM too, as autovacuum would soon after such a load: the trigram index of the
    // search keeps rows added in bulk in its pending list (a slow scan) until a vacuum merges them.
    // SQLite: the WAL the load wrote checkpointed into the database file, as SQLite does on its
    // own soon after, so that the first reads measured do not walk a WAL of 100,000s of rows.
    // PostgreSQL also writes the load out (CHECKPOINT) before the figures, not during them.
    if (deps.db.$runtime.dialect === 'postgres') {
      await (deps.db as any).$client.unsafe('VACUUM ANALYZE')
      await (deps.db as any).$client.unsafe('CHECKPOINT').catch(() => {}) // superusers only: otherwise the figures share the machine with it
    } else {
      // No ANALYZE: SQLite plans without statistics, as in a real Warren (lib/database.ts analyze).
      // After the turn's read snapshot on the connection has ended (db/client.ts): a checkpoint
      // inside it is refused (SQLITE_LOCKED), as it is while a request the last load left behind
      // still reads (one whose client went away, waiting for the read thread): tried again then.
      for (let tries = 0; ; tries++) {
        await new Promise((resolve) => setImmediate(resolve))
        try {
          deps.db.$client.exec('PRAGMA wal_checkpoint(TRUNCATE)')
          break
        } catch (e) {
          if ((e as { code?: string }).code !== 'SQLITE_LOCKED' || tries === 500) throw e
          await Bun.sleep(10)
        }
      }
    }
  }

  const html = { accept: 'text/html' }
  const scenarios: Scenario[] = [
    { label: 'API issues (open, page 2)', url: `${base}/api/v1/repos/viewer/big/issues?state=open&type=issues&page=2`, page: (n) => `${base}/api/v1/repos/viewer/big/issues?state=open&type=issues&limit=10&page=${n}`, headers: auth },
    { label: 'web /{o}/{r}/issues', url: `${base}/viewer/big/issues?page=2`, page: (n) => `${base}/viewer/big/issues?page=${n}&state=open`, headers: html },
    { label: 'API pulls (open, page 2)', url: `${base}/api/v1/repos/viewer/prs/pulls?state=open&page=2`, page: (n) => `${base}/api/v1/repos/viewer/prs/pulls?state=open&limit=10&page=${n}`, headers: auth },
    { label: 'API repos/search?q=needle', url: `${base}/api/v1/repos/search?q=needle&limit=10&page=2`, page: (n) => `${base}/api/v1/repos/search?q=needle&limit=1&page=${n}`, headers: auth },
    { label: 'API issues?q=needle', url: `${base}/api/v1/repos/viewer/big/issues?state=all&type=issues&q=needle&limit=10&page=2`, page: (n) => `${base}/api/v1/repos/viewer/big/issues?state=all&type=issues&q=needle&limit=1&page=${n}`, headers: auth },
    { label: 'API repos/issues/search?q=needle', url: `${base}/api/v1/repos/issues/search?state=all&type=issues&q=needle&limit=10&page=2`, page: (n) => `${base}/api/v1/repos/issues/search?state=all&type=issues&q=needle&limit=1&page=${n}&before=${futureTime(n)}`, headers: auth },
    { label: 'API user/starred', url: `${base}/api/v1/user/starred?limit=10&page=2`, page: (n) => `${base}/api/v1/user/starred?limit=1&page=${n}`, headers: auth },
    // The viewer's own and shared repositories (its two, whatever N): read from their ids, not every repository.
    { label: 'API user/repos', url: `${base}/api/v1/user/repos?limit=10`, page: (n) => `${base}/api/v1/user/repos?limit=1&page=${n}`, headers: auth },
    { label: 'API notifications (all)', url: `${base}/api/v1/notifications?all=true&page=2`, page: (n) => `${base}/api/v1/notifications?all=true&limit=10&page=${n}`, headers: auth },
    { label: 'web /{o}/{r} home', url: `${base}/viewer/big`, headers: html },
  ]
  const results = new Map<string, Figures[]>()
  const rss: number[] = []
  const versionProbes: number[] = []
  let rows = 0
  for (const size of sizes) {
    const started = performance.now()
    await grow(rows, size)
    rows = size
    Bun.gc(true) // the load's garbage collected now, not during the first figures
    console.log(`\n${size.toLocaleString('en')} rows each (issues, pull requests, repositories, notification threads): added in ${((performance.now() - started) / 1000).toFixed(1)} s; ${await loadAverages()}`)
    if (size === sizes[0])
      // Warm-up (the code's first runs, the statements' preparation), on pages the measures do not ask for.
      for (const s of scenarios) {
        for (let n = PAGES + 1; n <= 2 * PAGES; n++) await (await fetch(s.page?.(n) ?? s.url, { headers: s.headers })).arrayBuffer()
        await autocannon(s.page?.(2 * PAGES + 1) ?? s.url, 1, Object.entries(s.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]))
      }
    for (const s of scenarios) {
      const check = await fetch(s.url, { headers: s.headers })
      const body = await check.text()
      if (check.status !== 200) throw new Error(`${s.label}: ${check.status} ${body.slice(0, 300)}`)
      if (s.url.includes('/api/v1/') && check.headers.get('x-total-count') === null) throw new Error(`${s.label}: no X-Total-Count`)
      // Pages never asked before (nothing cached), one at a time.
      const times: number[] = []
      const cpu0 = process.cpuUsage()
      for (let n = 1; n <= PAGES; n++) {
        const url = s.page?.(n) ?? s.url
        const t0 = performance.now()
        const res = await fetch(url, { headers: s.headers })
        await res.arrayBuffer()
        if (res.status !== 200) throw new Error(`${url}: ${res.status}`)
        times.push(performance.now() - t0)
      }
      const cpuUsed = process.cpuUsage(cpu0)
      const cpuMs = (cpuUsed.user + cpuUsed.system) / 1000 / PAGES
      const r = await autocannon(s.url, seconds, Object.entries(s.headers).flatMap(([k, v]) => ['-H', `${k}: ${v}`]))
      const p50 = percentile(times, 50)
      results.set(s.label, [...(results.get(s.label) ?? []), { perSecond: r.requests.average, p50, cpuMs }])
      console.log(`${reportLine(s.label, r, 28, true)}   ${s.page ? 'uncached pages' : 'one at a time'} p50 ${p50.toFixed(1)} ms, this process's CPU ${cpuMs.toFixed(1)} ms a page`)
    }
    // A request that costs nothing, asked while 16 connections ask the heaviest list (the issue
    // search across repositories without a text: a count of every visible issue): what the event
    // loop makes it wait. Asked from this process, whose event loop is the server's. The pages of
    // one search share its count while nothing is written (issues/search.ts): each request here is
    // a search of its own (a `before` past every issue, never the same), so each counts them all.
    const heavy = `${base}/api/v1/repos/issues/search?limit=10&before={future}`
    const load = variedLoad(heavy, auth, seconds)
    let loading = true
    load.finally(() => (loading = false))
    const probes: number[] = []
    await Bun.sleep(300)
    while (loading) {
      const t0 = performance.now()
      await (await fetch(`${base}/api/v1/version`)).arrayBuffer()
      probes.push(performance.now() - t0)
      await Bun.sleep(10)
    }
    const heavyRun = await load
    // What the load left in flight answered before the next size's rows are added.
    while (warren.server.pendingRequests > 0) await Bun.sleep(10)
    const versionP99 = percentile(probes, 99)
    versionProbes.push(versionP99)
    console.log(
      `${reportLine('API repos/issues/search (all)', heavyRun, 28, true)}   meanwhile GET /version p50 ${percentile(probes, 50).toFixed(1)} ms, p99 ${versionP99.toFixed(1)} ms (n = ${probes.length}; target ≤ 50 ms p99) ${versionP99 <= 50 ? 'ok' : 'MISSED'}`,
    )
    Bun.gc(true)
    rss.push(process.memoryUsage().rss / 1024 / 1024)
    console.log(`server RSS after ${size.toLocaleString('en')} (after a full collection): ${rss.at(-1)!.toFixed(0)} MiB`)
  }

  if (sizes.length > 1) {
    const [small, large] = [sizes[0]!, sizes.at(-1)!]
    const name = `${large / 1000}k ÷ ${small / 1000}k`
    console.log(`\n${name} (target: flat within ±${FLAT * 100}%, on SQLite and PostgreSQL; ${database.label.split(' ')[0]}):`)
    const verdict = (ratio: number) => (Math.abs(ratio - 1) <= FLAT ? 'ok' : 'MISSED')
    for (const s of scenarios) {
      const f = results.get(s.label)!
      const perSecond = f.at(-1)!.perSecond / f[0]!.perSecond
      const p50 = f.at(-1)!.p50 / f[0]!.p50
      console.log(
        `  ${s.label.padEnd(28)} req/s ${perSecond.toFixed(2)}× ${verdict(perSecond).padEnd(6)}` +
          `  ${s.page ? 'uncached p50' : 'one-by-one p50'} ${p50.toFixed(2)}× ${verdict(p50).padEnd(6)}  CPU a page ${(f.at(-1)!.cpuMs / f[0]!.cpuMs).toFixed(2)}× ${verdict(f.at(-1)!.cpuMs / f[0]!.cpuMs).padEnd(6)}` +
          `   (${f.map((x) => Math.round(x.perSecond).toLocaleString('en')).join(' / ')} req/s; p50 ${f.map((x) => x.p50.toFixed(1)).join(' / ')} ms; CPU ${f.map((x) => x.cpuMs.toFixed(1)).join(' / ')} ms)`,
      )
    }
    console.log(`  server RSS after each size: ${rss.map((m) => m.toFixed(0)).join(' / ')} MiB`)
    console.log(`  GET /version p99 while the issue search across repositories runs: ${versionProbes.map((m) => m.toFixed(1)).join(' / ')} ms (target ≤ 50 ms at every size)`)
  }
  console.log(`peers (PERFORMANCE.md): Gitea 1.3 search 134 / 89 req/s at 1k / 100k; Warren SQLite issues 1,438 / 1,329 / 1,493 before; ${await loadAverages()}`)
} finally {
  await warren.close({ keep: args.keep })
}
