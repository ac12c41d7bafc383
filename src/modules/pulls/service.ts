import { and, asc, count, desc, eq, or, sql, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { inJsonList } from '../../db/sql'
import { perConnection, perConnectionShape, type Db } from '../../db/client'
import { readerFor } from '../../db/read-thread'
import { rowMapper, valueRows } from '../../db/row-mapper'
import { issueLabels, issues, labels, pullAutoMerges, pullRequests, repositories, users, type IssueRow, type PullRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { accessLevel, AccessMode, type RepoRow } from '../../auth/access'
import type { RepoContext } from '../../auth/repo-context'
import { recordEvent } from '../../events/outbox'
import { branchExists } from '../../git/refs'
import { isSafeRefName } from '../../git/ref-name'
import { readRef } from '../../git/merge'
import { ApiError, conflict, notFound, unprocessable } from '../../lib/errors'
import type { Page, Paged } from '../../lib/pagination'
import { nowUnix } from '../../lib/time'
import { splitFilter } from '../../lib/validate'
import type { PullItem } from '../../convert/pull'
import { changeIssueLabels, createIssue, editIssue, mayEditIssue, type IssueEdit, type NewIssue } from '../issues/service'
import { carriesEveryLabelGroup, countedOf, findIssue } from '../issues/queries'
import { setClosed } from '../issues/state'
import { recordIssueEvent } from '../../events/issue-events'
import { getVisibleUserByName } from '../users/service'
import { queueCheck } from '../../push/pull-queue'
import { checkPull } from './mergeability'
import { gitOfRow } from '../../auth/repo-context'
import { errorFields, loggerOf } from '../../lib/log'

/** findPull's statement, prepared once per connection (every pull request page and record reads it). */
const pullByIndexOf = perConnection((db: AppDeps['db']) =>
  db
    .select({ issue: issues, pull: pullRequests })
    .from(issues)
    .innerJoin(pullRequests, eq(pullRequests.issueId, issues.id))
    .where(and(eq(issues.repoId, sql.placeholder('repo')), eq(issues.index, sql.placeholder('index'))))
    .prepare(),
)

/**
 * A pull request by its index in the base repository; 404 when there is none (or it is a plain
 * issue). The pull request with its issue, read in one statement: two reads could straddle a merge's commit
 * on PostgreSQL (the issue still open, the pull request already merged).
 */
export async function findPull(deps: AppDeps, repoId: number, index: number): Promise<PullItem> {
  const found = Number.isSafeInteger(index) ? (await pullByIndexOf(deps.db).execute({ repo: repoId, index }))[0] : undefined
  if (found) return found
  await findIssue(deps, repoId, index) // its 404 when there is no such issue at all
  throw notFound(`pull request does not exist [repo_id: ${repoId}, index: ${index}]`)
}

export const pullById = async (deps: AppDeps, id: number): Promise<PullRow | undefined> => (await deps.db.select().from(pullRequests).where(eq(pullRequests.id, id)))[0]

const issueRows = rowMapper<IssueRow>(issues)
const pullRows = rowMapper<PullRow>(pullRequests)

// ---- list ------------------------------------------------------------------------------------

export interface PullFilter {
  state?: string
  sort?: string
  milestone?: number
  labels?: string
  poster?: string
}

const SORTS: Record<string, SQL[]> = {
  oldest: [asc(issues.createdUnix), asc(issues.id)],
  recentupdate: [desc(issues.updatedUnix), desc(issues.id)],
  leastupdate: [asc(issues.updatedUnix), asc(issues.id)],
  mostcomment: [desc(issues.numComments), desc(issues.id)],
  leastcomment: [asc(issues.numComments), desc(issues.id)],
}
const NEWEST = [desc(issues.createdUnix), desc(issues.id)]
/** The orders a repository's pull requests are read in from an index (newest first: ''). */
const INDEXED_SORTS = new Set(['', 'oldest', 'recentupdate', 'leastupdate'])

/** The name of the placeholder bound to the JSON array of the wanted labels, one group an id (carriesEveryLabelGroup). */
const LABELS = 'labels'
/** Placeholders the list is written with, so that each shape of list is prepared once. */
const P = {
  repo: sql.placeholder('repo'),
  closed: sql.placeholder('closed'),
  milestone: sql.placeholder('milestone'),
  poster: sql.placeholder('poster'),
  limit: sql.placeholder('limit'),
  offset: sql.placeholder('offset'),
}

/** Which filters a list uses, and its order: what its statement depends on (at most 2 × 6 × 2 × 51 × 2 shapes). */
interface ListShape {
  byState: boolean
  sort: string
  byMilestone: boolean
  /** How many labels it must carry (at most MAX_FILTER_VALUES). */
  labels: number
  byPoster: boolean
}

function prepareList(db: Db, shape: ListShape) {
  const where: SQL[] = [eq(issues.repoId, P.repo), eq(issues.isPull, true)]
  if (shape.byState) where.push(eq(issues.isClosed, P.closed))
  if (shape.byMilestone) where.push(sql`${issues.milestoneId} = ${P.milestone}`)
  if (shape.byPoster) where.push(sql`${issues.posterId} = ${P.poster}`)
  const condition = and(...where)
  const labelled = shape.labels > 0 ? carriesEveryLabelGroup(LABELS, shape.labels) : undefined
  return {
    count: db.select({ n: count() }).from(issues).where(and(condition, labelled?.count)).prepare(),
    // Raw values mapped by the tables' own columns (Drizzle's generic mapping of a join costs more than the query).
    page: db
      .select()
      .from(issues)
      .innerJoin(pullRequests, eq(pullRequests.issueId, issues.id))
      .where(and(condition, labelled?.page))
      .orderBy(...(SORTS[shape.sort] ?? NEWEST))
      .limit(P.limit)
      .offset(P.offset)
      .prepare(),
  }
}
const listStatements = perConnectionShape<ReturnType<typeof prepareList>>()

const listStatementsOf = (db: Db, shape: ListShape) =>
  listStatements(db, `${+shape.byState}${+shape.byMilestone}${shape.labels}/${+shape.byPoster}${shape.sort}`, () => prepareList(db, shape))

/** The pull requests into a repository, newest first unless sorted, with the total for the page headers. */
export async function listPulls(deps: AppDeps, repo: RepoRow, viewer: UserRow | null, filter: PullFilter, page: Page): Promise<Paged<PullItem>> {
  const state = filter.state || 'open'
  const labelIds = [...new Set(splitFilter(filter.labels, 'labels').map(Number))]
  if (labelIds.some((id) => !Number.isSafeInteger(id) || id <= 0)) throw unprocessable('must be label ids', 'labels')
  const poster = filter.poster ? (await getVisibleUserByName(deps, filter.poster, viewer)).id : 0
  const shape: ListShape = {
    byState: state !== 'all',
    sort: filter.sort && Object.hasOwn(SORTS, filter.sort) ? filter.sort : '',
    byMilestone: !!filter.milestone,
    labels: labelIds.length,
    byPoster: poster > 0,
  }
  const params = {
    repo: repo.id,
    closed: state === 'closed',
    milestone: filter.milestone ?? 0,
    labels: JSON.stringify(labelIds.map((id) => [id])),
    poster,
  }
  const plain = !shape.byMilestone && !shape.labels && !shape.byPoster
  // In any state, by creation or last update, and nothing else asked: the page read in an index's
  // order (issues_repo_kind_state_idx, issues_repo_kind_idx, issues_repo_kind_updated_idx),
  // stopping at its end. By comments every pull request in the state is sorted, and a filter is
  // checked on each to count them: off the event loop (db/read-thread.ts).
  const statements = listStatementsOf(plain && INDEXED_SORTS.has(shape.sort) ? deps.db : readerFor(deps.db), shape)
  // The repository's counters (exact in every write transaction) spare a count on plain lists.
  const total = plain ? countedOf(repo, 'pulls', state) : (await statements.count.execute(params))[0]!.n
  const rows =
    total > page.offset
      ? (await valueRows(statements.page, { ...params, limit: page.limit, offset: page.offset })).map((v) => ({
          issue: issueRows.map(v),
          pull: pullRows.map(v, issueRows.width),
        }))
      : []
  return { rows, total }
}


// ---- create ----------------------------------------------------------------------------------

/** A branch end as the caller named it, resolved. */
interface BranchEnd {
  repo: RepoRow
  owner: UserRow
  branch: string
}

/**
 * A head's side of a comparison as Gitea's compare forms name it: `branch` (this repository),
 * `owner:branch` or `owner/repo:branch`. The repository is this one when `owner` owns it, else
 * `owner`'s fork of it (named `repo` when given). Nothing is looked up here.
 */
export function parseHeadName(head: string): { ownerName?: string; repoName?: string; branch: string } | null {
  const colon = head.indexOf(':')
  if (colon < 0) return { branch: head }
  const [ownerName, repoName, ...rest] = head.slice(0, colon).split('/')
  if (!ownerName || rest.length > 0 || repoName === '') return null
  return { ownerName, repoName, branch: head.slice(colon + 1) }
}

/**
 * The repository a head names beside `ctx`'s (parseHeadName's owner and repository name): `ctx`'s
 * own, or the named owner's fork of it. 404, as for an unknown owner, when there is none, when
 * the name does not match, or when `caller` may not read it (the one visibility rule).
 */
export async function headRepository(deps: AppDeps, ctx: RepoContext, caller: UserRow | null, named: { ownerName?: string; repoName?: string }): Promise<{ repo: RepoRow; owner: UserRow }> {
  const ownerName = named.ownerName ?? ctx.owner.name
  const missing = () => notFound(`head repository does not exist: no fork of ${ctx.repo.ownerName}/${ctx.repo.name} is owned by "${ownerName}"`)
  let end = { repo: ctx.repo, owner: ctx.owner }
  // No name holds a NUL character (and PostgreSQL cannot be asked for one).
  if (ownerName.includes('\u0000')) throw missing()
  if (ownerName.toLowerCase() !== ctx.owner.lowerName) {
    const owner = (await deps.db.select().from(users).where(eq(users.lowerName, ownerName.toLowerCase())))[0]
    const fork =
      owner &&
      (await deps.db
        .select()
        .from(repositories)
        .where(and(eq(repositories.forkId, ctx.repo.id), eq(repositories.ownerId, owner.id), eq(repositories.status, 'ready'))))[0]
    if (!owner || !fork) throw missing()
    end = { repo: fork, owner }
  }
  if (named.repoName !== undefined && named.repoName.toLowerCase() !== end.repo.lowerName) throw missing()
  if (end.repo.id !== ctx.repo.id && (await accessLevel(deps.db, caller, end.repo, end.owner)) < AccessMode.Read) throw missing()
  return end
}

/**
 * `head` as CreatePullRequestOption gives it (parseHeadName's forms: `branch`, `owner:branch`,
 * and the web's `owner/repo:branch`). The caller must be able to write to the head's repository:
 * else, as for an unknown owner, fork or branch, 404.
 */
async function resolveHead(deps: AppDeps, ctx: RepoContext, caller: UserRow, head: string): Promise<BranchEnd> {
  const named = parseHeadName(head)
  if (!named) throw notFound(`head repository does not exist: ${head.slice(0, 80)}`)
  const end: BranchEnd = { ...(await headRepository(deps, ctx, caller, named)), branch: named.branch }
  if (end.repo.id !== ctx.repo.id ? await accessLevel(deps.db, caller, end.repo, end.owner) < AccessMode.Write : ctx.mode < AccessMode.Write)
    throw notFound(`you may not open a pull request from ${end.repo.ownerName}/${end.repo.name}: writing to the head repository is needed`)
  await requireBranch(deps, end, 'head')
  return end
}

async function requireBranch(deps: AppDeps, end: BranchEnd, which: 'head' | 'base'): Promise<void> {
  if (!end.branch || !isSafeRefName(end.branch) || !(await branchExists(gitOfRow(deps, end.repo), end.branch)))
    throw notFound(`${which} branch does not exist [repo: ${end.repo.ownerName}/${end.repo.name}, branch: ${end.branch}]`)
}

/** 409 when another open pull request has the same head and base (inside the write transaction). */
async function refuseDuplicate(deps: AppDeps, p: Pick<PullRow, 'headRepoId' | 'headBranch' | 'baseRepoId' | 'baseBranch'>, exceptId = 0): Promise<void> {
  const other = (await deps.db
    .select({ index: pullRequests.index })
    .from(pullRequests)
    .innerJoin(issues, eq(issues.id, pullRequests.issueId))
    .where(
      and(
        eq(pullRequests.headRepoId, p.headRepoId),
        eq(pullRequests.headBranch, p.headBranch),
        eq(pullRequests.baseRepoId, p.baseRepoId),
        eq(pullRequests.baseBranch, p.baseBranch),
        eq(pullRequests.hasMerged, false),
        eq(issues.isClosed, false),
        sql`${pullRequests.id} <> ${exceptId}`,
      ),
    ))[0]
  if (other)
    throw conflict(`pull request already exists for these targets [id: ${other.index}, head: ${p.headBranch}, base: ${p.baseBranch}] (#${other.index})`)
}

export interface NewPull extends Omit<NewIssue, 'closed'> {
  head: string
  base: string
}

/** How long opening a pull request waits for its first mergeability check before answering. */
export const OPEN_CHECK_WAIT_MS = 5_000

/**
 * The first check of a new pull request, waited for at most OPEN_CHECK_WAIT_MS (git runs in
 * processes of its own, so the wait never blocks the event loop). A check still running then
 * goes on and records its answer; the pull request stays queued (check_seq > checked_seq) for
 * the pull-checker job until one does, so the answer may say `mergeable: false` meanwhile.
 */
async function checkBeforeAnswering(deps: AppDeps, pullId: number): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const check = checkPull(deps, pullId).catch((e) => loggerOf(deps.config).warn('a mergeability check failed', { pullId, ...errorFields(e) }))
  await Promise.race([check, new Promise<void>((resolve) => (timer = setTimeout(resolve, OPEN_CHECK_WAIT_MS)))])
  clearTimeout(timer)
}

/**
 * Opens a pull request: an issue (shared index, labels, milestone, assignees as the issue
 * service applies them) and its pull_requests row, written in one transaction with `pull.opened`.
 * Unknown branches, head equal to base: refused before anything is written. Mergeability is
 * checked before answering, for at most OPEN_CHECK_WAIT_MS (the check also writes
 * `refs/pull/<index>/head` in the base).
 */
export async function createPull(deps: AppDeps, ctx: RepoContext, caller: UserRow, opts: NewPull): Promise<PullItem> {
  if (!opts.head) throw unprocessable('Required', 'Head')
  if (!opts.base) throw unprocessable('Required', 'Base')
  const base: BranchEnd = { repo: ctx.repo, owner: ctx.owner, branch: opts.base }
  await requireBranch(deps, base, 'base')
  const head = await resolveHead(deps, ctx, caller, opts.head)
  if (head.repo.id === base.repo.id && head.branch === base.branch)
    throw unprocessable(`head and base are the same branch (${base.branch}): there is nothing to merge`, 'Head')
  const [headSha, baseSha] = await Promise.all([readRef(gitOfRow(deps, head.repo), `refs/heads/${head.branch}`), readRef(gitOfRow(deps, base.repo), `refs/heads/${base.branch}`)])
  // Unknown label ids are dropped, as Gitea does for pull requests; the repository's labels and
  // its owning organisation's may be given, as on issues.
  const labelIds = opts.labels?.length
    ? (await deps.db.select({ id: labels.id }).from(labels).where(and(or(eq(labels.repoId, ctx.repo.id), eq(labels.orgId, ctx.repo.ownerId)), inJsonList(labels.id, opts.labels)))).map((l) => l.id)
    : undefined
  let pullId = 0
  const values = { headRepoId: head.repo.id, headBranch: head.branch, baseRepoId: base.repo.id, baseBranch: base.branch }
  const { row } = await createIssue(deps, ctx, caller, { ...opts, labels: labelIds }, {
    check: async () => await refuseDuplicate(deps, values),
    attach: async (issue) => {
      pullId = (await deps.db
        .insert(pullRequests)
        .values({ ...values, issueId: issue.id, index: issue.index, headSha: headSha ?? '', baseSha: baseSha ?? '', status: 'checking', checkSeq: 1, checkActorId: caller.id, allowMaintainerEdit: ctx.repo.defaultAllowMaintainerEdit })
        .returning({ id: pullRequests.id }))[0]!.id
      await recordEvent(deps.db, { kind: 'pull.opened', repoId: ctx.repo.id, actorId: caller.id, issueId: issue.id, payload: { index: issue.index, pullId } })
    },
  })
  await checkBeforeAnswering(deps, pullId)
  return { pull: (await pullById(deps, pullId))!, issue: await findIssue(deps, ctx.repo.id, row.index) }
}

// ---- edit ------------------------------------------------------------------------------------

export interface PullEdit extends IssueEdit {
  base?: string
  labels?: number[]
  /** Whether those who may merge into the base may push to the head branch: the poster's to give. */
  allow_maintainer_edit?: boolean
}

/**
 * Edits a pull request: the issue's fields through the issue service (which announces them as
 * `issue.*` with isPull), plus its own: a new base (writers; 404 unknown, 422 equal to the head,
 * 409 when an open pull request already joins them; `issue.edited` with `changes.ref`), labels
 * (replaced, writers). A merged pull request keeps its state (412, as Gitea); reopening one
 * whose head and base another open pull request joins is a 409.
 */
export async function editPull(deps: AppDeps, ctx: RepoContext, index: number, caller: UserRow, opts: PullEdit): Promise<PullItem> {
  const { pull, issue } = await findPull(deps, ctx.repo.id, index)
  const writer = ctx.mode >= AccessMode.Write
  if (!mayEditIssue(ctx, issue, caller)) throw new ApiError(403, 'Only the poster or a writer may edit this pull request')
  // As Gitea's SetAllowMaintainerEdit: the poster's choice only.
  const maintainerEdit = opts.allow_maintainer_edit !== undefined && opts.allow_maintainer_edit !== pull.allowMaintainerEdit ? opts.allow_maintainer_edit : undefined
  if (maintainerEdit !== undefined && issue.posterId !== caller.id) throw new ApiError(403, 'Only the poster may allow maintainers to edit the head branch')
  if (opts.state !== undefined && pull.hasMerged && (opts.state === 'closed') !== issue.isClosed)
    throw new ApiError(412, 'cannot change state of this pull request, it was already merged')
  const newBase = writer && opts.base !== undefined && opts.base !== pull.baseBranch ? opts.base : undefined
  if (newBase !== undefined) {
    if (pull.hasMerged) throw new ApiError(412, 'cannot change the base of a merged pull request')
    await requireBranch(deps, { repo: ctx.repo, owner: ctx.owner, branch: newBase }, 'base')
    if (pull.headRepoId === ctx.repo.id && pull.headBranch === newBase)
      throw unprocessable(`head and base are the same branch (${newBase}): there is nothing to merge`, 'Base')
  }
  const reopening = opts.state === 'open' && issue.isClosed
  await editIssue(deps, ctx, index, caller, opts, async (current) => {
    // In the edit's transaction (a savepoint), so a refused edit leaves the labels as they were.
    if (writer && opts.labels !== undefined) await changeIssueLabels(deps, ctx, index, 'replace', opts.labels)
    const row = (await pullById(deps, pull.id))!
    const target = { ...row, baseBranch: newBase ?? row.baseBranch }
    if (reopening || (newBase !== undefined && !current.isClosed)) await refuseDuplicate(deps, target, row.id)
    if (newBase !== undefined) {
      await deps.db.update(pullRequests).set({ baseBranch: newBase }).where(eq(pullRequests.id, row.id))
      await recordIssueEvent(deps.db, current, caller.id, 'issue.edited', { changes: { ref: { from: row.baseBranch } } })
    }
    if (newBase !== undefined || reopening) await queueCheck(deps.db, row.id, caller.id)
    if (maintainerEdit !== undefined) await deps.db.update(pullRequests).set({ allowMaintainerEdit: maintainerEdit }).where(eq(pullRequests.id, row.id))
  })
  return { pull: (await pullById(deps, pull.id))!, issue: await findIssue(deps, ctx.repo.id, index) }
}

/** Whether the pull request was merged (GET …/merge: 204 or 404). */
export async function requireMerged(deps: AppDeps, repoId: number, index: number): Promise<void> {
  const { pull } = await findPull(deps, repoId, index)
  if (!pull.hasMerged) throw notFound('pull request has not been merged')
}

/** Marks a pull request merged and closes its issue, with `pull.merged`; inside a write transaction. */
export async function recordMerged(deps: AppDeps, pull: PullRow, mergeSha: string, byId: number, when = nowUnix()): Promise<void> {
  const issue = (await deps.db.select().from(issues).where(eq(issues.id, pull.issueId)))[0]!
  await deps.db
    .update(pullRequests)
    .set({ hasMerged: true, mergedUnix: when, mergedById: byId, mergeCommitSha: mergeSha, mergeIntent: null, headSha: pull.headSha, status: 'mergeable', checkedSeq: sql`${pullRequests.checkSeq}` })
    .where(eq(pullRequests.id, pull.id))
  // A merge scheduled for later has nothing left to do (Gitea drops it in Merge too).
  await deps.db.delete(pullAutoMerges).where(eq(pullAutoMerges.pullId, pull.id))
  // The merge's gate (mergeCandidate) refused a blocked pull request before its branch moved.
  await setClosed(deps, issue, true, when, 'ignore')
  await deps.db.update(issues).set({ updatedUnix: when }).where(eq(issues.id, issue.id))
  await recordEvent(deps.db, { kind: 'pull.merged', repoId: pull.baseRepoId, actorId: byId, issueId: pull.issueId, payload: { index: pull.index, mergeCommitSha: mergeSha } })
}
