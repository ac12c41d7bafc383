import { and, asc, isNull } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { perConnection, type Db } from '../db/client'
import { rowMapper, valueRows } from '../db/row-mapper'
import { inJsonList } from '../db/sql'
import { attachments, issueAssignees, issueLabels, labels, milestones, pullRequests, type AttachmentRow, type IssueRow, type LabelRow, type MilestoneRow } from '../db/schema'
import type { UserRow } from '../auth/caller'
import { usersByIds } from './people'
import { groupAttachments } from './attachment'

/** What Issue records refer to (assignees, labels, milestones, merge states): statements prepared once per database. */
function prepareStatements(db: Db) {
  return {
    assigneesOf: db
      .select({ issueId: issueAssignees.issueId, userId: issueAssignees.assigneeId })
      .from(issueAssignees)
      .where(inJsonList(issueAssignees.issueId, 'ids'))
      .orderBy(asc(issueAssignees.id))
      .prepare(),
    labelLinksOf: db
      .select({ issueId: issueLabels.issueId, labelId: issueLabels.labelId })
      .from(issueLabels)
      .where(inJsonList(issueLabels.issueId, 'ids'))
      .prepare(),
    labelsByIds: db.select().from(labels).where(inJsonList(labels.id, 'ids')).orderBy(asc(labels.name), asc(labels.id)).prepare(),
    milestonesByIds: db.select().from(milestones).where(inJsonList(milestones.id, 'ids')).prepare(),
    /** The issues' own attachments (not their comments'), oldest first. */
    assetsOf: db
      .select()
      .from(attachments)
      .where(and(inJsonList(attachments.issueId, 'ids'), isNull(attachments.commentId)))
      .orderBy(asc(attachments.id))
      .prepare(),
    pullStatesOf: db
      .select({ issueId: pullRequests.issueId, hasMerged: pullRequests.hasMerged, mergedUnix: pullRequests.mergedUnix })
      .from(pullRequests)
      .where(inJsonList(pullRequests.issueId, 'ids'))
      .prepare(),
  }
}
const statementsOf = perConnection(prepareStatements)
/** What toApiIssue needs besides the row, already fetched (in batch for lists). */
export interface IssueRelations {
  /** Undefined when the author's account was deleted: shown as the Ghost user. */
  poster: UserRow | undefined
  labels: LabelRow[]
  milestone: MilestoneRow | null
  assignees: UserRow[]
  /** A pull request's merge state (Issue.pull_request); absent for plain issues. */
  pull?: { hasMerged: boolean; mergedUnix: number }
  /** The issue's own attachments (not its comments'), oldest first; absent: none (a new issue's). */
  assets?: AttachmentRow[]
}

// Raw-values mapper of the labels' statement (Drizzle's generic mapping costs as much as the query).
const labelRows = rowMapper<LabelRow>(labels)

/** Labels of each issue (by name), in two queries whatever the number of issues. */
export async function labelsOfIssues(deps: AppDeps, issueIds: number[]): Promise<Map<number, LabelRow[]>> {
  const s = statementsOf(deps.db)
  const result = new Map<number, LabelRow[]>(issueIds.map((id) => [id, []]))
  const links = await s.labelLinksOf.execute({ ids: JSON.stringify(issueIds) })
  if (links.length === 0) return result
  const labelIds = [...new Set(links.map((l) => l.labelId))]
  const issuesOfLabel = new Map<number, number[]>()
  for (const l of links) {
    const list = issuesOfLabel.get(l.labelId)
    if (list) list.push(l.issueId)
    else issuesOfLabel.set(l.labelId, [l.issueId])
  }
  // Labels come back in name order, so each issue's list is in name order too.
  for (const values of await valueRows(s.labelsByIds, { ids: JSON.stringify(labelIds) })) {
    const label = labelRows.map(values)
    for (const issueId of issuesOfLabel.get(label.id)!) result.get(issueId)!.push(label)
  }
  return result
}

/** Everything the Issue records of `rows` refer to, in six queries whatever their number. */
export async function issueRelations(deps: AppDeps, rows: IssueRow[]): Promise<Map<number, IssueRelations>> {
  const result = new Map<number, IssueRelations>()
  if (rows.length === 0) return result
  const s = statementsOf(deps.db)
  const issueIds = rows.map((r) => r.id)
  const assigneeLinks = await s.assigneesOf.execute({ ids: JSON.stringify(issueIds) })
  const labelsOf = await labelsOfIssues(deps, issueIds)
  const milestoneIds = [...new Set(rows.map((r) => r.milestoneId).filter((id) => id > 0))]
  const milestoneById = new Map<number, MilestoneRow>(
    milestoneIds.length ? (await s.milestonesByIds.execute({ ids: JSON.stringify(milestoneIds) })).map((m) => [m.id, m]) : [],
  )
  const people = await usersByIds(deps, [...rows.map((r) => r.posterId), ...assigneeLinks.map((a) => a.userId)])
  const assetsOf = groupAttachments(await s.assetsOf.execute({ ids: JSON.stringify(issueIds) }), (a) => a.issueId)
  for (const r of rows)
    result.set(r.id, {
      poster: people.get(r.posterId),
      labels: labelsOf.get(r.id)!,
      milestone: milestoneById.get(r.milestoneId) ?? null,
      assignees: [],
      assets: assetsOf.get(r.id) ?? [],
    })
  for (const a of assigneeLinks) {
    const u = people.get(a.userId)
    if (u) result.get(a.issueId)!.assignees.push(u)
  }
  const pullIds = rows.filter((r) => r.isPull).map((r) => r.id)
  if (pullIds.length)
    for (const p of await s.pullStatesOf.execute({ ids: JSON.stringify(pullIds) })) result.get(p.issueId)!.pull = { hasMerged: p.hasMerged, mergedUnix: p.mergedUnix }
  return result
}
