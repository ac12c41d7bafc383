/**
 * Notifications fan-out: one comment in a repository with 1,000 watchers.
 *
 * A Warren in this process with its notifier job running (src/jobs/notifier.ts, as `warren serve`
 * runs it), two public repositories: `busy`, watched by 1,000 people (rows bulk-inserted through
 * Drizzle), and `quiet`, watched by none but its owner, who posts every comment (the actor is
 * never notified). Figures:
 *   1. fan-out: a comment on an issue none of the watchers has a thread for yet (the issues were
 *      filed before the watchers came): the comment's request latency, then the time from its
 *      answer until all 1,000 threads exist (counted in the database every 5 ms; the notifier
 *      looks at an empty outbox every NOTIFIER_POLL_MS), FANOUTS times;
 *   2. the comment's latency with 1,000 watchers beside 0, COMMENTS each, one at a time,
 *      alternating, the notifier updating 1,000 threads after each busy comment while the next
 *      requests are made: the request must not wait for the fan-out (target: busy ÷ quiet ≤ 1.1);
 *   3. GET /notifications of one watcher: one at a time (p50/p95) and under 16 connections (req/s);
 *   4. a burst: BURST comments on 10 issues of a repository of 10 watchers, each mentioning someone else, queued
 *      while the notifier is stopped, then drained by its rounds (events per second): what a round of
 *      100 events costs, its reads made for the round (src/notify/recipients.ts plansOf).
 * On SQLite, or on a fresh PostgreSQL database when WARREN_DATABASE_URL is set (lib/database.ts).
 *
 *   bun bench/notifications.ts [comments=60] [seconds=5]
 */
import { count, eq, inArray } from 'drizzle-orm'
import { writeTransaction } from '../src/db/client'
import { notifications, repositories, users, watches } from '../src/db/schema'
import { createAccessToken, createUser } from '../src/modules/users/service'
import { createRepository } from '../src/modules/repos/create'
import { notifyRound, NOTIFIER_POLL_MS } from '../src/notify/consumer'
import { startNotifier } from '../src/jobs/notifier'
import { autocannon, reportLine } from './lib/autocannon'
import { analyze } from './lib/database'
import { inProcessWarren } from './lib/in-process'
import { latencyText, loadAverages, percentile, ratioText } from './lib/latency'

const COMMENTS = Number(process.argv[2] ?? 60)
const seconds = Number(process.argv[3] ?? 5)
if (!(COMMENTS >= 1) || !(seconds > 0)) throw new Error('usage: bun bench/notifications.ts [comments=60] [seconds=5]')
const WATCHERS = 1000
const FANOUTS = 5
const TARGET = 1.1
/** Part 4: comments queued, and the watchers of their repository. */
const BURST = 500
const TEAM_WATCHERS = 10
const TEAM_ISSUES = 10

const warren = await inProcessWarren('notifications')
const { database, deps, base } = warren
let notifier: Awaited<ReturnType<typeof startNotifier>> | null = null

