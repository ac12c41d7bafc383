import { and, eq, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { lfsMetaObjects, repositories } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode, type RepoRow } from '../../auth/access'
import { gitLimitsOf } from '../../auth/repo-context'
import { recordEvent } from '../../events/outbox'
import { cloneBareRepository } from '../../git/init'
import { repositorySize } from '../../git/refs'
import { ApiError, conflict, forbidden, notFound, unprocessable } from '../../lib/errors'
import type { Page, Paged } from '../../lib/pagination'
import { buildRepository } from '../repos/create'
import { listReadableReposOf } from '../repos/queries'
import { gitRepoAt, pathOfRepo, repoSnapshot } from '../repos/service'
import { grantOrgRepoCreator, requireOrgRepoCreator } from '../orgs/service'
import { loadOrg } from '../../auth/org-context'
import { refuseBlocked } from '../../auth/blocking'
import { writeTransaction } from '../../db/client'
import { greatestOf } from '../../db/sql'
import { nowUnix } from '../../lib/time'
import { batchesOf } from '../../lib/batches'

export interface ForkRequest {
  /** The organisation to own the fork; the forker when absent. */
  organization?: string | null
  /** The fork's name; the source's when absent. */
  name?: string | null
  /** The fork's description (Gitea's web form); the source's when absent. */
  description?: string | null
}

/**
 * Forks `source` (which `forker` may read: the route's check) for the forker or an organisation
 * the forker may create repositories in (the rule of organisation repositories). Gitea's answers:
 * unknown (or hidden) organisation 422, not allowed there 403, the owner already has a fork of
 * `source` or a repository of that name 409. The fork is private when the source is, or when the
 * source's owner is private. Empty repositories fork too (Gitea's API allows it).
 *
 * On disk the fork is a local `git clone --bare` that hard-links the source's object files
 * (cloneBareRepository): instant, nearly no extra space, and independent of the source, so
 * deleting the source leaves it whole. In the database it follows buildRepository's order
 * ('creating' row, folder, 'ready'), and the parent's `num_forks`, the fork's recorded refs and
 * the `repo.forked` event are written in the transaction that makes the fork ready: a crash
 * before that leaves a 'creating' row the startup repair removes, with no counter to undo.
 */
export async function forkRepository(deps: AppDeps, forker: UserRow, source: RepoRow, sourceOwner: UserRow, req: ForkRequest): Promise<RepoRow> {
  let owner = forker
  let org: Awaited<ReturnType<typeof loadOrg>> | undefined
  if (req.organization != null) {
    try {
      org = await loadOrg(deps, req.organization, forker)
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) throw unprocessable(`organization does not exist [name: ${req.organization}]`, 'Organization')
      throw e
    }
    await requireOrgRepoCreator(deps, org)
    owner = org.org
  }
  // Gitea's ForkRepository: one the source's owner blocks may not fork it (403, ErrBlockedUser).
  await refuseBlocked(deps.db, forker.id, [sourceOwner.id])
  const name = req.name ?? source.name
  const limits = gitLimitsOf(deps)
  return await buildRepository(
    deps,
    owner,
    forker,
    {
      name,
      description: req.description ?? source.description,
      isPrivate: source.isPrivate || sourceOwner.visibility === 'private',
      defaultBranch: source.defaultBranch,
      isFork: true,
      forkId: source.id,
    },
    {
      check: async () => {
        const existing = (await deps.db
          .select({ name: repositories.name })
          .from(repositories)
          .where(and(eq(repositories.forkId, source.id), eq(repositories.ownerId, owner.id))))[0]
        if (existing)
          throw conflict(`repository is already forked by user [uname: ${owner.name}, repo path: ${sourceOwner.name}/${source.name}, fork path: ${owner.name}/${existing.name}]`)
      },
      make: async (path) => {
        await cloneBareRepository(pathOfRepo(deps, sourceOwner.name, source), path, limits)
        return { size: await repositorySize(gitRepoAt(deps, path)) }
      },
      recordRefs: true,
      ready: async (fork) => {
        // The source may have been deleted meanwhile: then the fork is a plain repository already.
        const parent = fork.isFork
          ? (await deps.db.update(repositories).set({ numForks: sql`${repositories.numForks} + 1` }).where(eq(repositories.id, fork.forkId)).returning())[0]
          : undefined
        if (org) await grantOrgRepoCreator(deps, org.org, forker, fork)
        // The fork has its source's LFS objects (Gitea's CopyLFS): its pointers' objects download through it.
        const objects = await deps.db.select({ oid: lfsMetaObjects.oid, size: lfsMetaObjects.size }).from(lfsMetaObjects).where(eq(lfsMetaObjects.repoId, source.id))
        const now = nowUnix()
        for (const batch of batchesOf(objects)) await deps.db.insert(lfsMetaObjects).values(batch.map((o) => ({ repoId: fork.id, oid: o.oid, size: o.size, createdUnix: now })))
        // Delivered to the source's hooks (Gitea's ForkPayload: `forkee` is the source, `repository` the fork).
        await recordEvent(deps.db, {
          kind: 'repo.forked',
          repoId: source.id,
          actorId: forker.id,
          payload: { parentId: source.id, forkId: fork.id, forkee: repoSnapshot(parent ?? source), repository: repoSnapshot(fork) },
        })
      },
    },
  )
}

/** The forks of a repository that `viewer` may read, by name. */
export async function listForks(deps: AppDeps, viewer: UserRow | null, repo: RepoRow, page: Page): Promise<Paged<RepoRow>> {
  return await listReadableReposOf(deps, viewer, 'forks', (parent) => eq(repositories.forkId, parent), repo.id, page)
}

/**
 * Makes a fork a regular repository (Gitea's ConvertForkToNormalRepository, the settings'
 * `convert_fork`): its owner's (403 otherwise), 404 for a repository that is no fork. It leaves its
 * parent's count of forks; its git folder needs nothing (a fork shares no file it depends on).
 */
export async function convertForkToRegular(deps: AppDeps, repo: RepoRow, mode: AccessMode): Promise<void> {
  if (mode < AccessMode.Owner) throw forbidden('Only the repository owner may convert it')
  await writeTransaction(deps.db, async () => {
    const [now] = await deps.db.select({ isFork: repositories.isFork, forkId: repositories.forkId }).from(repositories).where(eq(repositories.id, repo.id))
    if (!now?.isFork) throw notFound('the repository is not a fork')
    if (now.forkId)
      await deps.db.update(repositories).set({ numForks: greatestOf(sql`${repositories.numForks} - 1`, 0) }).where(eq(repositories.id, now.forkId))
    await deps.db.update(repositories).set({ isFork: false, forkId: 0, updatedUnix: nowUnix() }).where(eq(repositories.id, repo.id))
  })
}
