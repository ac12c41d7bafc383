import { randomInt } from 'node:crypto'
import { and, asc, eq, gt, inArray, lte } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { pushMirrors, repositories, type PushMirrorRow, type RepoRow } from '../../db/schema'
import { notIndexed } from '../../db/sql'
import { gitOfRow } from '../../auth/repo-context'
import { claimEvents, markDone } from '../../events/outbox'
import { pushMirror } from '../../git/remote'
import { ApiError, badRequest, notFound } from '../../lib/errors'
import { loggerOf } from '../../lib/log'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
import { sealSecret } from '../../lib/secret-box'
import { nowUnix } from '../../lib/time'
import { mirrorAttempt, queueMirrorJob } from './mirror-queue'
import { mirrorIntervalOf, mirrorSchedule, resolveCloneSource, type AddressRefusal } from './service'

/**
 * Push mirrors (Gitea's `/repos/{o}/{r}/push_mirrors`): remotes that get every branch and tag of a
 * repository, forced, with the remote's branches and tags gone here deleted (pushMirror,
 * src/git/remote.ts). A push runs in the one mirror queue (mirror-queue.ts) with the pull mirrors'
 * fetches: on its interval (queueDueMirrors, the mirror scheduler job), on `push_mirrors-sync`,
 * and with `sync_on_commit` after the repository's refs change (the outbox's push-mirror consumer,
 * pushMirrorRound: after the change's commit, never on the request's path). The address is checked
 * against the outbound policy when the mirror is made and again at every push (remote-policy.ts);
 * credentials are kept apart from it, the password sealed, and never shown or logged.
 */

/** CreatePushMirrorOption, as the service takes it. */
export interface NewPushMirror {
  remoteAddress: string
  remoteUsername?: string
  remotePassword?: string
  interval?: string
  syncOnCommit?: boolean
  useSsh?: boolean
}

/** Gitea's answers to a refused push mirror address (HandleRemoteAddressError): 400, 401 for a host not allowed. */
function pushMirrorRefusal(reason: AddressRefusal, host: string): ApiError {
  switch (reason) {
    case 'disallowed-host':
      return new ApiError(401, 'Permission denied: the remote address is on a network push mirrors may not reach')
    case 'unresolvable':
      return badRequest(`Invalid Url: the host "${host}" can not be resolved`)
    case 'invalid-url':
      return badRequest('Invalid Url: the remote address must be an http, https or git URL')
    default:
      return badRequest('Invalid mirror protocol: a push mirror pushes to an http, https or git URL, not a local path')
  }
}

const NAME_LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'

/** Gitea's remote name of a new push mirror: `remote_mirror_` and 10 random letters or digits. */
function newRemoteName(): string {
  let suffix = ''
  for (let i = 0; i < 10; i++) suffix += NAME_LETTERS[randomInt(NAME_LETTERS.length)]
  return `remote_mirror_${suffix}`
}

/**
 * POST /repos/{o}/{r}/push_mirrors: checks the interval and the address (its credentials taken
 * out of it and kept apart), then writes the mirror; nothing is pushed until its first interval
 * has passed, a sync is asked for, or (sync_on_commit) the refs change.
 */
export async function createPushMirror(deps: AppDeps, repo: RepoRow, input: NewPushMirror): Promise<PushMirrorRow> {
  if (input.useSsh) throw badRequest('use_ssh is not supported: a push mirror pushes over http(s) with a username and password (or token)')
  const interval = mirrorIntervalOf(deps, input.interval, badRequest)
  const source = await resolveCloneSource(deps, { isAdmin: false }, input.remoteAddress, { username: input.remoteUsername, password: input.remotePassword }, pushMirrorRefusal)
  const now = nowUnix()
  return await writeTransaction(deps.db, async () => (await deps.db
    .insert(pushMirrors)
    .values({
      repoId: repo.id,
      remoteName: newRemoteName(),
      remoteAddress: source.address,
      authUsername: source.auth?.username ?? '',
      authPasswordSealed: source.auth?.password ? sealSecret(deps.config.dataDir, source.auth.password) : '',
      syncOnCommit: input.syncOnCommit ?? false,
      ...mirrorSchedule(interval, now),
      createdUnix: now,
    })
    .returning())[0]!)
}

