import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { giteaApi, type Api } from 'gitea-js'
import { repositories, stopwatches } from '../src/db/schema'
import { startTrackerWorld, type TrackerWorld } from './issue-fixtures'
import { fails, ok } from './gitea-calls'

let w: TrackerWorld
let asWriter: Api<unknown>
let asReader: Api<unknown>
let repoId = 0
beforeAll(async () => {
  w = await startTrackerWorld()
  repoId = (await w.repo('clock')).id
  asWriter = giteaApi(w.s.url, { token: w.writer.token })
  asReader = giteaApi(w.s.url, { token: w.reader.token })
  for (const title of ['one', 'two']) await ok(asWriter.repos.issueCreateIssue('owner', 'clock', { title }), 201)
})
afterAll(() => w.s.stop())

/** gitea-js reads the empty 201/204 answers as JSON and fails on them: the status is what counts. */
const status = async (call: Promise<{ status: number }>) => (await call.catch((e: { status: number }) => e)).status

describe('stopwatches', () => {
  test('start, listed under /user/stopwatches; starting again is 409', async () => {
    expect(await status(asWriter.repos.issueStartStopWatch('owner', 'clock', 1))).toBe(201)
    const [watch] = await ok(asWriter.user.userGetStopWatches())
    expect(watch).toMatchObject({ issue_index: 1, issue_title: 'one', repo_owner_name: 'owner', repo_name: 'clock', seconds: expect.any(Number), duration: expect.any(String) })
    expect(watch!.created).toMatch(/Z$/)
    await fails(asWriter.repos.issueStartStopWatch('owner', 'clock', 1), 409)
  })

  test('starting on another issue stops the first (its time recorded); stop records time; stopping again is 409', async () => {
    // The first stopwatch started a second ago at least: backdate it so its time is known.
    await w.s.deps.db.update(stopwatches).set({ createdUnix: Math.floor(Date.now() / 1000) - 120 }).where(eq(stopwatches.userId, w.writer.user.id))
    expect(await status(asWriter.repos.issueStartStopWatch('owner', 'clock', 2))).toBe(201)
    expect((await ok(asWriter.user.userGetStopWatches())).map((s) => s.issue_index)).toEqual([2])
    const first = await ok(asWriter.repos.issueTrackedTimes('owner', 'clock', 1))
    expect(first).toHaveLength(1)
    expect(first[0]!.time).toBeGreaterThanOrEqual(120)
    expect(await status(asWriter.repos.issueStopStopWatch('owner', 'clock', 2))).toBe(201)
    expect(await ok(asWriter.repos.issueTrackedTimes('owner', 'clock', 2))).toHaveLength(1)
    expect(await ok(asWriter.user.userGetStopWatches())).toEqual([])
    await fails(asWriter.repos.issueStopStopWatch('owner', 'clock', 2), 409)
    await fails(asWriter.repos.issueDeleteStopWatch('owner', 'clock', 2), 409)
  })

  test('cancel records nothing', async () => {
    expect(await status(asWriter.repos.issueStartStopWatch('owner', 'clock', 1))).toBe(201)
    expect(await status(asWriter.repos.issueDeleteStopWatch('owner', 'clock', 1))).toBe(204)
    expect(await ok(asWriter.repos.issueTrackedTimes('owner', 'clock', 1))).toHaveLength(1)
    expect(await ok(asWriter.user.userGetStopWatches())).toEqual([])
  })

  test('readers 403, anonymous 401, unknown issue 404, tracking off 400', async () => {
    await fails(asReader.repos.issueStartStopWatch('owner', 'clock', 1), 403)
    expect((await w.s.post('/repos/owner/clock/issues/1/stopwatch/start')).status).toBe(401)
    expect((await w.s.get('/user/stopwatches')).status).toBe(401)
    await fails(asWriter.repos.issueStartStopWatch('owner', 'clock', 99), 404)
    await w.s.deps.db.update(repositories).set({ enableTimeTracker: false }).where(eq(repositories.id, repoId))
    await fails(asWriter.repos.issueStartStopWatch('owner', 'clock', 1), 400)
    await w.s.deps.db.update(repositories).set({ enableTimeTracker: true }).where(eq(repositories.id, repoId))
  })
})
