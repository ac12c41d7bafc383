import { and, count, desc, eq, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { seesDrafts } from '../../auth/attachment-context'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { perConnection, perConnectionShape, writeTransaction } from '../../db/client'
import { attachments, releases, repositories, type ReleaseRow } from '../../db/schema'
import { greatestOf } from '../../db/sql'
import { recordEvent } from '../../events/outbox'
import { resolveCommitish, tagCommit } from '../../git/refs'
import { checkTagName, createTagRef } from '../tags/service'
import { conflict, notFound, unprocessable } from '../../lib/errors'
import { preparedPage, type Page, type Paged } from '../../lib/pagination'
import { pathNumber } from '../../lib/path-number'
import { nowUnix } from '../../lib/time'
import { removeAttachmentFiles } from '../attachments/storage'
import { MAX_ATTACHMENTS_PER_HOLDER } from '../attachments/files'
// The record a deleted release's event keeps (the row is gone once a webhook payload is built).
import { releasesToApi } from '../../convert/release'

/**
 * Releases (their assets live in ./assets.ts), as Gitea's services/release: a release
 * names a tag; a published release whose tag does not exist yet creates it (lightweight, at
 * `target_commitish`, the default branch when empty), a draft waits until it is published.
 * Deleting a release keeps its tag. Drafts are seen by writers only. `release_counter` (repositories.num_releases) counts
 * the published ones and moves in the transaction that changes them, with the outbox events
 * release.published / release.updated / release.deleted.
 *
 * Git and SQLite: the tag is created first (../tags' createTagRef, through the one push path: the
 * push decision, then its ref.created event recorded with the caller as pusher), then the row. A crash in between leaves a
 * tag without a release, which a retry of the same request simply uses.
 */

/** Assets one release may hold (each release record lists them all). */
export const MAX_ASSETS_PER_RELEASE = MAX_ATTACHMENTS_PER_HOLDER


// ---- lookups --------------------------------------------------------------------------------

export interface ReleaseFilter {
  draft?: boolean
  prerelease?: boolean
}

/**
 * listReleases' statements for one shape (drafts hidden or not, the two filters: absent, true or
 * false), prepared when first asked: release lists are what CI tools and Renovate ask most.
 */
function prepareReleaseList(db: AppDeps['db'], hideDrafts: boolean, filter: ReleaseFilter) {
  const p = sql.placeholder
  const where = and(
    eq(releases.repoId, p('repo')),
    hideDrafts ? eq(releases.isDraft, false) : undefined,
    filter.draft === undefined ? undefined : eq(releases.isDraft, filter.draft),
    filter.prerelease === undefined ? undefined : eq(releases.isPrerelease, filter.prerelease),
  )
  return {
    rows: db.select().from(releases).where(where).orderBy(desc(releases.createdUnix), desc(releases.id)).limit(p('limit')).offset(p('offset')).prepare(),
    count: db.select({ n: count() }).from(releases).where(where).prepare(),
  }
}
const releaseListStatements = perConnectionShape<ReturnType<typeof prepareReleaseList>>()

/** A repository's releases, newest first (drafts only for writers; Gitea's `draft` / `pre-release` filters). */
export async function listReleases(deps: AppDeps, ctx: RepoContext, page: Page, filter: ReleaseFilter): Promise<Paged<ReleaseRow>> {
  const hideDrafts = !seesDrafts(ctx.mode)
  const key = `${+hideDrafts} ${filter.draft ?? '-'} ${filter.prerelease ?? '-'}`
  const statements = releaseListStatements(deps.db, key, () => prepareReleaseList(deps.db, hideDrafts, filter))
  return await preparedPage<ReleaseRow>(statements, { repo: ctx.repo.id }, page)
}

/** A release by row when the caller may see it, else 404. */
function visible(ctx: RepoContext, row: ReleaseRow | undefined): ReleaseRow {
  if (!row || (row.isDraft && !seesDrafts(ctx.mode))) throw notFound('release does not exist')
  return row
}

/** A release of the repository by its id (the path's `{id}`). */
export async function getRelease(deps: AppDeps, ctx: RepoContext, rawId: string): Promise<ReleaseRow> {
  const id = pathNumber(rawId)
  const row = Number.isNaN(id)
    ? undefined
    : (await deps.db.select().from(releases).where(and(eq(releases.repoId, ctx.repo.id), eq(releases.id, id))))[0]
  return visible(ctx, row)
}

/** byTag's statement, prepared once per connection (Renovate asks a release by its tag for each version it looks at). */
const releaseByTagOf = perConnection((db: AppDeps['db']) =>
  db.select().from(releases).where(and(eq(releases.repoId, sql.placeholder('repo')), eq(releases.lowerTagName, sql.placeholder('tag')))).prepare(),
)
const byTag = async (deps: AppDeps, repoId: number, tag: string) => (await releaseByTagOf(deps.db).execute({ repo: repoId, tag: tag.toLowerCase() }))[0]

/** The release of a tag (the path's `{tag}`). */
export async function getReleaseByTag(deps: AppDeps, ctx: RepoContext, tag: string): Promise<ReleaseRow> {
  return visible(ctx, await byTag(deps, ctx.repo.id, tag))
}

/** The newest published release that is not a pre-release (Gitea's `releases/latest`). */
export async function getLatestRelease(deps: AppDeps, ctx: RepoContext): Promise<ReleaseRow> {
  const row = (await deps.db
    .select()
    .from(releases)
    .where(and(eq(releases.repoId, ctx.repo.id), eq(releases.isDraft, false), eq(releases.isPrerelease, false)))
    .orderBy(desc(releases.createdUnix), desc(releases.id))
    .limit(1))[0]
  return visible(ctx, row)
}

// ---- tags -----------------------------------------------------------------------------------

/**
 * Makes sure `refs/tags/<tag>` exists, creating it (lightweight) at `target` when it does not, as
 * a push by `actor` (createTagRef). 404 for a target that names no commit, 409 for a name git
 * refuses beside the existing tags; a tag another request made meanwhile is used.
 */
async function ensureTag(deps: AppDeps, ctx: RepoContext, actor: UserRow, tag: string, target: string): Promise<void> {
  if (await tagCommit(gitRepoOf(deps, ctx), tag)) return
  await createTagRef(deps, ctx, actor, tag, await commitOfTarget(deps, ctx, target))
}

/** The commit a release's target names (a branch, a tag or a commit id), else 404 as Gitea. */
async function commitOfTarget(deps: AppDeps, ctx: RepoContext, target: string): Promise<string> {
  const commit = target === '' ? null : await resolveCommitish(gitRepoOf(deps, ctx), target)
  if (!commit) throw notFound(`target "${target}" not found`)
  return commit
}

// ---- create, edit, delete -------------------------------------------------------------------

export interface ReleaseInput {
  tag_name: string
  target_commitish?: string
  name?: string
  body?: string
  draft?: boolean
  prerelease?: boolean
}

const bumpReleases = async (deps: AppDeps, repoId: number, by: number) =>
  await deps.db
    .update(repositories)
    .set({ numReleases: greatestOf(sql`${repositories.numReleases} + ${by}`, 0) })
    .where(eq(repositories.id, repoId))

const eventPayload = (row: ReleaseRow) => ({ releaseId: row.id, tagName: row.tagName })

/**
 * 422 when the repository already has WARREN_MAX_RELEASES_PER_REPO releases (drafts included):
 * every release record is listed, paged, and kept with its assets, so the count bounds what one
 * writer can pile up. Gitea has no such bound; no real project comes near the default.
 */
async function checkRoomForRelease(deps: AppDeps, repoId: number): Promise<void> {
  const limit = deps.config.maxReleasesPerRepo
  const held = (await deps.db.select({ n: count() }).from(releases).where(eq(releases.repoId, repoId)))[0]!.n
  if (held >= limit) throw unprocessable(`a repository may have at most ${limit} releases`)
}

/**
 * Creates a release (Gitea's CreateRelease): 422 on an empty repository, a bad tag name or a
 * repository holding WARREN_MAX_RELEASES_PER_REPO releases, 409 when the tag already has a
 * release, 404 when its tag must be created and the target names no commit. A draft creates no
 * tag, but its target must name a commit when the tag is missing. The bound is checked before the
 * tag is made (so a refusal changes nothing) and again in the insert's transaction (so creations
 * racing for the last place cannot both pass; the loser may leave its new tag, as a crash would).
 */
export async function createRelease(deps: AppDeps, ctx: RepoContext, actor: UserRow, input: ReleaseInput): Promise<ReleaseRow> {
  if (ctx.repo.isEmpty) throw unprocessable('repo is empty')
  const tag = checkTagName(input.tag_name)
  const target = input.target_commitish || ctx.repo.defaultBranch
  const draft = input.draft ?? false
  const taken = async () => {
    if (await byTag(deps, ctx.repo.id, tag)) throw conflict(`release tag already exists [name: ${tag}]`)
  }
  await taken()
  await checkRoomForRelease(deps, ctx.repo.id)
  if (!draft) await ensureTag(deps, ctx, actor, tag, target)
  else if (!(await tagCommit(gitRepoOf(deps, ctx), tag))) await commitOfTarget(deps, ctx, target)
  const now = nowUnix()
  return await writeTransaction(deps.db, async () => {
    await taken()
    await checkRoomForRelease(deps, ctx.repo.id)
    const row = (await deps.db
      .insert(releases)
      .values({
        repoId: ctx.repo.id,
        publisherId: actor.id,
        tagName: tag,
        lowerTagName: tag.toLowerCase(),
        target,
        title: input.name ?? '',
        note: input.body ?? '',
        isDraft: draft,
        isPrerelease: input.prerelease ?? false,
        createdUnix: now,
        updatedUnix: now,
      })
      .returning())[0]!
    if (!draft) {
      await bumpReleases(deps, ctx.repo.id, 1)
      await recordEvent(deps.db, { kind: 'release.published', repoId: ctx.repo.id, actorId: actor.id, payload: eventPayload(row) })
    }
    return row
  })
}

/**
 * Edits a release (Gitea's EditRelease: empty strings and absent fields leave values as they
 * are). Publishing a draft, or renaming a published release's tag, creates a missing tag at the
 * target. A published release records release.published when it was a draft, else
 * release.updated. 409 when the new tag already has another release. With `replaceNotes` (the web
 * page's edit form, Gitea's EditReleasePost) the notes are set as given, emptied by an empty text.
 */
export async function editRelease(
  deps: AppDeps,
  ctx: RepoContext,
  actor: UserRow,
  rawId: string,
  input: Partial<ReleaseInput> & { replaceNotes?: boolean },
): Promise<ReleaseRow> {
  const row = await getRelease(deps, ctx, rawId)
  const tag = input.tag_name ? checkTagName(input.tag_name) : row.tagName
  const target = input.target_commitish || row.target || ctx.repo.defaultBranch
  const draft = input.draft ?? row.isDraft
  const taken = async () => {
    const other = await byTag(deps, ctx.repo.id, tag)
    if (other && other.id !== row.id) throw conflict(`release tag already exists [name: ${tag}]`)
  }
  await taken()
  if (!draft) await ensureTag(deps, ctx, actor, tag, target)
  else if (tag !== row.tagName && !(await tagCommit(gitRepoOf(deps, ctx), tag))) await commitOfTarget(deps, ctx, target)
  const now = nowUnix()
  return await writeTransaction(deps.db, async () => {
    const current = (await deps.db.select().from(releases).where(eq(releases.id, row.id)))[0]
    if (!current) throw notFound('release does not exist')
    await taken()
    const published = current.isDraft && !draft
    const updated = (await deps.db
      .update(releases)
      .set({
        tagName: tag,
        lowerTagName: tag.toLowerCase(),
        target,
        title: input.name || current.title,
        note: input.replaceNotes ? (input.body ?? '') : input.body || current.note,
        isDraft: draft,
        isPrerelease: input.prerelease ?? current.isPrerelease,
        ...(published ? { createdUnix: now } : {}),
        updatedUnix: now,
      })
      .where(eq(releases.id, row.id))
      .returning())[0]!
    if (current.isDraft !== draft) await bumpReleases(deps, ctx.repo.id, draft ? -1 : 1)
    if (!draft)
      await recordEvent(deps.db, { kind: published ? 'release.published' : 'release.updated', repoId: ctx.repo.id, actorId: actor.id, payload: eventPayload(updated) })
    return updated
  })
}

/**
 * Deletes a release and its assets (rows, then files); its tag stays. A published release
 * records release.deleted with its record as it was.
 */
export async function deleteRelease(deps: AppDeps, ctx: RepoContext, actor: UserRow, row: ReleaseRow): Promise<void> {
  const uuids = await writeTransaction(deps.db, async () => {
    const current = (await deps.db.select().from(releases).where(eq(releases.id, row.id)))[0]
    if (!current) throw notFound('release does not exist')
    const files = await deps.db.select({ uuid: attachments.uuid }).from(attachments).where(eq(attachments.releaseId, row.id))
    if (!current.isDraft) {
      // The record as a webhook would show it, before the row goes.
      const release = (await releasesToApi(deps, ctx.repo, [current], null))[0]
      await recordEvent(deps.db, { kind: 'release.deleted', repoId: ctx.repo.id, actorId: actor.id, payload: { ...eventPayload(current), release } })
      await bumpReleases(deps, ctx.repo.id, -1)
    }
    await deps.db.delete(releases).where(eq(releases.id, row.id))
    return files.map((f) => f.uuid)
  })
  removeAttachmentFiles(deps, ctx.repo.id, uuids)
}
