import { randomUUID } from 'node:crypto'
import { existsSync, renameSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { gitDirOf, gitLimitsOf, type RepoContext } from '../../auth/repo-context'
import { gitIdentityOf } from '../../convert/user'
import { writeTransaction } from '../../db/client'
import { recordEvent } from '../../events/outbox'
import { countHistory, historyPage } from '../../git/commit-page'
import { readLog, type LogEntry } from '../../git/commit-log'
import { initBareRepository, removeRepositoryFolder } from '../../git/init'
import { lastCommitsIn } from '../../git/last-commit'
import { commitTree, identNow } from '../../git/merge'
import { objectInfo, readObject } from '../../git/objects'
import { setHeadBranch, soleBranch } from '../../git/refs'
import { swapRef } from '../../git/ref-swap'
import { wikiPathOf, ZERO_ID, type GitRepo } from '../../git/run'
import { entryAt, folderTree, treeEntries } from '../../git/tree'
import { TreeRefused, treeWithChanges, writeBlob, type TreeChange } from '../../git/tree-write'
import { badRequest, conflict, forbidden, notFound } from '../../lib/errors'
import { AccessMode } from '../../auth/access'
import { repositories } from '../../db/schema'
import { moveFolderWithRows } from '../repos/folder-move'
import { deletedFoldersOf } from '../repos/repair'
import { checkUnmoved } from '../repos/service'
import type { Page, Paged } from '../../lib/pagination'
import { nowUnix } from '../../lib/time'
import { tooLarge } from '../contents/commit-options'
import { cleanPath, gitPathToWebPath, queryUnescape, reservedSegment, titleToWebPath, webPathToGitPath, webPathToTitle } from './paths'

/**
 * A repository's wiki (Gitea's): the bare repository `{name}.wiki.git` beside the repository's
 * folder, made at its first page, one branch (the one its HEAD names: `main` for a wiki made
 * here, as Gitea 1.23 makes it), one markdown file per page at the root (./paths.ts maps titles
 * to file names). Pages are written with git plumbing (a blob, the tree in a temporary index, a
 * commit) and the branch moved by a compare-and-swap from the commit the checks read: two edits at
 * once never lose one; the one that finds the branch moved reads it again and retries, and after
 * a few such rounds answers 409. Each change is announced (`wiki.created`, `wiki.edited`,
 * `wiki.deleted`: Gitea's `wiki` webhook) once the branch has moved.
 */

/** Revisions per page of a page's history (Gitea's [git] COMMITS_RANGE_SIZE). */
export const REVISIONS_PER_PAGE = 50
/** How many times a write reads the branch again when another write moved it first. */
const WRITE_ROUNDS = 3

/** The wiki's git repository (its folder may not exist yet). */
export const wikiGitOf = (deps: AppDeps, ctx: Pick<RepoContext, 'repo' | 'owner' | 'signal'>): GitRepo => ({
  gitDir: wikiPathOf(gitDirOf(deps, ctx)),
  limits: gitLimitsOf(deps),
  signal: ctx.signal,
})

/** The commit the wiki's branch is at; null when there is no wiki or no page yet. */
async function wikiHead(git: GitRepo): Promise<string | null> {
  if (!existsSync(git.gitDir)) return null
  const head = await objectInfo(git, 'HEAD^{commit}')
  if (head?.type === 'commit') return head.oid
  // A wiki whose first push brought another branch than the one HEAD names (a `master`): HEAD
  // follows its only branch, as Gitea follows the wiki repository's own default branch.
  const only = await soleBranch(git)
  if (!only) return null
  await setHeadBranch({ ...git, signal: undefined }, only)
  const moved = await objectInfo(git, 'HEAD^{commit}')
  return moved?.type === 'commit' ? moved.oid : null
}

/** Whether the repository has a wiki: its branch has a commit (the cheap question: no page is listed or read). */
export async function wikiExists(deps: AppDeps, ctx: RepoContext): Promise<boolean> {
  return (await wikiHead(wikiGitOf(deps, ctx))) !== null
}

/** The commit of a readable wiki (404 when there is none, as Gitea answers). */
async function headOrNotFound(git: GitRepo): Promise<string> {
  const head = await wikiHead(git)
  if (!head) throw notFound('wiki does not exist')
  return head
}

/** The commits of `ids` (each once), by id. */
async function commitsById(git: GitRepo, ids: string[]): Promise<Map<string, LogEntry>> {
  const unique = [...new Set(ids)]
  if (unique.length === 0) return new Map()
  const entries = await readLog(git, ['--no-walk=unsorted'], { values: unique })
  return new Map(entries.map((e) => [e.id, e]))
}

/**
 * A page file, found as Gitea finds it: the file name of the web path, else its unescaped form,
 * each cleaned as Go's path.Clean (no `.`, `..` or empty segment reaches the batch reader; a path
 * climbing above the root names no page).
 */
async function pageFile(git: GitRepo, head: string, webPath: string): Promise<{ path: string; oid: string } | null> {
  const gitPath = webPathToGitPath(webPath)
  for (const path of new Set([cleanPath(gitPath), cleanPath(queryUnescape(gitPath) ?? gitPath)])) {
    if (path === null) continue
    const entry = await entryAt(git, head, path.split('/'))
    if (entry && (entry.kind === 'file' || entry.kind === 'executable')) return { path, oid: entry.oid }
  }
  return null
}

const NO_BYTES = new Uint8Array(0)

/** A blob's bytes, none when past WARREN_MAX_BLOB_SIZE (Gitea's API leaves such content out). */
async function bytesOf(deps: AppDeps, git: GitRepo, oid: string | undefined): Promise<Uint8Array> {
  if (oid === undefined) return NO_BYTES
  const blob = await readObject(git, oid, deps.config.maxBlobSize)
  return blob?.content ?? NO_BYTES
}

export interface WikiPageMeta {
  title: string
  webPath: string
  lastCommit: LogEntry | null
}

/** A page of the wiki's pages (the root's markdown files, in git's order) with their last commits. */
export async function listPages(deps: AppDeps, ctx: RepoContext, page: Page): Promise<Paged<WikiPageMeta>> {
  const git = wikiGitOf(deps, ctx)
  const head = await headOrNotFound(git)
  const root = await folderTree(git, head, [])
  const files = ((root ? await treeEntries(git, root) : null) ?? []).flatMap((e) => {
    const webPath = e.kind === 'file' ? gitPathToWebPath(e.path) : null
    return webPath === null ? [] : [{ name: e.path, webPath }]
  })
  const shown = files.slice(page.offset, page.offset + page.limit)
  const last = await lastCommitsIn(git, head, '', shown.map((f) => f.name))
  const commits = await commitsById(git, shown.map((f) => last.get(f.name) ?? head))
  const rows = shown.map((f) => ({ title: webPathToTitle(f.webPath), webPath: f.webPath, lastCommit: commits.get(last.get(f.name) ?? head) ?? null }))
  return { rows, total: files.length }
}

export interface WikiPageRead extends WikiPageMeta {
  /** The page's bytes, the sidebar's and the footer's: none when missing or past WARREN_MAX_BLOB_SIZE. */
  content: Uint8Array
  sidebar: Uint8Array
  footer: Uint8Array
  commitCount: number
}

/** A page with its content, the wiki's sidebar and footer, and how many commits changed it. */
export async function getPage(deps: AppDeps, ctx: RepoContext, webPath: string): Promise<WikiPageRead> {
  const git = wikiGitOf(deps, ctx)
  const head = await headOrNotFound(git)
  const file = await pageFile(git, head, webPath)
  if (!file) throw notFound(`wiki page does not exist [name: ${webPath.slice(0, 255)}]`)
  const [sidebar, footer] = await Promise.all(['_Sidebar', '_Footer'].map((name) => pageFile(git, head, name)))
  const history = { revisions: [head], paths: [file.path] }
  const [content, sidebarContent, footerContent, commitCount, [lastCommit = null]] = await Promise.all([
    bytesOf(deps, git, file.oid),
    bytesOf(deps, git, sidebar?.oid),
    bytesOf(deps, git, footer?.oid),
    countHistory(git, history),
    readLog(git, ['--max-count=1'], { values: history.revisions, paths: history.paths }),
  ])
  return { title: webPathToTitle(webPath), webPath, lastCommit, content, sidebar: sidebarContent, footer: footerContent, commitCount }
}

/** A page of a page's history (REVISIONS_PER_PAGE commits, newest first) and the number of its commits. */
export async function pageRevisions(deps: AppDeps, ctx: RepoContext, webPath: string, page: number): Promise<{ commits: LogEntry[]; count: number }> {
  const git = wikiGitOf(deps, ctx)
  const head = await headOrNotFound(git)
  const file = await pageFile(git, head, webPath || 'Home')
  if (!file) throw notFound(`wiki page does not exist [name: ${webPath.slice(0, 255)}]`)
  const filter = { revisions: [head], paths: [file.path] }
  const [count, commits] = await Promise.all([
    countHistory(git, filter),
    historyPage(git, filter, { skip: (page - 1) * REVISIONS_PER_PAGE, max: REVISIONS_PER_PAGE }, { files: false, maxFiles: 0, stats: false }),
  ])
  return { commits, count }
}

// ---- writes ---------------------------------------------------------------------------------

/**
 * Makes the wiki's bare repository when it has none: made under a temporary name beside it, then
 * renamed into place, so a crash never leaves a half-made wiki under the wiki's own name (a
 * leftover temporary folder is one no repository accounts for, which the sweep moves aside); a
 * wiki another request made meanwhile is kept. Only beside the repository's folder (`repoDir`):
 * when a rename or transfer has moved it (and its wiki) away since the request found the
 * repository, a wiki made at the old place would be no repository's, its pages answered as
 * written and lost: 409 instead.
 */
async function ensureWiki(git: GitRepo, repoDir: string, branch: string): Promise<void> {
  if (existsSync(git.gitDir)) return
  if (!existsSync(repoDir)) throw conflict('the repository is being moved or renamed; try again')
  const made = `${git.gitDir}.init-${randomUUID()}`
  await initBareRepository(made, branch, git.limits)
  try {
    renameSync(made, git.gitDir)
  } catch (e) {
    removeRepositoryFolder(made)
    if (!existsSync(git.gitDir)) throw e
  }
}

/**
 * The wiki of repository `git` for a git service over HTTP or SSH: made by a push when it has
 * none (as Gitea's InitWiki, on the site's default branch); null for a fetch of a wiki that does
 * not exist.
 */
export async function wikiForGit(deps: AppDeps, git: GitRepo, service: string): Promise<GitRepo | null> {
  const wiki = { ...git, gitDir: wikiPathOf(git.gitDir) }
  if (service === 'receive-pack') await ensureWiki(wiki, git.gitDir, deps.config.defaultBranch)
  else if (!existsSync(wiki.gitDir)) return null
  return wiki
}

/** 400 for a web path naming one of Gitea's own wiki pages. */
function checkNotReserved(webPath: string): void {
  const reserved = reservedSegment(webPath)
  if (reserved !== null) throw badRequest(`wiki title is reserved: ${reserved}`)
}

type WikiAction = 'created' | 'edited' | 'deleted'

/** What a write changes, decided from the commit the branch is at (null: the wiki has no page yet). */
type WikiPlan = (git: GitRepo, head: string | null) => Promise<TreeChange[]>

/**
 * Writes one change of the wiki as a commit by `doer` and moves the branch to it from the commit
 * `plan` read (retrying when another write moved it first); then records the change's event.
 */
async function writeWiki(deps: AppDeps, ctx: RepoContext, doer: UserRow, change: { action: WikiAction; webPath: string; message: string; plan: WikiPlan }): Promise<void> {
  // No request signal: once begun, a write runs to its end.
  const git = { ...wikiGitOf(deps, ctx), signal: undefined }
  // Only a new page makes the wiki: an edit or a delete of a wiki that has no page is 404 with no folder made.
  if (change.action === 'created') await ensureWiki(git, gitDirOf(deps, ctx), deps.config.defaultBranch)
  let head = await wikiHead(git)
  if (!head && change.action !== 'created') throw notFound('wiki does not exist')
  const who = gitIdentityOf(deps.config, doer)
  for (let round = 0; round < WRITE_ROUNDS; round++) {
    // A later round reads the branch another write moved.
    if (round > 0) head = await wikiHead(git)
    const changes = await change.plan(git, head)
    let tree: string
    try {
      tree = await treeWithChanges(git, head, changes)
    } catch (e) {
      if (e instanceof TreeRefused) throw badRequest(`the page cannot be written: ${e.message}`)
      throw e
    }
    const ident = identNow(who.name, who.email, nowUnix())
    const commit = await commitTree(git, tree, head ? [head] : [], change.message, ident)
    // HEAD names the branch: update-ref moves the branch it points to.
    if (await swapRef(git, 'HEAD', commit, head ?? ZERO_ID)) {
      await writeTransaction(deps.db, () =>
        recordEvent(deps.db, { kind: `wiki.${change.action}`, repoId: ctx.repo.id, actorId: doer.id, payload: { page: change.webPath, comment: change.action === 'deleted' ? '' : change.message } }),
      )
      return
    }
  }
  throw conflict('the wiki changed while the page was being written; try again')
}

/** What a page write is given (CreateWikiPageOptions, its content decoded: the API's base64 is read by its route). */
export interface PageOptions {
  title?: string
  /** The page's bytes (none when not given). */
  content?: Uint8Array
  message?: string
}

/**
 * Writes a page's content at `webPath` (400 for a reserved name, 413 past WARREN_MAX_BLOB_SIZE):
 * `place` decides, from the commit the branch is at, the tree changes that put the page's blob
 * (written when `blob` is first called) where it belongs.
 */
async function writePage(
  deps: AppDeps,
  ctx: RepoContext,
  doer: UserRow,
  page: { action: 'created' | 'edited'; webPath: string; message: string; content: Uint8Array | undefined },
  place: (git: GitRepo, head: string | null, blob: () => Promise<string>) => Promise<TreeChange[]>,
): Promise<string> {
  checkNotReserved(page.webPath)
  const bytes = page.content ?? NO_BYTES
  if (bytes.length > deps.config.maxBlobSize) throw tooLarge(deps.config.maxBlobSize)
  await writeWiki(deps, ctx, doer, { ...page, plan: (git, head) => place(git, head, () => writeBlob(git, bytes)) })
  return page.webPath
}

/** POST …/wiki/new: a new page (400 for an empty or reserved title, or a page of that title already there). Answers its web path. */
export async function createPage(deps: AppDeps, ctx: RepoContext, doer: UserRow, opts: PageOptions): Promise<string> {
  const title = opts.title ?? ''
  if (title.trim() === '') throw badRequest('emptyTitle')
  const webPath = titleToWebPath(title)
  const message = opts.message || `Add ${JSON.stringify(title)}`
  return writePage(deps, ctx, doer, { action: 'created', webPath, message, content: opts.content }, async (git, head, blob) => {
    if (head && (await pageFile(git, head, webPath))) throw badRequest(`wiki page already exists [title: ${webPathToGitPath(webPath)}]`)
    return [{ path: webPathToGitPath(webPath), mode: '100644', oid: await blob() }]
  })
}

/**
 * PATCH …/wiki/page/{pageName}: a page's content, and its title when one is given (the page
 * renamed: 409 when another page has the new title). 404 for a page that does not exist. Answers
 * the page's web path.
 */
export async function editPage(deps: AppDeps, ctx: RepoContext, doer: UserRow, oldWebPath: string, opts: PageOptions): Promise<string> {
  const webPath = opts.title?.trim() ? titleToWebPath(opts.title) : oldWebPath
  const message = opts.message || `Update ${JSON.stringify(webPath)}`
  return writePage(deps, ctx, doer, { action: 'edited', webPath, message, content: opts.content }, async (git, head, blob) => {
    const old = head && (await pageFile(git, head, oldWebPath))
    if (!old) throw notFound(`wiki page does not exist [name: ${oldWebPath.slice(0, 255)}]`)
    const existing = await pageFile(git, head, webPath)
    if (existing && existing.path !== old.path) throw conflict(`wiki page already exists [title: ${webPathToGitPath(webPath)}]`)
    const set: TreeChange = { path: existing?.path ?? webPathToGitPath(webPath), mode: '100644', oid: await blob() }
    return set.path === old.path ? [set] : [{ path: old.path, remove: true }, set]
  })
}

/** DELETE …/wiki/page/{pageName}: 404 for a page that does not exist. */
export async function deletePage(deps: AppDeps, ctx: RepoContext, doer: UserRow, webPath: string): Promise<void> {
  await writeWiki(deps, ctx, doer, {
    action: 'deleted',
    webPath,
    message: `Delete page ${JSON.stringify(webPath)}`,
    plan: async (git, head) => {
      const file = head && (await pageFile(git, head, webPath))
      if (!file) throw notFound(`wiki page does not exist [name: ${webPath.slice(0, 255)}]`)
      return [{ path: file.path, remove: true }]
    },
  })
}

/**
 * Deletes the repository's wiki (Gitea's DeleteWiki, the settings' `delete-wiki`): its owner's
 * (403 otherwise). The wiki unit is turned off and the wiki's folder moved to
 * repositories/.deleted/ with that change (moveFolderWithRows: a crash before the commit puts it
 * back), then removed off the event loop; a crash after leaves it to the start-up sweep.
 */
export async function deleteWiki(deps: AppDeps, ctx: Pick<RepoContext, 'repo' | 'owner' | 'mode'>): Promise<void> {
  if (ctx.mode < AccessMode.Owner) throw forbidden('Only the repository owner may delete its wiki')
  const wikiDir = wikiPathOf(gitDirOf(deps, ctx))
  const trash = join(deletedFoldersOf(deps), `${ctx.repo.id}-${randomUUID()}.wiki.git`)
  await moveFolderWithRows(deps, wikiDir, trash, async () => {
    // Renamed or transferred meanwhile: its wiki is elsewhere now, and this one was not it.
    await checkUnmoved(deps, ctx.repo)
    await deps.db.update(repositories).set({ hasWiki: false, updatedUnix: nowUnix() }).where(eq(repositories.id, ctx.repo.id))
  }, { taken: 'the wiki is being deleted; try again' })
  await rm(trash, { recursive: true, force: true })
}
