import { and, eq, inArray, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { repositories, users } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { accessLevels, type RepoRow } from '../../auth/access'
import { toApiRepo } from '../../lib/convert/repo'
import { conflict, unprocessable } from '../../lib/errors'
import { nowUnix } from '../../lib/time'
import { charCount } from '../../lib/validate'
import { initBareRepository, removeRepositoryFolder } from '../../git/init'
import { repoPath } from '../../git/run'

export interface NewRepo {
  name: string
  description?: string
  private?: boolean
  autoInit?: boolean
  gitignores?: string
  license?: string
  readme?: string
  defaultBranch?: string
}

const REPO_NAME = /^[A-Za-z0-9_.-]+$/
const BRANCH_NAME = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*@\{)(?!.*\.lock$)(?!\/)(?!.*\/$)[^\x00-\x20~^:?*[\\\x7f]+$/

/** Repository names: AlphaDashDot, at most 100, not `.`/`..`, not ending in `.git`/`.wiki`. */
export function checkRepoName(name: string): void {
  if (!name) throw unprocessable('Required', 'Name')
  if (!REPO_NAME.test(name)) throw unprocessable('must be valid alpha or numeric or dash(-_) or dot characters', 'Name')
  if (charCount(name) > 100) throw unprocessable('must be less than 100 characters', 'Name')
  const lower = name.toLowerCase()
  if (lower === '.' || lower === '..' || lower.endsWith('.git') || lower.endsWith('.wiki'))
    throw unprocessable(`repository name is reserved [name: ${name}]`, 'Name')
}

/** A branch name git itself would accept (git check-ref-format rules), never starting with '-'. */
export function isValidBranchName(name: string): boolean {
  return name.length > 0 && name.length <= 255 && BRANCH_NAME.test(name)
}

/** Where a repository row's git folder lives. */
export const pathOfRepo = (deps: AppDeps, ownerName: string, repo: Pick<RepoRow, 'name'>) =>
  repoPath(deps.config.dataDir, ownerName, repo.name)

/**
 * Creates a repository for `owner` (a user or organisation; permission checks are the caller's).
 * Order, so that a crash leaves only what the startup check repairs: the row is inserted with
 * status 'creating', then the git folder is made (and the first commit when auto_init), then the
 * row becomes 'ready'. A failure in between removes both.
 */
export async function createRepository(deps: AppDeps, owner: UserRow, opts: NewRepo): Promise<RepoRow> {
  checkRepoName(opts.name)
  if (opts.description !== undefined && charCount(opts.description) > 255)
    throw unprocessable('must be less than 255 characters', 'Description')
  const defaultBranch = opts.defaultBranch || 'master'
  if (!isValidBranchName(defaultBranch)) throw unprocessable('invalid branch name', 'DefaultBranch')
  const now = nowUnix()
  const row = writeTransaction(deps.db, () => {
    const existing = deps.db
      .select({ id: repositories.id })
      .from(repositories)
      .where(and(eq(repositories.ownerId, owner.id), eq(repositories.lowerName, opts.name.toLowerCase())))
      .get()
    if (existing) throw conflict(`The repository with the same name already exists. [name: ${opts.name}]`)
    const inserted = deps.db
      .insert(repositories)
      .values({
        ownerId: owner.id,
        ownerName: owner.name,
        name: opts.name,
        lowerName: opts.name.toLowerCase(),
        description: opts.description ?? '',
        isPrivate: opts.private ?? false,
        defaultBranch,
        status: 'creating',
        createdUnix: now,
        updatedUnix: now,
      })
      .returning()
      .get()
    deps.db.update(users).set({ numRepos: sql`${users.numRepos} + 1` }).where(eq(users.id, owner.id)).run()
    return inserted
  })
  const path = pathOfRepo(deps, owner.name, row)
  try {
    await initBareRepository(path, defaultBranch)
    const [ready] = deps.db
      .update(repositories)
      .set({ status: 'ready' })
      .where(eq(repositories.id, row.id))
      .returning()
      .all()
    return ready!
  } catch (e) {
    removeRepositoryFolder(path)
    writeTransaction(deps.db, () => {
      deps.db.delete(repositories).where(eq(repositories.id, row.id)).run()
      deps.db.update(users).set({ numRepos: sql`${users.numRepos} - 1` }).where(eq(users.id, owner.id)).run()
    })
    throw e
  }
}

/**
 * Repository records for a list, with owners and the viewer's permissions, in a fixed number
 * of queries whatever the list's length.
 */
export function reposToApi(deps: AppDeps, viewer: UserRow | null, rows: RepoRow[]) {
  if (rows.length === 0) return []
  const ownerIds = [...new Set(rows.map((r) => r.ownerId))]
  const owners = new Map(deps.db.select().from(users).where(inArray(users.id, ownerIds)).all().map((u) => [u.id, u]))
  const modes = accessLevels(deps.db, viewer, rows)
  return rows.map((r) => toApiRepo(deps.config, r, owners.get(r.ownerId)!, viewer, modes.get(r.id) ?? 0))
}
