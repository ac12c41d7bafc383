import { existsSync, statSync } from 'node:fs'
import { rm } from 'node:fs/promises'
import { isAbsolute } from 'node:path'
import { eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { accessLevel, type AccessMode, type RepoRow } from '../../auth/access'
import { gitLimitsOf } from '../../auth/repo-context'
import { mirrors, repositories } from '../../db/schema'
import { fetchMirror, remoteHead, type RemoteAuth, type RemoteOptions } from '../../git/remote'
import { GitError, wikiPathOf, type GitRepo } from '../../git/run'
import { initBareRepository } from '../../git/init'
import { isSafeRefName } from '../../git/ref-name'
import { ApiError, apiErrorOfGit, badRequest, forbidden, unprocessable } from '../../lib/errors'
import { checkRemoteHost } from './remote-policy'
import { parseGoDuration } from '../../lib/duration'
import { nowUnix } from '../../lib/time'
import { sealSecret } from '../../lib/secret-box'
import { charCount } from '../../lib/validate'
import { loggerOf } from '../../lib/log'
import { checkRepoName, checkRepoNameFree, createRepository, type NewRepo } from '../repos/create'
import { syncRepositoryWithGit } from '../../push'
import { createOrgRepo, requireOrgRepoCreator } from '../orgs/service'
import { loadOrg, type OrgContext } from '../../auth/org-context'
import { usersByIds } from '../../convert/people'
import { findOwnerByName } from '../users/service'

/** A MigrateRepoForm, as the service takes it. */
export interface MigrateInput {
  cloneAddr: string
  authUsername?: string
  authPassword?: string
  /** The new repository's owner: a user id (`uid`), else a name (`repo_owner`); 422 with neither. */
  uid?: number
  ownerName?: string
  repoName: string
  mirror?: boolean
  private?: boolean
  description?: string
  mirrorInterval?: string
  /** Also clone the remote's wiki when it has one (Gitea's `wiki` option). */
  wiki?: boolean
}

/** Where a migration or mirror fetches from: an address without credentials, and the credentials. */
export interface CloneSource {
  /** Passed to git: a URL without user-info, or an absolute local path. */
  address: string
  auth: RemoteAuth | null
  local: boolean
}

const DISALLOWED_HOST = 'You can not import from disallowed hosts.'

/** Why an address is refused: a local path (by a non-admin, or at all), a host not allowed, a malformed or unresolvable one. */
export type AddressRefusal = 'local-path' | 'disallowed-host' | 'no-such-path' | 'invalid-url' | 'unresolvable'

/** A migration's answers to a refused clone address: 422 naming CloneAddr. */
function migrationRefusal(reason: AddressRefusal, host: string): ApiError {
  const messages: Record<AddressRefusal, string> = {
    'local-path': 'You are not allowed to import local repositories.',
    'disallowed-host': DISALLOWED_HOST,
    'no-such-path': 'Invalid local path, it does not exist or not a directory.',
    'invalid-url': 'Invalid url: the clone address must be an http, https or git URL',
    unresolvable: `Invalid url: the host "${host}" can not be resolved`,
  }
  return unprocessable(messages[reason], 'CloneAddr')
}

/**
 * Reads a clone address (http, https, git URL; a local path or file URL for admins) and checks it
 * against the outbound policy (remote-policy.ts). User-info in the URL counts as credentials
 * (explicit ones win) and is taken out of the address. Every refusal is `refuse`'s answer (a
 * migration's: a 422 naming CloneAddr).
 */
export async function resolveCloneSource(
  deps: AppDeps,
  caller: Pick<UserRow, 'isAdmin'>,
  cloneAddr: string,
  given: { username?: string; password?: string },
  refuse: (reason: AddressRefusal, host: string) => ApiError = migrationRefusal,
): Promise<CloneSource> {
  const addr = cloneAddr.trim()
  let url: URL | null = null
  try {
    url = new URL(addr)
  } catch {}
  let localPath: string | null = null
  if (url?.protocol === 'file:') localPath = Bun.fileURLToPath(url)
  else if (!url && isAbsolute(addr)) localPath = addr
  if (localPath !== null) {
    if (!caller.isAdmin) throw refuse('local-path', '')
    if (!deps.config.migrationsAllowLocalNetworks) throw refuse('disallowed-host', '')
    let dir = false
    try {
      dir = statSync(localPath).isDirectory()
    } catch {}
    if (!dir) throw refuse('no-such-path', '')
    return { address: localPath, auth: null, local: true }
  }
  if (!url || !['http:', 'https:', 'git:'].includes(url.protocol) || !url.hostname) throw refuse('invalid-url', '')
  let username: string, password: string
  try {
    username = given.username || decodeURIComponent(url.username)
    password = given.password || decodeURIComponent(url.password)
  } catch {
    throw refuse('invalid-url', '') // user-info with a malformed %-escape
  }
  url.username = ''
  url.password = ''
  const check = await checkRemoteHost(url.hostname, deps.config.migrationsAllowLocalNetworks)
  if (!check.ok) throw refuse(check.reason === 'local' ? 'disallowed-host' : 'unresolvable', url.hostname)
  const auth = username || password ? { username, password } : null
  return { address: url.toString(), auth: url.protocol === 'git:' ? null : auth, local: false }
}

/**
 * The interval of a new mirror, in seconds: Gitea's duration text, default 8h, 0 = no periodic
 * update. A refusal is `refuse`'s answer (a pull mirror's: 422 naming MirrorInterval).
 */
export function mirrorIntervalOf(deps: AppDeps, text: string | undefined, refuse = (message: string): ApiError => unprocessable(message, 'MirrorInterval')): number {
  if (text === undefined || text.trim() === '') return deps.config.mirrorDefaultInterval
  const seconds = parseGoDuration(text)
  if (seconds === null) throw refuse(`invalid mirror interval: ${JSON.stringify(text.slice(0, 40))} is not a duration such as "8h0m0s" or "10m"`)
  if (seconds !== 0 && seconds < deps.config.mirrorMinInterval) throw refuse(`invalid mirror interval: below the minimum of ${deps.config.mirrorMinInterval} seconds`)
  return seconds
}

/** A mirror's next update one interval from now (none when 0), as Gitea schedules it. */
export const mirrorSchedule = (interval: number, now = nowUnix()) => ({ interval, nextUpdateUnix: interval ? now + interval : 0 })

/** The mirror routes and forms while the site has mirrors turned off (Gitea's `[mirror] ENABLED`): 400. */
export function requireMirrorsEnabled(deps: AppDeps): void {
  if (!deps.config.mirrorEnabled) throw badRequest('Mirror feature is disabled')
}

/** Git's (scrubbed) message of a failure talking to a remote, and whether the remote refused the credentials. */
export function remoteFailure(e: GitError): { auth: boolean; message: string } {
  const message = e.message.replace(/^git [\w-]+ failed: /, '')
  return { auth: /authentication failed|could not read (username|password)|401|403/i.test(message), message }
}

/** A git failure talking to the remote as the API's answer: 422 with git's (scrubbed) message; timeouts keep theirs. */
export function migrationError(e: unknown): unknown {
  if (!(e instanceof GitError)) return e
  if (e.kind !== 'failed') return apiErrorOfGit(e)
  const { auth, message } = remoteFailure(e)
  return unprocessable(`${auth ? 'Authentication failed' : 'Migration failed'}: ${message}`, 'CloneAddr')
}

/**
 * The addresses a remote repository's wiki may be at, in Gitea's order (WikiRemoteURL): the
 * address without its `.git`, then `.wiki.git`, or `.git/wiki`. The address's query and fragment
 * (a URL's) stay where they were.
 */
function wikiAddressesOf(address: string): string[] {
  let url: URL | null = null
  try {
    url = new URL(address)
  } catch {}
  const base = (url ? url.pathname : address).replace(/\/+$/, '').replace(/\.git$/, '')
  return ['.wiki.git', '.git/wiki'].map((suffix) => {
    if (!url) return base + suffix
    const at = new URL(url)
    at.pathname = base + suffix
    return at.toString()
  })
}

/**
 * The address of the remote's wiki, the first of wikiAddressesOf that answers as a git repository
 * with the same credentials (`git ls-remote`), with its HEAD branch; null when none does (the
 * remote has no wiki: the migration goes on without one, as in Gitea).
 */
async function remoteWiki(address: string, remote: RemoteOptions): Promise<{ address: string; head: string | null } | null> {
  for (const candidate of wikiAddressesOf(address)) {
    const found = await remoteHead(candidate, remote).catch(() => null)
    if (found) return { address: candidate, head: found.head }
  }
  return null
}

/**
 * Clones the remote's wiki (when it has one) beside the repository being made, `{name}.wiki.git`,
 * on its own HEAD branch, while the row is 'creating' (a crash: the start-up repair removes it with
 * the repository's folder). A wiki that cannot be cloned is left out, as Gitea does.
 */
async function cloneWiki(deps: AppDeps, repo: GitRepo, address: string, remote: RemoteOptions): Promise<void> {
  const found = await remoteWiki(address, remote)
  if (!found) return
  const wiki = { ...repo, gitDir: wikiPathOf(repo.gitDir) }
  try {
    await initBareRepository(wiki.gitDir, found.head && isSafeRefName(found.head) ? found.head : deps.config.defaultBranch, remote.limits)
    await fetchMirror(wiki, found.address, remote)
  } catch (e) {
    // As Gitea: a wiki that could not be cloned is left out (logged), the repository goes on.
    if (!(e instanceof GitError)) throw e
    loggerOf(deps.config).warn('cloning the remote wiki failed; migrated without it', { error: remoteFailure(e).message })
    await rm(wiki.gitDir, { recursive: true, force: true })
  }
}

/**
 * A mirror's wiki, when the mirror has one (made by its migration with `wiki`): fetched from the
 * remote's wiki address like the repository (a wiki the remote no longer has is left as it is).
 */
export async function updateMirrorWiki(repo: GitRepo, address: string, remote: RemoteOptions): Promise<void> {
  const wiki = { ...repo, gitDir: wikiPathOf(repo.gitDir) }
  if (!existsSync(wiki.gitDir)) return
  const found = await remoteWiki(address, remote)
  if (found) await fetchMirror(wiki, found.address, remote)
}

/**
 * Who may migrate into `owner`: itself, a site admin anywhere, and an organisation's repository
 * creators (the organisation as the caller sees it: a hidden one is 404). Answers the
 * organisation's context when the repository is created as one of its creators.
 */
async function creationContext(deps: AppDeps, caller: UserRow, owner: UserRow): Promise<OrgContext | null> {
  if (caller.isAdmin || caller.id === owner.id) return null
  if (owner.type !== 1) throw forbidden("You may not migrate into another user's account")
  const ctx = await loadOrg(deps, owner.name, caller)
  await requireOrgRepoCreator(deps, ctx)
  return ctx
}

/**
 * POST /repos/migrate: clones a remote repository into a new one (a pull mirror when asked).
 * Everything a request can get wrong is checked before anything is made; the remote is asked for
 * its HEAD first (reachable, credentials work), then the repository is created as any other
 * (row 'creating' → folder → fetch → 'ready'; a failure removes both), then its refs recorded.
 */
export async function migrateRepository(deps: AppDeps, caller: UserRow, input: MigrateInput): Promise<{ repo: RepoRow; owner: UserRow; mode: AccessMode }> {
  if (input.uid === undefined && input.ownerName === undefined) throw unprocessable('Required', 'UID')
  const owner = input.uid !== undefined ? (await usersByIds(deps, [input.uid])).get(input.uid) : await findOwnerByName(deps, input.ownerName!)
  if (!owner) throw unprocessable(`user does not exist [uid: ${input.uid ?? input.ownerName}]`, 'UID')
  const orgContext = await creationContext(deps, caller, owner)
  checkRepoName(input.repoName)
  if (input.description !== undefined && charCount(input.description) > 255) throw unprocessable('must be less than 255 characters', 'Description')
  await checkRepoNameFree(deps, owner.id, input.repoName)
  // Gitea's Mirror.DisableNewPull (set by `[mirror] ENABLED = false`): a new pull mirror is refused, for the API and the web form alike.
  if (input.mirror && !deps.config.mirrorEnabled) throw forbidden('the site administrator has disabled the creation of new pull mirrors')
  const interval = input.mirror ? mirrorIntervalOf(deps, input.mirrorInterval) : 0
  const source = await resolveCloneSource(deps, caller, input.cloneAddr, { username: input.authUsername, password: input.authPassword })
  const remote = { auth: source.auth, allowFile: source.local, limits: gitLimitsOf(deps) }
  let head: string | null
  try {
    head = (await remoteHead(source.address, remote)).head
  } catch (e) {
    throw migrationError(e)
  }
  const now = Math.floor(Date.now() / 1000)
  const opts: NewRepo = {
    name: input.repoName,
    description: input.description,
    private: input.private,
    defaultBranch: head && isSafeRefName(head) ? head : undefined,
    creator: caller,
    // Emptiness, size and the refs' record come from the sync below (a crash before it: from the
    // start-up reconcile).
    populate: async (repo) => {
      await fetchMirror(repo, source.address, remote)
      if (input.wiki) await cloneWiki(deps, repo, source.address, remote)
      return { isMirror: !!input.mirror, originalUrl: source.address }
    },
    onReady: async (row) => {
      if (!input.mirror) return
      await deps.db
        .insert(mirrors)
        .values({
          repoId: row.id,
          remoteAddress: source.address,
          authUsername: source.auth?.username ?? '',
          authPasswordSealed: source.auth?.password ? sealSecret(deps.config.dataDir, source.auth.password) : '',
          interval,
          nextUpdateUnix: interval ? now + interval : 0,
          updatedUnix: now,
        })
    },
  }
  let repo: RepoRow
  try {
    repo = orgContext ? (await createOrgRepo(deps, orgContext, opts)).repo : await createRepository(deps, owner, opts)
  } catch (e) {
    throw e instanceof ApiError ? e : migrationError(e)
  }
  // Records emptiness, size and the refs as the starting point (no events: nothing was pushed).
  await syncRepositoryWithGit(deps, repo.id)
  repo = (await deps.db.select().from(repositories).where(eq(repositories.id, repo.id)))[0]!
  return { repo, owner, mode: await accessLevel(deps.db, caller, repo, owner) }
}
