import { and, eq, sql } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { repoRedirects, repositories, users } from '../db/schema'
import { rowMapper, valueRows } from '../db/row-mapper'
import { PageCache, pageCacheOf } from '../db/page-cache'
import { perConnection, type Db } from '../db/client'
import { repoPath, type GitLimits, type GitRepo } from '../git/run'
import { ApiError, forbidden, notFound, unauthorized } from '../lib/errors'
import { accessLevel, AccessMode, repoAccess, unitMode, type RepoAccess, type RepoRow, type RepoUnitKey } from './access'
import type { Caller, UserRow } from './caller'
import { ownerNamed } from './owner-context'

/** A repository named in a path, with its owner and what the caller may do in it. */
export interface RepoContext {
  repo: RepoRow
  owner: UserRow
  caller: Caller
  /** What the caller may do in the route's unit (the code's, for a route that names none). */
  mode: AccessMode
  /** What the caller may do in each unit (absent: `mode` in every unit). */
  access?: RepoAccess
  /** The request's signal: git started for it dies when the client goes away. */
  signal?: AbortSignal
}

/**
 * The repository's read behind findRepoByName, prepared once per connection (every repository
 * route's first queries), beside its owner's (ownerNamed, kept by the users' change mark). The
 * repository finds the owner's id by a sub-query, so the two are sent at once: on PostgreSQL one
 * round trip instead of two. As one join returning both rows, the lookup costs several times more
 * in SQLite (measured: about 30 µs against 4 µs, a fifth of a whole issue-list request; again
 * 220-340 against 38-44 µs, both with their rows mapped); the sub-query costs it nothing
 * measurable. The owner kept on its own is not read again when only the repository changed (a
 * new issue moves its counts): on PostgreSQL one statement of a filed issue's ten.
 */
const repoByName = perConnection((db: Db) =>
  db
    .select()
    .from(repositories)
    .where(
      and(
        eq(repositories.ownerId, db.select({ id: users.id }).from(users).where(eq(users.lowerName, sql.placeholder('owner')))),
        eq(repositories.lowerName, sql.placeholder('repo')),
        eq(repositories.status, 'ready'),
      ),
    )
    .prepare(),
)

/** How many repositories found by name are kept per database (reposFound). */
const REPOS_KEPT = 2048

/**
 * Repositories found by name, with their owners, while the database is unchanged: every
 * repository route (and git over HTTP and SSH) starts with this lookup, and on PostgreSQL its two
 * round trips were most of a point read's time. Any write of users or repositories, by any
 * process, forgets them (on SQLite any write: PageCache's `tables`).
 */
const reposFound = (db: AppDeps['db']) =>
  pageCacheOf(db, 'repos by name', () => new PageCache<{ repo: RepoRow; owner: UserRow }>(db, { maxCost: REPOS_KEPT, tables: [users, repositories] }))

/**
 * Repository by owner name and repository name, both case-insensitive. The rows are the caller's
 * own copies.
 */
export async function findRepoByName(deps: AppDeps, ownerName: string, repoName: string): Promise<{ repo: RepoRow; owner: UserRow } | undefined> {
  const owner = ownerName.toLowerCase()
  const repo = repoName.toLowerCase()
  const found = await reposFound(deps.db).getOrRead(`${owner.length}:${owner}/${repo}`, () => readRepoByName(deps.db, owner, repo))
  return found && { repo: { ...found.repo }, owner: { ...found.owner } }
}

/** The point reads behind findRepoByName (names in lower case): the owner (kept, ownerNamed) and the repository, sent together. */
async function readRepoByName(db: Db, owner: string, repo: string): Promise<{ repo: RepoRow; owner: UserRow } | undefined> {
  const [ownerRow, [repoValues]] = await Promise.all([ownerNamed(db, owner), valueRows(repoByName(db), { owner, repo })])
  // Read side by side, outside a transaction: a repository moved to another owner between the two reads is not this owner's.
  if (!ownerRow || !repoValues) return undefined
  const found = { repo: repoRows.map(repoValues), owner: ownerRow }
  return found.repo.ownerId === found.owner.id ? found : undefined
}
/**
 * The repository an old name leads to, by the old owner's name and the old name: the redirects'
 * unique index, whichever number of repositories there are. A scalar subquery for the old owner's
 * id, as repoByName: with `IN (subquery)` SQLite's plan started from every ready repository, read
 * at every 404 of a repository's path. Exported for test/repos.test.ts.
 */