try {
  console.log(`database: ${database.label}; ${await loadAverages()}`)
  const dev = await createUser(deps, { username: 'dev', password: 'bench-password', email: 'dev@example.com' })
  const token = (await createAccessToken(deps, dev.id, 'bench')).secret
  const call = async (method: string, path: string, body?: unknown, auth = token) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { authorization: `token ${auth}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
    const text = await res.text()
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`)
    return JSON.parse(text)
  }
  const busy = await createRepository(deps, dev, { name: 'busy' })
  await createRepository(deps, dev, { name: 'quiet' })
  // Issues filed before anyone watches: their threads are made by the fan-out timed below.
  const fresh: number[] = []
  for (let i = 0; i < FANOUTS; i++) fresh.push((await call('POST', '/repos/dev/busy/issues', { title: `Fresh ${i}` })).number)
  const talkBusy = (await call('POST', '/repos/dev/busy/issues', { title: 'Busy talk' })).number
  const talkQuiet = (await call('POST', '/repos/dev/quiet/issues', { title: 'Quiet talk' })).number
  while ((await notifyRound(deps)) > 0) {}

  // 1,000 watchers of busy.
  const now = Math.floor(Date.now() / 1000)
  await writeTransaction(deps.db, async () => {
    for (let start = 0; start < WATCHERS; start += 250) {
      const rows = Array.from({ length: Math.min(250, WATCHERS - start) }, (_, k) => {
        const name = `watcher${start + k}`
        return { name, lowerName: name, email: `${name}@example.com`, createdUnix: now, updatedUnix: now }
      })
      const ids = await deps.db.insert(users).values(rows).returning({ id: users.id })
      await deps.db.insert(watches).values(ids.map((u) => ({ userId: u.id, repoId: busy.id, createdUnix: now })))
    }
    await deps.db.update(repositories).set({ numWatches: WATCHERS + 1 }).where(eq(repositories.id, busy.id))
  })
  await analyze(deps.db)
  const watcher = (await deps.db.select().from(users).where(eq(users.lowerName, 'watcher0')))[0]!
  const watcherToken = (await createAccessToken(deps, watcher.id, 'bench')).secret
  notifier = await startNotifier(deps)

  // ---- 1. fan-out
  const threadsOf = async (issueId: number) => (await deps.db.select({ n: count() }).from(notifications).where(eq(notifications.issueId, issueId)))[0]!.n
  console.log(`1. one comment on an issue of a repository with ${WATCHERS.toLocaleString('en')} watchers, none with a thread yet (notifier polls every ${NOTIFIER_POLL_MS} ms when idle):`)
  const answered: number[] = []
  const fanned: number[] = []
  for (const index of fresh) {
    const issue = await call('GET', `/repos/dev/busy/issues/${index}`)
    const started = performance.now()
    await call('POST', `/repos/dev/busy/issues/${index}/comments`, { body: `A comment for all ${WATCHERS} watchers.` })
    const answer = performance.now()
    let threads = 0
    while ((threads = await threadsOf(issue.id)) < WATCHERS) {
      if (performance.now() - answer > 120_000) throw new Error(`only ${threads} threads after 120 s`)
      await Bun.sleep(5)
    }
    answered.push(answer - started)
    fanned.push(performance.now() - answer)
    await notifier.drained()
  }
  console.log(`   the comment's request     ${latencyText(answered)}`)
  console.log(`   answer → all ${WATCHERS} threads ${latencyText(fanned)}  (the request waited for none of it)`)

  // ---- 2. comment latency with 1,000 watchers beside 0
  const times: Record<'busy' | 'quiet', number[]> = { busy: [], quiet: [] }
  const comment = async (repo: 'busy' | 'quiet', i: number) => {
    const started = performance.now()
    await call('POST', `/repos/dev/${repo}/issues/${repo === 'busy' ? talkBusy : talkQuiet}/comments`, { body: `Comment ${i} in ${repo}.` })
    return performance.now() - started
  }
  for (let i = 0; i < 5; i++) for (const repo of ['quiet', 'busy'] as const) await comment(repo, -i)
  await notifier.drained()
  for (let i = 0; i < COMMENTS; i++) for (const repo of i % 2 ? (['busy', 'quiet'] as const) : (['quiet', 'busy'] as const)) times[repo].push(await comment(repo, i))
  const fanStart = performance.now()
  await notifier.drained()
  console.log(`2. POST comment, one at a time, alternating (the notifier updating ${WATCHERS} threads after each busy one meanwhile):`)
  console.log(`   0 watchers                ${latencyText(times.quiet)}`)
  console.log(`   ${WATCHERS.toLocaleString('en')} watchers            ${latencyText(times.busy)}`)
  console.log(`   ${WATCHERS.toLocaleString('en')} ÷ 0 p50 ${ratioText(percentile(times.busy, 50), percentile(times.quiet, 50), TARGET)}, p95 ${(percentile(times.busy, 95) / percentile(times.quiet, 95)).toFixed(2)}×; the notifier done ${(performance.now() - fanStart).toFixed(0)} ms after the last answer`)

  // ---- 3. GET /notifications of one watcher
  const url = `${base}/api/v1/notifications`
  const listed = await fetch(url, { headers: { authorization: `token ${watcherToken}` } })
  const threads = (await listed.json()) as unknown[]
  if (listed.status !== 200 || threads.length !== FANOUTS + 1) throw new Error(`notifications: ${listed.status}, ${threads.length} threads (expected ${FANOUTS + 1})`)
  const reads: number[] = []
  for (let i = 0; i < 220; i++) {
    const started = performance.now()
    const res = await fetch(url, { headers: { authorization: `token ${watcherToken}` } })
    await res.arrayBuffer()
    if (i >= 20) reads.push(performance.now() - started)
  }
  console.log(`3. GET /notifications of a watcher (${threads.length} unread threads):`)
  console.log(`   one at a time             ${latencyText(reads)}`)
  const r = await autocannon(url, seconds, ['-H', `Authorization: token ${watcherToken}`])
  console.log(`   ${reportLine('16 connections', r, 22, true)}`)

  // ---- 4. a burst drained: events of a repository with a few watchers, queued while the notifier is stopped
  await notifier.stop()
  notifier = null
  const team = await createRepository(deps, dev, { name: 'team' })
  const teamWatchers = await deps.db.select({ id: users.id }).from(users).where(inArray(users.lowerName, Array.from({ length: TEAM_WATCHERS }, (_, i) => `watcher${i}`)))
  await deps.db.insert(watches).values(teamWatchers.map((u) => ({ userId: u.id, repoId: team.id, createdUnix: now })))
  const teamTalks: number[] = []
  for (let i = 0; i < TEAM_ISSUES; i++) teamTalks.push((await call('POST', '/repos/dev/team/issues', { title: `Team talk ${i}` })).number)
  while ((await notifyRound(deps)) > 0) {}
  for (let i = 0; i < BURST; i++)
    await call('POST', `/repos/dev/team/issues/${teamTalks[i % TEAM_ISSUES]}/comments`, { body: `Comment ${i}, for @watcher${TEAM_WATCHERS + (i % 7)}.` })
  const drainStart = performance.now()
  let handled = 0
  for (let n; (n = await notifyRound(deps)) > 0; ) handled += n
  const drainMs = performance.now() - drainStart
  console.log(
    `4. ${handled} comments on ${TEAM_ISSUES} issues of a repository of ${TEAM_WATCHERS} watchers, each mentioning one more person, queued while the notifier was stopped, then drained: ${drainMs.toFixed(0)} ms, ${Math.round((handled * 1000) / drainMs).toLocaleString('en')} events/s`,
  )
  console.log(`target (PERFORMANCE.md): one comment in a repository with 1,000 watchers: the request waits for none of the fan-out (here: busy ÷ quiet ≤ ${TARGET}); ${await loadAverages()}`)
} finally {
  await notifier?.stop()
  await warren.close()
}
