import { and, asc, count, eq, max, sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { perConnection, writeTransaction } from '../../db/client'
import { issues, projectColumns, projectIssues, projects, repositories, type IssueRow, type ProjectColumnRow, type ProjectRow, type RepoRow } from '../../db/schema'
import { containsPattern, inJsonList, jsonRecords, likeIgnoringCase, recordField } from '../../db/sql'
import { AccessMode, repoAccesses, unitMode } from '../../auth/access'
import type { UserRow } from '../../auth/caller'
import { recordEvents } from '../../events/outbox'
import { issueEvent } from '../../events/issue-events'
import { notFound, unprocessable } from '../../lib/errors'
import type { Page, Paged } from '../../lib/pagination'
import { charCount, checkRequiredText } from '../../lib/validate'
import { nowUnix } from '../../lib/time'

/*
 * Project boards (Gitea 1.23's models/project and services/projects): a repository's or an
 * owner's projects, their columns, and the issues and pull requests on them as cards. Who may see
 * and change them is the pages' needs (the pipeline); these functions take the holder they act in
 * and refuse what does not belong to it with 404.
 */

/** Gitea's CreateProjectForm and EditProjectColumnForm: titles at most 100 characters. */
export const MAX_PROJECT_TITLE = 100
/** A project's description (Gitea's TEXT column), bounded as an issue's text on the web. */
export const MAX_PROJECT_DESCRIPTION = 65_536
/** Gitea's maxProjectColumns. */
export const MAX_COLUMNS = 20
/** Cards a column shows on the board (the rest: the issue list filtered by the project). */
export const CARDS_PER_COLUMN = 50
/** Cards one move may name (Gitea's MoveIssues takes a column's list). */
export const MAX_MOVED = 100

/** Gitea's project.Type. */
export const ProjectType = { Individual: 1, Repository: 2, Organization: 3 } as const

/** Gitea's TemplateType and the columns each makes (setting.Project's defaults), after the default "Backlog". */
export const TEMPLATES = [
  { type: 0, name: 'None', columns: [] as string[] },
  { type: 1, name: 'Basic Kanban', columns: ['To Do', 'In Progress', 'Done'] },
  { type: 2, name: 'Bug Triage', columns: ['Needs Triage', 'High Priority', 'Low Priority', 'Closed'] },
] as const
/** Gitea's CardType: 0 text only, 1 images and text. */
export const CARD_TYPES = [
  { type: 0, name: 'Text only' },
  { type: 1, name: 'Images and text' },
] as const

/** Where projects live: a repository, or a user or organisation. */
export type Holder = { repoId: number } | { owner: Pick<UserRow, 'id' | 'type'> }

/** The projects of a repository (`kind` 'repo') or of a user or organisation ('owner') of id `id`, a value or a placeholder. */
const heldBy = (kind: 'repo' | 'owner', id: number | Placeholder): SQL =>
  kind === 'repo' ? and(eq(projects.repoId, id), eq(projects.type, ProjectType.Repository))! : eq(projects.ownerId, id)
const holderCondition = (holder: Holder): SQL => ('repoId' in holder ? heldBy('repo', holder.repoId) : heldBy('owner', holder.owner.id))

/** projectChoices' statements, by the holder's kind, prepared once per connection (every issue list and conversation page reads them). */
const projectChoicesOf = perConnection((db: AppDeps['db']) => {
  const choices = (kind: 'repo' | 'owner') =>
    db.select().from(projects).where(heldBy(kind, sql.placeholder('holder'))).orderBy(asc(projects.isClosed), asc(projects.id)).limit(sql.placeholder('limit')).prepare()
  return { repo: choices('repo'), owner: choices('owner') }
})

const COLOR = /^#[0-9a-fA-F]{6}$/

function checkTitle(title: string): string {
  return checkRequiredText(title.trim(), MAX_PROJECT_TITLE, 'Title').trim()
}

function checkDescription(text: string): string {
  if (charCount(text) > MAX_PROJECT_DESCRIPTION) throw unprocessable(`must be less than ${MAX_PROJECT_DESCRIPTION} characters`, 'Content')
  return text
}

function checkColor(color: string): string {
  if (color !== '' && !COLOR.test(color)) throw unprocessable('The colour must be #rrggbb.', 'Color')
  return color.toLowerCase()
}

/** Open and closed projects of a holder. */
export async function projectCounts(deps: AppDeps, holder: Holder): Promise<{ open: number; closed: number }> {
  const rows = await deps.db.select({ closed: projects.isClosed, n: count() }).from(projects).where(holderCondition(holder)).groupBy(projects.isClosed)
  return { open: Number(rows.find((r) => !r.closed)?.n ?? 0), closed: Number(rows.find((r) => r.closed)?.n ?? 0) }
}

/** A page of a holder's open or closed projects, oldest first (Gitea's default order), titles containing `q` when given. */
export async function listProjects(deps: AppDeps, holder: Holder, opts: { closed: boolean; q?: string }, page: Page): Promise<Paged<ProjectRow>> {
  const where = and(holderCondition(holder), eq(projects.isClosed, opts.closed), opts.q ? likeIgnoringCase(projects.title, containsPattern(opts.q)) : undefined)
  const [total] = await deps.db.select({ n: count() }).from(projects).where(where)
  const rows = await deps.db.select().from(projects).where(where).orderBy(asc(projects.createdUnix), asc(projects.id)).limit(page.limit).offset(page.offset)
  return { rows, total: Number(total?.n ?? 0) }
}

/** Every project of a holder, open ones first (the sidebar's choice), at most `limit`. */
export async function projectChoices(deps: AppDeps, holder: Holder, limit: number): Promise<ProjectRow[]> {
  const statements = projectChoicesOf(deps.db)
  return 'repoId' in holder ? await statements.repo.execute({ holder: holder.repoId, limit }) : await statements.owner.execute({ holder: holder.owner.id, limit })
}

/** The holder's project of that id, or 404. */
export async function getProject(deps: AppDeps, holder: Holder, id: number): Promise<ProjectRow> {
  const row = Number.isSafeInteger(id) ? (await deps.db.select().from(projects).where(and(eq(projects.id, id), holderCondition(holder))))[0] : undefined
  if (!row) throw notFound(`projects does not exist [id: ${id}]`)
  return row
}

export interface ProjectInput {
  title: string
  description: string
  templateType?: number
  cardType: number
}

/** Creates a project with the columns of its template (Gitea's NewProject: "Backlog", the default, then the template's). */
export async function createProject(deps: AppDeps, holder: Holder, creator: UserRow, input: ProjectInput): Promise<ProjectRow> {
  const title = checkTitle(input.title)
  const description = checkDescription(input.description)
  const template = TEMPLATES.find((t) => t.type === input.templateType) ?? TEMPLATES[0]
  const cardType = CARD_TYPES.some((c) => c.type === input.cardType) ? input.cardType : 0
  const now = nowUnix()
  const type = 'repoId' in holder ? ProjectType.Repository : holder.owner.type === 1 ? ProjectType.Organization : ProjectType.Individual
  return await writeTransaction(deps.db, async () => {
    const [row] = await deps.db
      .insert(projects)
      .values({
        repoId: 'repoId' in holder ? holder.repoId : null,
        ownerId: 'repoId' in holder ? null : holder.owner.id,
        type,
        title,
        description,
        templateType: template.type,
        cardType,
        creatorId: creator.id,
        createdUnix: now,
        updatedUnix: now,
      })
      .returning()
    if (template.type !== 0) {
      const titles = ['Backlog', ...template.columns]
      await deps.db.insert(projectColumns).values(
        titles.map((t, i) => ({ projectId: row!.id, title: t, sorting: i, isDefault: i === 0, creatorId: creator.id, createdUnix: now, updatedUnix: now })),
      )
    }
    return row!
  })
}

/** Changes a project's title, description and card type (Gitea's UpdateProject). */
export async function editProject(deps: AppDeps, project: ProjectRow, input: ProjectInput): Promise<ProjectRow> {
  const title = checkTitle(input.title)
  const description = checkDescription(input.description)
  const cardType = CARD_TYPES.some((c) => c.type === input.cardType) ? input.cardType : project.cardType
  const [row] = await deps.db.update(projects).set({ title, description, cardType, updatedUnix: nowUnix() }).where(eq(projects.id, project.id)).returning()
  return row!
}

/** Opens or closes a project. */
export async function setProjectClosed(deps: AppDeps, project: ProjectRow, closed: boolean): Promise<void> {
  if (project.isClosed === closed) return
  const now = nowUnix()
  await deps.db.update(projects).set({ isClosed: closed, closedUnix: closed ? now : 0, updatedUnix: now }).where(eq(projects.id, project.id))
}

/** Deletes a project, its columns and its cards (foreign keys). */
export async function deleteProject(deps: AppDeps, project: ProjectRow): Promise<void> {
  await deps.db.delete(projects).where(eq(projects.id, project.id))
}

/** A project's columns in their order. */
export async function projectColumnsOf(deps: AppDeps, projectId: number): Promise<ProjectColumnRow[]> {
  return await deps.db.select().from(projectColumns).where(eq(projectColumns.projectId, projectId)).orderBy(asc(projectColumns.sorting), asc(projectColumns.id))
}

/** A column of the project, or 404. */
export async function getColumn(deps: AppDeps, project: ProjectRow, id: number): Promise<ProjectColumnRow> {
  const row = Number.isSafeInteger(id) ? (await deps.db.select().from(projectColumns).where(and(eq(projectColumns.id, id), eq(projectColumns.projectId, project.id))))[0] : undefined
  if (!row) throw notFound(`project column does not exist [id: ${id}]`)
  return row
}

/** Adds a column at the end (Gitea's NewColumn: at most MAX_COLUMNS, 422 past them). */
export async function addColumn(deps: AppDeps, project: ProjectRow, creator: UserRow, input: { title: string; color: string }): Promise<ProjectColumnRow> {
  const title = checkTitle(input.title)
  const color = checkColor(input.color)
  const now = nowUnix()
  return await writeTransaction(deps.db, async () => {
    const [stats] = await deps.db.select({ n: count(), top: max(projectColumns.sorting) }).from(projectColumns).where(eq(projectColumns.projectId, project.id))
    const n = Number(stats?.n ?? 0)
    if (n >= MAX_COLUMNS) throw unprocessable(`A project has at most ${MAX_COLUMNS} columns.`, 'Title')
    const [row] = await deps.db
      .insert(projectColumns)
      .values({ projectId: project.id, title, color, sorting: n ? Number(stats?.top ?? 0) + 1 : 0, creatorId: creator.id, createdUnix: now, updatedUnix: now })
      .returning()
    return row!
  })
}

/** Changes a column's title and colour. */
export async function editColumn(deps: AppDeps, column: ProjectColumnRow, input: { title: string; color: string }): Promise<void> {
  const title = checkTitle(input.title)
  const color = checkColor(input.color)
  await deps.db.update(projectColumns).set({ title, color, updatedUnix: nowUnix() }).where(eq(projectColumns.id, column.id))
}

/** Makes a column the project's default, where new cards go (Gitea's SetDefaultColumn). */
export async function setDefaultColumn(deps: AppDeps, column: ProjectColumnRow): Promise<void> {
  await writeTransaction(deps.db, async () => {
    await deps.db.update(projectColumns).set({ isDefault: false }).where(and(eq(projectColumns.projectId, column.projectId), eq(projectColumns.isDefault, true)))
    await deps.db.update(projectColumns).set({ isDefault: true }).where(eq(projectColumns.id, column.id))
  })
}

/**
 * The project's default column (Gitea's MustDefaultColumn): the one marked, else the first other
 * than `except`, made the default, else a new "Uncategorized" one. Inside a write transaction.
 */
async function defaultColumn(deps: AppDeps, project: ProjectRow, actorId: number, except = 0): Promise<ProjectColumnRow> {
  const columns = (await projectColumnsOf(deps, project.id)).filter((c) => c.id !== except)
  const marked = columns.find((c) => c.isDefault)
  if (marked) return marked
  if (columns[0]) {
    await deps.db.update(projectColumns).set({ isDefault: true }).where(eq(projectColumns.id, columns[0].id))
    return { ...columns[0], isDefault: true }
  }
  if (columns.length === 0 && except) throw unprocessable('The last column of a project cannot be deleted while it holds cards: add another column first.')
  const now = nowUnix()
  const [row] = await deps.db
    .insert(projectColumns)
    .values({ projectId: project.id, title: 'Uncategorized', isDefault: true, sorting: 0, creatorId: actorId, createdUnix: now, updatedUnix: now })
    .returning()
  return row!
}

/** The next sorting at the end of a column. */
async function endOf(deps: AppDeps, columnId: number): Promise<number> {
  const [row] = await deps.db.select({ top: max(projectIssues.sorting) }).from(projectIssues).where(eq(projectIssues.columnId, columnId))
  return row?.top === null || row?.top === undefined ? 0 : Number(row.top) + 1
}

/**
 * Deletes a column (not the default one: 422, as Gitea); its cards go to the end of the default
 * column (the first other column becomes the default when none is marked).
 */
export async function deleteColumn(deps: AppDeps, project: ProjectRow, column: ProjectColumnRow, actor: UserRow): Promise<void> {
  if (column.isDefault) throw unprocessable('The default column cannot be deleted: make another column the default first.')
  await writeTransaction(deps.db, async () => {
    const [cards] = await deps.db.select({ n: count() }).from(projectIssues).where(eq(projectIssues.columnId, column.id))
    if (Number(cards?.n ?? 0) > 0) {
      const target = await defaultColumn(deps, project, actor.id, column.id)
      const start = await endOf(deps, target.id)
      await deps.db
        .update(projectIssues)
        .set({ columnId: target.id, sorting: sql`${projectIssues.sorting} + ${start}` })
        .where(eq(projectIssues.columnId, column.id))
    }
    await deps.db.delete(projectColumns).where(eq(projectColumns.id, column.id))
  })
}

/** Moves a column one place left or right, the project's columns numbered 0..n-1 again. */
export async function shiftColumn(deps: AppDeps, project: ProjectRow, column: ProjectColumnRow, direction: 'left' | 'right'): Promise<void> {
  await writeTransaction(deps.db, async () => {
    const ids = (await projectColumnsOf(deps, project.id)).map((c) => c.id)
    const at = ids.indexOf(column.id)
    const to = direction === 'left' ? at - 1 : at + 1
    if (at < 0 || to < 0 || to >= ids.length) return
    ;[ids[at], ids[to]] = [ids[to]!, ids[at]!]
    await orderColumns(deps, ids)
  })
}

/** Gitea's MoveColumns: each column given its sorting; every column named must be the project's (404 otherwise). */
export async function sortColumns(deps: AppDeps, project: ProjectRow, order: { columnID: number; sorting: number }[]): Promise<void> {
  await writeTransaction(deps.db, async () => {
    const ids = new Set((await projectColumnsOf(deps, project.id)).map((c) => c.id))
    if (order.some((o) => !ids.has(o.columnID))) throw notFound('some columns do not exist')
    await placeColumns(deps, order.map((o) => ({ id: o.columnID, sorting: o.sorting })))
  })
}

const orderColumns = (deps: AppDeps, ids: number[]) => placeColumns(deps, ids.map((id, sorting) => ({ id, sorting })))

/** The rows a placing statement reads its values from (one JSON array: one statement whatever their number). */
const placed = (name: string) => recordField('placed', name)

/** Gives each column named its sorting, in one statement. */
async function placeColumns(deps: AppDeps, rows: { id: number; sorting: number }[]): Promise<void> {
  if (rows.length === 0) return
  await deps.db
    .update(projectColumns)
    .set({ sorting: placed('sorting') })
    .from(jsonRecords('rows', 'placed', { id: projectColumns.id, sorting: projectColumns.sorting }))
    .where(eq(projectColumns.id, placed('id')))
    .prepare()
    .execute({ rows: JSON.stringify(rows) })
}

/**
 * The repositories among `repoIds` whose issues, and whose pull requests, `viewer` may see: the
 * tracker on and the viewer reading its unit (not the code's: a team may give the code and not the issues).
 */
async function readableTrackers(deps: AppDeps, viewer: UserRow | null, repoIds: number[]): Promise<{ issues: number[]; pulls: number[] }> {
  if (repoIds.length === 0) return { issues: [], pulls: [] }
  const rows = await deps.db.select().from(repositories).where(inJsonList(repositories.id, repoIds))
  const accesses = await repoAccesses(deps.db, viewer, rows)
  const reads = (r: RepoRow, unit: 'repo.issues' | 'repo.pulls') => {
    const access = accesses.get(r.id)
    return access !== undefined && unitMode(access, unit) >= AccessMode.Read
  }
  return { issues: rows.filter((r) => r.hasIssues && reads(r, 'repo.issues')).map((r) => r.id), pulls: rows.filter((r) => r.hasPullRequests && reads(r, 'repo.pulls')).map((r) => r.id) }
}

/**
 * The cards `viewer` may see among those `cards` selects (of `project_issues`): issues of readable
 * repositories whose tracker is on (Gitea's LoadIssuesFromColumn with the doer); a condition on `issues`.
 */
async function visibleCards(deps: AppDeps, viewer: UserRow | null, cards: SQL): Promise<SQL> {
  const repoIds = (await deps.db.selectDistinct({ id: issues.repoId }).from(projectIssues).innerJoin(issues, eq(issues.id, projectIssues.issueId)).where(cards)).map((r) => r.id)
  const ok = await readableTrackers(deps, viewer, repoIds)
  return sql`((${issues.isPull} = ${false} and ${inJsonList(issues.repoId, ok.issues.length ? ok.issues : [-1])}) or (${issues.isPull} = ${true} and ${inJsonList(issues.repoId, ok.pulls.length ? ok.pulls : [-1])}))`
}

export interface BoardColumn {
  column: ProjectColumnRow
  /** Cards the viewer may see in this column. */
  total: number
  /** The first CARDS_PER_COLUMN of them, in order. */
  cards: IssueRow[]
}

/** A project's board as `viewer` sees it: its columns, each with its first cards and how many it holds. */
export async function projectBoard(deps: AppDeps, project: ProjectRow, viewer: UserRow | null): Promise<{ columns: BoardColumn[]; open: number; closed: number }> {
  const columns = await projectColumnsOf(deps, project.id)
  const ofProject = eq(projectIssues.projectId, project.id)
  const mine = and(ofProject, await visibleCards(deps, viewer, ofProject))
  const counts = await deps.db
    .select({ column: projectIssues.columnId, closed: issues.isClosed, n: count() })
    .from(projectIssues)
    .innerJoin(issues, eq(issues.id, projectIssues.issueId))
    .where(mine)
    .groupBy(projectIssues.columnId, issues.isClosed)
  const ranked = deps.db
    .select({
      issueId: projectIssues.issueId,
      columnId: projectIssues.columnId,
      sorting: projectIssues.sorting,
      cardId: projectIssues.id,
      rank: sql<number>`row_number() over (partition by ${projectIssues.columnId} order by ${projectIssues.sorting}, ${projectIssues.id})`.as('rank'),
    })
    .from(projectIssues)
    .innerJoin(issues, eq(issues.id, projectIssues.issueId))
    .where(mine)
    .as('ranked')
  const firsts = await deps.db.select().from(ranked).where(sql`${ranked.rank} <= ${CARDS_PER_COLUMN}`)
  const issueRows = firsts.length ? await deps.db.select().from(issues).where(inJsonList(issues.id, firsts.map((f) => f.issueId))) : []
  const byId = new Map(issueRows.map((r) => [r.id, r]))
  firsts.sort((a, b) => a.sorting - b.sorting || a.cardId - b.cardId)
  return {
    columns: columns.map((column) => ({
      column,
      total: counts.filter((c) => c.column === column.id).reduce((n, c) => n + Number(c.n), 0),
      cards: firsts.filter((f) => f.columnId === column.id).map((f) => byId.get(f.issueId)!).filter(Boolean),
    })),
    open: counts.filter((c) => !c.closed).reduce((n, c) => n + Number(c.n), 0),
    closed: counts.filter((c) => c.closed).reduce((n, c) => n + Number(c.n), 0),
  }
}

/** Open and closed issues the viewer may see in each of `list` (the projects list's counts). */
export async function issueCounts(deps: AppDeps, list: ProjectRow[], viewer: UserRow | null): Promise<Map<number, { open: number; closed: number }>> {
  const result = new Map(list.map((p) => [p.id, { open: 0, closed: 0 }]))
  if (list.length === 0) return result
  const ids = list.map((p) => p.id)
  const ofProjects = inJsonList(projectIssues.projectId, ids)
  const visible = await visibleCards(deps, viewer, ofProjects)
  const rows = await deps.db
    .select({ project: projectIssues.projectId, closed: issues.isClosed, n: count() })
    .from(projectIssues)
    .innerJoin(issues, eq(issues.id, projectIssues.issueId))
    .where(and(ofProjects, visible))
    .groupBy(projectIssues.projectId, issues.isClosed)
  for (const r of rows) {
    const c = result.get(r.project)!
    if (r.closed) c.closed += Number(r.n)
    else c.open += Number(r.n)
  }
  return result
}

/** projectsOfIssues' statement, the ids bound as one JSON list: prepared once per connection (every issue page reads it). */
const projectsOfIssuesOf = perConnection((db: AppDeps['db']) =>
  db
    .select({ issueId: projectIssues.issueId, project: projects, column: projectColumns })
    .from(projectIssues)
    .innerJoin(projects, eq(projects.id, projectIssues.projectId))
    .innerJoin(projectColumns, eq(projectColumns.id, projectIssues.columnId))
    .where(inJsonList(projectIssues.issueId, 'ids'))
    .prepare(),
)

/** The project each of `issueIds` is in (Gitea's issue.LoadProject). */
export async function projectsOfIssues(deps: AppDeps, issueIds: number[]): Promise<Map<number, { project: ProjectRow; column: ProjectColumnRow }>> {
  if (issueIds.length === 0) return new Map()
  const rows = await projectsOfIssuesOf(deps.db).execute({ ids: JSON.stringify(issueIds) })
  return new Map(rows.map((r) => [r.issueId, { project: r.project, column: r.column }]))
}

/** Whether `project` may hold issues of `repo`: its own repository's, or any of its owner's repositories' (Gitea's check). */
const mayHold = (project: ProjectRow, repo: Pick<RepoRow, 'id' | 'ownerId'>) => project.repoId === repo.id || (project.repoId === null && project.ownerId === repo.ownerId)

const named = (row: { id: number; title: string } | undefined | null) => (row ? { id: row.id, title: row.title } : null)

/**
 * Puts an issue into a project (at the end of its default column), moves it to another, or with
 * `projectId` 0 takes it out (Gitea's IssueAssignOrRemoveProject); recorded as the issue's
 * `issue.project_changed` event. A project of another repository or owner is 404.
 */
export async function setIssueProject(deps: AppDeps, repo: Pick<RepoRow, 'id' | 'ownerId'>, issue: IssueRow, actor: UserRow, projectId: number): Promise<void> {
  await writeTransaction(deps.db, async () => {
    const target = projectId ? (await deps.db.select().from(projects).where(eq(projects.id, projectId)))[0] : undefined
    if (projectId && (!target || !mayHold(target, repo))) throw notFound(`projects does not exist [id: ${projectId}]`)
    const [current] = await deps.db.select({ card: projectIssues, project: projects }).from(projectIssues).innerJoin(projects, eq(projects.id, projectIssues.projectId)).where(eq(projectIssues.issueId, issue.id))
    if ((current?.project.id ?? 0) === (target?.id ?? 0)) return
    if (current) await deps.db.delete(projectIssues).where(eq(projectIssues.id, current.card.id))
    if (target) {
      const column = await defaultColumn(deps, target, actor.id)
      await deps.db.insert(projectIssues).values({ issueId: issue.id, projectId: target.id, columnId: column.id, sorting: await endOf(deps, column.id) })
    }
    await recordEvents(deps.db, [issueEvent(issue, actor.id, 'issue.project_changed', { oldProject: named(current?.project), project: named(target) })])
  })
}

/**
 * Moves cards of the project into `column`, each at its given sorting (Gitea's MoveIssuesOnProjectColumn);
 * a card that changes column records the issue's `issue.project_column_changed` event. Every issue
 * named must be on the project (404 otherwise), and nothing moves then.
 */
export async function moveCards(deps: AppDeps, project: ProjectRow, column: ProjectColumnRow, actor: UserRow, moves: { issueID: number; sorting?: number }[]): Promise<void> {
  if (moves.length === 0) return
  if (moves.length > MAX_MOVED) throw unprocessable(`At most ${MAX_MOVED} cards move at once.`)
  const ids = [...new Set(moves.map((m) => m.issueID))]
  if (ids.some((id) => !Number.isSafeInteger(id))) throw notFound('some issues do not exist')
  await writeTransaction(deps.db, async () => {
    const cards = await deps.db
      .select({ card: projectIssues, issue: issues })
      .from(projectIssues)
      .innerJoin(issues, eq(issues.id, projectIssues.issueId))
      .where(and(eq(projectIssues.projectId, project.id), inJsonList(projectIssues.issueId, ids)))
    if (cards.length !== ids.length) throw notFound('some issues do not exist in this project')
    // A card the mover may not read is not on the board for them (visibleCards' rule): as if absent.
    const readable = await readableTrackers(deps, actor, [...new Set(cards.map((c) => c.issue.repoId))])
    if (cards.some((c) => !(c.issue.isPull ? readable.pulls : readable.issues).includes(c.issue.repoId))) throw notFound('some issues do not exist in this project')
    let next = await endOf(deps, column.id)
    const byIssue = new Map(cards.map((c) => [c.issue.id, c]))
    const events = []
    // A card named twice takes its last sorting.
    const sortings = new Map<number, number>()
    for (const m of moves) {
      const found = byIssue.get(m.issueID)!
      sortings.set(found.card.id, m.sorting !== undefined && Number.isSafeInteger(m.sorting) ? m.sorting : next++)
      if (found.card.columnId !== column.id) {
        events.push(issueEvent(found.issue, actor.id, 'issue.project_column_changed', { project: named(project), column: named(column) }))
        found.card.columnId = column.id
      }
    }
    await deps.db
      .update(projectIssues)
      .set({ columnId: column.id, sorting: placed('sorting') })
      .from(jsonRecords('rows', 'placed', { id: projectIssues.id, sorting: projectIssues.sorting }))
      .where(eq(projectIssues.id, placed('id')))
      .prepare()
      .execute({ rows: JSON.stringify([...sortings].map(([id, sorting]) => ({ id, sorting }))) })
    if (events.length) await recordEvents(deps.db, events)
  })
}

/** The issues on a project, for the issue list's `?project=` filter: a condition on `issues`. */
export function onProject(projectId: number): SQL {
  if (projectId < 0) return sql`not exists (select 1 from ${projectIssues} where ${projectIssues.issueId} = ${issues.id})`
  return sql`exists (select 1 from ${projectIssues} where ${projectIssues.issueId} = ${issues.id} and ${projectIssues.projectId} = ${projectId})`
}
