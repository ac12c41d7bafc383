// runs in one half: postgresql
/**
 * A `warren serve` killed between a rename's folder move and its row's: the folder is at the new
 * place, the row still names the old one. The next start puts the folder back (the intent the
 * move recorded first, folder_moves), so the repository answers under its old name with its git
 * content, and a rename afterwards works. The kill lands in that window because the test holds the
 * repository's row locked (PostgreSQL: SELECT ... FOR UPDATE) while the rename runs: the folder
 * moves, then the rename's transaction waits on the row until the process is killed. With another
 * process serving the same database, that one's leftover repair puts the folder back without any
 * restart (the dead process's claim on its intent went with its connection), and empties
 * repositories/.deleted/.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { apiCall, rootAuth, servedOnPostgres, SOURCES, startServe, type Served } from './process-helpers'
import { until } from './webhook-receiver'
import { repoPath } from '../src/git/run'

let served: Awaited<ReturnType<typeof servedOnPostgres>>
let probe: SQL
let data: string
let server: Served | undefined
/** The server started again after the crash (served.stop stops those it started). */
let restarted: Served | undefined

beforeAll(async () => {
  served = await servedOnPostgres('warren_folder_move', 1)
  server = served.servers[0]
  data = served.data
  probe = new SQL(served.database.url, { max: 1 })
}, 240_000)

afterAll(async () => {
  await restarted?.stop()
  await probe?.close()
  await served?.stop()
})

describe('a crash between a rename\'s folder move and its row', () => {
  test('the next start moves the folder back; the repository works under its old name', async () => {
    const call = (method: string, path: string, body?: unknown) => apiCall(server!, rootAuth, method, path, body)
    expect((await call('POST', '/user/repos', { name: 'old-name', auto_init: true, default_branch: 'main' })).status).toBe(201)
    const oldDir = repoPath(data, 'root', 'old-name')
    const newDir = repoPath(data, 'root', 'new-name')
    expect(existsSync(oldDir)).toBe(true)

    // Hold the row: the rename's transaction waits on it once the folder has moved (its UPDATE
    // changes the name, a column of a unique index, so it needs the lock FOR UPDATE, which NO KEY
    // UPDATE holds off). NO KEY UPDATE lets other writers' foreign key checks of the row through:
    // a background job writing a row that names the repository (under the write lock every
    // writer shares) would otherwise wait on it, and the rename's intent behind that job.
    const held = probe.begin(async (tx) => {
      await tx`select id from repositories where lower_name = 'old-name' for no key update`
      await until(() => existsSync(newDir), 'the folder moved', 2400, 25)
      expect(existsSync(oldDir)).toBe(false)
      expect((await tx`select count(*)::int as n from folder_moves`)[0].n).toBe(1)
      server!.proc.kill('SIGKILL')
      await server!.proc.exited
    })
    const renaming = call('PATCH', '/repos/root/old-name', { name: 'new-name' }).catch(() => null)
    await held
    await renaming
    server = undefined
    // The rows still name the old place; the folder is at the new one.
    expect((await probe`select name from repositories where lower_name in ('old-name', 'new-name')`).map((r: { name: string }) => r.name)).toEqual(['old-name'])
    expect(existsSync(newDir)).toBe(true)

    server = restarted = await startServe(SOURCES, data, served.env)
    expect(existsSync(oldDir)).toBe(true)
    expect(existsSync(newDir)).toBe(false)
    expect((await probe`select count(*)::int as n from folder_moves`)[0].n).toBe(0)
    const again = (method: string, path: string, body?: unknown) => apiCall(server!, rootAuth, method, path, body)
    const readme = await again('GET', '/repos/root/old-name/contents/README.md')
    expect(readme.status).toBe(200)
    expect((await again('PATCH', '/repos/root/old-name', { name: 'new-name' })).status).toBe(200)
    expect(existsSync(newDir)).toBe(true)
    expect((await again('GET', '/repos/root/new-name/contents/README.md')).status).toBe(200)
  }, 240_000)
})

describe('the same crash while another process serves the database', () => {
  test("the running process's leftover repair moves the folder back and empties .deleted/; the repository works there", async () => {
    // The living process takes the repairs over from the dead leader, and runs a round, within
    // half a second (not the production 5 s and 3 s).
    const two = await servedOnPostgres('warren_folder_move_live', 2, { WARREN_JOB_RETRY_MS: '500', WARREN_LEFTOVER_REPAIR_MS: '500' })
    const q = new SQL(two.database.url, { max: 1 })
    try {
      const [dying, living] = two.servers as [Served, Served]
      const call = (server: Served, method: string, path: string, body?: unknown) => apiCall(server, rootAuth, method, path, body)
      expect((await call(dying, 'POST', '/user/repos', { name: 'moving', auto_init: true, default_branch: 'main' })).status).toBe(201)
      const oldDir = repoPath(two.data, 'root', 'moving')
      const newDir = repoPath(two.data, 'root', 'moved')
      const stale = join(two.data, 'repositories', '.deleted', 'left-by-a-crash')
      mkdirSync(stale, { recursive: true })

      const held = q.begin(async (tx) => {
        await tx`select id from repositories where lower_name = 'moving' for no key update` // as above
        await until(() => existsSync(newDir), 'the folder moved', 2400, 25)
        dying.proc.kill('SIGKILL')
        await dying.proc.exited
      })
      const renaming = call(dying, 'PATCH', '/repos/root/moving', { name: 'moved' }).catch(() => null)
      await held
      await renaming

      await until(async () => existsSync(oldDir) && !existsSync(newDir) && (await q`select count(*)::int as n from folder_moves`)[0].n === 0, 'the folder moved back', 2400, 25)
      await until(() => !existsSync(stale), '.deleted emptied', 2400, 25)
      expect((await call(living, 'GET', '/repos/root/moving/contents/README.md')).status).toBe(200)
      expect((await call(living, 'PATCH', '/repos/root/moving', { name: 'moved' })).status).toBe(200)
      expect(existsSync(newDir)).toBe(true)
      expect((await call(living, 'GET', '/repos/root/moved/contents/README.md')).status).toBe(200)
    } finally {
      await q.close()
      await two.stop()
    }
  }, 240_000)
})
