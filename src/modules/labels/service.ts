import { and, asc, count, desc, eq, sql, type Placeholder } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { preparedPage, type Page, type Paged } from '../../lib/pagination'
import { labels, type LabelRow } from '../../db/schema'
import { notFound, unprocessable } from '../../lib/errors'
import { nowUnix } from '../../lib/time'
import { checkRequiredText, MAX_LABEL_NAME } from '../../lib/validate'
import { findTemplate, repoTemplates } from '../repos/template-names'
import { perConnectionShape, writeTransaction } from '../../db/client'

const COLOR = /^#?([0-9a-fA-F]{6})$/

/** `#rrggbb` / `rrggbb` → stored `#rrggbb` (lower case); 422 otherwise. */
function normaliseColor(color: string): string {
  const m = COLOR.exec(color.trim())
  if (!m) throw unprocessable('must be a colour like #00aabb', 'Color')
  return '#' + m[1]!.toLowerCase()
}

const checkName = (name: string) => checkRequiredText(name, MAX_LABEL_NAME, 'Name')

const ORDER = {
  leastissues: [asc(labels.numIssues), asc(labels.name)],
  mostissues: [desc(labels.numIssues), asc(labels.name)],
  reversealphabetically: [desc(labels.name)],
  alphabetically: [asc(labels.name)],
}

/** Whose labels: a repository's, or (Gitea 1.15+) an organisation's, which its repositories' issues may carry. */
export type LabelOwner = { repoId: number } | { orgId: number }

/** The labels of a repository (`kind` 'repo') or of an organisation ('org') of id `id`, a value or a placeholder. */
const ownedByKind = (kind: 'repo' | 'org', id: number | Placeholder) => (kind === 'repo' ? eq(labels.repoId, id) : eq(labels.orgId, id))
const ownedBy = (owner: LabelOwner) => ('repoId' in owner ? ownedByKind('repo', owner.repoId) : ownedByKind('org', owner.orgId))

/**
 * listLabels' statements for one shape (whose labels, the order, a page or all), prepared when
 * first asked: every issue list page and the API's label lists read them.
 */
function prepareLabelList(db: AppDeps['db'], kind: 'repo' | 'org', sort: keyof typeof ORDER, paged: boolean) {
  const p = sql.placeholder
  const where = ownedByKind(kind, p('owner'))
  const all = db.select().from(labels).where(where).orderBy(...ORDER[sort], asc(labels.id))
  return { rows: (paged ? all.limit(p('limit')).offset(p('offset')) : all).prepare(), count: db.select({ n: count() }).from(labels).where(where).prepare() }
}
const labelListStatements = perConnectionShape<ReturnType<typeof prepareLabelList>>()

/** Labels of a repository or an organisation in the requested order (default alphabetical): a page, or all with `page` null. */
export async function listLabels(deps: AppDeps, owner: LabelOwner, sort: string | undefined, page: Page | null): Promise<Paged<LabelRow>> {
  // The query schema (ListLabelsQuery) admits only these orders (anything else reads as the default).
  const order: keyof typeof ORDER = sort && Object.hasOwn(ORDER, sort) ? (sort as keyof typeof ORDER) : 'alphabetically'
  const kind = 'repoId' in owner ? 'repo' : 'org'
  const found = labelListStatements(deps.db, `${kind} ${order} ${page ? 'page' : 'all'}`, () => prepareLabelList(deps.db, kind, order, page !== null))
  return await preparedPage<LabelRow>(found, { owner: 'repoId' in owner ? owner.repoId : owner.orgId }, page)
}

/** A label by id, or (as Gitea 1.3 also accepts) by name; 404 otherwise. */
export async function getLabel(deps: AppDeps, owner: LabelOwner, idOrName: string): Promise<LabelRow> {
  const byId = /^\d+$/.test(idOrName)
  if (byId && !Number.isSafeInteger(Number(idOrName))) throw notFound(`label does not exist [id: ${idOrName}]`)
  const row = (await deps.db
    .select()
    .from(labels)
    .where(and(ownedBy(owner), byId ? eq(labels.id, Number(idOrName)) : eq(labels.name, idOrName))))[0]
  if (!row) throw notFound(`label does not exist [id: ${idOrName}]`)
  return row
}

export async function createLabel(deps: AppDeps, owner: LabelOwner, opts: { name: string; color: string; description?: string }): Promise<LabelRow> {
  const color = normaliseColor(opts.color)
  const now = nowUnix()
  return (await deps.db
    .insert(labels)
    .values({ ...owner, name: checkName(opts.name), color, description: opts.description ?? '', createdUnix: now, updatedUnix: now })
    .returning())[0]
}

export async function editLabel(
  deps: AppDeps,
  owner: LabelOwner,
  idOrName: string,
  opts: { name?: string; color?: string; description?: string },
): Promise<LabelRow> {
  const label = await getLabel(deps, owner, idOrName)
  const set: Partial<LabelRow> = { updatedUnix: nowUnix() }
  if (opts.name !== undefined) set.name = checkName(opts.name)
  if (opts.color !== undefined) set.color = normaliseColor(opts.color)
  if (opts.description !== undefined) set.description = opts.description
  return (await deps.db.update(labels).set(set).where(eq(labels.id, label.id)).returning())[0]!
}

/** The labels of the label set `name` a new repository starts with (none when no name), or 422 for an unknown set. */
export async function labelTemplateSet(name: string | undefined) {
  const wanted = name?.trim()
  if (!wanted) return []
  const found = findTemplate((await repoTemplates()).LABEL_TEMPLATES, wanted)
  if (!found) throw unprocessable(`label template does not exist [name: ${wanted}]`, 'IssueLabels')
  return found[1]
}

/** The rows of a label set's labels for a repository (a new repository's, or a set added later) or an organisation. */
export const labelRowsOf = (set: { name: string; color: string; description: string }[], owner: LabelOwner, now: number) =>
  set.map((l) => ({ ...owner, name: l.name, color: `#${l.color}`, description: l.description, createdUnix: now, updatedUnix: now }))

/**
 * Adds the labels of label set `template` (Gitea's label templates, as `/label/templates` lists
 * them; the web pages' "start from a label set") to a repository or an organisation, in one
 * statement; 422 for an unknown set. Names the owner already has are skipped.
 */
export async function initializeLabels(deps: AppDeps, owner: LabelOwner, template: string): Promise<number> {
  const set = await labelTemplateSet(template)
  if (set.length === 0) throw unprocessable('Required', 'TemplateName')
  // One transaction: a form sent twice adds each label once.
  return await writeTransaction(deps.db, async () => {
    const taken = new Set((await deps.db.select({ name: labels.name }).from(labels).where(ownedBy(owner))).map((l) => l.name))
    const rows = labelRowsOf(set.filter((l) => !taken.has(l.name)), owner, nowUnix())
    if (rows.length) await deps.db.insert(labels).values(rows)
    return rows.length
  })
}

/**
 * Deletes a label (its issue links go with it). A repository's unknown label is a 404 (Gitea's
 * GetLabelInRepoByID); an organisation's is not (Gitea's org DeleteLabel answers 204 whatever the id).
 */
export async function deleteLabel(deps: AppDeps, owner: LabelOwner, id: number): Promise<void> {
  const missing = () => {
    if ('repoId' in owner) throw notFound()
  }
  if (!Number.isSafeInteger(id)) return missing()
  const deleted = await deps.db
    .delete(labels)
    .where(and(ownedBy(owner), eq(labels.id, id)))
    .returning({ id: labels.id })
  if (deleted.length === 0) missing()
}
