import { and, count, desc, eq, sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { RepoRow } from '../../auth/access'
import type { UserRow } from '../../auth/caller'
import { perConnectionShape, writeTransaction } from '../../db/client'
import { hooks, hookTasks, type HookRow, type HookTaskRow } from '../../db/schema'
import { ApiError, badRequest, notFound, unprocessable } from '../../lib/errors'
import { preparedPage, type Page, type Paged } from '../../lib/pagination'
import { nowUnix } from '../../lib/time'
import { queryBool } from '../../lib/validate'
import { getBranchHead } from '../../git/commits'
import { ZERO_ID } from '../../events/push-events'
import { gitOfRow } from '../../auth/repo-context'
import { CONTENT_TYPES, HOOK_TYPES, selectEvents, type EventMode } from '../../webhooks/events'
import { compileGlob, GlobError } from '../../lib/glob'
import { hooksChanged, wakeDeliveries } from '../../webhooks/dispatcher'
import { eventsOfHook } from '../../convert/hook'
import { newTask, ownerHooks, siteHooks, taskWriter } from '../../webhooks/tasks'
import { selectTasks, tasksWhere } from '../../webhooks/task-rows'
import { payloadRepo, pushPayload } from '../../webhooks/payloads'
import { compareUrlPath, pushCommits } from '../../convert/payload-commit'
import { toApiUser } from '../../convert/user'

/**
 * Whose hooks: a repository's own; an owner's (an organisation's or a user's: fired for every
 * repository the owner has); or the site's (Gitea's admin hooks, with neither: system hooks fired
 * for every repository, default hooks copied into each new one).
 */
export type HookScope = { repo: RepoRow } | { owner: UserRow } | { site: true }

/** A scope's kind and the id it is of (0 for the site's). */
const scopeKey = (scope: HookScope): ['repo' | 'owner' | 'site', number] =>
  'repo' in scope ? ['repo', scope.repo.id] : 'owner' in scope ? ['owner', scope.owner.id] : ['site', 0]

/** The hooks of a kind of scope whose id is `of` (a value, or a placeholder of a prepared list). */
const hooksOfKind = (kind: ReturnType<typeof scopeKey>[0], of: number | Placeholder): SQL =>
  kind === 'repo' ? eq(hooks.repoId, of) : kind === 'owner' ? ownerHooks(of) : siteHooks()

const scopeWhere = (scope: HookScope): SQL => hooksOfKind(...scopeKey(scope))

/** listHooks' statements for a kind of scope, with `limit` and `offset` placeholders when `paged`. */
function prepareHookList(db: AppDeps['db'], kind: ReturnType<typeof scopeKey>[0], paged: boolean) {
  const where = hooksOfKind(kind, sql.placeholder('of'))
  const rows = db.select().from(hooks).where(where).orderBy(hooks.id)
  return {
    rows: paged ? rows.limit(sql.placeholder('limit')).offset(sql.placeholder('offset')).prepare() : rows.prepare(),
    count: db.select({ n: count() }).from(hooks).where(where).prepare(),
  }
}
const hookListStatements = perConnectionShape<ReturnType<typeof prepareHookList>>()

/** A scope's hooks by id, a page of them or all (`page` null); its statements prepared once per kind of scope. */
export async function listHooks(deps: AppDeps, scope: HookScope, page: Page | null): Promise<Paged<HookRow>> {
  const [kind, of] = scopeKey(scope)
  const statements = hookListStatements(deps.db, `${kind} ${page ? 'page' : 'all'}`, () => prepareHookList(deps.db, kind, !!page))
  return await preparedPage<HookRow>(statements, { of }, page)
}

/** A hook of the scope by id: 404 when unknown or another scope's (another repository's, owner's, or not the site's). */
export async function getHook(deps: AppDeps, scope: HookScope, id: number): Promise<HookRow> {
  const hook = Number.isSafeInteger(id) ? (await deps.db.select().from(hooks).where(and(eq(hooks.id, id), scopeWhere(scope))))[0] : undefined
  if (!hook) throw notFound(`hook does not exist [id: ${id}]`)
  return hook
}

/** An absolute http(s) URL with a host, or 422. */
function checkUrl(url: string): string {
  const trimmed = url.trim()
  let parsed: URL | null = null
  try {
    parsed = new URL(trimmed)
  } catch {}
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') || !parsed.hostname)
    throw unprocessable('Invalid url: must be an absolute http or https URL', 'Config.url')
  return trimmed
}

function checkContentType(value: string): string {
  if (!(CONTENT_TYPES as readonly string[]).includes(value)) throw unprocessable('Invalid content type')
  return value
}

function checkBranchFilter(filter: string): string {
  const value = filter.trim()
  try {
    compileGlob(value)
  } catch (e) {
    if (e instanceof GlobError) throw unprocessable(`Invalid branch filter: ${e.message}`, 'BranchFilter')
    throw e
  }
  return value
}

/** Gitea's IsValidSlackChannel: not blank, not a lone "#". */
function checkSlackChannel(channel: string): string {
  const value = channel.trim()
  if (value === '' || value === '#') throw badRequest('Invalid slack channel name')
  return value
}

/**
 * Whether an input makes a site hook a system hook: `is_system_webhook` in `config` (Gitea 1.23's
 * spelling, a Go boolean text) or beside it (the option's field in older Gitea); undefined when
 * neither says. Read (and checked) whatever the scope; only a site hook keeps it.
 */
function systemOf(input: HookInput): boolean | undefined {
  const text = input.config?.is_system_webhook
  const fromConfig = text === undefined || text === '' ? undefined : queryBool(text, 'config.is_system_webhook', 'Invalid is_system_webhook value')
  return input.is_system_webhook ?? fromConfig
}

interface EventsInput {
  events?: string[]
  push_only?: boolean
  send_everything?: boolean
  choose_events?: boolean
}

/** The event mode and chosen types of an input (`current` when it says nothing about them). */
function eventsOf(input: EventsInput, current?: { mode: EventMode; events: string[] }): { mode: EventMode; events: string[] } {
  const flags = [input.push_only && 'push_only', input.send_everything && 'send_everything', input.choose_events && 'choose_events'].filter(Boolean) as EventMode[]
  if (flags.length > 1) throw unprocessable('Only one of push_only, send_everything and choose_events may be set')
  let events = current?.events ?? ['push']
  if (input.events !== undefined || !current) {
    const selected = selectEvents(input.events)
    if (selected.unknown !== undefined) throw unprocessable(`Unknown event: ${selected.unknown}`, 'Events')
    events = selected.types
  }
  const mode = flags[0] ?? (input.events !== undefined ? 'choose_events' : (current?.mode ?? 'choose_events'))
  return { mode, events }
}

export interface HookInput extends EventsInput {
  type?: string
  config?: Record<string, string>
  active?: boolean
  branch_filter?: string
  authorization_header?: string
  is_system_webhook?: boolean
}

/** CreateHookOption → a new hook of the scope (Gitea's checks and messages; nothing stored on a refusal). */
export async function createHook(deps: AppDeps, scope: HookScope, input: HookInput & { type: string; config: Record<string, string> }): Promise<HookRow> {
  const type = input.type.trim().toLowerCase()
  if (!(HOOK_TYPES as readonly string[]).includes(type)) throw unprocessable(`Invalid hook type: ${input.type}`)
  for (const key of ['url', 'content_type']) if (input.config[key] === undefined) throw unprocessable(`Missing config option: ${key}`)
  const url = checkUrl(input.config.url!)
  const contentType = checkContentType(input.config.content_type!)
  let meta: Record<string, string> = {}
  if (type === 'slack') {
    if (input.config.channel === undefined) throw unprocessable('Missing config option: channel')
    meta = slackMeta(input.config)
  }
  const { mode, events } = eventsOf(input)
  const branchFilter = checkBranchFilter(input.branch_filter ?? '')
  const isSystem = systemOf(input) ?? false
  const now = nowUnix()
  // Counted in the insert's transaction (write transactions run one at a time): concurrent
  // creations cannot pass the bound together.
  return await writeTransaction(deps.db, async () => {
    await checkRoomForHook(deps, scope)
    return (await deps.db
      .insert(hooks)
      .values({
        repoId: 'repo' in scope ? scope.repo.id : null,
        ownerId: 'owner' in scope ? scope.owner.id : null,
        isSystem: 'site' in scope && isSystem,
        type,
        url,
        contentType,
        secret: input.config.secret ?? '',
        authorizationHeader: (input.authorization_header ?? '').trim(),
        meta: JSON.stringify(meta),
        eventMode: mode,
        events: JSON.stringify(events),
        branchFilter,
        isActive: input.active ?? false,
        createdUnix: now,
        updatedUnix: now,
      })
      .returning())[0]!
  })
}

/**
 * 422 when the scope (a repository, an owner, the site) already has WARREN_MAX_HOOKS_PER_REPO
 * hooks: every event of a repository is delivered to each of its hooks, its owner's and the
 * site's system hooks, so the count bounds the work one push can cause (and the site's bounds the
 * default hooks a new repository is given). Gitea has no such bound; no real team comes near it.
 */
async function checkRoomForHook(deps: AppDeps, scope: HookScope): Promise<void> {
  const limit = deps.config.maxHooksPerRepo
  const held = (await deps.db.select({ n: count() }).from(hooks).where(scopeWhere(scope)))[0]!.n
  const holder = 'repo' in scope ? 'a repository' : 'owner' in scope ? (scope.owner.type === 1 ? 'an organisation' : 'a user') : 'the site'
  if (held >= limit) throw unprocessable(`${holder} may have at most ${limit} webhooks`)
}

/**
 * Gives a new repository a copy of each of the site's default hooks (Gitea's
 * CopyDefaultWebhooksToRepo): its own hooks from then on, which its administrators may change or
 * delete; a default hook changed later changes no copy. Run inside the transaction that makes
 * the repository ready (src/modules/repos/create.ts buildRepository), for every way a repository
 * is made. At most WARREN_MAX_HOOKS_PER_REPO rows (the site's bound).
 */
export async function copyDefaultHooks(deps: AppDeps, repoId: number): Promise<void> {
  const defaults = await deps.db
    .select()
    .from(hooks)
    .where(and(siteHooks(), eq(hooks.isSystem, false)))
    .orderBy(hooks.id)
    .limit(deps.config.maxHooksPerRepo)
  if (defaults.length === 0) return
  const now = nowUnix()
  await deps.db.insert(hooks).values(defaults.map(({ id: _id, ...hook }) => ({ ...hook, repoId, isSystem: false, lastStatus: 0, createdUnix: now, updatedUnix: now })))
}

/** Slack's settings: the channel (checked) and its companions, rewritten together. */
const slackMeta = (config: Record<string, string>) => ({
  channel: checkSlackChannel(config.channel ?? ''),
  username: config.username ?? '',
  icon_url: config.icon_url ?? '',
  color: config.color ?? '',
})

/**
 * EditHookOption: `config` keys present replace (url, content_type, secret; slack's channel with
 * its companions); `events` present replaces (empty: push), absent leaves them; `active`,
 * `branch_filter`, `authorization_header` absent leave them; a site hook's `is_system_webhook`
 * present turns it into a system or a default hook.
 */
export async function editHook(deps: AppDeps, scope: HookScope, id: number, input: HookInput): Promise<HookRow> {
  const hook = await getHook(deps, scope, id)
  const set: Partial<HookRow> = { updatedUnix: nowUnix() }
  const config = input.config ?? {}
  if (config.url !== undefined) set.url = checkUrl(config.url)
  if (config.content_type !== undefined) set.contentType = checkContentType(config.content_type)
  if (config.secret !== undefined) set.secret = config.secret
  if (hook.type === 'slack' && config.channel !== undefined) set.meta = JSON.stringify(slackMeta(config))
  const { mode, events } = eventsOf(input, { mode: hook.eventMode as EventMode, events: eventsOfHook(hook) })
  set.eventMode = mode
  set.events = JSON.stringify(events)
  if (input.branch_filter !== undefined) set.branchFilter = checkBranchFilter(input.branch_filter)
  if (input.authorization_header !== undefined) set.authorizationHeader = input.authorization_header.trim()
  if (input.active !== undefined) set.isActive = input.active
  const isSystem = systemOf(input)
  if ('site' in scope && isSystem !== undefined) set.isSystem = isSystem
  // A write transaction, like deleteHook's: on SQLite it waits for the webhook thread's write lock
  // (a bare statement meeting it fails: "database is locked").
  const edited = await writeTransaction(deps.db, async () => (await deps.db.update(hooks).set(set).where(eq(hooks.id, hook.id)).returning())[0]!)
  // Committed: the delivery lanes running take the change from their next attempt.
  hooksChanged(deps)
  return edited
}

/** Deletes a hook and its deliveries (cascade). */
export async function deleteHook(deps: AppDeps, scope: HookScope, id: number): Promise<void> {
  const hook = await getHook(deps, scope, id)
  // A write transaction, like every write the webhook thread makes: its deliveries cascade away
  // with it, and on PostgreSQL a bare delete would take the hook's and its tasks' row locks in
  // the opposite order to the thread's task writes (a deadlock).
  await writeTransaction(deps.db, async () => {
    await deps.db.delete(hooks).where(eq(hooks.id, hook.id))
  })
  hooksChanged(deps)
}

// ---- deliveries ----------------------------------------------------------------------------

/** A hook's deliveries, newest first. */
export async function listDeliveries(deps: AppDeps, hook: HookRow, page: Page): Promise<Paged<HookTaskRow>> {
  const where = eq(hookTasks.hookId, hook.id)
  const total = (await deps.db.select({ n: count() }).from(hookTasks).where(where))[0]!.n
  const rows = (await selectTasks(deps.db).where(where).orderBy(desc(hookTasks.id)).limit(page.limit).offset(page.offset)) as HookTaskRow[]
  return { rows, total }
}

/** One delivery of the hook, by its id or its delivery id (uuid): 404 otherwise. */
export async function getDelivery(deps: AppDeps, hook: HookRow, key: string): Promise<HookTaskRow> {
  const byId = /^\d{1,15}$/.test(key)
  const byUuid = /^[0-9a-f-]{36}$/i.test(key)
  const task =
    byId || byUuid
      ? (await tasksWhere(deps.db, and(eq(hookTasks.hookId, hook.id), byId ? eq(hookTasks.id, Number(key)) : eq(hookTasks.uuid, key.toLowerCase()))))[0]
      : undefined
  if (!task) throw notFound(`hook delivery does not exist [hook: ${hook.id}, delivery: ${key}]`)
  return task
}

/**
 * Sends a recorded delivery again (Gitea's "Replay"): a new delivery with a new delivery id and
 * the same text, after the hook's pending ones for that repository.
 */
export async function redeliver(deps: AppDeps, hook: HookRow, task: HookTaskRow): Promise<HookTaskRow> {
  const uuid = crypto.randomUUID()
  const write = taskWriter(deps, [{ hookId: hook.id, repoId: task.repoId, uuid, eventId: task.eventId, eventType: task.eventType, text: task.payload, payloadId: task.payloadId, createdUnix: nowUnix() }])
  const written = await writeTransaction(deps.db, write)
  const copy = written ? (await tasksWhere(deps.db, eq(hookTasks.uuid, uuid)))[0] : undefined
  if (!copy) throw notFound(`hook does not exist [id: ${hook.id}]`)
  wakeDeliveries(deps)
  return copy
}

/**
 * `POST …/hooks/{id}/tests`: a push delivery of the default branch's head commit to this hook
 * alone (before = after = the head; whatever the hook's events), as Gitea. An empty repository
 * sends nothing; an inactive hook's is recorded unsent, as every task of an inactive hook
 * (src/webhooks/dispatcher.ts, Gitea's Deliver).
 */
export async function testHook(deps: AppDeps, repo: RepoRow, owner: UserRow, caller: UserRow, hook: HookRow): Promise<void> {
  const head = await getBranchHead(gitOfRow(deps, repo), repo.defaultBranch)
  if (!head) return
  const ref = `refs/heads/${repo.defaultBranch}`
  // The head commit alone (read as a new branch's commits, the newest first).
  const found = await pushCommits(deps, repo, ref, ZERO_ID, head.id)
  const commits = found.head ? [found.head] : []
  const payload = await pushPayload(
    { deps, repo, repository: await payloadRepo(deps, repo, owner), sender: toApiUser(deps.config, caller, null) },
    { ref, before: head.id, after: head.id },
    { commits, total: commits.length, head: found.head, compare: compareUrlPath(repo, head.id, head.id) },
  )
  const written = await writeTransaction(deps.db, taskWriter(deps, [newTask(deps, hook, repo.id, 0, 'push', payload)]))
  if (written === 0) throw new ApiError(404, `hook does not exist [id: ${hook.id}]`)
  wakeDeliveries(deps)
}