export const redirectTarget = perConnection((db: Db) =>
  db
    .select({ repoId: repoRedirects.repoId })
    .from(repoRedirects)
    .where(
      and(
        eq(repoRedirects.ownerId, db.select({ id: users.id }).from(users).where(eq(users.lowerName, sql.placeholder('owner')))),
        eq(repoRedirects.lowerName, sql.placeholder('repo')),
      ),
    )
    .prepare(),
)

/** A ready repository by id with its owner now (another one than an old name's after a transfer). */
const readyRepoWithOwner = perConnection((db: Db) =>
  db
    .select({ repo: repositories, owner: users })
    .from(repositories)
    .innerJoin(users, eq(users.id, repositories.ownerId))
    .where(and(eq(repositories.id, sql.placeholder('id')), eq(repositories.status, 'ready')))
    .prepare(),
)

/**
 * The repository an old name of a renamed or transferred repository now leads to (Gitea's repo_redirect), by
 * owner name and old repository name, both case-insensitive; undefined when the name is not one
 * (a 404's case: one small statement, the repository read only for a name that leads somewhere).
 */
export async function findRepoRedirect(deps: AppDeps, ownerName: string, repoName: string): Promise<{ repo: RepoRow; owner: UserRow } | undefined> {
  const [target] = await redirectTarget(deps.db).execute({ owner: ownerName.toLowerCase(), repo: repoName.toLowerCase() })
  if (!target) return undefined
  const [row] = await readyRepoWithOwner(deps.db).execute({ id: target.repoId })
  return row && { repo: row.repo as RepoRow, owner: row.owner as UserRow }
}

/**
 * The request's URL with `{owner}/{old name}` replaced by the repository's current full name
 * (path and query only, as Gitea's RedirectToRepo sends it).
 */
export function redirectedLocation(request: Request, ownerName: string, oldName: string, to: { repo: RepoRow; owner: UserRow }): string {
  const url = new URL(request.url)
  const from = `/${encodeURIComponent(ownerName)}/${encodeURIComponent(oldName)}`
  const path = url.pathname.replace(from, `/${encodeURIComponent(to.owner.name)}/${encodeURIComponent(to.repo.name)}`)
  return path + url.search
}

const repoRows = rowMapper<RepoRow>(repositories)

/** Repository lookups started ahead of their request's repository need (startRepoLookup), by request. */
const lookupsAhead = new WeakMap<Request, { owner: string; repo: string; found: Promise<{ repo: RepoRow; owner: UserRow } | undefined> }>()

/**
 * Starts looking the repository of `/repos/{owner}/{repo}` up while the pipeline's first need
 * (the token's scope) waits for the caller: the two reads go together (on PostgreSQL, round trips
 * side by side instead of one after the other). Nothing is answered from it before the caller is
 * known and the needs before the repository's are met (loadRepoContext awaits the caller first).
 */
export function startRepoLookup(deps: AppDeps, request: Request, ownerName: string, repoName: string): void {
  const found = findRepoByName(deps, ownerName, repoName)
  found.catch(() => {}) // its failure is thrown where it is awaited; a request refused before then never awaits it
  lookupsAhead.set(request, { owner: ownerName, repo: repoName, found })
}

/** The lookup of the request's repository: the one started ahead for these names, or a new one. */
function repoLookup(deps: AppDeps, request: Request, ownerName: string, repoName: string): Promise<{ repo: RepoRow; owner: UserRow } | undefined> {
  const ahead = lookupsAhead.get(request)
  lookupsAhead.delete(request)
  const found = ahead && ahead.owner === ownerName && ahead.repo === repoName ? ahead.found : findRepoByName(deps, ownerName, repoName)
  found.catch(() => {}) // awaited once the caller is known; a caller refused (401) leaves it unawaited
  return found
}

/** The caller's mode in `unit` of a resolved repository (ctx.mode where the context knows no units). */
export const modeIn = (ctx: Pick<RepoContext, 'mode' | 'access'>, unit: RepoUnitKey): AccessMode => (ctx.access ? unitMode(ctx.access, unit) : ctx.mode)

/**
 * The kind of a tracker list's rows the caller may read, for a list that would show both (Gitea's
 * ListIssues): `false` issues only (no pull requests unit), `true` pull requests only, undefined both.
 */
export const readableTrackerKind = (ctx: Pick<RepoContext, 'mode' | 'access'>): boolean | undefined =>
  modeIn(ctx, 'repo.pulls') < AccessMode.Read ? false : modeIn(ctx, 'repo.issues') < AccessMode.Read ? true : undefined

