/**
 * Dependencies between issues and pull requests (Gitea's issue_dependency): an issue is blocked by
 * the issues it depends on, in its own repository or another one the caller may read. A blocked
 * issue cannot be closed (`setClosed`, issues/state.ts) and a blocked pull request cannot be
 * merged (`mergeCandidate`, pulls/merge.ts) while one of them is open.
 */
import { and, asc, count, eq, exists, inArray, or, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { perConnectionShape, writeTransaction } from '../../db/client'
import { issueDependencies, issues, repositories, type IssueRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode, issueUnitOf, repoAccess, type RepoRow } from '../../auth/access'
import { findRepoByName, modeIn, type RepoContext } from '../../auth/repo-context'
import { readableUnitsCondition, viewerKind, viewerStandIn, type Viewer } from '../../auth/visibility'
import { ApiError, forbidden, notFound, unprocessable } from '../../lib/errors'
import { preparedPage, type Page, type Paged } from '../../lib/pagination'
import { nowUnix } from '../../lib/time'
import { recordIssueEvent } from '../../events/issue-events'
import { findIssue } from '../issues/queries'

/** The body of every change (Gitea's IssueMeta): the other issue, by repository and index. */
export interface IssueMeta {
  owner?: string
  repo?: string
  index: number
}

/**
 * Which way the path's issue stands: `dependencies` (…/dependencies: it is blocked by the body's
 * issue) or `blocks` (…/blocks: it blocks the body's issue).
 */
export type Direction = 'dependencies' | 'blocks'

/** An issue with its repository and what the caller may do there. */
interface Placed {
  issue: IssueRow
  repo: RepoRow
  mode: AccessMode
}

/** Most issues a cycle check walks through before refusing the dependency (the walk is bounded). */
export const MAX_DEPENDENCY_WALK = 5000

/** An issue's unit is on in its repository (issues for an issue, pull requests for a pull request). */
const unitOpen = (repo: Pick<RepoRow, 'hasIssues' | 'hasPullRequests'>, issue: Pick<IssueRow, 'isPull'>) => (issue.isPull ? repo.hasPullRequests : repo.hasIssues)

/**
 * The issue an IssueMeta names, as the caller may see it: the path's repository when owner and
 * repo are left out or name it; 404 for a repository, unit or issue the caller may not read, as
 * for one that does not exist.
 */
async function issueOfMeta(deps: AppDeps, ctx: RepoContext, meta: IssueMeta): Promise<Placed> {
  const ownerName = meta.owner || ctx.owner.name
  const repoName = meta.repo || ctx.repo.name
  let repo = ctx.repo
  let access: Pick<RepoContext, 'mode' | 'access'> = ctx
  if (ownerName.toLowerCase() !== ctx.owner.lowerName || repoName.toLowerCase() !== ctx.repo.lowerName) {
    const found = await findRepoByName(deps, ownerName, repoName)
    const theirs = found && (await repoAccess(deps.db, ctx.caller.user, found.repo, found.owner))
    if (!found || !theirs || theirs.mode < AccessMode.Read) throw notFound(`repository does not exist [name: ${ownerName}/${repoName}]`)
    repo = found.repo
    access = { mode: theirs.mode, access: theirs }
  }
  const issue = await findIssue(deps, repo.id, meta.index)
  // What the caller may do with the issue is what they may in its unit (a team may give the code and not the issues).
  const mode = modeIn(access, issueUnitOf(issue))
  if (!unitOpen(repo, issue) || mode < AccessMode.Read) throw notFound(`issue does not exist [repo_id: ${repo.id}, index: ${meta.index}]`)
  return { issue, repo, mode }
}

/** The path's issue (its unit open, else 404). */
async function issueOfPath(deps: AppDeps, ctx: RepoContext, index: number): Promise<Placed> {
  const issue = await findIssue(deps, ctx.repo.id, index)
  if (!unitOpen(ctx.repo, issue)) throw notFound(`issue does not exist [repo_id: ${ctx.repo.id}, index: ${index}]`)
  return { issue, repo: ctx.repo, mode: ctx.mode }
}

/**
 * A page of the issues the path's issue depends on (`dependencies`) or blocks (`blocks`), oldest
 * first, leaving out those in repositories (or units) the caller may not read.
 */
export async function listDependencies(deps: AppDeps, ctx: RepoContext, index: number, direction: Direction, page: Page): Promise<Paged<IssueRow>> {
  const { issue } = await issueOfPath(deps, ctx, index)
  // An issue's blockers are none where the repository keeps no dependencies (Gitea: 404).
  if (direction === 'dependencies' && !ctx.repo.enableIssueDependencies) throw notFound('dependencies are disabled in this repository')
  const viewer = ctx.caller.user
  const statements = dependencyListStatements(deps.db, `${direction} ${viewerKind(viewer)}`, () => prepareDependencyList(deps.db, direction, viewerStandIn(viewer)))
  return await preparedPage<IssueRow>(statements, { issue: issue.id, viewer: viewer?.id ?? 0 }, page)
}

/**
 * listDependencies' statements for a direction and a shape of viewer (visibility.ts viewerKind:
 * the viewer's id bound as `viewer`), prepared when first asked: every issue and pull request page
 * reads both directions.
 */
function prepareDependencyList(db: AppDeps['db'], direction: Direction, viewer: Viewer) {
  const [mine, other] = direction === 'dependencies' ? [issueDependencies.issueId, issueDependencies.dependencyId] : [issueDependencies.dependencyId, issueDependencies.issueId]
  const linked = inArray(issues.id, db.select({ id: other }).from(issueDependencies).where(eq(mine, sql.placeholder('issue'))))
  const readable = exists(
    db
      .select({ one: repositories.id })
      .from(repositories)
      .where(
        and(
          eq(repositories.id, issues.repoId),
          // The issue's unit, not the repository alone: a team may give the code and not the issues.
          readableUnitsCondition(viewer, [
            [eq(issues.isPull, false), 'repo.issues'],
            [eq(issues.isPull, true), 'repo.pulls'],
          ]),
          or(and(eq(issues.isPull, false), eq(repositories.hasIssues, true)), and(eq(issues.isPull, true), eq(repositories.hasPullRequests, true))),
        ),
      ),
  )
  const where = and(linked, readable)
  return {
    rows: db.select().from(issues).where(where).orderBy(asc(issues.id)).limit(sql.placeholder('limit')).offset(sql.placeholder('offset')).prepare(),
    count: db.select({ n: count() }).from(issues).where(where).prepare(),
  }
}
const dependencyListStatements = perConnectionShape<ReturnType<typeof prepareDependencyList>>()

/**
 * The two ends of a change: `target` is blocked by `dependency`. For …/dependencies the path's
 * issue is the target, for …/blocks the body's.
 */
async function endsOf(deps: AppDeps, ctx: RepoContext, index: number, meta: IssueMeta, direction: Direction): Promise<{ path: Placed; target: Placed; dependency: Placed }> {
  const path = await issueOfPath(deps, ctx, index)
  const body = await issueOfMeta(deps, ctx, meta)
  const [target, dependency] = direction === 'dependencies' ? [path, body] : [body, path]
  // As Gitea: the target's repository must keep dependencies, and the caller write its issues.
  if (!target.repo.enableIssueDependencies) throw notFound('dependencies are disabled in this repository')
  if (target.repo.isArchived) throw new ApiError(423, 'repo is archived')
  if (target.mode < AccessMode.Write) throw forbidden('You do not have the permission to change the dependencies of this issue')
  return { path, target, dependency }
}

/** The other end of an event: enough to find it again and to name it. */
const endOf = (issue: IssueRow) => ({ id: issue.id, repoId: issue.repoId, index: issue.index })

/**
 * Whether `from` already depends, directly or through others, on `to`: a walk through the
 * dependencies one level per query, at most MAX_DEPENDENCY_WALK issues (422 past that).
 */
async function dependsOn(deps: AppDeps, from: number, to: number): Promise<boolean> {
  const seen = new Set([from])
  let frontier = [from]
  while (frontier.length) {
    const next = await deps.db.select({ id: issueDependencies.dependencyId }).from(issueDependencies).where(inArray(issueDependencies.issueId, frontier))
    frontier = []
    for (const { id } of next) {
      if (id === to) return true
      if (seen.has(id)) continue
      seen.add(id)
      frontier.push(id)
    }
    if (seen.size > MAX_DEPENDENCY_WALK) throw unprocessable(`the dependencies of this issue are too many to check for a cycle (more than ${MAX_DEPENDENCY_WALK})`, 'Index')
  }
  return false
}

/**
 * Makes the target depend on the dependency (see endsOf): 422 for an issue depending on itself,
 * a dependency already there or one closing a cycle (Gitea refuses the two-issue one; every cycle
 * here). Both issues' timelines get an `add_dependency` event. Answers the path's issue.
 */
export async function addDependency(deps: AppDeps, ctx: RepoContext, caller: UserRow, index: number, meta: IssueMeta, direction: Direction): Promise<IssueRow> {
  const { path, target, dependency } = await endsOf(deps, ctx, index, meta, direction)
  if (target.issue.id === dependency.issue.id) throw unprocessable('an issue cannot depend on itself', 'Index')
  await writeTransaction(deps.db, async () => {
    const there = await deps.db
      .select({ id: issueDependencies.id })
      .from(issueDependencies)
      .where(and(eq(issueDependencies.issueId, target.issue.id), eq(issueDependencies.dependencyId, dependency.issue.id)))
    if (there.length) throw unprocessable(`issue dependency does already exist [issue id: ${target.issue.id}, dependency id: ${dependency.issue.id}]`, 'Index')
    if (await dependsOn(deps, dependency.issue.id, target.issue.id))
      throw unprocessable(`circular dependencies exists [issue id: ${target.issue.id}, dependency id: ${dependency.issue.id}]`, 'Index')
    await deps.db.insert(issueDependencies).values({ userId: caller.id, issueId: target.issue.id, dependencyId: dependency.issue.id, createdUnix: nowUnix() })
    await recordIssueEvent(deps.db, target.issue, caller.id, 'issue.dependency_added', { dependent: endOf(dependency.issue) })
    await recordIssueEvent(deps.db, dependency.issue, caller.id, 'issue.dependency_added', { dependent: endOf(target.issue) })
  })
  return path.issue
}

/** Removes the dependency (see endsOf; 404 when there is none), with `remove_dependency` events on both. Answers the path's issue. */
export async function removeDependency(deps: AppDeps, ctx: RepoContext, caller: UserRow, index: number, meta: IssueMeta, direction: Direction): Promise<IssueRow> {
  const { path, target, dependency } = await endsOf(deps, ctx, index, meta, direction)
  await writeTransaction(deps.db, async () => {
    const gone = await deps.db
      .delete(issueDependencies)
      .where(and(eq(issueDependencies.issueId, target.issue.id), eq(issueDependencies.dependencyId, dependency.issue.id)))
      .returning({ id: issueDependencies.id })
    if (!gone.length) throw notFound(`issue dependency does not exist [issue id: ${target.issue.id}, dependency id: ${dependency.issue.id}]`)
    await recordIssueEvent(deps.db, target.issue, caller.id, 'issue.dependency_removed', { dependent: endOf(dependency.issue) })
    await recordIssueEvent(deps.db, dependency.issue, caller.id, 'issue.dependency_removed', { dependent: endOf(target.issue) })
  })
  return path.issue
}
