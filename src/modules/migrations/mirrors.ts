import { and, asc, eq, gt, lte } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { mirrors, repositories } from '../../db/schema'
import { notIndexed } from '../../db/sql'
import { fetchMirror } from '../../git/remote'
import { nowUnix } from '../../lib/time'
import { badRequest, notFound } from '../../lib/errors'
import { writeTransaction } from '../../db/client'
import { sealSecret } from '../../lib/secret-box'
import type { UserRow } from '../../auth/caller'
import type { RepoRow } from '../../db/schema'
import { recordPush } from '../../push'
import { gitOfRow } from '../../auth/repo-context'
import { loggerOf } from '../../lib/log'
import { mirrorAttempt, queueMirrorJob } from './mirror-queue'
import { queueDuePushMirrors } from './push-mirrors'
import { mirrorIntervalOf, mirrorSchedule, resolveCloneSource, updateMirrorWiki } from './service'

export { mirrorUpdatesSettled, stopMirrorUpdates } from './mirror-queue'

/**
 * Pull-mirror updates. Each update fetches every branch and tag from the remote (`git fetch
 * --prune`, the long git time limit) and then lets the push recorder (src/push) record what moved: the refs before
 * are the recorded ones, so the ref changes become push events in the repository owner's name
 * (Gitea attributes mirror syncs to the owner); a mirror migrated with its wiki fetches the wiki
 * too. Updates queue with push mirrors' pushes
 * (mirror-queue.ts); a repository is never queued twice. The address goes through the outbound
 * policy again on every update (its name may resolve elsewhere now; remote-policy.ts).
 */

/** Fetches one mirror now and records the result (mirror_updated, next update, last error). */
export async function updateMirror(deps: AppDeps, repoId: number, now = nowUnix(), signal?: AbortSignal): Promise<'updated' | 'failed' | 'missing'> {
  const found = (await deps.db
    .select({ mirror: mirrors, repo: repositories })
    .from(mirrors)
    .innerJoin(repositories, eq(repositories.id, mirrors.repoId))
    .where(and(eq(mirrors.repoId, repoId), eq(repositories.status, 'ready'))))[0]
  if (!found) return 'missing'
  const { mirror, repo } = found
  const error = await mirrorAttempt(deps, mirror, { isAdmin: true }, async (source) => {
    // The fetch is the one writer of a mirror's refs (they follow the remote): nothing to decide,
    // and whatever it managed to change is recorded, even when it failed half-way.
    const git = { ...gitOfRow(deps, repo), signal }
    const remote = { auth: source.auth, allowFile: source.local, limits: git.limits }
    await recordPush(deps, repoId, repo.ownerId, null, async () => {
      await fetchMirror(git, source.address, remote)
    })
    // Its wiki, when it was migrated with one (Gitea's mirrors update the wiki too; no events).
    await updateMirrorWiki(git, source.address, remote)
  })
  if (error) loggerOf(deps.config).warn('updating a mirror failed', { repo: `${repo.ownerName}/${repo.name}`, error })
  await deps.db
    .update(mirrors)
    .set({ updatedUnix: error ? mirror.updatedUnix : now, nextUpdateUnix: mirror.interval ? now + mirror.interval : 0, lastError: error })
    .where(eq(mirrors.repoId, repoId))
  return error ? 'failed' : 'updated'
}

/** Queues an update of one mirror (no-op when it is already queued or running). */
export async function queueMirrorUpdate(deps: AppDeps, repoId: number, now?: number): Promise<void> {
  queueMirrorJob(deps, { key: `pull:${repoId}`, run: (signal) => updateMirror(deps, repoId, now, signal) })
}

/** Mirrors looked at per scheduler tick at most; the rest wait for the next tick. */
const DUE_BATCH = 100

