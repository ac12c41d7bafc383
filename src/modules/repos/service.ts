import { existsSync, mkdirSync, readdirSync, renameSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { and, asc, count, eq, inArray, ne, or, sql, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { changeMarkOf, writeTransaction } from '../../db/client'
import { rowMapper, valueRows } from '../../db/row-mapper'
import { containsPattern, greatestOf } from '../../db/sql'
import { usersByIds } from '../users/service'
import { repoRedirects, repositories, stars, teamRepos, teams, users } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode, accessLevels, type RepoRow } from '../../auth/access'
import { grantedRepoCondition, readableRepoCondition } from '../../auth/visibility'
import { repoRecord, toApiRepo, type ApiRepo } from '../../lib/convert/repo'
import { noReplyEmail, userConverter } from '../../lib/convert/user'
import { conflict, forbidden, notFound, unprocessable } from '../../lib/errors'
import type { Page, Paged } from '../../lib/pagination'
import { nowUnix } from '../../lib/time'
import { charCount, checkWebsite } from '../../lib/validate'
import { initBareRepository, removeRepositoryFolder } from '../../git/init'
import { removeRepositoryAttachments } from '../releases/storage'
import { checkForkVisibility } from '../forks/visibility'
import { repoPath, type GitRepo } from '../../git/run'
import { branchExists, isSafeRefName, repositorySize, setHeadBranch } from '../../git/refs'
import { gitLimitsOf } from '../../auth/repo-context'
import { writeInitialCommit, type InitialFile } from '../../git/initial-commit'
import { SEARCH_MODES } from './model'
import { recordEvent } from '../../events/outbox'
import { GITIGNORE_TEMPLATES, LICENSE_TEMPLATES, README_TEMPLATES } from './templates'
import { changeMarkRow } from '../stars/service'
import { removeGitLeftovers } from '../../git/leftovers'
import { loggerOf } from '../../lib/log'

export interface NewRepo {
  name: string
  description?: string
  private?: boolean
  autoInit?: boolean
  gitignores?: string
  license?: string
  readme?: string
  defaultBranch?: string
  /** Who asks for it (author of the first commit); the owner when absent. */
  creator?: UserRow
  /**
   * Fills the new bare repository (a migration's fetch) before the row becomes ready; answers
   * the row fields it determined (is_empty, size, is_mirror). Its failure undoes the creation.
   */
  populate?: (repo: GitRepo) => Promise<Partial<RepoRow>>
  /** Runs inside the transaction that makes the row ready (a mirror's own row). */
  onReady?: (row: RepoRow) => Promise<void> | void
}

const REPO_NAME = /^[A-Za-z0-9_.-]+$/

/** Repository names: AlphaDashDot, at most 100, not `.`/`..`, not ending in `.git`/`.wiki`. */
export function checkRepoName(name: string): void {
  if (!name) throw unprocessable('Required', 'Name')
  if (!REPO_NAME.test(name)) throw unprocessable('must be valid alpha or numeric or dash(-_) or dot characters', 'Name')
  if (charCount(name) > 100) throw unprocessable('must be less than 100 characters', 'Name')
  const lower = name.toLowerCase()
  if (lower === '.' || lower === '..' || lower.endsWith('.git') || lower.endsWith('.wiki'))
    throw unprocessable(`repository name is reserved [name: ${name}]`, 'Name')
}

/** 409 when the owner already has a repository of that name (any case). */
export async function checkRepoNameFree(deps: AppDeps, ownerId: number, name: string): Promise<void> {
  const existing = (await deps.db
    .select({ id: repositories.id })
    .from(repositories)
    .where(and(eq(repositories.ownerId, ownerId), eq(repositories.lowerName, name.toLowerCase()))))[0]
  if (existing) throw conflict(`The repository with the same name already exists. [name: ${name}]`)
}

/** Where a repository row's git folder lives. */
export const pathOfRepo = (deps: AppDeps, ownerName: string, repo: Pick<RepoRow, 'name'>) =>
  repoPath(deps.config.dataDir, ownerName, repo.name)

/** A git folder with the configured limits and no request signal: writes here run to the end. */
export const gitRepoAt = (deps: AppDeps, gitDir: string): GitRepo => ({ gitDir, limits: gitLimitsOf(deps) })

/** A CreateRepoOption body (POST /user/repos, /org/{org}/repos, /admin/users/{u}/repos) as a NewRepo. */
export function newRepoFromOption(body: {
  name: string
  description?: string
  private?: boolean
  auto_init?: boolean
  gitignores?: string
  license?: string
  readme?: string
  default_branch?: string
}): NewRepo {
  return {
    name: body.name,
    description: body.description,
    private: body.private,
    autoInit: body.auto_init,
    gitignores: body.gitignores,
    license: body.license,
    readme: body.readme,
    defaultBranch: body.default_branch,
  }
}

/** Case-insensitive template lookup; undefined when there is no such template. */
function findTemplate(templates: Record<string, string>, name: string): [string, string] | undefined {
  const lower = name.toLowerCase()
  for (const key in templates) if (key.toLowerCase() === lower) return [key, templates[key]!]
  return undefined
}

/** The license text with its year and copyright-holder placeholders filled in. */
function fillLicense(text: string, year: number, holder: string): string {
  return text
    .replace(/<year>|\[yyyy\]|\[year\]/g, String(year))
    .replace(/<owner>|<copyright holders>|\[name of copyright owner\]|<name of author>|\[fullname\]/g, holder)
}

/**
 * The files of an auto_init first commit (README, .gitignore, LICENSE), or 422 for an unknown
 * template name. Checked before anything is created.
 */
function initialFiles(owner: UserRow, opts: NewRepo, now: number): InitialFile[] {
  const readmeName = opts.readme?.trim() || 'Default'
  const readme = findTemplate(README_TEMPLATES, readmeName)
  if (!readme) throw unprocessable(`readme template does not exist [name: ${readmeName}]`, 'Readme')
  const files: InitialFile[] = [
    { name: 'README.md', content: readme[1].replace('{Name}', opts.name).replace('{Description}', opts.description ?? '') },
  ]
  const ignores = (opts.gitignores ?? '').split(',').map((n) => n.trim()).filter(Boolean)
  if (ignores.length) {
    const parts = ignores.map((n) => {
      const found = findTemplate(GITIGNORE_TEMPLATES, n)
      if (!found) throw unprocessable(`gitignore template does not exist [name: ${n}]`, 'Gitignores')
      return `# ---> ${found[0]}\n${found[1].replace(/\n*$/, '\n')}\n`
    })
    files.push({ name: '.gitignore', content: parts.join('') })
  }
  const licenseName = opts.license?.trim()
  if (licenseName) {
    const found = findTemplate(LICENSE_TEMPLATES, licenseName)
    if (!found) throw unprocessable(`license template does not exist [name: ${licenseName}]`, 'License')
    const year = new Date(now * 1000).getUTCFullYear()
    files.push({ name: 'LICENSE', content: fillLicense(found[1], year, owner.fullName || owner.name) })
  }
  return files
}

/** Name and e-mail git records for a user's commits (the no-reply address when the e-mail is private). */
function signatureOf(deps: AppDeps, user: UserRow, when: number) {
  const email = user.keepEmailPrivate || !user.email ? noReplyEmail(deps.config, user) : user.email
  return { name: user.fullName || user.name, email, when }
}

/**
 * Gitea's CanCreateRepoIn: a site administrator creates anywhere; otherwise the owner's
 * `max_repo_creation` caps the repositories it owns (-1: the server's default, unlimited here;
 * 0: none). Read inside the creating transaction, so two requests cannot both take the last place.
 * The answer is Gitea's API answer to ErrReachLimitOfRepo (its migrate route): 422.
 */
async function checkRepoLimit(deps: AppDeps, owner: UserRow, creator: UserRow | undefined): Promise<void> {
  if (creator?.isAdmin) return
  const current = (await deps.db.select({ max: users.maxRepoCreation, num: users.numRepos }).from(users).where(eq(users.id, owner.id)))[0]
  if (!current || current.max <= -1 || current.num < current.max) return
  throw unprocessable(`You have already reached your limit of ${current.max} repositories.`, 'MaxRepoCreation')
}

/**
 * Creates a repository for `owner` (a user or organisation; permission checks are the caller's):
 * an empty bare repository, with a first commit when auto_init (see buildRepository).
 */
export async function createRepository(deps: AppDeps, owner: UserRow, opts: NewRepo): Promise<RepoRow> {
  checkRepoName(opts.name)
  if (opts.description !== undefined && charCount(opts.description) > 255)
    throw unprocessable('must be less than 255 characters', 'Description')
  const defaultBranch = opts.defaultBranch || 'master'
  if (!isSafeRefName(defaultBranch)) throw unprocessable('invalid branch name', 'DefaultBranch')
  const now = nowUnix()
  const files = opts.autoInit ? initialFiles(owner, opts, now) : []
  const actor = opts.creator ?? owner
  return await buildRepository(
    deps,
    owner,
    opts.creator,
    { name: opts.name, description: opts.description ?? '', isPrivate: opts.private ?? false, defaultBranch },
    {
      make: async (path) => {
        await initBareRepository(path, defaultBranch, gitLimitsOf(deps))
        const made: Partial<RepoRow> = opts.populate ? await opts.populate(gitRepoAt(deps, path)) : {}
        if (!files.length) return made
        await writeInitialCommit(gitRepoAt(deps, path), defaultBranch, files, signatureOf(deps, actor, now))
        return { ...made, isEmpty: false, size: await repositorySize(gitRepoAt(deps, path)) }
      },
      ready: async (row) => {
        await opts.onReady?.(row)
        await recordEvent(deps.db, { kind: 'repo.created', repoId: row.id, actorId: actor.id, payload: { repository: repoSnapshot(row) } })
      },
    },
  )
}

/** The columns a new repository row starts with (the owner's and the times aside). */
export type NewRepoRow = Pick<typeof repositories.$inferInsert, 'name' | 'description' | 'isPrivate' | 'defaultBranch' | 'isFork' | 'forkId'>

/** How buildRepository makes one kind of repository. */
export interface RepoBuild {
  /** Refusals of this kind, inside the transaction that inserts the row (before the name check). */
  check?: () => Promise<void> | void
  /** Makes the git folder at `path` (which does not exist); answers the columns the ready row gets. */
  make: (path: string) => Promise<Partial<RepoRow>>
  /** Inside the transaction that makes the row ready (the row as it is then): events, counters. */
  ready: (row: RepoRow) => Promise<void> | void
}

/**
 * Makes a repository for `owner` (the name is checked here; other values by the caller). Order,
 * so that a crash leaves only what the startup check repairs: the row is inserted with status
 * 'creating' (with the owner's counter), then the git folder is made, then the row becomes 'ready'
 * in one transaction with `build.ready`'s writes. A failure in between removes both.
 */
export async function buildRepository(deps: AppDeps, owner: UserRow, creator: UserRow | undefined, values: NewRepoRow, build: RepoBuild): Promise<RepoRow> {
  checkRepoName(values.name)
  const now = nowUnix()
  const row = await writeTransaction(deps.db, async () => {
    await build.check?.()
    await checkRepoNameFree(deps, owner.id, values.name)
    await checkRepoLimit(deps, owner, creator)
    const inserted = (await deps.db
      .insert(repositories)
      .values({ ...values, ownerId: owner.id, ownerName: owner.name, lowerName: values.name.toLowerCase(), status: 'creating', createdUnix: now, updatedUnix: now })
      .returning())[0]
    await deps.db.update(users).set({ numRepos: sql`${users.numRepos} + 1` }).where(eq(users.id, owner.id))
    await dropRedirect(deps, owner.id, inserted.lowerName)
    // Its creator watches it (Gitea's AutoWatchNewRepos, on by default); an organisation never watches.
    const watcher = creator ?? owner
    if (watcher.type === 0) await changeMarkRow(deps, 'watch', watcher.id, inserted.id, true)
    return (await deps.db.select().from(repositories).where(eq(repositories.id, inserted.id)))[0]!
  })
  const path = pathOfRepo(deps, owner.name, row)
  let made = false
  try {
    // A folder no row accounts for (a crash's leftover) is neither adopted nor removed here.
    if (existsSync(path)) throw conflict(`repository files already exist [name: ${values.name}]`)
    made = true
    const done: Partial<RepoRow> = { ...(await build.make(path)), status: 'ready' }
    return await writeTransaction(deps.db, async () => {
      const ready = (await deps.db.update(repositories).set(done).where(eq(repositories.id, row.id)).returning())[0]!
      await build.ready(ready)
      return ready
    })
  } catch (e) {
    if (made) removeRepositoryFolder(path)
    await writeTransaction(deps.db, async () => {
      await deps.db.delete(repositories).where(eq(repositories.id, row.id))
      await deps.db.update(users).set({ numRepos: sql`${users.numRepos} - 1` }).where(eq(users.id, owner.id))
    })
    throw e
  }
}

/**
 * Repository records for a list, with owners and the viewer's permissions, in a fixed number
 * of queries whatever the list's length.
 */
export async function reposToApi(deps: AppDeps, viewer: UserRow | null, rows: RepoRow[]): Promise<ApiRepo[]> {
  if (rows.length === 0) return []
  return resultCacheOf(deps.db).recordsOf(rows, viewer?.id ?? 0, async () => await makeRepoRecords(deps, viewer, rows))
}

async function makeRepoRecords(deps: AppDeps, viewer: UserRow | null, rows: RepoRow[]): Promise<ApiRepo[]> {
  // The forks' parents come along in the same queries: one read of them, then one of all owners
  // and one of the viewer's access to all (a parent the viewer may not read shows as null).
  const parentIds = [...new Set(rows.filter((r) => r.isFork && r.forkId).map((r) => r.forkId))]
  const parents = parentIds.length
    ? await deps.db.select().from(repositories).where(and(inArray(repositories.id, parentIds), eq(repositories.status, 'ready')))
    : []
  const all = [...rows, ...parents]
  const owners = await usersByIds(deps, [...new Set(all.map((r) => r.ownerId))])
  const modes = await accessLevels(deps.db, viewer, all, [...owners.values()])
  // One User record per owner, shared by that owner's repositories.
  const ownerRecord = userConverter(deps.config, viewer)
  const record = (r: RepoRow, parent: ApiRepo['parent']) => {
    const owner = owners.get(r.ownerId)!
    return repoRecord(deps.config, r, owner.name, ownerRecord(owner), modes.get(r.id) ?? 0, parent)
  }
  const parentRecords = new Map<number, ApiRepo['parent']>()
  for (const p of parents) if ((modes.get(p.id) ?? 0) >= AccessMode.Read) parentRecords.set(p.id, record(p, null) as ApiRepo['parent'])
  return rows.map((r) => record(r, (r.isFork && parentRecords.get(r.forkId)) || null))
}

/**
 * One Repository record, for a viewer whose access `mode` is already known (a route's
 * RepoContext); a fork's parent is looked up as reposToApi does.
 */
export async function repoToApi(deps: AppDeps, repo: RepoRow, owner: UserRow, viewer: UserRow | null, mode: AccessMode): Promise<ApiRepo> {
  if (!repo.isFork || !repo.forkId) return toApiRepo(deps.config, repo, owner, viewer, mode)
  return (await reposToApi(deps, viewer, [repo]))[0]!
}

// ---- edit and delete ---------------------------------------------------------------------

/** EditRepoOption (absent = unchanged). */
export interface RepoEdit {
  name?: string
  description?: string
  website?: string
  private?: boolean
  defaultBranch?: string
  hasIssues?: boolean
  hasWiki?: boolean
  hasPullRequests?: boolean
  archived?: boolean
  ignoreWhitespaceConflicts?: boolean
  allowMergeCommits?: boolean
  allowRebase?: boolean
  allowRebaseExplicit?: boolean
  allowSquashMerge?: boolean
  internalTracker?: { enableTimeTracker?: boolean; allowOnlyContributorsToTrackTime?: boolean }
}

/**
 * Applies an EditRepoOption. `mode` is the caller's access (admin needed; archiving: owner).
 * Everything is validated before anything changes. A rename moves the git folder first and
 * moves it back when the database update fails.
 */
export async function editRepository(
  deps: AppDeps,
  repo: RepoRow,
  owner: UserRow,
  mode: AccessMode,
  edit: RepoEdit,
  actor: UserRow | null = null,
): Promise<RepoRow> {
  if (mode < AccessMode.Admin) throw forbidden('You do not have the permission needed for this repository')
  if (edit.archived !== undefined && edit.archived !== repo.isArchived && mode < AccessMode.Owner)
    throw forbidden('Only the repository owner may archive or unarchive it')
  const set: Partial<RepoRow> = {}
  const newName = edit.name !== undefined && edit.name !== repo.name ? edit.name : undefined
  if (newName !== undefined) {
    checkRepoName(newName)
    if (newName.toLowerCase() !== repo.lowerName) {
      const taken = (await deps.db
        .select({ id: repositories.id })
        .from(repositories)
        .where(and(eq(repositories.ownerId, repo.ownerId), eq(repositories.lowerName, newName.toLowerCase()))))[0]
      if (taken) throw unprocessable(`The repository with the same name already exists. [name: ${newName}]`, 'Name')
    }
    set.name = newName
    set.lowerName = newName.toLowerCase()
  }
  if (edit.description !== undefined) {
    if (charCount(edit.description) > 255) throw unprocessable('must be less than 255 characters', 'Description')
    set.description = edit.description
  }
  if (edit.website !== undefined) {
    checkWebsite(edit.website)
    set.website = edit.website
  }
  const gitDir = pathOfRepo(deps, owner.name, repo)
  if (edit.defaultBranch !== undefined && edit.defaultBranch !== repo.defaultBranch) {
    if (!isSafeRefName(edit.defaultBranch)) throw unprocessable('invalid branch name', 'DefaultBranch')
    if (!repo.isEmpty && !(await branchExists(gitRepoAt(deps, gitDir), edit.defaultBranch)))
      throw unprocessable(`branch does not exist [name: ${edit.defaultBranch}]`, 'DefaultBranch')
    set.defaultBranch = edit.defaultBranch
  }
  const flags: [keyof RepoEdit, keyof RepoRow][] = [
    ['private', 'isPrivate'],
    ['hasIssues', 'hasIssues'],
    ['hasWiki', 'hasWiki'],
    ['hasPullRequests', 'hasPullRequests'],
    ['archived', 'isArchived'],
    ['ignoreWhitespaceConflicts', 'ignoreWhitespaceConflicts'],
    ['allowMergeCommits', 'allowMergeCommits'],
    ['allowRebase', 'allowRebase'],
    ['allowRebaseExplicit', 'allowRebaseExplicit'],
    ['allowSquashMerge', 'allowSquashMerge'],
  ]
  await checkForkVisibility(deps, repo, edit.private)
  for (const [from, to] of flags) if (edit[from] !== undefined) (set as any)[to] = edit[from]
  if (edit.internalTracker?.enableTimeTracker !== undefined) set.enableTimeTracker = edit.internalTracker.enableTimeTracker
  if (edit.internalTracker?.allowOnlyContributorsToTrackTime !== undefined)
    set.allowOnlyContributorsToTrackTime = edit.internalTracker.allowOnlyContributorsToTrackTime
  if (Object.keys(set).length === 0) return repo
  set.updatedUnix = nowUnix()

  const newPath = set.name !== undefined ? pathOfRepo(deps, owner.name, { name: set.name }) : gitDir
  // A folder already missing (see repairRepositories) is not an error: the row still changes.
  const moved = newPath !== gitDir && existsSync(gitDir)
  if (moved) {
    if (existsSync(newPath)) throw conflict(`a repository folder already exists for [name: ${set.name}]`)
    renameSync(gitDir, newPath)
  }
  let updated: RepoRow
  try {
    updated = await writeTransaction(deps.db, async () => {
      if (set.lowerName !== undefined && set.lowerName !== repo.lowerName) {
        const taken = (await deps.db
          .select({ id: repositories.id })
          .from(repositories)
          .where(and(eq(repositories.ownerId, repo.ownerId), eq(repositories.lowerName, set.lowerName))))[0]
        if (taken) throw unprocessable(`The repository with the same name already exists. [name: ${set.name}]`, 'Name')
        // The old name keeps redirecting here (Gitea's repo_redirect); the new one stops redirecting elsewhere.
        await dropRedirect(deps, repo.ownerId, set.lowerName)
        await deps.db.insert(repoRedirects).values({ ownerId: repo.ownerId, lowerName: repo.lowerName, repoId: repo.id })
      }
      if (set.name !== undefined)
        await recordEvent(deps.db, { kind: 'repo.renamed', repoId: repo.id, actorId: actor?.id ?? null, payload: { owner: owner.name, from: repo.name, to: set.name } })
      return (await deps.db.update(repositories).set(set).where(eq(repositories.id, repo.id)).returning())[0]!
    })
  } catch (e) {
    if (moved) renameSync(newPath, gitDir)
    throw e
  }
  if (set.defaultBranch !== undefined && existsSync(newPath))
    await setHeadBranch(gitRepoAt(deps, newPath), set.defaultBranch)
  return updated
}

/** A repository row as events keep it (every column; the owner's name is among them). */
export const repoSnapshot = (row: RepoRow): Record<string, unknown> => ({ ...row })

/** A name taken by a repository of its own no longer redirects to a renamed one (inside a write transaction). */
async function dropRedirect(deps: AppDeps, ownerId: number, lowerName: string): Promise<void> {
  await deps.db.delete(repoRedirects).where(and(eq(repoRedirects.ownerId, ownerId), eq(repoRedirects.lowerName, lowerName)))
}

/**
 * Deletes a repository (repository admins: owning user, site admin, owners and admin teams of
 * the owning organisation, admin collaborators; the issue's rule, wider than Gitea's owner-only
 * API): the row first (its dependants cascade) and the owner's counter, then the folder (a
 * folder already missing is fine) and its release assets' files. A crash in between leaves a
 * folder without a row, which the startup checks move aside (repairRepositories) or remove
 * (repairAttachments).
 */
export async function deleteRepository(deps: AppDeps, repo: RepoRow, owner: UserRow, mode: AccessMode, actor: UserRow | null = null): Promise<void> {
  if (mode < AccessMode.Admin) throw forbidden('Only repository administrators may delete it')
  await writeTransaction(deps.db, async () => {
    // Read again inside the transaction: a concurrent delete may have taken it since the request
    // loaded it (then this one is a 404, and no counter moves twice). The event keeps it as it was.
    const current = (await deps.db.select().from(repositories).where(eq(repositories.id, repo.id)))[0]
    if (!current) throw notFound()
    await recordEvent(deps.db, { kind: 'repo.deleted', repoId: repo.id, actorId: actor?.id ?? null, payload: { repository: repoSnapshot(current) } })
    // The teams given this repository lose it with the row (team_repos cascade): keep their counters right.
    const givenTo = deps.db.select({ id: teamRepos.teamId }).from(teamRepos).where(eq(teamRepos.repoId, repo.id))
    await deps.db.update(teams).set({ numRepos: greatestOf(sql`${teams.numRepos} - 1`, 0) }).where(inArray(teams.id, givenTo))
    // Its stars go with it (cascade): the starrers' counters first.
    const starrers = deps.db.select({ id: stars.userId }).from(stars).where(eq(stars.repoId, repo.id))
    await deps.db.update(users).set({ numStars: greatestOf(sql`${users.numStars} - 1`, 0) }).where(inArray(users.id, starrers))
    // A fork leaves its parent's count; the forks of this one become plain repositories (as in
    // Gitea). Their git folders need nothing: a fork shares no file it depends on (cloneBareRepository).
    if (current.isFork && current.forkId)
      await deps.db.update(repositories).set({ numForks: greatestOf(sql`${repositories.numForks} - 1`, 0) }).where(eq(repositories.id, current.forkId))
    await deps.db.update(repositories).set({ isFork: false, forkId: 0 }).where(eq(repositories.forkId, repo.id))
    await deps.db.delete(repositories).where(eq(repositories.id, repo.id))
    await deps.db.update(users).set({ numRepos: greatestOf(sql`${users.numRepos} - 1`, 0) }).where(eq(users.id, repo.ownerId))
  })
  removeRepositoryFolder(pathOfRepo(deps, owner.name, repo))
  removeRepositoryAttachments(deps, repo.id)
}

// ---- lookups and lists -------------------------------------------------------------------

type Db = AppDeps['db']
const repoOrder = [asc(repositories.lowerName), asc(repositories.ownerName), asc(repositories.id)]
const prepareRepoPage = (db: Db, where: SQL | undefined) => {
  const cond = and(eq(repositories.status, 'ready'), where)!
  // The page's ids come from the covering index alone; only those 50 rows are then read whole.
  const pageIds = db
    .select({ id: repositories.id })
    .from(repositories)
    .where(cond)
    .orderBy(...repoOrder)
    .limit(sql.placeholder('limit'))
    .offset(sql.placeholder('offset'))
  return {
    count: db.select({ n: count() }).from(repositories).where(cond).prepare(),
    page: db.select().from(repositories).where(inArray(repositories.id, pageIds)).orderBy(...repoOrder).prepare(),
  }
}
const repoPageStatements = new WeakMap<Db, Map<string, ReturnType<typeof prepareRepoPage>>>()

const repoRows = rowMapper<RepoRow>(repositories)

/** Placeholders the list conditions are written with, so that each shape of list is prepared once. */
const VIEWER = sql.placeholder('viewer')
const OWNER = sql.placeholder('owner')
const PATTERN = sql.placeholder('pattern')
/** A stand-in viewer whose id is the `viewer` placeholder (for readableRepoCondition). */
const viewerStandIn = (viewer: UserRow | null) => (viewer ? { ...viewer, id: VIEWER as unknown as number } : null)
/** The shape a viewer's lists take: a public-only viewer's are an anonymous one's (visibility.ts). */
const viewerKind = (viewer: UserRow | null) => (viewer && !viewer.publicOnly ? (viewer.isAdmin ? 'admin' : 'user') : 'anon')

/**
 * One page of ready repositories, sorted by name (then owner), with the total: one COUNT and one
 * page query, both prepared once per `shape` (`where()` builds the condition with placeholders
 * whose values are in `params`).
 */
async function pageOfRepos(deps: AppDeps, shape: string, where: () => SQL | undefined, params: Record<string, unknown>, page: Page): Promise<{ rows: RepoRow[]; total: number }> {
  const results = resultCacheOf(deps.db)
  const key = `${shape}|${JSON.stringify(params)}|${page.limit}|${page.offset}`
  const cached = results.get(key)
  if (cached) return cached
  let cache = repoPageStatements.get(deps.db)
  if (!cache) repoPageStatements.set(deps.db, (cache = new Map()))
  let statements = cache.get(shape)
  if (!statements) cache.set(shape, (statements = prepareRepoPage(deps.db, where())))
  const total = (await statements.count.execute(params))[0]!.n
  const rows = total > page.offset ? (await valueRows(statements.page, { ...params, limit: page.limit, offset: page.offset })).map((v) => repoRows.map(v)) : []
  results.set(key, { rows, total })
  return { rows, total }
}

/** At most this many repository rows are kept in a RepoPageCache (a few MiB at most). */
export const REPO_PAGE_CACHE_ROWS = 4000

/**
 * Pages of repositories already computed, valid while the database is unchanged: SQLite's
 * `data_version` moves when another connection commits, `total_changes()` when this one writes
 * anything. Any write empties the cache, so an answer is never older than the last write; the
 * answers that depend on the viewer's permissions (collaborations, teams, organisation
 * membership, visibility, admin flag) only change through such writes, and the viewer is part
 * of every key. Memory is bounded by the number of rows held (oldest pages leave first).
 * The Repository records made from a page it gave out are kept with that page (recordsOf),
 * under the same rule.
 */
export class RepoPageCache {
  private version = ''
  private rows = 0
  private readonly entries = new Map<string, { rows: RepoRow[]; total: number }>()
  /** Records made from the pages given out since the last write: page rows → viewer id → records. */
  private records = new WeakMap<RepoRow[], Map<number, Promise<ApiRepo[]>>>()
  private readonly changeMark
  constructor(
    db: Db,
    private readonly maxRows = REPO_PAGE_CACHE_ROWS,
  ) {
    this.changeMark = changeMarkOf(db)
  }
  private fresh(): void {
    const version = this.changeMark()
    if (version !== this.version) {
      this.entries.clear()
      this.records = new WeakMap()
      this.rows = 0
      this.version = version
    }
  }
  get(key: string) {
    this.fresh()
    return this.entries.get(key)
  }
  set(key: string, value: { rows: RepoRow[]; total: number }) {
    // One row's worth for an empty page, so that many empty answers are bounded too.
    const cost = Math.max(1, value.rows.length)
    if (cost > this.maxRows) return
    const old = this.entries.get(key)
    if (old) {
      this.entries.delete(key)
      this.rows -= Math.max(1, old.rows.length)
    }
    for (const [k, e] of this.entries) {
      if (this.rows + cost <= this.maxRows) break
      this.entries.delete(k)
      this.rows -= Math.max(1, e.rows.length)
    }
    this.entries.set(key, value)
    this.records.set(value.rows, new Map())
    this.rows += cost
  }
  /**
   * The records `make()` gives for `rows` as viewer `viewerId` (0: anonymous), made once while
   * the database is unchanged when `rows` is a page this cache gave out; made afresh otherwise.
   */
  recordsOf(rows: RepoRow[], viewerId: number, make: () => Promise<ApiRepo[]>): Promise<ApiRepo[]> {
    this.fresh()
    const byViewer = this.records.get(rows)
    if (!byViewer) return make()
    let records = byViewer.get(viewerId)
    if (!records) {
      const made = make()
      byViewer.set(viewerId, (records = made))
      made.catch(() => byViewer.get(viewerId) === made && byViewer.delete(viewerId))
    }
    return records
  }
  /** Rows held now (for tests). */
  get size() {
    return this.rows
  }
}
const repoPageCaches = new WeakMap<Db, RepoPageCache>()
export function resultCacheOf(db: Db): RepoPageCache {
  let cache = repoPageCaches.get(db)
  if (!cache) repoPageCaches.set(db, (cache = new RepoPageCache(db)))
  return cache
}

/**
 * The caller's own repositories plus those shared with them (collaborations, teams), of those
 * the visibility rule shows them (all of them, but to a public-only token).
 */
export async function listCallerRepos(deps: AppDeps, user: UserRow, page: Page) {
  return await pageOfRepos(
    deps,
    user.publicOnly ? 'caller:public' : 'caller',
    () => and(or(eq(repositories.ownerId, VIEWER), grantedRepoCondition(VIEWER)), user.publicOnly ? readableRepoCondition(user) : undefined)!,
    { viewer: user.id },
    page,
  )
}

/** Repositories owned by a user or organisation that `viewer` may read. */
export async function listOwnedRepos(deps: AppDeps, viewer: UserRow | null, owner: UserRow, page: Page) {
  return await pageOfRepos(
    deps,
    `owned:${viewerKind(viewer)}`,
    () => and(eq(repositories.ownerId, OWNER), readableRepoCondition(viewerStandIn(viewer))),
    { owner: owner.id, viewer: viewer?.id ?? 0 },
    page,
  )
}

/**
 * A page of the ready repositories matching `where` that the viewer may read, by name (lists
 * whose condition has no prepared shape here, such as a team's repositories).
 */
export async function listReadableRepos(deps: AppDeps, viewer: UserRow | null, where: SQL, page: Page): Promise<Paged<RepoRow>> {
  const cond = and(where, eq(repositories.status, 'ready'), readableRepoCondition(viewer))
  const total = (await deps.db.select({ n: count() }).from(repositories).where(cond))[0]!.n
  const rows = await deps.db.select().from(repositories).where(cond).orderBy(...repoOrder).limit(page.limit).offset(page.offset)
  return { rows, total }
}

export interface RepoSearch {
  q?: string
  uid?: number
  exclusive?: boolean
  mode?: string
}


/**
 * GET /repos/search: name substring (case-insensitive), owner/collaborator `uid`, mode filters;
 * only repositories the viewer may read; sorted by name.
 */
export async function searchRepositories(deps: AppDeps, viewer: UserRow | null, opts: RepoSearch, page: Page) {
  const mode = opts.mode ?? ''
  if (mode !== '' && !(SEARCH_MODES as readonly string[]).includes(mode)) throw unprocessable(`Invalid search mode: "${mode}"`)
  const q = (opts.q ?? '').trim().toLowerCase()
  const uid = opts.uid !== undefined && opts.uid > 0 ? Math.floor(opts.uid) : 0
  const uidFilter = !uid ? 'none' : mode === 'collaborative' ? 'collaborating' : opts.exclusive ? 'owned' : 'either'
  const where = () => {
    const conds: SQL[] = []
    // Both sides lower-cased: the same on either database, whatever its LIKE does with case.
    if (q) conds.push(sql`${repositories.lowerName} LIKE ${PATTERN} ESCAPE '\\'`)
    if (mode === 'source') conds.push(eq(repositories.isFork, false), eq(repositories.isMirror, false))
    if (mode === 'fork') conds.push(eq(repositories.isFork, true))
    if (mode === 'mirror') conds.push(eq(repositories.isMirror, true))
    if (mode === 'collaborative') conds.push(eq(repositories.isMirror, false))
    const collaborating = () => and(grantedRepoCondition(OWNER), ne(repositories.ownerId, OWNER))!
    if (uidFilter === 'collaborating') conds.push(collaborating())
    if (uidFilter === 'owned') conds.push(eq(repositories.ownerId, OWNER))
    if (uidFilter === 'either') conds.push(or(eq(repositories.ownerId, OWNER), collaborating())!)
    return and(...conds, readableRepoCondition(viewerStandIn(viewer)))
  }
  return await pageOfRepos(
    deps,
    `search:${viewerKind(viewer)}:${q ? 'q' : ''}:${mode}:${uidFilter}`,
    where,
    { viewer: viewer?.id ?? 0, owner: uid, pattern: containsPattern(q) },
    page,
  )
}

// ---- startup repair ----------------------------------------------------------------------

/**
 * Repairs what a crash can leave behind (run at start-up, before serving): rows still
 * 'creating' are deleted with their folders; git folders under {data}/repositories that no row
 * accounts for are reported and moved aside to {data}/repositories/.orphaned/ (never deleted);
 * ready rows whose folder is missing (a crash in the middle of a rename, or outside damage) are
 * reported, so that an administrator can put the folder back from .orphaned/; what killed git
 * processes left in repositories (src/git/leftovers.ts) is removed.
 */
export async function repairRepositories(deps: AppDeps): Promise<{ removedRows: number; orphaned: string[]; missing: string[]; leftovers: string[] }> {
  const state = await repositoryFolders(deps)
  const log = loggerOf(deps.config)
  for (const row of state.unfinished) {
    removeRepositoryFolder(pathOfRepo(deps, row.ownerName, row))
    await writeTransaction(deps.db, async () => {
      await deps.db.delete(repositories).where(eq(repositories.id, row.id))
      await deps.db.update(users).set({ numRepos: greatestOf(sql`${users.numRepos} - 1`, 0) }).where(eq(users.id, row.ownerId))
    })
    log.warn('removed an unfinished repository', { repo: `${row.ownerName}/${row.name}` })
  }
  for (const r of state.missing) log.warn('a repository has no git folder', { repo: `${r.ownerName}/${r.name}`, expected: r.path })
  // Nothing runs yet: what a killed git left behind (a push's quarantine, half-written packs) goes.
  const leftovers = state.present.flatMap((path) => removeGitLeftovers(path))
  if (leftovers.length) log.warn('removed temporary git objects left by interrupted git processes', { count: leftovers.length })
  const root = join(deps.config.dataDir, 'repositories')
  const aside = join(root, '.orphaned')
  for (const name of state.unaccounted) {
    let target = join(aside, name)
    if (existsSync(target)) target = `${target}.${Date.now()}`
    mkdirSync(dirname(target), { recursive: true })
    renameSync(join(root, name), target)
    log.warn('a git folder has no repository; moved aside', { folder: name, to: target })
  }
  return { removedRows: state.unfinished.length, orphaned: state.unaccounted, missing: state.missing.map((r) => `${r.ownerName}/${r.name}`), leftovers }
}

/**
 * The repository folders against the rows, read only (repairRepositories acts on it; `warren
 * doctor` reports it): rows still 'creating', ready rows whose folder is missing, the folders
 * of rows that have one, and folders under repositories/ no row accounts for (`owner/name.git`).
 */
export async function repositoryFolders(deps: AppDeps) {
  const unfinished = await deps.db.select().from(repositories).where(eq(repositories.status, 'creating'))
  const rows = await deps.db.select({ ownerName: repositories.ownerName, name: repositories.name, status: repositories.status }).from(repositories)
  const known = new Set<string>()
  const missing: { ownerName: string; name: string; path: string }[] = []
  const present: string[] = []
  for (const r of rows) {
    const path = pathOfRepo(deps, r.ownerName, r)
    known.add(path)
    if (existsSync(path)) present.push(path)
    else if (r.status !== 'creating') missing.push({ ownerName: r.ownerName, name: r.name, path })
  }
  const root = join(deps.config.dataDir, 'repositories')
  const unaccounted: string[] = []
  if (existsSync(root))
    for (const ownerDir of readdirSync(root, { withFileTypes: true })) {
      if (!ownerDir.isDirectory() || ownerDir.name === '.orphaned') continue
      for (const entry of readdirSync(join(root, ownerDir.name), { withFileTypes: true })) {
        const path = join(root, ownerDir.name, entry.name)
        if (!entry.isDirectory() || known.has(path)) continue
        if (entry.name.endsWith('.wiki.git') && known.has(path.replace(/\.wiki\.git$/, '.git'))) continue
        unaccounted.push(`${ownerDir.name}/${entry.name}`)
      }
    }
  return { unfinished, missing, present, unaccounted }
}
