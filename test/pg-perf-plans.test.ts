// runs in one half: postgresql
/**
 * What PostgreSQL does with Warren's statements, read from its plans (EXPLAIN), never from a
 * clock: lists of ids search the column's index (no whole-table read into a hash), substring
 * searches of repository names and of issues' texts use the trigram indexes, the background polls (the outbox's, the
 * webhook worker's, the merges under way) and the lookups that once read a growing table whole (a
 * person's feed and notification threads, a commit's pull request, labels and milestones by name,
 * a deleted branch, an avatar's file) search an index, with the values and as the generic plan a
 * prepared statement may settle on; and write transactions commit without waiting for the flush
 * unless asked to. The statements are the ones Warren sends, recorded as a request or a job runs.
 * PostgreSQL only (SQLite's plans of the same lookups: test/repos.test.ts, test/pulls-merge.test.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'drizzle-orm'
import { DIALECT } from '../src/db/dialect'
import { writeTransaction } from '../src/db/client'
import { hasEventsAfterDone } from '../src/events/outbox'
import { hasWebhookWork } from '../src/webhooks/loops'
import { WEBHOOK_CONSUMER } from '../src/webhooks/tasks'
import { latestDeletion } from '../src/modules/branches/changes'
import { repairPullMerges } from '../src/modules/pulls/merge'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { recorder } from './query-counter'

let s: TestServer
let owner: TestUser
/** Statements sent through the pool while a `sent.during` runs. */
const sent = recorder<{ text: string; params: unknown[] }>()

/** PostgreSQL's plan of `text` with `params`, as JSON text (every node's type and index in it). */
async function planOf(text: string, params: unknown[]): Promise<string> {
  const rows = await (s.deps.db.$client as any).unsafe(`EXPLAIN (FORMAT JSON) ${text}`, params)
  return JSON.stringify(rows[0]['QUERY PLAN'])
}

/**
 * The plan PostgreSQL keeps for `text` as a prepared statement once it settles on a generic one
 * (what a connection runs after five executions when that looks no dearer): made without the
 * parameters' values (given here as literals: numbers, booleans, strings).
 */
async function genericPlanOf(text: string, params: unknown[]): Promise<string> {
  return await (s.deps.db.$client as any).begin(async (tx: any) => {
    await tx.unsafe('set local plan_cache_mode = force_generic_plan')
    await tx.unsafe(`PREPARE plan_probe AS ${text}`)
    const literal = (v: unknown) => (typeof v === 'string' ? `'${v.replaceAll("'", "''")}'` : String(v))
    const rows = await tx.unsafe(`EXPLAIN (FORMAT JSON) EXECUTE plan_probe(${params.map(literal).join(', ')})`)
    await tx.unsafe('DEALLOCATE plan_probe')
    return JSON.stringify(rows[0]['QUERY PLAN'])
  })
}

/** The statements a request sends. */
async function statementsOf(path: string, token?: string): Promise<{ text: string; params: unknown[] }[]> {
  let status = 0
  const statements = await sent.during(async () => (status = (await s.get(path, token ? { token } : {})).status))
  expect(status).toBe(200)
  return statements
}