/** GET /repos/{o}/{r}/push_mirrors: the repository's push mirrors, oldest first. */
export async function listPushMirrors(deps: AppDeps, repo: RepoRow, page: Page | null): Promise<Paged<PushMirrorRow>> {
  return await selectPage(deps.db, pushMirrors, eq(pushMirrors.repoId, repo.id), pushMirrors.id, page)
}

/** A push mirror of the repository by its remote name; 404 when it has none of that name. */
export async function getPushMirror(deps: AppDeps, repo: RepoRow, name: string): Promise<PushMirrorRow> {
  const [row] = await deps.db.select().from(pushMirrors).where(and(eq(pushMirrors.repoId, repo.id), eq(pushMirrors.remoteName, name)))
  if (!row) throw notFound(`push mirror does not exist [name: ${name.slice(0, 100)}]`)
  return row
}

/** A push mirror of the repository by its id (the web's `push_mirror_id`); 404 when it has none of that id. */
export async function getPushMirrorById(deps: AppDeps, repo: RepoRow, id: number): Promise<PushMirrorRow> {
  const [row] = Number.isSafeInteger(id) ? await deps.db.select().from(pushMirrors).where(and(eq(pushMirrors.repoId, repo.id), eq(pushMirrors.id, id))) : []
  if (!row) throw notFound(`push mirror does not exist [id: ${id}]`)
  return row
}

/** DELETE /repos/{o}/{r}/push_mirrors/{name}; 404 when the repository has no push mirror of that name. */
export async function deletePushMirror(deps: AppDeps, repo: RepoRow, name: string): Promise<void> {
  await removePushMirror(deps, await getPushMirror(deps, repo, name))
}

/** Deletes a push mirror found by getPushMirror or getPushMirrorById. */
export async function removePushMirror(deps: AppDeps, row: PushMirrorRow): Promise<void> {
  await writeTransaction(deps.db, async () => {
    await deps.db.delete(pushMirrors).where(eq(pushMirrors.id, row.id))
  })
}

/** Queues a push of one push mirror. */
function queuePush(deps: AppDeps, id: number, now?: number): void {
  queueMirrorJob(deps, { key: `push:${id}`, run: (signal) => updatePushMirror(deps, id, now, signal) })
}

/** Queues a push of one push mirror (the web's `push-mirror-sync`, Gitea's AddPushMirrorToQueue). */
export function syncPushMirror(deps: AppDeps, row: PushMirrorRow): void {
  queuePush(deps, row.id)
}

/**
 * Changes a push mirror's interval (the web's `push-mirror-update`, Gitea's
 * UpdatePushMirrorInterval): checked as at its creation (400), the next push due one new interval
 * from now; then, as Gitea, a push is queued (unless `push` is false: Gitea's `push_mirror_defer_sync`).
 */
export async function setPushMirrorInterval(deps: AppDeps, row: PushMirrorRow, text: string, push = true): Promise<void> {
  const interval = mirrorIntervalOf(deps, text, badRequest)
  await writeTransaction(deps.db, async () => {
    await deps.db.update(pushMirrors).set(mirrorSchedule(interval)).where(eq(pushMirrors.id, row.id))
  })
  if (push) queuePush(deps, row.id)
}

/** POST /repos/{o}/{r}/push_mirrors-sync: queues a push of every push mirror of the repository. */
export async function syncPushMirrors(deps: AppDeps, repo: RepoRow): Promise<void> {
  const rows = await deps.db.select({ id: pushMirrors.id }).from(pushMirrors).where(eq(pushMirrors.repoId, repo.id))
  for (const { id } of rows) queuePush(deps, id)
}

