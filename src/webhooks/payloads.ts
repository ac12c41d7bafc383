import { eq } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import type { UserRow } from '../auth/caller'
import type { EventKind, EventRecord } from '../events/outbox'
import { comments, commitStatuses, issues, pullRequests, releases, repositories, users, type CommentRow, type PackageRow, type PackageVersionRow, type RepoRow } from '../db/schema'
import { logCommits, type LoggedCommit } from '../git/log'
import { gitOfRow } from '../auth/repo-context'
import { payloadRepoToApi, type ApiRepo } from '../convert/repo'
import { issueToApi, toApiComment } from '../convert/issue'
import { attachmentsOfComments } from '../convert/attachment'
import { commitUsernames, pushCommits, toApiPayloadCommit, type PushPrepared } from '../convert/payload-commit'
import { usersByIds } from '../convert/people'
import { pullsToApi } from '../convert/pull'
import { releasesToApi } from '../convert/release'
import { packagesToApi } from '../convert/package'
import { ghostUser, toApiUser, type ApiUser } from '../convert/user'
import { EVENT_TYPE_OF } from './events'
import { isoTime } from '../lib/time'
import { webUrl } from '../lib/urls'

/**
 * Webhook payloads (webhooks.md §3), one builder per outbox event kind, every record in them made
 * by the API's own converters (src/convert), so that a field is the same in both. A builder has an optional
 * async `prepare` (git reads, made before the task-writing transaction) and a synchronous `build`
 * from the event, the current rows and what `prepare` found. Payloads are built once, when the
 * hook tasks are written: the stored text is what every attempt (and a redelivery) sends.
 *
 * Records are those the API answers, seen by nobody in particular (e-mails as for an anonymous
 * caller), but for the repository record's `permissions`: the access of whom Gitea's notifier
 * names for the event (events.ts PAYLOAD_ACCESS; tasks.ts gives it to `repository`).
 */

/** What every builder gets. `repo` is the current row (for `repo.deleted`, the row as it was). */
export interface BuildContext {
  deps: AppDeps
  event: EventRecord
  repo: RepoRow
  owner: UserRow
  /** The Repository record of `repo`, its `permissions` those of the event's PAYLOAD_ACCESS. */
  repository: ApiRepo
  /** The actor's User record (the Ghost when unknown or deleted). */
  sender: ApiUser
  /** What `prepare` returned. */
  prepared: unknown
}

export interface PayloadBuilder {
  prepare?: (deps: AppDeps, event: EventRecord, repo: RepoRow) => Promise<unknown>
  /** The payload, or null when there is nothing to announce any more (a row gone meanwhile). */
  build: (ctx: BuildContext) => Record<string, unknown> | null | Promise<Record<string, unknown> | null>
}

/** The Repository record of a payload (payloadRepoToApi: the API's record with no permissions). */
export const payloadRepo = (deps: AppDeps, repo: RepoRow, owner: UserRow): Promise<ApiRepo> => payloadRepoToApi(deps, repo, owner)

/** A repository's git folder with the configured limits, for the reads payloads make. */

// ---- push, create, delete ---------------------------------------------------------------

/** Gitea's PayloadCommit of a pushed commit, with the files it changed (push payloads carry no verification). */
const payloadCommit = (deps: AppDeps, repo: RepoRow, c: LoggedCommit, usernames: Map<string, string>) =>
  toApiPayloadCommit(deps.config, repo, c, usernames, null)

/** The PushPayload of a ref change (also the test delivery's). */
export async function pushPayload(ctx: Pick<BuildContext, 'deps' | 'repo' | 'repository' | 'sender'>, change: { ref: string; before: string; after: string }, found: PushPrepared) {
  const { deps, repo } = ctx
  const usernames = await commitUsernames(deps, found.head ? [...found.commits, found.head] : found.commits)
  return {
    ref: change.ref,
    before: change.before,
    after: change.after,
    // Gitea's AppURL + CompareURL: the site's root when there is nothing to compare.
    compare_url: webUrl(deps.config, found.compare),
    commits: found.commits.map((c) => payloadCommit(deps, repo, c, usernames)),
    total_commits: found.total,
    head_commit: found.head ? payloadCommit(deps, repo, found.head, usernames) : null,
    repository: ctx.repository,
    pusher: ctx.sender,
    sender: ctx.sender,
  }
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '')

