import { and, asc, count, eq, sql, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { preparedPage, type Page, type Paged } from '../../lib/pagination'
import { perConnectionShape, writeTransaction } from '../../db/client'
import { issues, milestones, repositories, type MilestoneRow } from '../../db/schema'
import { containsText } from '../../db/sql'
import { notFound } from '../../lib/errors'
import { nowUnix } from '../../lib/time'
import { parseDue } from '../issues/service'
import { checkRequiredText, MAX_TITLE } from '../../lib/validate'
import { pathNumber } from '../../lib/path-number'

/** A body's `state` (open or closed, checked by its schema) as "closed?"; empty or absent = unchanged. */
const closedOf = (state: string | undefined): boolean | undefined => (state === undefined || state === '' ? undefined : state === 'closed')

const checkTitle = (title: string) => checkRequiredText(title, MAX_TITLE, 'Title')

async function bumpRepoMilestones(deps: AppDeps, repoId: number, total: number, closed: number) {
  await deps.db
    .update(repositories)
    .set({
      numMilestones: sql`${repositories.numMilestones} + ${total}`,
      numClosedMilestones: sql`${repositories.numClosedMilestones} + ${closed}`,
    })
    .where(eq(repositories.id, repoId))
}

/**
 * listMilestones' statements for one shape (the state, whether a name is asked, a page or all),
 * prepared when first asked: every issue list page and the API's milestone lists read them.
 */
function prepareMilestoneList(db: AppDeps['db'], state: string, named: boolean, paged: boolean) {
  const p = sql.placeholder
  const where = and(
    eq(milestones.repoId, p('repo')),
    state === 'all' ? undefined : eq(milestones.isClosed, state === 'closed'),
    // Gitea 1.14+ `name`: titles containing it, case-insensitively (both sides folded by the database).
    named ? containsText(sql`lower(${milestones.name})`, sql`lower(${p('name')})`) : undefined,
  )
  // Gitea 1.9+: deadline ascending then id; "no deadline" (stored there as year 9999, here 0) last.
  const all = db.select().from(milestones).where(where).orderBy(sql`${milestones.deadlineUnix} = 0`, asc(milestones.deadlineUnix), asc(milestones.id))
  return { rows: (paged ? all.limit(p('limit')).offset(p('offset')) : all).prepare(), count: db.select({ n: count() }).from(milestones).where(where).prepare() }
}
const milestoneListStatements = perConnectionShape<ReturnType<typeof prepareMilestoneList>>()

/** Milestones of a repository by state (`open` default, `closed`, `all`), by deadline then id. */
export async function listMilestones(deps: AppDeps, repoId: number, page: Page | null, state: string | undefined, name?: string): Promise<Paged<MilestoneRow>> {
  // The query schema admits only open, closed and all (anything else reads as open).
  const s = state === 'closed' || state === 'all' ? state : 'open'
  const found = milestoneListStatements(deps.db, `${s} ${name ? 'named' : 'any'} ${page ? 'page' : 'all'}`, () => prepareMilestoneList(deps.db, s, !!name, page !== null))
  return await preparedPage<MilestoneRow>(found, { repo: repoId, name: name ?? '' }, page)
}

/**
 * A milestone of the repository by id or, as Gitea 1.17+ also accepts, by its title (a number is
 * tried as an id first, then as a title).
 */
async function findMilestone(deps: AppDeps, repoId: number, idOrTitle: string): Promise<MilestoneRow | undefined> {
  const id = pathNumber(idOrTitle)
  const where = async (cond: SQL) => (await deps.db.select().from(milestones).where(and(eq(milestones.repoId, repoId), cond)))[0]
  return (Number.isNaN(id) ? undefined : await where(eq(milestones.id, id))) ?? await where(eq(milestones.name, idOrTitle))
}

/** findMilestone, or 404. */
export async function getMilestone(deps: AppDeps, repoId: number, idOrTitle: string): Promise<MilestoneRow> {
  const row = await findMilestone(deps, repoId, idOrTitle)
  if (!row) throw notFound(`milestone does not exist [id or title: ${idOrTitle}]`)
  return row
}

export async function createMilestone(
  deps: AppDeps,
  repoId: number,
  opts: { title: string; description?: string; due_on?: string | null; state?: string },
): Promise<MilestoneRow> {
  const name = checkTitle(opts.title)
  const closed = closedOf(opts.state) ?? false
  const deadline = parseDue(opts.due_on, 'due_on') ?? 0
  const now = nowUnix()
  return await writeTransaction(deps.db, async () => {
    const row = (await deps.db
      .insert(milestones)
      .values({
        repoId,
        name,
        content: opts.description ?? '',
        isClosed: closed,
        closedUnix: closed ? now : 0,
        deadlineUnix: deadline,
        createdUnix: now,
        updatedUnix: now,
      })
      .returning())[0]
    await bumpRepoMilestones(deps, repoId, 1, closed ? 1 : 0)
    return row
  })
}

export async function editMilestone(
  deps: AppDeps,
  repoId: number,
  idOrTitle: string,
  opts: { title?: string; description?: string; due_on?: string | null; state?: string },
): Promise<MilestoneRow> {
  const closed = closedOf(opts.state)
  const deadline = parseDue(opts.due_on, 'due_on')
  if (opts.title) checkTitle(opts.title)
  const now = nowUnix()
  return await writeTransaction(deps.db, async () => {
    const current = await getMilestone(deps, repoId, idOrTitle)
    const set: Partial<MilestoneRow> = { updatedUnix: now }
    if (opts.title) set.name = opts.title
    if (opts.description !== undefined) set.content = opts.description
    if (deadline !== undefined && deadline > 0) set.deadlineUnix = deadline
    if (opts.due_on === null) set.deadlineUnix = 0
    if (closed !== undefined && closed !== current.isClosed) {
      set.isClosed = closed
      set.closedUnix = closed ? now : 0
      await bumpRepoMilestones(deps, repoId, 0, closed ? 1 : -1)
    }
    return (await deps.db.update(milestones).set(set).where(eq(milestones.id, current.id)).returning())[0]!
  })
}

/** Deletes a milestone; its issues keep going without one. Unknown ones are fine (idempotent, as Gitea). */
export async function deleteMilestone(deps: AppDeps, repoId: number, idOrTitle: string): Promise<void> {
  await writeTransaction(deps.db, async () => {
    const row = await findMilestone(deps, repoId, idOrTitle)
    if (!row) throw notFound()
    await deps.db.delete(milestones).where(eq(milestones.id, row.id))
    await deps.db
      .update(issues)
      .set({ milestoneId: 0 })
      .where(and(eq(issues.repoId, repoId), eq(issues.milestoneId, row.id)))
    await bumpRepoMilestones(deps, repoId, -1, row.isClosed ? -1 : 0)
  })
}
