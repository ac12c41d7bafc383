/**
 * A process's PostgreSQL session locks, all on ONE connection of their own (PostgreSQL advisory
 * locks belong to the session that took them, so a crash frees them with its connection): the
 * serving lock, the background jobs' leadership, work on one repository or pull request at a
 * time, and the claims on work in progress (pending pushes, merges) that tell the other processes
 * it is not abandoned. One connection instead of one per lock keeps a process's connection count
 * at its pool plus one.
 *
 * PostgreSQL grants a session a lock it already holds, so this process's own holders are kept
 * apart here: an exclusive lock is held by one caller of the process at a time (others wait, or
 * are refused by tryLock), shared ones are counted. Waiting for another process never blocks the
 * connection: the lock is tried again after a short pause, so the other locks on it keep moving.
 */
import type { ReservedSQL, SQL } from 'bun'
import { beingRepaired, type ClaimKind, type HeldLock } from './client'
import { databaseUnavailable } from './unavailable'

/** The kinds of work a process claims while it runs (DatabaseRuntime.claim). */

/**
 * Advisory lock namespaces of the claims: a claim is the two-key advisory lock (namespace, id),
 * which pg_locks shows as classid = namespace, objid = id, objsubid = 2 (the one-key locks of
 * lockKey show objsubid = 1, so the two never meet).
 */
export const CLAIM_SPACE: Record<ClaimKind, number> = { push: 0x57720001, merge: 0x57720002, 'folder-move': 0x57720003 }

/** Pauses between tries of a lock another process holds: doubling from the first to the last. */
const FIRST_RETRY_MS = 10
const LAST_RETRY_MS = 250

interface LocalHold {
  exclusive: boolean
  count: number
}

export class SessionLocks {
  private connection: Promise<ReservedSQL> | null = null
  /** Bumped whenever the connection is lost: locks taken in an earlier generation went with it. */
  private generation = 0
  private readonly local = new Map<string, LocalHold>()
  private readonly waiting = new Map<string, (() => void)[]>()

  constructor(private readonly pool: SQL) {}

  /** Takes the named lock without waiting; null when another holder (in this process or another) conflicts. */
  tryLock(name: string, mode: 'exclusive' | 'shared'): Promise<HeldLock | null> {
    return this.tryKey(name, lockKey(name), mode === 'exclusive')
  }

  /**
   * Takes a claim exclusively without waiting (see DatabaseRuntime.takeOver): null while any
   * process, this one included, claims the work.
   */
  takeOver(kind: ClaimKind, id: number): Promise<HeldLock | null> {
    return this.tryKey(claimName(kind, id), claimKey(kind, id), true)
  }

  private async tryKey(name: string, key: string, exclusive: boolean): Promise<HeldLock | null> {
    if (!this.takeLocal(name, exclusive)) return null
    try {
      const { rows, generation } = await this.query(`select ${exclusive ? 'pg_try_advisory_lock' : 'pg_try_advisory_lock_shared'}(${key}) as got`)
      if (!rows[0]?.got) {
        this.dropLocal(name)
        return null
      }
      return this.held(generation, `${exclusive ? 'pg_advisory_unlock' : 'pg_advisory_unlock_shared'}(${key})`, () => this.dropLocal(name))
    } catch (e) {
      this.dropLocal(name)
      throw e
    }
  }