const pushBuilder: PayloadBuilder = {
  prepare: (deps, e, repo) => pushCommits(deps, repo, str(e.payload.ref), str(e.payload.before), str(e.payload.after)),
  build: async (ctx) =>
    await pushPayload(ctx, { ref: str(ctx.event.payload.ref), before: str(ctx.event.payload.before), after: str(ctx.event.payload.after) }, ctx.prepared as PushPrepared),
}

const createBuilder: PayloadBuilder = {
  build: ({ event, repository, sender }) => ({
    sha: str(event.payload.sha),
    ref: str(event.payload.ref),
    ref_type: str(event.payload.refType),
    repository,
    sender,
  }),
}

const deleteBuilder: PayloadBuilder = {
  build: ({ event, repository, sender }) => ({
    ref: str(event.payload.ref),
    ref_type: str(event.payload.refType),
    pusher_type: 'user',
    repository,
    sender,
  }),
}

// ---- repository, fork ---------------------------------------------------------------------

/**
 * RepositoryPayload, of a user's repository as of an organisation's (Gitea's notifier checks no
 * owner type): `organization` is the owner in User shape, whoever it is.
 */
const repositoryBuilder = (action: 'created' | 'deleted'): PayloadBuilder => ({
  build: ({ deps, owner, repository, sender }) => ({ action, repository, organization: toApiUser(deps.config, owner, null), sender }),
})

/** Delivered to the source's hooks: `forkee` is the source, `repository` the new fork (Gitea's meaning). */
const forkBuilder: PayloadBuilder = {
  build: async ({ deps, event, repository, sender }) => {
    const forkId = Number(event.payload.forkId)
    const fork = (await deps.db.select().from(repositories).where(eq(repositories.id, forkId)))[0]
    const forkOwner = fork && (await deps.db.select().from(users).where(eq(users.id, fork.ownerId)))[0]
    if (!fork || !forkOwner) return null
    return { forkee: repository, repository: await payloadRepo(deps, fork, forkOwner), sender }
  },
}

// ---- issues, comments ---------------------------------------------------------------------

async function issueRowOf(ctx: BuildContext) {
  const id = ctx.event.issueId
  return id ? (await ctx.deps.db.select().from(issues).where(eq(issues.id, id)))[0] : undefined
}

/** IssuePayload for plain issues; `action` is the event kind's second half. */
const issueBuilder: PayloadBuilder = {
  build: async (ctx) => {
    const row = await issueRowOf(ctx)
    if (!row) return null
    const changes = ctx.event.payload.changes as Record<string, unknown> | undefined
    return {
      action: ctx.event.kind.slice('issue.'.length),
      number: row.index,
      ...(changes && Object.keys(changes).length ? { changes } : {}),
      issue: await issueToApi(ctx.deps, ctx.repo, row, null),
      repository: ctx.repository,
      sender: ctx.sender,
      // The commit that closed or reopened it (Gitea's ChangeStatus by a commit's keyword).
      commit_id: typeof ctx.event.payload.commit === 'string' ? ctx.event.payload.commit : '',
    }
  },
}

/** IssuePayload of a deleted issue: its record as the event kept it (Gitea's `deleted` action). */
const deletedIssueBuilder: PayloadBuilder = {
  build: async (ctx) => {
    const issue = ctx.event.payload.issue as { number?: unknown } | undefined
    if (!issue) return null
    return { action: 'deleted', number: issue.number, issue, repository: ctx.repository, sender: ctx.sender, commit_id: '' }
  },
}