describe.skipIf(DIALECT !== 'postgres')('PostgreSQL plans of the hot lists', () => {
  beforeAll(async () => {
    s = await startTestServer()
    owner = await s.user('planner')
    // Record what Drizzle sends (the pool's statements; a request's reads run there).
    const session = (s.deps.db as any).session
    const client = session.client
    session.client = new Proxy(client, {
      get(target, key) {
        if (key !== 'unsafe') return Reflect.get(target, key)
        return (text: string, params: unknown[]) => {
          sent.add({ text, params })
          return client.unsafe(text, params)
        }
      },
    })
    const repo = await s.post('/user/repos', { name: 'tracker' }, { token: owner.token })
    expect(repo.status).toBe(201)
    const pg = s.deps.db.$client as any
    const now = Math.floor(Date.now() / 1000)
    // 5,000 issues with a label each, 5,000 repositories: enough rows that a whole-table read costs more than an index.
    await pg.unsafe(
      `insert into issues (repo_id, index, poster_id, title, content, created_unix, updated_unix)
         select $1, g, $2, 'issue ' || g, 'body ' || g, $3 + g, $3 from generate_series(1, 5000) g`,
      [repo.body.id, owner.user.id, now],
    )
    await pg.unsafe(`update repositories set num_issues = 5000 where id = $1`, [repo.body.id])
    await pg.unsafe(`insert into issue_indexes (repo_id, max_index) values ($1, 5000) on conflict (repo_id) do update set max_index = 5000`, [repo.body.id])
    const label = await s.post('/repos/planner/tracker/labels', { name: 'bug', color: '#ff0000' }, { token: owner.token })
    expect(label.status).toBe(201)
    await pg.unsafe(`insert into issue_labels (issue_id, label_id) select id, $1 from issues where repo_id = $2`, [label.body.id, repo.body.id])
    await pg.unsafe(
      `insert into repositories (owner_id, owner_name, name, lower_name, description, default_branch, created_unix, updated_unix)
         select $1, 'planner', 'project-' || g, 'project-' || g, '', 'main', $2, $2 from generate_series(1, 5000) g`,
      [owner.user.id, now],
    )
    await pg.unsafe('ANALYZE')
  }, 240_000)

  afterAll(async () => {
    await s?.stop()
  })

  test("an issue page's labels, assignees and posters are read through indexes, not whole tables", async () => {
    const statements = await statementsOf('/repos/planner/tracker/issues?state=open&page=2', owner.token)
    const lists = statements.filter((st) => st.text.includes('json_array_elements_text'))
    // issue_assignees, issue_labels, labels, users: each a list of ids.
    expect(lists.length).toBeGreaterThanOrEqual(3)
    const labels = lists.find((st) => /from "issue_labels"/.test(st.text))
    expect(labels).toBeDefined()
    // The list is made once (an InitPlan), never joined as a set the planner takes for 100 rows.
    for (const st of lists) expect(await planOf(st.text, st.params)).not.toContain('"Hash Semi Join"')
    // The 5,000 rows of issue_labels: its index is searched for the page's 30 issues.
    const plan = await planOf(labels!.text, labels!.params)
    expect(plan).toContain('"Index Cond"')
    expect(plan).toContain('issue_labels_pair_uq')
    expect(plan).not.toContain('"Seq Scan"')
  }, 240_000)

  test("a repository search by part of the name uses the trigram index", async () => {
    const statements = await statementsOf('/repos/search?q=ject-4999&limit=50', owner.token)
    const count = statements.find((st) => /^select count\(\*\) from "repositories"/.test(st.text))
    expect(count).toBeDefined()
    expect(count!.text).toContain('LIKE')
    const plan = await planOf(count!.text, count!.params)
    expect(plan).toContain('repositories_lower_name_trgm_idx')
    // And the answer is the one repository.
    const found = await s.get('/repos/search?q=ject-4999&limit=50', { token: owner.token })
    expect(found.body.data.map((r: { name: string }) => r.name)).toEqual(['project-4999'])
  }, 240_000)

  test("an idle outbox consumer's poll for new events searches the events' index, not the whole table", async () => {
    // The events are never removed, and the consumers poll several times a second: a poll that
    // read the table (its bound is a subquery's answer, which no plan knows ahead, so a LIMIT 1
    // without an order let the planner expect a match in the first rows) read every event each
    // time a consumer was caught up.
    const pg = s.deps.db.$client as any
    await pg.unsafe(`insert into events (kind, payload, created_unix) select 'issues', '{}', 0 from generate_series(1, 20000)`)
    const [{ last }] = await pg.unsafe('select max(id)::int as last from events')
    await pg.unsafe(`insert into event_consumers (name, done_id) values ('plan-probe', $1)`, [last])
    await pg.unsafe('ANALYZE events')
    let idle = false
    const poll = (await sent.during(async () => (idle = !(await hasEventsAfterDone(s.deps.db, 'plan-probe'))))).find((st) => /from "events"/.test(st.text))
    expect(idle).toBe(true)
    expect(poll).toBeDefined()
    const plan = await planOf(poll!.text, poll!.params)
    expect(plan).toContain('events_pkey')
    expect(plan).not.toMatch(/"Node Type":"Seq Scan",[^}]*"Relation Name":"events"/)
    // One more event, and the same poll finds it.
    await pg.unsafe(`insert into events (kind, payload, created_unix) values ('issues', '{}', 0)`)
    expect(await hasEventsAfterDone(s.deps.db, 'plan-probe')).toBe(true)
  }, 240_000)

  test("the webhook worker's idle poll for deliveries not done searches the pending index, whatever the plan", async () => {
    // Delivered tasks are kept: 20,000 of them, none waiting, the outbox read to its end.
    const pg = s.deps.db.$client as any
    const hook = await s.post('/repos/planner/tracker/hooks', { type: 'gitea', config: { url: 'http://hooks.example/', content_type: 'json' }, events: ['push'], active: true }, { token: owner.token })
    expect(hook.status).toBe(201)
    const [{ id: repoId }] = await pg.unsafe(`select id from repositories where lower_name = 'tracker'`)
    await pg.unsafe(
      `insert into hook_tasks (hook_id, repo_id, uuid, event_type, payload, created_unix, is_delivered)
         select $1, $2, 'plan-' || g, 'push', '', 0, true from generate_series(1, 20000) g`,
      [hook.body.id, repoId],
    )
    await pg.unsafe(`insert into event_consumers (name, done_id) values ($1, (select max(id) from events)) on conflict (name) do update set done_id = excluded.done_id`, [WEBHOOK_CONSUMER])
    await pg.unsafe('ANALYZE hook_tasks')
    let busy = true
    const poll = (await sent.during(async () => (busy = await hasWebhookWork(s.deps.db)))).find((st) => /from "hook_tasks"/.test(st.text))
    expect(busy).toBe(false)
    expect(poll).toBeDefined()
    for (const plan of [await planOf(poll!.text, poll!.params), await genericPlanOf(poll!.text, poll!.params)]) {
      expect(plan).toContain('hook_tasks_pending_idx')
      expect(plan).not.toMatch(/"Node Type":"Seq Scan",[^}]*"Relation Name":"hook_tasks"/)
    }
    // A task waiting, and the same poll finds it.
    await pg.unsafe(`update hook_tasks set is_delivered = false where uuid = 'plan-20000'`)
    expect(await hasWebhookWork(s.deps.db)).toBe(true)
  }, 240_000)

  test("a person's feed reads the events of its actor and of the watched repositories through their indexes", async () => {
    // 20,000 pushes by someone else to a thousand repositories the feed's owner does not watch
    // (an event keeps its repository's id without a foreign key): none of them in the feed, so a
    // plan that reads the events in id order and filters each reads them all.
    const pg = s.deps.db.$client as any
    const stranger = await s.user('stranger')
    await pg.unsafe(`insert into events (kind, repo_id, actor_id, payload, created_unix) select 'push', 100000 + g % 1000, $1, '{}', g from generate_series(1, 20000) g`, [stranger.user.id])
    await pg.unsafe('ANALYZE events')
    const statements = await statementsOf('/users/planner/activities/feeds?limit=10', owner.token)
    const reads = statements.filter((st) => /from "events"/.test(st.text))
    expect(reads.length).toBe(2) // the count, then the page
    for (const st of reads)
      for (const plan of [await planOf(st.text, st.params), await genericPlanOf(st.text, st.params)]) {
        // Both terms of the feed searched in their own index (a BitmapOr), never the table in id order.
        expect(plan).toContain('events_actor_idx')
        expect(plan).toContain('events_repo_idx')
        expect(plan).not.toMatch(/"Node Type":"Seq Scan",[^}]*"Relation Name":"events"/)
        expect(plan).not.toContain('events_pkey')
      }
    // The feed itself: the owner's own repository's creation, none of the stranger's pushes.
    const feed = await s.get('/users/planner/activities/feeds?limit=50', { token: owner.token })
    expect(feed.status).toBe(200)
    expect(feed.body.length).toBeGreaterThan(0)
    expect(feed.body.every((a: { act_user_id: number }) => a.act_user_id === owner.user.id)).toBe(true)
  }, 240_000)

  test("a commit's pull request, merges under way and the issue search's labels by name are searched in their indexes", async () => {
    const pg = s.deps.db.$client as any
    const initd = await s.post('/user/repos', { name: 'initd', auto_init: true }, { token: owner.token })
    expect(initd.status).toBe(201)
    const now = Math.floor(Date.now() / 1000)
    // 5,000 pull requests of the repository, none of its commit; 10,000 labels and as many milestones over the
    // repositories, none named `nosuch`.
    await pg.unsafe(
      `insert into issues (repo_id, index, poster_id, title, content, is_pull, created_unix, updated_unix)
         select $1, g, $2, 'pull ' || g, '', true, $3, $3 from generate_series(1, 5000) g`,
      [initd.body.id, owner.user.id, now],
    )
    await pg.unsafe(
      `insert into pull_requests (issue_id, index, base_repo_id, base_branch, head_repo_id, head_branch, head_sha, has_merged, merge_commit_sha)
         select i.id, i.index, $1, 'main', $1, 'topic-' || i.index, md5(i.index::text) || 'abcdefgh', i.index % 2 = 0, md5('m' || i.index) || 'abcdefgh'
         from issues i where i.repo_id = $1`,
      [initd.body.id],
    )
    await pg.unsafe(`insert into labels (repo_id, name, color, created_unix, updated_unix) select id, 'label-' || (id % 50), '#00aabb', $1, $1 from repositories`, [now])
    await pg.unsafe(`insert into labels (repo_id, name, color, created_unix, updated_unix) select id, 'more-' || (id % 50), '#00aabb', $1, $1 from repositories`, [now])
    await pg.unsafe(`insert into milestones (repo_id, name, created_unix, updated_unix) select id, 'v' || (id % 50), $1, $1 from repositories`, [now])
    await pg.unsafe(`insert into milestones (repo_id, name, created_unix, updated_unix) select id, 'w' || (id % 50), $1, $1 from repositories`, [now])
    await pg.unsafe('ANALYZE')
    const lookups = await sent.during(async () => {
      expect((await s.get('/repos/planner/initd/commits/main/pull', { token: owner.token })).status).toBe(404)
      expect((await s.get('/repos/issues/search?labels=nosuch&milestones=nosuch', { token: owner.token })).status).toBe(200)
    })
    const expected: [RegExp, string, string][] = [
      [/from "pull_requests" where .*"merge_commit_sha"/, 'pull_requests_merge_commit_idx', 'pull_requests'],
      [/from "pull_requests" where .*"head_sha"/, 'pull_requests_head_sha_idx', 'pull_requests'],
      [/^select "id" from "labels"/, 'labels_name_idx', 'labels'],
      [/^select "id" from "milestones"/, 'milestones_name_idx', 'milestones'],
    ]
    // The leftover repair's round (every few seconds on PostgreSQL) and the start's: the merges under way.
    lookups.push(...(await sent.during(() => repairPullMerges(s.deps, { abandonedOnly: true }))))
    expected.push([/from "pull_requests" where .*"merge_intent" is not null/, 'pull_requests_merge_intent_idx', 'pull_requests'])
    for (const [shape, index, table] of expected) {
      const st = lookups.find((l) => shape.test(l.text))
      expect(st).toBeDefined()
      for (const plan of [await planOf(st!.text, st!.params), await genericPlanOf(st!.text, st!.params)]) {
        expect(plan).toContain(index)
        expect(plan).not.toMatch(new RegExp(`"Node Type":"Seq Scan",[^}]*"Relation Name":"${table}"`))
      }
    }
  }, 240_000)

  test("the branch just deleted is found among its deleter's latest events, not by reading the site's newest", async () => {
    // 20,000 newer events of someone else's; the owner's one deletion in the repository is older.
    const pg = s.deps.db.$client as any
    const [{ id: repoId }] = await pg.unsafe(`select id from repositories where lower_name = 'tracker'`)
    await pg.unsafe(`insert into events (kind, repo_id, actor_id, payload, created_unix) values ('ref.deleted', $1, $2, $3, 1)`, [repoId, owner.user.id, JSON.stringify({ ref: 'gone', refType: 'branch', sha: 'a'.repeat(40) })])
    const other = await s.user('busy-bee')
    await pg.unsafe(`insert into events (kind, repo_id, actor_id, payload, created_unix) select 'ref.deleted', $1, $2, '{}', 100 + g from generate_series(1, 20000) g`, [repoId, other.user.id])
    await pg.unsafe('ANALYZE events')
    let found: Awaited<ReturnType<typeof latestDeletion>> = null
    const [read] = await sent.during(async () => (found = await latestDeletion(s.deps, { repo: { id: repoId } } as any, owner.user, 'gone')))
    expect(found).toMatchObject({ name: 'gone', commit: 'a'.repeat(40) })
    for (const plan of [await planOf(read!.text, read!.params), await genericPlanOf(read!.text, read!.params)]) {
      expect(plan).not.toContain('events_pkey')
      expect(plan).not.toMatch(/"Node Type":"Seq Scan",[^}]*"Relation Name":"events"/)
    }
  }, 240_000)

  test("whether a row still names a replaced avatar's file is searched in the avatar's index", async () => {
    // The 5,000 repositories of the set-up; one repository's avatar replaced, then removed.
    const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII='
    expect((await s.post('/repos/planner/tracker/avatar', { image: png }, { token: owner.token })).status).toBe(204)
    await (s.deps.db.$client as any).unsafe('ANALYZE repositories')
    const reads = await sent.during(async () => expect((await s.del('/repos/planner/tracker/avatar', undefined, { token: owner.token })).status).toBe(204))
    const named = reads.find((st) => /^select "id" from "repositories" where "repositories"."avatar"/.test(st.text))
    expect(named).toBeDefined()
    for (const plan of [await planOf(named!.text, named!.params), await genericPlanOf(named!.text, named!.params)]) {
      expect(plan).toContain('repositories_avatar_idx')
      expect(plan).not.toMatch(/"Node Type":"Seq Scan",[^}]*"Relation Name":"repositories"/)
    }
  }, 240_000)

  test("a person's notification threads are paged through their own index, newest first, whatever the site's count", async () => {
    // 20,000 threads of four other people on the 5,000 issues, 100 of the owner's.
    const pg = s.deps.db.$client as any
    const others = [await s.user('reader-1'), await s.user('reader-2'), await s.user('reader-3'), await s.user('reader-4')]
    const [{ id: repoId }] = await pg.unsafe(`select id from repositories where lower_name = 'tracker'`)
    for (const [i, who] of [...others, owner].entries())
      await pg.unsafe(
        `insert into notifications (user_id, repo_id, status, source, issue_id, updated_by, last_event_id, created_unix, updated_unix)
           select $1, $2, 1, 1, i.id, $1, 0, i.index, i.index + $3 from issues i where i.repo_id = $2 and ($4 or i.index <= 100)`,
        [who.user.id, repoId, i, who !== owner],
      )
    await pg.unsafe('ANALYZE notifications')
    const reads = (await statementsOf('/notifications?all=true&page=2&limit=10', owner.token)).filter((st) => /from "notifications"/.test(st.text))
    const page = reads.find((st) => /order by "notifications"."updated_unix" desc/.test(st.text))
    expect(page).toBeDefined()
    // With the values (a generic plan, not knowing LIMIT's, costs more than these and is not taken).
    const plan = await planOf(page!.text, page!.params)
    expect(plan).toContain('notifications_user_updated_idx')
    expect(plan).not.toMatch(/"Node Type":"Seq Scan",[^}]*"Relation Name":"notifications"/)
    const listed = await s.get('/notifications?all=true&page=2&limit=10', { token: owner.token })
    expect(listed.body.map((t: { subject: { title: string } }) => t.subject.title)).toEqual(Array.from({ length: 10 }, (_, i) => `issue ${90 - i}`))
  }, 240_000)

  test('write transactions commit without waiting for the flush; other statements keep the server setting', async () => {
    const setting = async () => ((await (s.deps.db as any).execute(sql`select current_setting('synchronous_commit') as value`)) as { value: string }[])[0]!.value
    expect(await writeTransaction(s.deps.db, setting)).toBe('off')
    expect(await setting()).toBe('on')
  }, 240_000)

  test("a person's own list and the search of a person's repositories start from their ids, not every repository", async () => {
    // The 5,000 repositories spread over 50 owners (each owner's share a small part of the table, as
    // on a real site; one owner of all is a whole-table read, rightly), one of them an organisation
    // with a team covering all of its repositories, which the person is not in.
    const pg = s.deps.db.$client as any
    const owners = [] as number[]
    for (let i = 0; i < 50; i++) owners.push((await s.user(`plan-owner-${i}`)).user.id)
    await pg.unsafe(`update repositories set owner_id = ($1::bigint[])[1 + id % 50] where lower_name like 'project-%'`, [owners])
    const org = await s.post('/orgs', { username: 'plan-org' }, { token: owner.token })
    expect(org.status).toBe(201)
    await pg.unsafe(`update repositories set owner_id = $1 where lower_name like 'project-1_'`, [org.body.id])
    expect((await s.post('/orgs/plan-org/teams', { name: 'all-of-it', permission: 'read', includes_all_repositories: true }, { token: owner.token })).status).toBe(201)
    await pg.unsafe('ANALYZE')
    const sharer = await s.user('plan-sharer')
    expect((await s.put('/repos/planner/tracker/collaborators/plan-sharer', { permission: 'read' }, { token: owner.token })).status).toBe(204)
    for (const path of ['/user/repos', `/repos/search?uid=${sharer.user.id}`, `/repos/search?uid=${sharer.user.id}&mode=collaborative`]) {
      const reads = (await statementsOf(path, sharer.token)).filter((st) => /^select .* from "repositories" where/.test(st.text))
      expect([path, reads.length]).toEqual([path, 2])
      // With the values (a generic plan costs an owner's average share of the table, here a
      // whole-table read; PostgreSQL keeps the custom plans while the generic one is dearer).
      for (const st of reads) expect([path, /"Node Type":"Seq Scan",[^}]*"Relation Name":"repositories"/.test(await planOf(st.text, st.params))]).toEqual([path, false])
      const found = await s.get(path, { token: sharer.token })
      expect((found.body.data ?? found.body).map((r: { full_name: string }) => r.full_name)).toEqual(['planner/tracker'])
    }
  })

  test('no JIT compilation, on the pool and in write transactions (compiled again at every execution: time lost on a request)', async () => {
    const setting = async () => ((await (s.deps.db as any).execute(sql`select current_setting('jit') as value`)) as { value: string }[])[0]!.value
    expect(await setting()).toBe('off')
    expect(await writeTransaction(s.deps.db, setting)).toBe('off')
  })

  test("the issue searches by text find their candidates in the trigram indexes of titles, descriptions and comments", async () => {
    // A plain comment on each of the 5,000 issues (added last: the feed's plans above are made
    // without them); then VACUUM, as autovacuum would: the rows added in bulk (the issues of the
    // tests above too) wait in the trigram indexes' pending lists, dear to scan, until then.
    const pg = s.deps.db.$client as any
    await pg.unsafe(
      `insert into comments (type, poster_id, issue_id, repo_id, content, created_unix, updated_unix)
         select 0, $1, id, repo_id, 'a comment on ' || index, 0, 0 from issues where repo_id = (select id from repositories where lower_name = 'tracker')`,
      [owner.user.id],
    )
    await pg.unsafe('VACUUM ANALYZE issues, comments')
    const lists = [
      // A repository's list: titles and descriptions.
      ['/repos/planner/tracker/issues?state=all&q=ue%204321', ['issues_title_trgm_idx', 'issues_content_trgm_idx']],
      // Across repositories: plain comments too.
      ['/repos/issues/search?state=all&q=ue%204321', ['issues_title_trgm_idx', 'issues_content_trgm_idx', 'comments_content_trgm_idx']],
    ] as const
    for (const [path, indexes] of lists) {
      const reads = (await statementsOf(path, owner.token)).filter((st) => /ILIKE/.test(st.text) && /from "issues"/.test(st.text))
      expect(reads.length).toBeGreaterThanOrEqual(1)
      for (const st of reads)
        for (const plan of [await planOf(st.text, st.params), await genericPlanOf(st.text, st.params)]) {
          for (const index of indexes) expect(plan).toContain(index)
          expect(plan).not.toMatch(/"Node Type":"Seq Scan",[^}]*"Relation Name":"(issues|comments)"/)
        }
      const found = await s.get(path, { token: owner.token })
      expect(found.body.map((i: { title: string }) => i.title)).toEqual(['issue 4321'])
    }
  }, 240_000)
})