/** Whether the repository's projects show to the caller: the unit on, and theirs to read (a team may give the issues and not the projects). */
export const projectsReadable = (ctx: Pick<RepoContext, 'mode' | 'access' | 'repo'>): boolean => ctx.repo.hasProjects && modeIn(ctx, 'repo.projects') >= AccessMode.Read

/** The code unit, which a route naming no unit belongs to (as in Gitea). */
const CODE: readonly RepoUnitKey[] = ['repo.code']

/**
 * Resolves `/repos/{owner}/{repo}` for the caller: 404 when it does not exist or the caller
 * may not read it (existence is never revealed), or may read none of the units `unitsOf` names
 * (the best of them counts: labels belong to either tracker); then 401 for an anonymous caller or
 * 403 for a known one when `need` is above what they have there.
 */
export async function loadRepoContext(
  deps: AppDeps,
  request: Request,
  ownerName: string,
  repoName: string,
  need: AccessMode = AccessMode.Read,
  unitsOf: (repo: RepoRow, access: RepoAccess) => readonly RepoUnitKey[] | Promise<readonly RepoUnitKey[]> = () => CODE,
): Promise<RepoContext> {
  const lookup = repoLookup(deps, request, ownerName, repoName)
  const caller = await deps.auth.caller(request)
  const found = await lookup
  if (!found) {
    // An old name of a renamed repository: 307 to the same path under the new name, for readers only.
    const moved = await findRepoRedirect(deps, ownerName, repoName)
    if (moved && await accessLevel(deps.db, caller.user, moved.repo, moved.owner) >= AccessMode.Read)
      throw new ApiError(307, 'The repository has moved', {}, { Location: redirectedLocation(request, ownerName, repoName, moved) })
    throw notFound()
  }
  const access = await repoAccess(deps.db, caller.user, found.repo, found.owner)
  if (access.mode < AccessMode.Read) {
    // A public-only token's user who could read it without that limit is told why, as Gitea does.
    if (caller.user?.publicOnly && (await repoAccess(deps.db, { ...caller.user, publicOnly: undefined }, found.repo, found.owner)).mode >= AccessMode.Read)
      throw forbidden('token scope is limited to public repos')
    throw notFound()
  }
  // A unit the caller's teams give them none of is hidden as the repository would be (Gitea's reqRepoReader).
  const mode = Math.max(AccessMode.None, ...(await unitsOf(found.repo, access)).map((unit) => unitMode(access, unit))) as AccessMode
  if (mode < AccessMode.Read) throw notFound()
  if (mode < need) {
    if (!caller.user) throw unauthorized()
    throw forbidden('You do not have the permission needed for this repository')
  }
  return { ...found, caller, mode, access, signal: request.signal }
}

/**
 * `/repositories/{id}`: a ready repository by id when the caller may read it; 404 otherwise,
 * whether or not it exists (Gitea's GetByID answers a repository the caller may not read as
 * one that does not exist).
 */
export async function loadRepoById(deps: AppDeps, caller: Caller, id: number): Promise<RepoRow> {
  const repo = (await deps.db
    .select()
    .from(repositories)
    .where(and(eq(repositories.id, id), eq(repositories.status, 'ready'))))[0]
  if (!repo || await accessLevel(deps.db, caller.user, repo) < AccessMode.Read) throw notFound()
  return repo
}

/** The git folder of a repository found by name (a RepoContext, or findRepoByName's answer). */
export const gitDirOf = (deps: AppDeps, found: { repo: RepoRow; owner: UserRow }): string =>
  repoPath(deps.config.dataDir, found.owner.name, found.repo.name)

/** The configured time limits of git processes. */
export const gitLimitsOf = (deps: AppDeps): GitLimits => ({ quick: deps.config.gitQuickTimeout, long: deps.config.gitTimeout })

/** The git folder of a repository row, with the configured limits and no request signal: writes here run to the end. */
export const gitOfRow = (deps: AppDeps, row: { ownerName: string; name: string }): GitRepo => ({
  gitDir: repoPath(deps.config.dataDir, row.ownerName, row.name),
  limits: gitLimitsOf(deps),
})

/**
 * A repository as the git functions take it: folder, time limits, and the signal of the request
 * (RepoContext's, unless `signal` is given) so that git dies when the client hangs up.
 */
export const gitRepoOf = (
  deps: AppDeps,
  found: { repo: RepoRow; owner: UserRow; signal?: AbortSignal },
  signal: AbortSignal | undefined = found.signal,
): GitRepo => ({ gitDir: gitDirOf(deps, found), limits: gitLimitsOf(deps), signal })