  /** Runs `fn` holding the named lock exclusively, waiting for it as long as it takes. */
  async withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const key = lockKey(name)
    const generation = (await this.waitFor(name, key, true, Infinity))!
    try {
      return await fn()
    } finally {
      try {
        await this.unlock(generation, `pg_advisory_unlock(${key})`)
      } finally {
        this.dropLocal(name)
      }
    }
  }

  /**
   * Claims work in progress (see DatabaseRuntime.claim): a shared lock. It waits only while a
   * repair has taken the claim over (takeOver), one repair's while, and at most `waitMs` (then
   * refused: beingRepaired); never on the connection itself.
   */
  async claim(kind: ClaimKind, id: number, waitMs: number): Promise<HeldLock> {
    const name = claimName(kind, id)
    const key = claimKey(kind, id)
    const generation = await this.waitFor(name, key, false, Date.now() + waitMs)
    if (generation === null) throw beingRepaired()
    return this.held(generation, `pg_advisory_unlock_shared(${key})`, () => this.dropLocal(name))
  }

  /**
   * Takes lock `key` (named `name` in this process), waiting until `deadline` (a Date.now() time;
   * Infinity: as long as it takes): for this process's conflicting holders, then for other
   * processes' (tried again after a pause, so the connection keeps serving the other locks).
   * Answers the connection's generation it was taken in; null when the deadline passed first.
   */
  private async waitFor(name: string, key: string, exclusive: boolean, deadline: number): Promise<number | null> {
    while (!this.takeLocal(name, exclusive)) {
      if (Date.now() >= deadline) return null
      await new Promise<void>((resolve) => {
        this.waiting.set(name, [...(this.waiting.get(name) ?? []), resolve])
        if (deadline !== Infinity) setTimeout(resolve, deadline - Date.now()).unref?.()
      })
    }
    try {
      for (let pause = FIRST_RETRY_MS; ; pause = Math.min(pause * 2, LAST_RETRY_MS)) {
        const got = await this.query(`select ${exclusive ? 'pg_try_advisory_lock' : 'pg_try_advisory_lock_shared'}(${key}) as got`)
        if (got.rows[0]?.got) return got.generation
        if (Date.now() >= deadline) {
          this.dropLocal(name)
          return null
        }
        await Bun.sleep(Math.min(pause, Math.max(0, deadline - Date.now())))
      }
    } catch (e) {
      this.dropLocal(name)
      throw e
    }
  }

  /** Releases every lock (the connection goes back) and closes the lock pool. */
  async close(): Promise<void> {
    const connection = await this.connection?.catch(() => null)
    this.connection = null
    await connection?.close().catch(() => {})
    await this.pool.close()
  }

  private held(generation: number, unlock: string, after: () => void): HeldLock {
    let released = false
    return {
      release: async () => {
        if (released) return
        released = true
        try {
          await this.unlock(generation, unlock)
        } finally {
          after()
        }
      },
      // Asking the connection something finds out whether it was cut since (the server restarted,
      // the session was terminated): the lock is gone then, though no one released it.
      stillHeld: async () => {
        if (released || generation !== this.generation) return false
        await this.query('select 1').catch(() => {})
        return generation === this.generation
      },
    }
  }

  /**
   * Unlocks (`unlock`: the call of pg_advisory_unlock*) on the connection the lock was taken on;
   * one lost since took the lock with it. An unlock that fails or answers false (the session does
   * not hold it as thought) may leave the lock held for as long as the session lives: the
   * connection is closed then, a new generation begun, and every lock it held goes with it (their
   * holders see it: stillHeld; a mover's or a repair's commit checks its intent is still there).
   */
  private async unlock(generation: number, unlock: string): Promise<void> {
    if (generation !== this.generation) return
    const done = await this.query(`select ${unlock} as done`).then(({ rows }) => rows[0]?.done === true, () => false)
    if (!done) this.dropConnection(generation)
  }

  /** Closes the lock connection of `generation` (if still the current one): every lock taken on it goes. */
  private dropConnection(generation: number): void {
    if (generation !== this.generation) return
    const connection = this.connection
    this.connection = null
    this.generation++
    connection?.then((c) => c.close()).catch(() => {})
  }

  private async query(text: string): Promise<{ rows: any[]; generation: number }> {
    this.connection ??= this.pool.reserve().catch((e) => {
      this.connection = null
      throw e
    })
    const pending = this.connection
    const connection = await pending
    const generation = this.generation
    try {
      return { rows: await connection.unsafe(text), generation }
    } catch (e) {
      if (databaseUnavailable(e) && this.connection === pending) {
        // The session is gone and every lock with it: the next lock takes a new connection.
        this.connection = null
        this.generation++
        connection.close().catch(() => {})
      }
      throw e
    }
  }

  private takeLocal(name: string, exclusive: boolean): boolean {
    const hold = this.local.get(name)
    if (!hold) this.local.set(name, { exclusive, count: 1 })
    else if (!exclusive && !hold.exclusive) hold.count++
    else return false
    return true
  }

  private dropLocal(name: string): void {
    const hold = this.local.get(name)
    if (!hold || --hold.count > 0) return
    this.local.delete(name)
    const waiters = this.waiting.get(name)
    this.waiting.delete(name)
    for (const wake of waiters ?? []) wake()
  }
}

/** A claim's name among this process's holders (never a lock name: those never hold a space). */
const claimName = (kind: ClaimKind, id: number): string => `claim ${kind} ${id}`

/** A claim's advisory lock key, the pair (namespace, id), as SQL text. */
const claimKey = (kind: ClaimKind, id: number): string => `${CLAIM_SPACE[kind]}, ${checkedId(id)}`

/** A claim's id as SQL text: a positive 32-bit integer (a row id), the second key of the lock. */
function checkedId(id: number): string {
  if (!Number.isSafeInteger(id) || id < 1 || id > 0x7fffffff) throw new Error(`cannot claim work with id ${id}`)
  return String(id)
}

/** A 63-bit advisory lock key for a lock name (FNV-1a), as SQL text. */
export function lockKey(name: string): string {
  let h = 0xcbf29ce484222325n
  for (const byte of new TextEncoder().encode(`warren:${name}`)) h = ((h ^ BigInt(byte)) * 0x100000001b3n) & 0x7fffffffffffffffn
  return h.toString()
}

/**
 * Of the ids of work of one kind, those no live process claims (its claimer died, or gave the
 * work up without finishing it): read from pg_locks, where every session's advisory locks on
 * this database show, this process's own included.
 */
export async function unclaimedIds(pool: SQL, kind: ClaimKind, ids: number[]): Promise<number[]> {
  if (ids.length === 0) return []
  const rows = await pool.unsafe(
    `select objid::int8 as id from pg_locks
      where locktype = 'advisory' and granted and objsubid = 2 and classid = ${CLAIM_SPACE[kind]}
        and database = (select oid from pg_database where datname = current_database())`,
  )
  const claimed = new Set(rows.map((r: { id: number | string | bigint }) => Number(r.id)))
  return ids.filter((id) => !claimed.has(id))
}
