import { existsSync } from 'node:fs'
import { hooksChanged } from '../../webhooks/dispatcher'
import { rm } from 'node:fs/promises'
import { join } from 'node:path'
import { and, eq, inArray, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { greatestOf } from '../../db/sql'
import { mirrors, repoRedirects, repositories, stars, teamRepos, teams, users, type RepoRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode } from '../../auth/access'
import { conflict, forbidden, notFound, unprocessable } from '../../lib/errors'
import { nowUnix } from '../../lib/time'
import { charCount, checkWebsite } from '../../lib/validate'
import { wikiPathOf } from '../../git/run'
import { branchExists, setHeadBranch } from '../../git/refs'
import { isSafeRefName } from '../../git/ref-name'
import { recordEvent } from '../../events/outbox'
import { removeRepositoryAttachments } from '../attachments/storage'
import { removeAvatarFileIfUnused } from '../avatars/storage'
import { checkForkVisibility } from '../forks/visibility'
import { checkRepoName } from './create'
import { checkUnmoved, dropRedirect, gitRepoAt, pathOfRepo, repoSnapshot } from './service'
import { folderBusy, isFolderBusy, moveFolderWithRows, moveUnderWay } from './folder-move'
import { deletedFoldersOf } from './repair'
import { unitChanges, type UnitEdit } from './units'
import { releaseRepoTopics } from '../topics/service'
import { mirrorIntervalOf, mirrorSchedule } from '../migrations/service'

/** EditRepoOption (absent = unchanged). */
export interface RepoEdit extends UnitEdit {
  name?: string
  description?: string
  website?: string
  private?: boolean
  defaultBranch?: string
  archived?: boolean
  /** A pull mirror's update interval (Go duration text). */
  mirrorInterval?: string
  internalTracker?: { enableTimeTracker?: boolean; allowOnlyContributorsToTrackTime?: boolean; enableIssueDependencies?: boolean }
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
  await checkForkVisibility(deps, repo, edit.private)
  if (edit.private !== undefined) set.isPrivate = edit.private
  // Gitea stamps the archiving time, and clears it on unarchiving.
  if (edit.archived !== undefined && edit.archived !== repo.isArchived) Object.assign(set, { isArchived: edit.archived, archivedUnix: edit.archived ? nowUnix() : 0 })
  Object.assign(set, unitChanges(edit))
  if (edit.internalTracker?.enableTimeTracker !== undefined) set.enableTimeTracker = edit.internalTracker.enableTimeTracker
  if (edit.internalTracker?.allowOnlyContributorsToTrackTime !== undefined)
    set.allowOnlyContributorsToTrackTime = edit.internalTracker.allowOnlyContributorsToTrackTime
  if (edit.internalTracker?.enableIssueDependencies !== undefined) set.enableIssueDependencies = edit.internalTracker.enableIssueDependencies
  let mirrorInterval: number | undefined
  if (edit.mirrorInterval !== undefined) {
    if (!repo.isMirror) throw unprocessable('repo is not a mirror, can not change mirror interval', 'MirrorInterval')
    mirrorInterval = mirrorIntervalOf(deps, edit.mirrorInterval)
  }
  if (Object.keys(set).length === 0 && mirrorInterval === undefined) return repo
  set.updatedUnix = nowUnix()

  const newPath = set.name !== undefined ? pathOfRepo(deps, owner.name, { name: set.name }) : gitDir
  const updated = await moveFolderWithRows(deps, gitDir, newPath, async () => {
    // Renamed or transferred by another request since it was read: this one would rename a name it no longer has.
    if (set.lowerName !== undefined) await checkUnmoved(deps, repo)
    if (set.lowerName !== undefined && set.lowerName !== repo.lowerName) {
      const taken = (await deps.db
        .select({ id: repositories.id })
        .from(repositories)
        .where(and(eq(repositories.ownerId, repo.ownerId), eq(repositories.lowerName, set.lowerName))))[0]
      if (taken) throw unprocessable(`The repository with the same name already exists. [name: ${set.name}]`, 'Name')
      // The old name keeps redirecting here (Gitea's repo_redirect); the new one stops redirecting elsewhere.
      await dropRedirect(deps, repo.ownerId, set.lowerName)
      await deps.db
        .insert(repoRedirects)
        .values({ ownerId: repo.ownerId, lowerName: repo.lowerName, repoId: repo.id })
        .onConflictDoUpdate({ target: [repoRedirects.ownerId, repoRedirects.lowerName], set: { repoId: repo.id } })
    }
    // The next update is due one new interval from now (none when 0), as Gitea schedules it.
    if (mirrorInterval !== undefined)
      await deps.db.update(mirrors).set(mirrorSchedule(mirrorInterval)).where(eq(mirrors.repoId, repo.id))
    if (set.name !== undefined)
      await recordEvent(deps.db, { kind: 'repo.renamed', repoId: repo.id, actorId: actor?.id ?? null, payload: { owner: owner.name, from: repo.name, to: set.name } })
    return (await deps.db.update(repositories).set(set).where(eq(repositories.id, repo.id)).returning())[0]!
  }, { taken: `a repository folder already exists for [name: ${set.name}]`, beside: [[wikiPathOf(gitDir), wikiPathOf(newPath)]] })
  if (set.defaultBranch !== undefined && existsSync(newPath))
    await setHeadBranch(gitRepoAt(deps, newPath), set.defaultBranch)
  return updated
}

const BUSY_DELETING = 'the repository is being deleted; try again'

/**
 * Deletes a repository (repository admins: owning user, site admin, owners and admin teams of
 * the owning organisation, admin collaborators; the issue's rule, wider than Gitea's owner-only
 * API): its folder and its wiki's move to repositories/.deleted/ with the transaction that
 * deletes the row (its dependants cascade) and moves the counters (moveFolderWithRows: a failure
 * or a crash before the commit puts them back), then they are removed off the event loop, and
 * its release assets' files. A crash after the commit leaves them in .deleted/, which the next
 * start's sweep empties (emptyDeletedFolders), and asset files it removes (repairAttachments):
 * never a folder that looks like a repository to adopt.
 */
export async function deleteRepository(deps: AppDeps, repo: RepoRow, mode: AccessMode, actor: UserRow | null = null): Promise<void> {
  if (mode < AccessMode.Admin) throw forbidden('Only repository administrators may delete it')
  // Another move of its folder under way (a second delete, a rename): wait for it, then go on
  // from the row as it is then (gone: 404; renamed: its new folder), a bounded while.
  for (let round = 1; ; round++) {
    const now = (await deps.db.select().from(repositories).where(eq(repositories.id, repo.id)))[0]
    if (!now) throw notFound()
    // Transferred meanwhile: the caller's right to delete was decided for the owner it had.
    if (now.ownerId !== repo.ownerId) throw conflict('the repository was transferred meanwhile; try again')
    try {
      return await deleteOnce(deps, now, actor)
    } catch (e) {
      if (!isFolderBusy(e) || round >= DELETE_WAIT_ROUNDS) throw e
      await Bun.sleep(DELETE_WAIT_MS)
    }
  }
}

/** How long a deletion waits for another move of the same folder: rounds of a pause. */
const DELETE_WAIT_ROUNDS = 60
const DELETE_WAIT_MS = 50

/** deleteRepository's one attempt, from the repository's row as read just before. */
async function deleteOnce(deps: AppDeps, repo: RepoRow, actor: UserRow | null): Promise<void> {
  const gitDir = pathOfRepo(deps, repo.ownerName, repo)
  const trash = join(deletedFoldersOf(deps), `${repo.id}-${crypto.randomUUID()}`)
  const gone = [`${trash}.git`, `${trash}.wiki.git`] as const
  const avatar = await moveFolderWithRows(deps, gitDir, gone[0], async () => {
    // Read again inside the transaction: a concurrent delete may have taken it since the request
    // loaded it (then this one is a 404, and no counter moves twice). The event keeps it as it was.
    const current = (await deps.db.select().from(repositories).where(eq(repositories.id, repo.id)))[0]
    if (!current) throw notFound()
    // Renamed or moved since the row was read (its folder went elsewhere), or its folder (or its
    // owner's) being moved now: the rows must not go without the folder; the caller tries again.
    if (pathOfRepo(deps, current.ownerName, current) !== gitDir || (!existsSync(gitDir) && (await moveUnderWay(deps, gitDir)))) throw folderBusy()
    await recordEvent(deps.db, { kind: 'repo.deleted', repoId: repo.id, actorId: actor?.id ?? null, payload: { repository: repoSnapshot(current) } })
    await releaseRepoTopics(deps, current)
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
    // Its hooks went with it (cascade): running delivery lanes learn it at the commit.
    hooksChanged(deps)
    await deps.db.update(users).set({ numRepos: greatestOf(sql`${users.numRepos} - 1`, 0) }).where(eq(users.id, repo.ownerId))
    return current.avatar
  }, { taken: BUSY_DELETING, beside: [[wikiPathOf(gitDir), gone[1]]] })
  for (const path of gone) await rm(path, { recursive: true, force: true })
  removeRepositoryAttachments(deps, repo.id)
  if (avatar) await removeAvatarFileIfUnused(deps, 'repo', avatar)
}