/** Queues every pull and push mirror whose next update is due at `now`; answers how many. */
export async function queueDueMirrors(deps: AppDeps, now = nowUnix()): Promise<number> {
  const due = await deps.db
    .select({ repoId: mirrors.repoId })
    .from(mirrors)
    .innerJoin(repositories, eq(repositories.id, mirrors.repoId))
    // From the mirrors' index of their next update, never the repositories' of `status` (every
    // ready repository, each then looked for among the mirrors: 11-34 ms a minute at 100,000 on
    // SQLite, which took it for want of statistics; db/sql.ts notIndexed).
    .where(and(gt(mirrors.interval, 0), lte(mirrors.nextUpdateUnix, now), eq(notIndexed(repositories.status), 'ready')))
    .orderBy(asc(mirrors.nextUpdateUnix))
    .limit(DUE_BATCH)
  for (const { repoId } of due) await queueMirrorUpdate(deps, repoId, now)
  return due.length + (await queueDuePushMirrors(deps, now, DUE_BATCH))
}

/** POST /repos/{o}/{r}/mirror-sync: queues an update of a pull mirror; 400 for other repositories (Gitea). */
export async function requestMirrorSync(deps: AppDeps, repoId: number): Promise<void> {
  const found = (await deps.db.select({ id: mirrors.repoId }).from(mirrors).where(eq(mirrors.repoId, repoId)))[0]
  if (!found) throw badRequest('Repository is not a mirror')
  await queueMirrorUpdate(deps, repoId)
}

/** Gitea's mirror settings form (`action=mirror`): the interval (Go duration text) and the address with its credentials. */
export interface PullMirrorEdit {
  interval: string
  address: string
  username?: string
  password?: string
}

/** An address's scheme, host and port (the whole text when it is no URL: a local path). */
function originOf(address: string): string {
  try {
    return new URL(address).origin
  } catch {
    return address
  }
}

/**
 * Changes a pull mirror's interval and address (Gitea's handleSettingsPostMirror; 404 for a
 * repository that is no mirror). The interval as the API's `mirror_interval` (422); the address
 * through the migrations' check (422 naming CloneAddr: by `caller`, so a local path only for site
 * administrators; an unchanged address is not checked again). Credentials left blank keep the
 * stored ones, as Gitea keeps them (the username when none is given, the password when the
 * username is the stored one), while the address keeps its scheme, host and port; to another one
 * they are dropped unless given again. The next update is due one new interval from now.
 */
export async function editPullMirror(deps: AppDeps, repo: RepoRow, caller: UserRow, edit: PullMirrorEdit): Promise<void> {
  const [row] = await deps.db.select().from(mirrors).where(eq(mirrors.repoId, repo.id))
  if (!row || !repo.isMirror) throw notFound('Repository is not a mirror')
  const interval = mirrorIntervalOf(deps, edit.interval)
  // Stored credentials go only where they went: to another scheme, host or port they are dropped
  // unless given again (a repository admin would otherwise have the owner's upstream password sent
  // to a server of theirs).
  const sameOrigin = originOf(edit.address.trim()) === originOf(row.remoteAddress)
  const username = edit.username || (sameOrigin ? row.authUsername : '')
  const keepPassword = sameOrigin && !edit.password && username === row.authUsername
  let remote = { remoteAddress: row.remoteAddress, authUsername: row.authUsername, authPasswordSealed: row.authPasswordSealed }
  if (edit.address.trim() !== row.remoteAddress || edit.username || edit.password) {
    const source = await resolveCloneSource(deps, caller, edit.address, { username, password: edit.password })
    const given = source.auth
    remote = {
      remoteAddress: source.address,
      authUsername: given?.username ?? '',
      authPasswordSealed: given?.password ? sealSecret(deps.config.dataDir, given.password) : keepPassword && given ? row.authPasswordSealed : '',
    }
  }
  await writeTransaction(deps.db, async () => {
    await deps.db.update(mirrors).set({ ...remote, ...mirrorSchedule(interval) }).where(eq(mirrors.repoId, repo.id))
    // The record's `original_url` follows the address, as Gitea's UpdateAddress keeps it.
    if (remote.remoteAddress !== row.remoteAddress) await deps.db.update(repositories).set({ originalUrl: remote.remoteAddress }).where(eq(repositories.id, repo.id))
  })
}
