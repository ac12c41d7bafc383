import { and, eq, like } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { AccessMode, issueUnitOf, repoAccess, unitMode, type RepoAccess } from '../../auth/access'
import { findRepoByName, gitOfRow } from '../../auth/repo-context'
import { writeTransaction } from '../../db/client'
import { comments, issues, pullRequests, repositories, users, type IssueRow, type RepoRow } from '../../db/schema'
import { claimEvents, markDone, type EventRecord } from '../../events/outbox'
import { recordIssueEvent } from '../../events/issue-events'
import { readLog } from '../../git/commit-log'
import { isObjectId, ZERO_ID } from '../../git/run'
import { errorFields, loggerOf } from '../../lib/log'
import { nowUnix } from '../../lib/time'
import { webUrl } from '../../lib/urls'
import { escapeHtml } from '../../lib/html'
import { findIssueReferences } from './references'
import { setClosed } from './state'

/**
 * Issues referenced by pushed commits (Gitea 1.23's services/issue/commit.go UpdateIssuesCommit),
 * by the outbox's commit-refs consumer, after the push is recorded: each pushed commit's message
 * (oldest first) is read for references (references.ts); an issue or pull request it names that
 * the pusher may read gets a "referenced from a commit" entry (Gitea's CommitRef comment, type 4:
 * its content the commit's link, its meta the commit, once per commit and issue); an issue (not a
 * pull request) named after a closing or reopening keyword, by a commit pushed to the repository's
 * default branch, is closed or reopened by the pusher when they may (a writer of its issues, or
 * its poster), with `issue.closed` / `issue.reopened` naming the commit.
 * Bounded: a new branch's newest NEW_BRANCH_COMMITS commits (as Gitea), an update's newest
 * MAX_COMMITS. A crash between the work and the batch's mark does it again: nothing twice (the
 * entry is looked for first; a state already reached is left).
 */

export const COMMIT_REFS_CONSUMER = 'commit-refs'
const BATCH = 100
const LEASE_MS = 120_000
const NEW_BRANCH_COMMITS = 10
const MAX_COMMITS = 100
/** Gitea's CommentTypeCommitRef. */
export const COMMIT_REF_COMMENT = 4

/** One round: a batch of events, the pushes among them handled, then the batch marked done. Answers how many events were handled. */
export async function commitRefsRound(deps: AppDeps): Promise<number> {
  const events = await claimEvents(deps.db, COMMIT_REFS_CONSUMER, BATCH, LEASE_MS)
  if (!events.length) return 0
  for (const event of events)
    if (event.kind === 'push')
      await pushReferences(deps, event).catch((e) => loggerOf(deps.config).error('reading the issue references of a push failed', { eventId: event.id, ...errorFields(e) }))
    else if (event.kind === 'pull.merged')
      await mergedReferences(deps, event).catch((e) => loggerOf(deps.config).error('reading the issue references of a merged pull request failed', { eventId: event.id, ...errorFields(e) }))
  await markDone(deps.db, COMMIT_REFS_CONSUMER, events[events.length - 1]!.id)
  return events.length
}

async function pushReferences(deps: AppDeps, event: EventRecord): Promise<void> {
  const ref = String(event.payload.ref ?? '')
  const before = String(event.payload.before ?? '')
  const after = String(event.payload.after ?? '')
  if (!ref.startsWith('refs/heads/') || !isObjectId(after) || after === ZERO_ID || event.repoId === null || event.actorId === null) return
  const repo = (await deps.db.select().from(repositories).where(eq(repositories.id, event.repoId)))[0]
  const pusher = (await deps.db.select().from(users).where(eq(users.id, event.actorId)))[0]
  if (!repo || !pusher || repo.status !== 'ready') return
  const created = before === ZERO_ID || !isObjectId(before)
  const entries = await readLog(gitOfRow(deps, repo), [`--max-count=${created ? NEW_BRANCH_COMMITS : MAX_COMMITS}`], { values: created ? [after] : [after, `^${before}`] })
  const branch = ref.slice('refs/heads/'.length)
  // Oldest first, as Gitea walks them.
  const accesses: Accesses = new Map()
  for (const commit of entries.reverse()) await references(deps, repo, pusher as UserRow, branch, commit.id, commit.message, { comment: true, accesses })
}

/**
 * A merged pull request's description (Gitea's closing cross-references of a pull request,
 * handleCloseCrossReferences): the issues it names after a closing or reopening keyword are closed
 * or reopened by the merger, when it was merged into the default branch and they may; the merge
 * commit is the one named.
 */
