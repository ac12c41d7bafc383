import { and, eq, inArray, isNull, or, sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import type { UserRow } from '../auth/caller'
import { AccessMode, permissionOf, repoAccess, type RepoRow } from '../auth/access'
import { perConnection, writeTransaction } from '../db/client'
import { hookPayloads, hooks, hookTasks, issues, repositories, users, type HookRow } from '../db/schema'
import { advanceDone, eventsAfterDone, type EventRecord } from '../events/outbox'
import { ghostUser, toApiUser, type ApiUser } from '../convert/user'
import type { ApiRepo } from '../convert/repo'
import { nowUnix } from '../lib/time'
import { EVENT_TYPE_OF, OWNER_ONLY_TYPES, PAYLOAD_ACCESS, hookWants, type EventMode, type HookEventType, type HookType } from './events'
import { deliveryText, payloadJson, type HookMeta } from './formats'
import { branchMatches } from '../lib/glob'
import { eventsOfHook } from '../convert/hook'
import { builderOf, OWNER_PAYLOAD_BUILDERS, payloadRepo } from './payloads'
import { errorFields, loggerOf } from '../lib/log'

/**
 * The outbox consumer: events → hook tasks. Each round reads a batch of events, finds the hooks
 * each one is for (hooksReaching: the repository's own, its owner's and the system hooks; active,
 * wanting the event type, passing the branch filter), builds the payloads, and writes the tasks
 * and the consumer's "done" mark in ONE transaction: an event is either wholly turned into tasks
 * and acknowledged, or not at all (and read again after a crash), so no task is lost or made twice.
 */

export const WEBHOOK_CONSUMER = 'webhooks'
/** Events per round. */
export const TASK_BATCH = 100

/** A task to write: its text, or the payload row it shares (a redelivery's). */
export type NewTask = Omit<typeof hookTasks.$inferInsert, 'payload' | 'payloadId'> & { text: string; payloadId?: number | null }

/** The branch an event is about (push to a branch, branch created or deleted), for branch filters. */
function branchOf(event: EventRecord): string | null {
  const ref = event.payload.ref
  if (typeof ref !== 'string') return null
  if (event.kind === 'push') return ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null
  if (event.kind === 'ref.created' || event.kind === 'ref.deleted') return event.payload.refType === 'branch' ? ref : null
  return null
}


/** An owner's hooks (an organisation's or a user's): `owner_id` without a repository. */
export const ownerHooks = (ownerId: number | Placeholder): SQL => and(eq(hooks.ownerId, ownerId), isNull(hooks.repoId))!

/** The site's hooks (Gitea's admin hooks: system and default ones): neither a repository nor an owner. */
export const siteHooks = (): SQL => and(isNull(hooks.ownerId), isNull(hooks.repoId))!

/**
 * Which hooks an event reaches (Gitea's PrepareWebhooks): an event of a repository, the
 * repository's own, its owner's (a user's as an organisation's) and the site's system hooks; an
 * owner's event (`ownerOnly`: a package's, of no repository) and a repository's creation or
 * deletion (OWNER_ONLY_TYPES), the owner's and the system hooks. A default hook (a site hook not a
 * system one) reaches nothing: its copies in the repositories made after it do, as repository hooks.
 */
export function hooksReaching(repoId: number, ownerId: number, ownerOnly: boolean): SQL {
  const owner = ownerHooks(ownerId)
  const system = and(siteHooks(), eq(hooks.isSystem, true))
  return (ownerOnly ? or(owner, system) : or(eq(hooks.repoId, repoId), owner, system))!
}

/** Whether `hook` (whose chosen types are `chosen`) takes `event` of `type`: active, chosen, made before it, branch filter passed. */
function hookTakes(hook: HookRow, chosen: readonly string[], event: EventRecord, type: HookEventType): boolean {
  if (!hook.isActive || hook.createdUnix > event.createdUnix) return false
  if (!hookWants(hook.eventMode as EventMode, chosen, type)) return false
  const branch = branchOf(event)
  return branch === null || branchMatches(hook.branchFilter, branch)
}

/**
 * A new task's row for `hook`: the payload turned into the text this hook type is sent (`json`:
 * the payload's gitea/gogs text when already made, shared by the event's hooks).
 */
export function newTask(deps: AppDeps, hook: HookRow, repoId: number, eventId: number, type: HookEventType, payload: Record<string, unknown>, json?: string): NewTask {
  const text = deliveryText(hook.type as HookType, type, payload, {
    secret: hook.secret,
    withSecret: deps.config.webhookPayloadSecret,
    meta: hook.type === 'gitea' || hook.type === 'gogs' ? {} : (JSON.parse(hook.meta) as HookMeta),
    json,
  })
  return { hookId: hook.id, repoId, uuid: crypto.randomUUID(), eventId, eventType: type, text, createdUnix: nowUnix() }
}

interface Subject {
  repo: RepoRow
  owner: UserRow
  /** The Repository record of payloads. */
  repository: ApiRepo
}

/**
 * What one round looks up once whatever its number of events (a burst of a repository's events
 * is the common case): each repository with its owner and record, the hooks that may fire for
 * it, each hook's chosen types, each actor's User record.
 */
class RoundLookups {
  private readonly subjects = new Map<number, Subject | null>()
  private readonly hooksOf = new Map<string, { hook: HookRow; chosen: string[] }[]>()
  private readonly senders = new Map<number, ApiUser>()

  constructor(private readonly deps: AppDeps) {}

  /** The repository's current row, owner and record (null: gone). */
  async current(repoId: number): Promise<Subject | null> {
    let found = this.subjects.get(repoId)
    if (found === undefined) {
      const repo = (await this.deps.db.select().from(repositories).where(eq(repositories.id, repoId)))[0]
      const owner = repo && (await this.deps.db.select().from(users).where(eq(users.id, repo.ownerId)))[0]
      found = repo && owner ? { repo, owner, repository: await payloadRepo(this.deps, repo, owner) } : null
      this.subjects.set(repoId, found)
    }
    return found
  }

  /** The active hooks that may fire for events of a repository (hooksReaching). */
  async candidates(repoId: number, ownerId: number, ownerOnly: boolean) {
    const key = `${repoId}:${ownerId}:${ownerOnly}`
    let found = this.hooksOf.get(key)
    if (!found) {
      found = (await this.deps.db
        .select()
        .from(hooks)
        .where(and(eq(hooks.isActive, true), hooksReaching(repoId, ownerId, ownerOnly))))
        .map((hook) => ({ hook, chosen: eventsOfHook(hook) }))
      this.hooksOf.set(key, found)
    }
    return found
  }

  private readonly modes = new Map<string, Promise<number>>()

  /**
   * The access a payload's repository record shows (PAYLOAD_ACCESS): the owner's, none, or a
   * person's (the actor, the issue's poster) through the one access rule, once per repository
   * and person a round.
   */
  accessFor(subject: Subject, event: EventRecord): Promise<number> {
    const rule = PAYLOAD_ACCESS[event.kind]
    const access = typeof rule === 'function' ? rule(event) : rule
    if (access === 'owner') return Promise.resolve(AccessMode.Owner)
    if (access === 'none') return Promise.resolve(AccessMode.None)
    const key = `${subject.repo.id}:${access}:${access === 'actor' ? event.actorId : event.issueId}`
    let mode = this.modes.get(key)
    if (!mode) {
      mode = (async () => {
        const personId =
          access === 'actor' ? event.actorId : event.issueId === null ? null : ((await this.deps.db.select({ id: issues.posterId }).from(issues).where(eq(issues.id, event.issueId)))[0]?.id ?? null)
        const person = personId === null ? undefined : (await this.deps.db.select().from(users).where(eq(users.id, personId)))[0]
        return (await repoAccess(this.deps.db, person ?? null, subject.repo, subject.owner)).mode
      })()
      this.modes.set(key, mode)
    }
    return mode
  }

  /** The actor's User record (the Ghost when unknown or deleted). */
  async sender(actorId: number | null): Promise<ApiUser> {
    if (actorId === null) return ghostUser(this.deps.config)
    let found = this.senders.get(actorId)
    if (!found) {
      const actor = (await this.deps.db.select().from(users).where(eq(users.id, actorId)))[0]
      found = actor ? toApiUser(this.deps.config, actor, null) : ghostUser(this.deps.config)
      this.senders.set(actorId, found)
    }
    return found
  }
}

/**
 * The repository an event is about, and its owner: the current row; when the repository is gone
 * (deleted before its events were handled), the row as an event kept it (repo.created and
 * repo.deleted carry one), so the owner's hooks still hear of its creation and deletion.
 */
async function subjectOf(deps: AppDeps, lookups: RoundLookups, event: EventRecord): Promise<Subject | null> {
  if (event.repoId === null) return null
  const current = await lookups.current(event.repoId)
  if (current) return current
  const kept = (event.kind === 'repo.created' || event.kind === 'repo.deleted' ? event.payload.repository : undefined) as RepoRow | undefined
  const owner = kept && (await deps.db.select().from(users).where(eq(users.id, kept.ownerId)))[0]
  return kept && owner ? { repo: kept, owner, repository: await payloadRepo(deps, kept, owner) } : null
}

/**
 * The tasks of one event (none when no hook takes it, or its rows are gone). The payload is built
 * once, and its gitea/gogs text made once, for all the event's hooks. An owner's event (a
 * package's: OWNER_PAYLOAD_BUILDERS) reaches the owner's hooks and the system hooks, as Gitea's
 * PrepareWebhooks with an owner and no repository; its tasks have repository 0 (Gitea's RepoID 0),
 * one lane per hook.
 */
async function tasksOfEvent(deps: AppDeps, lookups: RoundLookups, event: EventRecord): Promise<NewTask[]> {
  const type = EVENT_TYPE_OF[event.kind]?.(event) ?? null
  if (type === null) return []
  const ownerBuilder = OWNER_PAYLOAD_BUILDERS[event.kind]
  if (ownerBuilder) {
    const ownerId = ownerBuilder.ownerOf(event)
    if (ownerId === null) return []
    const build = async () => await ownerBuilder.build({ deps, event, sender: await lookups.sender(event.actorId) })
    return await tasksFor(deps, event, type, 0, await lookups.candidates(0, ownerId, true), build)
  }
  const builder = builderOf(event)
  if (!builder) return []
  const subject = await subjectOf(deps, lookups, event)
  if (!subject) return []
  const build = async () => {
    const prepared = builder.prepare ? await builder.prepare(deps, event, subject.repo) : undefined
    const repository = { ...subject.repository, permissions: permissionOf(await lookups.accessFor(subject, event)) }
    return await builder.build({ deps, event, ...subject, repository, sender: await lookups.sender(event.actorId), prepared })
  }
  return await tasksFor(deps, event, type, subject.repo.id, await lookups.candidates(subject.repo.id, subject.owner.id, OWNER_ONLY_TYPES.has(type)), build)
}

/** The tasks of `event` for those of `candidates` that take it, its payload built (once) only when one does. */
async function tasksFor(
  deps: AppDeps,
  event: EventRecord,
  type: HookEventType,
  repoId: number,
  candidates: { hook: HookRow; chosen: string[] }[],
  build: () => Promise<Record<string, unknown> | null>,
): Promise<NewTask[]> {
  const targets = candidates.filter((c) => hookTakes(c.hook, c.chosen, event, type)).map((c) => c.hook)
  if (targets.length === 0) return []
  const payload = await build()
  if (!payload) return []
  const json = targets.some((h) => h.type === 'gitea' || h.type === 'gogs') ? payloadJson(payload) : undefined
  return targets.map((hook) => newTask(deps, hook, repoId, event.id, type, payload, json))
}

/** Tasks written by one insert at most (a round's tasks go in as few as that allows). */
const TASKS_PER_INSERT = 32

/** The columns a task's insert binds (the others take their defaults). */
const TASK_FIELDS = ['hookId', 'repoId', 'uuid', 'eventId', 'eventType', 'payloadId', 'createdUnix'] as const

/**
 * The inserts of taskWriter, prepared once per connection: a text's, and the tasks' for each
 * number of rows up to TASKS_PER_INSERT (prepared at its first use: a statement of many rows is a
 * new one at each count), so the tasks of a round are one statement, not one each.
 */
const taskInsertsOf = perConnection((db) => {
  const p = sql.placeholder
  const byCount = new Map<number, { execute(params: Record<string, unknown>): Promise<unknown> }>()
  return {
    payload: db.insert(hookPayloads).values({ text: p('text') } as never).returning({ id: hookPayloads.id }).prepare(),
    /** The insert of `count` tasks, their values bound as `{field}{row}`. */
    tasks(count: number) {
      let statement = byCount.get(count)
      if (!statement) {
        const rows = Array.from({ length: count }, (_, i) => ({ ...Object.fromEntries(TASK_FIELDS.map((f) => [f, p(`${f}${i}`)])), payload: '' }))
        byCount.set(count, (statement = db.insert(hookTasks).values(rows as never).prepare()))
      }
      return statement
    },
  }
})

/**
 * Writes tasks; made before the write transaction, run inside it (`await writer()`), answering
 * how many were written. Each distinct text is written once (hook_payloads) and shared by the
 * tasks sent it (a task given `payloadId` shares that row); a task whose hook is gone by then (a
 * hook deleted meanwhile) is not written. The lookup of the hooks is built here, before the write
 * lock is taken; inside, the transaction only binds and steps statements, the inserts prepared
 * once per connection (the tasks in statements of up to TASKS_PER_INSERT rows) and sent without
 * awaiting each (the API waits for that lock).
 */
export function taskWriter(deps: AppDeps, tasks: NewTask[]): () => Promise<number> {
  if (tasks.length === 0) return async () => 0
  const db = deps.db
  const hookIds = [...new Set(tasks.map((t) => t.hookId))]
  const aliveHooks = db.select({ id: hooks.id }).from(hooks).where(inArray(hooks.id, hookIds)).prepare()
  return async () => {
    const alive = new Set(((await aliveHooks.execute()) as { id: number }[]).map((h) => h.id))
    const kept = alive.size === hookIds.length ? tasks : tasks.filter((t) => alive.has(t.hookId))
    const inserts = taskInsertsOf(db)
    // Sent together, not each awaited before the next (on PostgreSQL they share a round trip):
    // the distinct texts first, then the tasks.
    const texts = [...new Set(kept.filter((t) => t.payloadId == null).map((t) => t.text))]
    const ids = await Promise.all(texts.map(async (text) => ((await inserts.payload.execute({ text })) as { id: number }[])[0]!.id))
    const stored = new Map(texts.map((text, i) => [text, ids[i]!]))
    const rows = kept.map(({ text, payloadId, ...task }) => ({ ...task, payloadId: payloadId ?? stored.get(text)! }))
    const writes: Promise<unknown>[] = []
    for (let i = 0; i < rows.length; i += TASKS_PER_INSERT) {
      const chunk = rows.slice(i, i + TASKS_PER_INSERT)
      const params: Record<string, unknown> = {}
      chunk.forEach((row, n) => TASK_FIELDS.forEach((f) => (params[`${f}${n}`] = row[f] ?? null)))
      writes.push(inserts.tasks(chunk.length).execute(params))
    }
    // In id order: each chunk's rows in their order, the chunks one after the other.
    await Promise.all(writes)
    return kept.length
  }
}

/**
 * One round: reads the events past the consumer's position (a read: no write lock), builds their
 * payloads and task texts (reads only), then writes the tasks and moves the position in ONE short
 * transaction (statements built before it, each distinct text once, taskWriter: the API waits for that lock, and on SQLite
 * this thread's connection takes it at SQLite's level, where a waiting request sleeps). The
 * position moves only from where it was read (advanceDone): had anything else handled those
 * events meanwhile, nothing is written. Answers how many events were handled and how many tasks
 * written (0 events: the outbox is drained). `beforeBuilding`, when there are events, is awaited
 * before any work on them (the loop's wait for a pause between requests); when it answers false,
 * the round ends there, as if the outbox were drained, and the events stay for the next.
 */
export async function turnEventsIntoTasks(deps: AppDeps, limit = TASK_BATCH, beforeBuilding?: () => Promise<boolean>): Promise<{ events: number; tasks: number }> {
  const { doneId, events } = await eventsAfterDone(deps.db, WEBHOOK_CONSUMER, limit)
  if (events.length === 0 || (beforeBuilding && !(await beforeBuilding()))) return { events: 0, tasks: 0 }
  const lookups = new RoundLookups(deps)
  const tasks: NewTask[] = []
  for (const event of events) {
    try {
      tasks.push(...(await tasksOfEvent(deps, lookups, event)))
    } catch (e) {
      // A payload that cannot be built must not stop every later event: it is reported and skipped.
      loggerOf(deps.config).error('building a webhook payload failed', { event: event.id, kind: event.kind, ...errorFields(e) })
    }
  }
  const write = taskWriter(deps, tasks)
  const written = await writeTransaction(deps.db, async () => {
    if (!(await advanceDone(deps.db, WEBHOOK_CONSUMER, doneId, events[events.length - 1]!.id))) return 0
    return await write()
  })
  return { events: events.length, tasks: written }
}