/** IssueCommentPayload (issues and pull requests alike): `comment` as it is, or as it was when deleted. */
const commentBuilder: PayloadBuilder = {
  build: async (ctx) => {
    const row = await issueRowOf(ctx)
    if (!row) return null
    const kept = ctx.event.payload.comment as CommentRow | undefined
    const comment = kept ?? (ctx.event.commentId ? (await ctx.deps.db.select().from(comments).where(eq(comments.id, ctx.event.commentId)))[0] : undefined)
    if (!comment) return null
    const poster = (await usersByIds(ctx.deps, [comment.posterId])).get(comment.posterId)
    const changes = ctx.event.payload.changes as Record<string, unknown> | undefined
    return {
      action: ctx.event.kind.slice('comment.'.length),
      issue: await issueToApi(ctx.deps, ctx.repo, row, null),
      comment: toApiComment(ctx.deps.config, ctx.repo, row, comment, poster, null, kept ? [] : ((await attachmentsOfComments(ctx.deps, [comment.id])).get(comment.id) ?? [])),
      ...(changes && Object.keys(changes).length ? { changes } : {}),
      repository: ctx.repository,
      sender: ctx.sender,
      is_pull: row.isPull,
    }
  },
}

// ---- pull requests ------------------------------------------------------------------------

/**
 * PullRequestPayload (modern Gitea's struct and field order): `pull_request`
 * is the PullRequest record after the change. `action` is given by the kind: a merge is
 * `closed` with `pull_request.merged` true (as Gitea), a push to the head `synchronized`, a pull
 * request's `issue.*` events the kind's second half (`label_updated`, `assigned` ...).
 */
const pullBuilder = (action: ((event: EventRecord) => string) | string, extra?: (ctx: BuildContext) => Promise<PullExtra | null>): PayloadBuilder => ({
  build: async (ctx) => {
    const issue = await issueRowOf(ctx)
    const pull = issue && (await ctx.deps.db.select().from(pullRequests).where(eq(pullRequests.issueId, issue.id)))[0]
    if (!issue || !pull) return null
    const more = extra ? await extra(ctx) : {}
    if (!more) return null
    return pullPayload(ctx, typeof action === 'string' ? action : action(ctx.event), issue.index, (await pullsToApi(ctx.deps, ctx.repo, ctx.owner, [{ pull, issue }], null))[0]!, more)
  },
})

/** A PullRequestPayload of `pull_request` (a record) in Gitea's field order. */
function pullPayload(ctx: BuildContext, action: string, number: unknown, pull_request: unknown, more: PullExtra) {
  const changes = ctx.event.payload.changes as Record<string, unknown> | undefined
  return {
    action,
    number,
    ...(changes && Object.keys(changes).length ? { changes } : {}),
    pull_request,
    requested_reviewer: more.requested_reviewer ?? null,
    repository: ctx.repository,
    sender: ctx.sender,
    commit_id: '',
    review: more.review ?? null,
  }
}

/** A deleted pull request (Gitea's DeleteIssue notification): its PullRequest record as the event kept it. */
const deletedPullBuilder: PayloadBuilder = {
  build: async (ctx) => {
    const issue = ctx.event.payload.issue as { number?: unknown } | undefined
    const pull = ctx.event.payload.pull_request
    return issue && pull ? pullPayload(ctx, 'deleted', issue.number, pull, {}) : null
  },
}

/** What review payloads add to a PullRequestPayload. */
interface PullExtra {
  requested_reviewer?: ApiUser
  review?: { type: string; content: string }
}

/**
 * A submitted review (Gitea's PullRequestReview notification): action `reviewed`, `review` the
 * hook event type it is announced as and the review's text as submitted (kept by the event).
 */
const reviewBuilder = pullBuilder('reviewed', async (ctx) => ({
  review: { type: EVENT_TYPE_OF['review.submitted']!(ctx.event) ?? '', content: str(ctx.event.payload.content) },
}))

/** Someone asked to review, or no longer asked: `requested_reviewer` is that person. */
const reviewRequestBuilder = (action: 'review_requested' | 'review_request_removed') =>
  pullBuilder(action, async (ctx) => {
    const id = Number(ctx.event.payload.reviewerId)
    const person = (await usersByIds(ctx.deps, [id])).get(id)
    return { requested_reviewer: person ? toApiUser(ctx.deps.config, person, null) : ghostUser(ctx.deps.config) }
  })

/** A pull request's `issue.*` events: the action is the kind's second half. */
const pullIssueBuilder = pullBuilder((event) => event.kind.slice('issue.'.length))

