import { rm } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { and, eq, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { labels, repoGitStates, repositories, users, type RepoRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { gitLimitsOf } from '../../auth/repo-context'
import { gitIdentityOf } from '../../convert/user'
import { conflict, notFound, unprocessable } from '../../lib/errors'
import { nowUnix } from '../../lib/time'
import { ALPHA_DASH_DOT, charCount } from '../../lib/validate'
import { initBareRepository, objectFormatOf } from '../../git/init'
import { wikiPathOf, type GitRepo } from '../../git/run'
import { readBranchAndTagRefs, refsFingerprint } from '../../git/ref-state'
import { repositorySize } from '../../git/refs'
import { isSafeRefName } from '../../git/ref-name'
import { writeInitialCommit, type InitialFile } from '../../git/initial-commit'
import { recordEvent } from '../../events/outbox'
import { changeMarkRow } from '../stars/service'
import { dropRedirect, gitRepoAt, pathOfRepo, repoSnapshot } from './service'
import { findTemplate, repoTemplates } from './template-names'
import { copyDefaultHooks } from '../hooks/service'
import { labelRowsOf, labelTemplateSet } from '../labels/service'

export interface NewRepo {
  name: string
  description?: string
  private?: boolean
  autoInit?: boolean
  gitignores?: string
  license?: string
  readme?: string
  /** A label set (Gitea's label templates: Default, Advanced) the repository starts with. */
  issueLabels?: string
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

/** Repository names: AlphaDashDot, at most 100, not `.`/`..`, not ending in `.git`/`.wiki`. */
export function checkRepoName(name: string): void {
  if (!name) throw unprocessable('Required', 'Name')
  if (!ALPHA_DASH_DOT.test(name)) throw unprocessable('must be valid alpha or numeric or dash(-_) or dot characters', 'Name')
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

/** A CreateRepoOption body (POST /user/repos, /org/{org}/repos, /admin/users/{u}/repos) as a NewRepo. */
export function newRepoFromOption(body: {
  name: string
  description?: string
  private?: boolean
  auto_init?: boolean
  gitignores?: string
  license?: string
  readme?: string
  issue_labels?: string
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
    issueLabels: body.issue_labels,
    defaultBranch: body.default_branch,
  }
}

/** The license text with its year and copyright-holder placeholders filled in. */
function fillLicense(text: string, year: number, holder: string): string {
  return text
    .replace(/<year>|\[yyyy\]|\[year\]/g, String(year))
    .replace(/<owner>|<copyright holders>|\[name of copyright owner\]|<name of author>|\[fullname\]/g, holder)
}

/**
 * The files of an auto_init first commit (README, .gitignore, LICENSE), or 422 for an unknown
 * template name. Checked before anything is created. The templates (some 140 KB of text) are
 * imported by the first creation that asks for them, not when the server starts.
 */
async function initialFiles(owner: UserRow, opts: NewRepo, now: number): Promise<InitialFile[]> {
  const { GITIGNORE_TEMPLATES, LICENSE_TEMPLATES, README_TEMPLATES } = await repoTemplates()
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


/** Name and e-mail git records for a user's commits (convert/user.ts gitIdentityOf), at `when`. */
const signatureOf = (deps: AppDeps, user: UserRow, when: number) => ({ ...gitIdentityOf(deps.config, user), when })

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
  const defaultBranch = opts.defaultBranch || deps.config.defaultBranch
  if (!isSafeRefName(defaultBranch)) throw unprocessable('invalid branch name', 'DefaultBranch')
  const now = nowUnix()
  const files = opts.autoInit ? await initialFiles(owner, opts, now) : []
  const labelSet = await labelTemplateSet(opts.issueLabels)
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
        if (labelSet.length)
          await deps.db.insert(labels).values(labelRowsOf(labelSet, { repoId: row.id }, now))
        await recordEvent(deps.db, { kind: 'repo.created', repoId: row.id, actorId: actor.id, payload: { repository: repoSnapshot(row) } })
      },
    },
  )
}

/** The columns a new repository row starts with (the owner's and the times aside). */
export type NewRepoRow = Pick<typeof repositories.$inferInsert, 'name' | 'description' | 'isPrivate' | 'defaultBranch' | 'isFork' | 'forkId'>

/** How buildRepository makes one kind of repository. */
export interface RepoBuild {
  /**
   * The git folder is already there (an adoption, repos/adopt.ts): the row is 'adopting' until
   * ready, `make` reads the folder instead of making it, and neither a failure nor the start-up
   * repair of an unfinished row ever removes it.
   */
  existing?: boolean
  /** Refusals of this kind, inside the transaction that inserts the row (before the name check). */
  check?: () => Promise<void> | void
  /** Makes the git folder at `path` (which does not exist, unless `existing`); answers the columns the ready row gets. */
  make: (path: string) => Promise<Partial<RepoRow>>
  /**
   * The folder's branches and tags are the repository's starting point, recorded with the ready
   * row (a fork's, an adoption's: no push events for what was there). They are read once `make`
   * is done, so after any move of HEAD it makes (the fingerprint covers HEAD), the fingerprint
   * first, as push/sync.ts takes it (a change in between shows at the next sync). The row is
   * empty when there are none, unless `make` answers `isEmpty` itself.
   */
  recordRefs?: boolean
  /** Inside the transaction that makes the row ready (the row as it is then): events, counters. */
  ready: (row: RepoRow) => Promise<void> | void
}

/**
 * Makes a repository for `owner` (the name is checked here; other values by the caller). Order,
 * so that a crash leaves only what the startup check repairs: the row is inserted with status
 * 'creating' (with the owner's counter), then the git folder is made, then the row becomes 'ready'
 * in one transaction with the site's default hooks copied (every kind of repository gets them, as
 * Gitea's CreateRepositoryByExample gives them) and `build.ready`'s writes. A failure in between
 * removes both.
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
      .values({ ...values, ownerId: owner.id, ownerName: owner.name, lowerName: values.name.toLowerCase(), status: build.existing ? 'adopting' : 'creating', createdUnix: now, updatedUnix: now })
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
  let hadWiki = false
  try {
    // A folder no row accounts for (a crash's leftover) is neither adopted nor removed here;
    // an adoption's folder must still be there (moved aside or removed meanwhile: 404).
    if (build.existing && !existsSync(path)) throw notFound(`no unadopted repository files [name: ${values.name}]`)
    if (!build.existing && existsSync(path)) throw conflict(`repository files already exist [name: ${values.name}]`)
    // A wiki folder there before (left beside no repository) is not this creation's to remove on failure.
    hadWiki = existsSync(wikiPathOf(path))
    made = !build.existing
    const columns = await build.make(path)
    const git = gitRepoAt(deps, path)
    const start = build.recordRefs ? { fingerprint: await refsFingerprint(path), refs: (await readBranchAndTagRefs(git)) ?? {} } : undefined
    const done: Partial<RepoRow> = {
      ...(start && { isEmpty: Object.keys(start.refs).length === 0 }),
      ...columns,
      objectFormat: await objectFormatOf(git),
      status: 'ready',
    }
    return await writeTransaction(deps.db, async () => {
      const ready = (await deps.db.update(repositories).set(done).where(eq(repositories.id, row.id)).returning())[0]!
      if (start) await deps.db.insert(repoGitStates).values({ repoId: ready.id, refs: JSON.stringify(start.refs), fingerprint: start.fingerprint, updatedUnix: nowUnix() })
      await copyDefaultHooks(deps, ready.id)
      await build.ready(ready)
      return ready
    })
  } catch (e) {
    if (made) for (const folder of hadWiki ? [path] : [path, wikiPathOf(path)]) await rm(folder, { recursive: true, force: true })
    await writeTransaction(deps.db, async () => {
      await deps.db.delete(repositories).where(eq(repositories.id, row.id))
      await deps.db.update(users).set({ numRepos: sql`${users.numRepos} - 1` }).where(eq(users.id, owner.id))
    })
    throw e
  }
}
