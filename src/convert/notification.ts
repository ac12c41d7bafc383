import { and, eq, max } from 'drizzle-orm'
import { perConnection, type Db } from '../db/client'
import { inJsonList } from '../db/sql'
import type { AppDeps } from '../deps'
import type { UserRow } from '../auth/caller'
import { comments, issues, pullRequests, repositories, type NotificationRow } from '../db/schema'
import { isoTime } from '../lib/time'
import { apiUrl } from '../lib/urls'
import { issueHtmlUrl, repoPath } from './issue'
import { reposToApi, type ApiRepo } from './repo'

/** Gitea's NotifySubjectType of each NotificationSource. */
const SUBJECT_TYPE: Record<number, string> = { 1: 'Issue', 2: 'Pull', 3: 'Commit', 4: 'Repository' }
/** A plain comment (the comments area's PLAIN_COMMENT): the latest one is the subject's latest comment. */
const PLAIN_COMMENT = 0

export interface ApiNotificationSubject {
  title: string
  url: string
  html_url: string
  latest_comment_url: string
  latest_comment_html_url: string
  type: string
  state: string
}

export interface ApiNotificationThread {
  id: number
  repository: ApiRepo
  subject: ApiNotificationSubject
  unread: boolean
  pinned: boolean
  updated_at: string
  url: string
}

/**
 * The reads of notificationsToApi, prepared once per connection (a list of ids is one JSON
 * parameter): a notifications page runs them at every poll of a client.
 */
const readsOf = perConnection((db: Db) => ({
  issues: db.select().from(issues).where(inJsonList(issues.id, 'ids')).prepare(),
  repos: db.select().from(repositories).where(inJsonList(repositories.id, 'ids')).prepare(),
  merged: db
    .select({ issueId: pullRequests.issueId })
    .from(pullRequests)
    .where(and(inJsonList(pullRequests.issueId, 'ids'), eq(pullRequests.hasMerged, true)))
    .prepare(),
  // Each issue's latest plain comment.
  latest: db
    .select({ issueId: comments.issueId, id: max(comments.id) })
    .from(comments)
    .where(and(inJsonList(comments.issueId, 'ids'), eq(comments.type, PLAIN_COMMENT)))
    .groupBy(comments.issueId)
    .prepare(),
}))

/**
 * NotificationThread records of `viewer`'s threads (Gitea's ToNotificationThread), in a fixed
 * number of queries: the issues, their repositories (records as `viewer` sees them, with the
 * viewer's permissions), the merged pull requests, each issue's latest plain comment. A thread
 * whose issue or repository is gone is left out.
 */
export async function notificationsToApi(deps: AppDeps, viewer: UserRow, rows: NotificationRow[]): Promise<ApiNotificationThread[]> {
  if (rows.length === 0) return []
  const reads = readsOf(deps.db)
  const issueIds = [...new Set(rows.map((r) => r.issueId).filter((id): id is number => id !== null))]
  const ids = JSON.stringify(issueIds)
  const [issueRows, repoRows, latestRows] = await Promise.all([
    issueIds.length ? reads.issues.execute({ ids }) : [],
    reads.repos.execute({ ids: JSON.stringify([...new Set(rows.map((r) => r.repoId))]) }),
    issueIds.length ? reads.latest.execute({ ids }) : [],
  ])
  const issueOf = new Map(issueRows.map((i) => [i.id, i]))
  const records = await reposToApi(deps, viewer, repoRows)
  const repoOf = new Map(repoRows.map((r, i) => [r.id, { row: r, record: records[i]! }]))
  const pullIds = issueRows.filter((i) => i.isPull).map((i) => i.id)
  const merged = new Set(pullIds.length ? (await reads.merged.execute({ ids: JSON.stringify(pullIds) })).map((p) => p.issueId) : [])
  const latest = new Map(latestRows.map((c) => [c.issueId, c.id]))
  const threads: ApiNotificationThread[] = []
  for (const row of rows) {
    const repo = repoOf.get(row.repoId)
    const issue = row.issueId === null ? undefined : issueOf.get(row.issueId)
    if (!repo || !issue) continue
    const path = repoPath(repo.row)
    const html = issueHtmlUrl(deps.config, repo.row, issue)
    const commentId = latest.get(issue.id)
    threads.push({
      id: row.id,
      repository: repo.record,
      subject: {
        title: issue.title,
        url: apiUrl(deps.config, `repos/${path}/issues/${issue.index}`),
        html_url: html,
        latest_comment_url: commentId ? apiUrl(deps.config, `repos/${path}/issues/comments/${commentId}`) : '',
        latest_comment_html_url: commentId ? `${html}#issuecomment-${commentId}` : '',
        type: SUBJECT_TYPE[row.source] ?? 'Issue',
        state: merged.has(issue.id) ? 'merged' : issue.isClosed ? 'closed' : 'open',
      },
      unread: row.status === 1,
      pinned: row.status === 3,
      updated_at: isoTime(row.updatedUnix),
      url: apiUrl(deps.config, `notifications/threads/${row.id}`),
    })
  }
  return threads
}