// ---- releases -----------------------------------------------------------------------------

/**
 * ReleasePayload: `release` is the Release record as it is now (published,
 * updated), or as it was (deleted: the event keeps it, the row is gone).
 */
const releaseBuilder = (action: 'published' | 'updated' | 'deleted'): PayloadBuilder => ({
  build: async (ctx) => {
    let release: unknown
    if (action === 'deleted') release = ctx.event.payload.release
    else {
      const row = (await ctx.deps.db.select().from(releases).where(eq(releases.id, Number(ctx.event.payload.releaseId))))[0]
      release = row && (await releasesToApi(ctx.deps, ctx.repo, [row], null))[0]
    }
    return release ? { action, release, repository: ctx.repository, sender: ctx.sender } : null
  },
})

// ---- wiki ---------------------------------------------------------------------------------

/** Gitea's WikiPayload: the page's web path and the commit's message. */
const wikiBuilder = (action: 'created' | 'edited' | 'deleted'): PayloadBuilder => ({
  build: async (ctx) => ({ action, repository: ctx.repository, sender: ctx.sender, page: str(ctx.event.payload.page), comment: str(ctx.event.payload.comment) }),
})

// ---- packages: an owner's events -----------------------------------------------------------

/** What the builder of an owner's event (no repository: a package's) gets. */
export interface OwnerBuildContext {
  deps: AppDeps
  event: EventRecord
  /** The actor's User record (the Ghost when unknown or deleted). */
  sender: ApiUser
}

/** The builder of an owner's event: whose hooks it reaches (null: nobody's), and its payload. */
export interface OwnerPayloadBuilder {
  ownerOf: (event: EventRecord) => number | null
  build: (ctx: OwnerBuildContext) => Promise<Record<string, unknown> | null>
}

/** The rows a package event kept (its version's, as they were). */
const packageRowsOf = (event: EventRecord) => {
  const { pkg, version } = event.payload as { pkg?: PackageRow; version?: PackageVersionRow }
  return pkg && version ? { pkg, version } : null
}

/**
 * Gitea's PackagePayload: the Package record (the API's converter, seen by nobody in particular)
 * of the version as the event kept it; `repository` and `organization` null, as Gitea sends them
 * for a package linked to no repository (Warren links none).
 */
const packageBuilder = (action: 'created' | 'deleted'): OwnerPayloadBuilder => ({
  ownerOf: (event) => packageRowsOf(event)?.pkg.ownerId ?? null,
  build: async ({ deps, event, sender }) => {
    const rows = packageRowsOf(event)
    if (!rows) return null
    const [record] = await packagesToApi(deps, null, [rows])
    return { action, repository: null, package: record, organization: null, sender }
  },
})

/** The builders of the events of an owner rather than a repository (Gitea's EventSource with an Owner and no Repository). */
export const OWNER_PAYLOAD_BUILDERS: Partial<Record<EventKind, OwnerPayloadBuilder>> = {
  'package.created': packageBuilder('created'),
  'package.deleted': packageBuilder('deleted'),
}

// ---- commit status ------------------------------------------------------------------------

const statusBuilder: PayloadBuilder = {
  prepare: async (deps, e, repo) =>
    (await logCommits(gitOfRow(deps, repo), str(e.payload.sha), null, 1, 1, deps.config.maxCommitFiles).catch(() => null))?.commits[0] ?? null,
  build: async (ctx) => {
    const row = (await ctx.deps.db.select().from(commitStatuses).where(eq(commitStatuses.id, Number(ctx.event.payload.statusId))))[0]
    if (!row) return null
    const commit = ctx.prepared as LoggedCommit | null
    return {
      commit: commit ? payloadCommit(ctx.deps, ctx.repo, commit, await commitUsernames(ctx.deps, [commit])) : null,
      context: row.context,
      created_at: isoTime(row.createdUnix),
      description: row.description,
      id: row.id,
      repository: ctx.repository,
      sender: ctx.sender,
      sha: row.sha,
      state: row.state,
      target_url: row.targetUrl,
      updated_at: isoTime(row.updatedUnix),
    }
  },
}