/**
 * Pushes one push mirror now and records the attempt (last update, next update, last error).
 * Nothing is recorded in the repository itself: its refs do not move.
 */
export async function updatePushMirror(deps: AppDeps, id: number, now = nowUnix(), signal?: AbortSignal): Promise<'updated' | 'failed' | 'missing'> {
  const [found] = await deps.db
    .select({ mirror: pushMirrors, repo: repositories })
    .from(pushMirrors)
    .innerJoin(repositories, eq(repositories.id, pushMirrors.repoId))
    .where(and(eq(pushMirrors.id, id), eq(repositories.status, 'ready')))
  if (!found) return 'missing'
  const { mirror, repo } = found
  const error = await mirrorAttempt(deps, mirror, { isAdmin: false }, async (target) => {
    const git = { ...gitOfRow(deps, repo), signal }
    await pushMirror(git, target.address, { auth: target.auth, limits: git.limits })
  })
  if (error) loggerOf(deps.config).warn('pushing to a push mirror failed', { repo: `${repo.ownerName}/${repo.name}`, remote: mirror.remoteName, error })
  await writeTransaction(deps.db, async () => {
    await deps.db
      .update(pushMirrors)
      .set({ lastUpdateUnix: now, nextUpdateUnix: mirror.interval ? now + mirror.interval : 0, lastError: error })
      .where(eq(pushMirrors.id, id))
  })
  return error ? 'failed' : 'updated'
}

/** Queues every push mirror whose next push is due at `now` (at most `limit`); answers how many. */
export async function queueDuePushMirrors(deps: AppDeps, now: number, limit: number): Promise<number> {
  const due = await deps.db
    .select({ id: pushMirrors.id })
    .from(pushMirrors)
    .innerJoin(repositories, eq(repositories.id, pushMirrors.repoId))
    // From the push mirrors' index of their next push, as the pull mirrors' (mirrors.ts queueDueMirrors).
    .where(and(gt(pushMirrors.interval, 0), lte(pushMirrors.nextUpdateUnix, now), eq(notIndexed(repositories.status), 'ready')))
    .orderBy(asc(pushMirrors.nextUpdateUnix))
    .limit(limit)
  for (const { id } of due) queuePush(deps, id, now)
  return due.length
}

/** Queues a push of every sync_on_commit push mirror of these repositories (their refs changed). */
export async function queueSyncOnCommit(deps: AppDeps, repoIds: number[]): Promise<number> {
  if (!repoIds.length) return 0
  const rows = await deps.db
    .select({ id: pushMirrors.id })
    .from(pushMirrors)
    .where(and(inArray(pushMirrors.repoId, repoIds), eq(pushMirrors.syncOnCommit, true)))
  for (const { id } of rows) queuePush(deps, id)
  return rows.length
}

/** The consumer's name in the outbox's positions. */
export const PUSH_MIRROR_CONSUMER = 'push-mirror'
const CONSUMER_BATCH = 500
const CONSUMER_LEASE_MS = 60_000
const REF_CHANGES = new Set<string>(['push', 'ref.created', 'ref.deleted'])

/**
 * One round of the push-mirror consumer (jobs/push-mirrorer.ts): the repositories whose refs a
 * batch of events changed get their sync_on_commit mirrors queued, then the batch is marked done.
 * A crash between the two queues them again at the next start (a push too many, never one too
 * few). Answers how many events were handled.
 */
export async function pushMirrorRound(deps: AppDeps): Promise<number> {
  const events = await claimEvents(deps.db, PUSH_MIRROR_CONSUMER, CONSUMER_BATCH, CONSUMER_LEASE_MS)
  if (!events.length) return 0
  const repoIds = new Set<number>()
  for (const event of events) if (event.repoId !== null && REF_CHANGES.has(event.kind)) repoIds.add(event.repoId)
  if (deps.config.mirrorEnabled) await queueSyncOnCommit(deps, [...repoIds])
  await markDone(deps.db, PUSH_MIRROR_CONSUMER, events[events.length - 1]!.id)
  return events.length
}