async function mergedReferences(deps: AppDeps, event: EventRecord): Promise<void> {
  if (event.repoId === null || event.actorId === null || event.issueId === null) return
  const repo = (await deps.db.select().from(repositories).where(eq(repositories.id, event.repoId)))[0]
  const merger = (await deps.db.select().from(users).where(eq(users.id, event.actorId)))[0]
  const pullIssue = (await deps.db.select().from(issues).where(eq(issues.id, event.issueId)))[0]
  const pull = pullIssue && (await deps.db.select({ baseBranch: pullRequests.baseBranch }).from(pullRequests).where(eq(pullRequests.issueId, pullIssue.id)))[0]
  const sha = String(event.payload.mergeCommitSha ?? '')
  if (!repo || !merger || !pullIssue || !pull || repo.status !== 'ready' || !isObjectId(sha)) return
  await references(deps, repo, merger as UserRow, pull.baseBranch, sha, `${pullIssue.title}\n\n${pullIssue.content}`, { comment: false, accesses: new Map() })
}

/** The pusher's access to each repository referenced, read once for all the commits of a push. */
type Accesses = Map<number, Promise<RepoAccess>>

/**
 * What the references of `text` do, `sha` being the commit that brought it to `branch`: an entry on
 * each readable issue (`comment`: a commit's own message), then the closing or reopening keywords'
 * effect on issues of a default branch.
 */
async function references(deps: AppDeps, repo: RepoRow, pusher: UserRow, branch: string, sha: string, message: string, opts: { comment: boolean; accesses: Accesses }): Promise<void> {
  const seen = new Set<string>()
  for (const ref of findIssueReferences(message)) {
    if (!opts.comment && ref.action === 'none') continue
    const target = ref.owner && ref.name ? await findRepoByName(deps, ref.owner, ref.name) : { repo, owner: undefined }
    if (!target || target.repo.status !== 'ready') continue
    const issue = (await deps.db.select().from(issues).where(and(eq(issues.repoId, target.repo.id), eq(issues.index, ref.index))))[0]
    if (!issue || seen.has(`${issue.id}:${ref.action}`)) continue
    seen.add(`${issue.id}:${ref.action}`)
    let access = opts.accesses.get(target.repo.id)
    if (!access) opts.accesses.set(target.repo.id, (access = repoAccess(deps.db, pusher, target.repo, target.owner)))
    const mode = unitMode(await access, issueUnitOf(issue))
    const mayClose = mode >= AccessMode.Write || issue.posterId === pusher.id
    if (!mayClose && mode < AccessMode.Read) continue
    await writeTransaction(deps.db, async () => {
      if (opts.comment) await referenceComment(deps, repo, pusher, issue, sha, message)
      // Only issues are closed or reopened so, by a commit of the default branch (Gitea's, with
      // CloseIssuesViaCommitInAnyBranch off), and by one who may.
      if (issue.isPull || !mayClose || ref.action === 'none' || branch !== repo.defaultBranch) return
      const closing = ref.action === 'closes'
      const current = (await deps.db.select().from(issues).where(eq(issues.id, issue.id)))[0] as IssueRow | undefined
      if (current && (await setClosed(deps, current, closing, nowUnix(), 'skip')))
        await recordIssueEvent(deps.db, current, pusher.id, closing ? 'issue.closed' : 'issue.reopened', { commit: sha, commitRepo: `${repo.ownerName}/${repo.name}` })
    })
  }
}

/** The "referenced from a commit" entry of `issue`, once per commit (inside the write transaction). */
async function referenceComment(deps: AppDeps, repo: RepoRow, pusher: UserRow, issue: IssueRow, sha: string, message: string): Promise<void> {
  const metaStart = `{"commit":"${sha}"`
  const exists = await deps.db
    .select({ id: comments.id })
    .from(comments)
    .where(and(eq(comments.issueId, issue.id), eq(comments.type, COMMIT_REF_COMMENT), like(comments.meta, `${metaStart}%`)))
    .limit(1)
  if (exists.length) return
  const title = message.split('\n', 1)[0]!.slice(0, 1024)
  const link = webUrl(deps.config, `${encodeURIComponent(repo.ownerName)}/${encodeURIComponent(repo.name)}/commit/${sha}`)
  const now = nowUnix()
  await deps.db.insert(comments).values({
    type: COMMIT_REF_COMMENT,
    posterId: pusher.id,
    issueId: issue.id,
    repoId: issue.repoId,
    // Gitea's content: the commit's link, its subject as the text.
    content: `<a href="${escapeHtml(link)}">${escapeHtml(title)}</a>`,
    meta: JSON.stringify({ commit: sha, repo: `${repo.ownerName}/${repo.name}`, title }),
    createdUnix: now,
    updatedUnix: now,
  })
}