/**
 * The builder of each outbox event kind; null: no delivery. Every kind is listed, so a new kind
 * fails to compile until it is placed here. A pull request's `issue.*` events (payload.isPull)
 * take PULL_ISSUE_BUILDERS instead; its comments (`comment.*` with isPull) are
 * IssueCommentPayloads like an issue's, announced as `pull_request_comment`.
 */
export const PAYLOAD_BUILDERS: Record<EventKind, PayloadBuilder | null> = {
  push: pushBuilder,
  'ref.created': createBuilder,
  'ref.deleted': deleteBuilder,
  'repo.created': repositoryBuilder('created'),
  'repo.deleted': repositoryBuilder('deleted'),
  'repo.renamed': null,
  'repo.transferred': null,
  'repo.forked': forkBuilder,
  'issue.opened': issueBuilder,
  'issue.edited': issueBuilder,
  'issue.closed': issueBuilder,
  'issue.reopened': issueBuilder,
  'issue.label_updated': issueBuilder,
  'issue.label_cleared': issueBuilder,
  'issue.assigned': issueBuilder,
  'issue.unassigned': issueBuilder,
  'issue.milestoned': issueBuilder,
  'issue.demilestoned': issueBuilder,
  'issue.ref_changed': null,
  'issue.dependency_added': null,
  'issue.dependency_removed': null,
  'issue.pinned': null,
  'issue.unpinned': null,
  'issue.locked': null,
  'issue.unlocked': null,
  'issue.project_changed': null,
  'issue.project_column_changed': null,
  'issue.deleted': deletedIssueBuilder,
  'comment.created': commentBuilder,
  'comment.edited': commentBuilder,
  'comment.deleted': commentBuilder,
  status: statusBuilder,
  'pull.opened': pullBuilder('opened'),
  'pull.merged': pullBuilder('closed'),
  'pull.synchronized': pullBuilder('synchronized'),
  'pull.merge_scheduled': null,
  'review.submitted': reviewBuilder,
  'review.requested': reviewRequestBuilder('review_requested'),
  'review.request_removed': reviewRequestBuilder('review_request_removed'),
  'release.published': releaseBuilder('published'),
  'release.updated': releaseBuilder('updated'),
  'release.deleted': releaseBuilder('deleted'),
  'wiki.created': wikiBuilder('created'),
  'wiki.edited': wikiBuilder('edited'),
  'wiki.deleted': wikiBuilder('deleted'),
  // An owner's events, of no repository: OWNER_PAYLOAD_BUILDERS.
  'package.created': null,
  'package.deleted': null,
}

type IssueKind = Extract<EventKind, `issue.${string}`>

/** A pull request's `issue.*` events: PullRequestPayloads (action = the kind's second half, e.g. `label_updated`). */
export const PULL_ISSUE_BUILDERS: Record<IssueKind, PayloadBuilder | null> = {
  'issue.opened': pullIssueBuilder,
  'issue.edited': pullIssueBuilder,
  'issue.closed': pullIssueBuilder,
  'issue.reopened': pullIssueBuilder,
  'issue.label_updated': pullIssueBuilder,
  'issue.label_cleared': pullIssueBuilder,
  'issue.assigned': pullIssueBuilder,
  'issue.unassigned': pullIssueBuilder,
  'issue.milestoned': pullIssueBuilder,
  'issue.demilestoned': pullIssueBuilder,
  'issue.ref_changed': null,
  'issue.dependency_added': null,
  'issue.dependency_removed': null,
  'issue.pinned': null,
  'issue.unpinned': null,
  'issue.locked': null,
  'issue.unlocked': null,
  'issue.project_changed': null,
  'issue.project_column_changed': null,
  'issue.deleted': deletedPullBuilder,
}

/** The builder of an event (null: nothing to deliver). */
export function builderOf(event: EventRecord): PayloadBuilder | null {
  if (event.kind.startsWith('issue.') && event.payload.isPull === true) return PULL_ISSUE_BUILDERS[event.kind as IssueKind]
  return PAYLOAD_BUILDERS[event.kind] ?? null
}

