import { existsSync, mkdirSync, renameSync } from 'node:fs'
import { dirname, isAbsolute, join, relative } from 'node:path'
import { eq, inArray } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { claimWork, repairAbandoned, writeTransaction, type HeldLock } from '../../db/client'
import { folderMoves } from '../../db/schema'
import { ApiError, conflict } from '../../lib/errors'
import { errorFields, loggedFailures, loggerOf } from '../../lib/log'
import { nowUnix } from '../../lib/time'

/**
 * The one way a folder under {data}/repositories moves with the rows that name it (a repository
 * renamed or transferred, an owner renamed): the intent is written first (table folder_moves),
 * then the folder moves, then `write` runs in the transaction that also removes the intent. A
 * failure of `write` moves the folder back and removes the intent; a crash leaves the intent,
 * and the start-up repair (finishFolderMoves) puts the folder back where the unchanged rows
 * still look for it; while other processes serve the database, the leftover repair of a running
 * one does the same for the intents no running process claims (repairAbandonedFolderMoves): each
 * intent is claimed (claimWork) in the transaction that writes it and released once it is gone.
 * A folder already missing (see repairRepositories) is not an error: the rows
 * still change. `beside`: folders that move with it when they exist (a repository's wiki), each
 * with its own intent. `afterMove` runs once the folders are in their new place, before `write`.
 */
export async function moveFolderWithRows<T>(
  deps: AppDeps,
  from: string,
  to: string,
  write: () => Promise<T>,
  opts: { taken: string; afterMove?: () => Promise<void>; beside?: readonly (readonly [string, string])[] },
): Promise<T> {
  if (from === to) return await writeTransaction(deps.db, write)
  const root = rootOf(deps)
  // One move of a folder at a time: a second intent for it is refused by the unique index on
  // from_path. Also when the folder is gone: gone because another move of it is under way (its
  // intent is written before it moves the folder), writing the rows now could name a place the
  // folder never reaches.
  // Each intent claimed before it commits: no other process ever sees it unclaimed while this one lives.
  const claims: HeldLock[] = []
  const release = async () => {
    for (const claim of claims.splice(0)) await claim.release().catch(() => {})
  }
  const intend = async (f: string, t: string): Promise<number> => {
    const [written] = await deps.db
      .insert(folderMoves)
      .values({ fromPath: relative(root, f), toPath: relative(root, t), createdUnix: nowUnix() })
      .onConflictDoNothing()
      .returning({ id: folderMoves.id })
    if (!written) throw conflict(BUSY)
    claims.push(await claimWork(deps.db, 'folder-move', written.id))
    return written.id
  }
  const forget = (ids: number[]) => (ids.length ? deps.db.delete(folderMoves).where(inArray(folderMoves.id, ids)).returning({ id: folderMoves.id }) : Promise.resolve([]))
  // The rows change only while every intent is still there: one gone means this process's claim
  // went (its lock connection dropped) and a repair put the folder back; the rows' change is
  // rolled back (the throw) rather than committed naming a place the folder is not.
  const withRows = (ids: number[]) => async () => {
    const result = await write()
    if ((await forget(ids)).length !== ids.length) throw conflict(TAKEN_OVER)
    return result
  }
  try {
    // Nothing to move: the intent only guards the rows' write, in the same transaction.
    if (!existsSync(from)) return await writeTransaction(deps.db, async () => await withRows([await intend(from, to)])())
    return await moveThenWrite()
  } finally {
    // After the intents are gone (or, when the process dies, with it).
    await release()
  }
  async function moveThenWrite(): Promise<T> {
    // The folders that go with it (a repository's wiki), those that exist; each move has its intent.
    const folders = [[from, to] as const, ...(opts.beside ?? []).filter(([f, t]) => f !== t && existsSync(f))]
    if (folders.some(([, t]) => existsSync(t))) throw conflict(opts.taken)
    const intents: number[] = []
    const moved: (readonly [string, string])[] = []
    // A folder a repair already put back (its intent gone, TAKEN_OVER), or is putting back right
    // now (the rename finding its folder gone), is left where it is.
    const undo = async () => {
      for (const [f, t] of moved.reverse()) {
        try {
          if (existsSync(t) && !existsSync(f)) renameSync(t, f)
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
        }
      }
      await forget(intents)
    }
    try {
      for (const [f, t] of folders) {
        intents.push(await writeTransaction(deps.db, () => intend(f, t)))
        mkdirSync(dirname(t), { recursive: true })
        renameSync(f, t)
        moved.push([f, t])
      }
    } catch (e) {
      await undo()
      // Gone meanwhile: another move of it finished (its intent removed) after this one found it.
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw conflict(BUSY)
      throw e
    }
    try {
      await opts.afterMove?.()
      return await writeTransaction(deps.db, withRows(intents))
    } catch (e) {
      await undo()
      throw e
    }
  }
}

const BUSY = 'the repository is being moved or renamed; try again'
const TAKEN_OVER = 'the move was undone by a repair while under way; try again'

/** Whether `e` is moveFolderWithRows' refusal because another move of the same folder is under way. */
export const isFolderBusy = (e: unknown): boolean => e instanceof ApiError && e.status === 409 && e.message === BUSY

/** moveFolderWithRows' refusal while another move of the folder is under way (for callers that find it so themselves). */
export const folderBusy = (): ApiError => conflict(BUSY)

/**
 * Whether a move of a folder holding `path` (its owner's folder, renamed) is under way in any
 * process: its intent is written before the folder moves and removed with the rows' change, so a
 * folder missing while such an intent stands is moving, not lost. (A move of `path` itself is
 * refused by the unique index on the intents.)
 */
export async function moveUnderWay(deps: AppDeps, path: string): Promise<boolean> {
  const parts = relative(rootOf(deps), path).split('/')
  const holders = parts.slice(0, -1).map((_, i) => parts.slice(0, i + 1).join('/'))
  if (holders.length === 0) return false
  return (await deps.db.select({ id: folderMoves.id }).from(folderMoves).where(inArray(folderMoves.fromPath, holders)).limit(1)).length > 0
}

const rootOf = (deps: AppDeps) => join(deps.config.dataDir, 'repositories')

/**
 * The start-up repair of folder moves a crash interrupted (no other process runs): each intent
 * left means its rows never changed, so a folder found at the new place and not at the old is
 * moved back; then the intent goes. Answers how many folders were moved back; throws, naming
 * them, when any could not be (start-up and `warren doctor --fix` stop there: serving with a
 * folder away from where its rows look would lose it).
 */
export async function finishFolderMoves(deps: AppDeps): Promise<number> {
  const { movedBack, failures } = await putBack(deps, await deps.db.select().from(folderMoves))
  if (failures.length) {
    const listed = failures.map(({ move, error }) => `${move.toPath} -> ${move.fromPath}: ${error instanceof Error ? error.message : String(error)}`)
    throw new Error(`${failures.length} interrupted folder moves could not be undone (their intents kept in folder_moves): ${listed.join('; ')}`)
  }
  return movedBack
}

/**
 * The same while other processes serve the database (jobs/leftover-repair): only the intents no
 * running process claims, those of a process that died mid-move (its claim went with its
 * connection), each taken over and read again first (repairAbandoned: a mover that finished
 * between the reads removed its intent before releasing its claim, and its folder stays).
 * Answers how many folders were moved back. A move that fails is left for the next round, logged
 * the first time only.
 */
export async function repairAbandonedFolderMoves(deps: AppDeps, opts: { afterListing?: () => Promise<void> } = {}): Promise<number> {
  const listed = await deps.db.select({ id: folderMoves.id }).from(folderMoves)
  if (listed.length === 0) return 0
  const known = failedMoves(deps)
  const repair = async (moves: (typeof folderMoves.$inferSelect)[]) => {
    const { movedBack, failures } = await putBack(deps, moves)
    for (const move of moves) if (!failures.some((f) => f.move.id === move.id)) known.delete(move.id)
    for (const { move, error } of failures) {
      if (known.has(move.id)) continue
      known.add(move.id)
      loggerOf(deps.config).error('moving a folder back failed; the next repairs try again (logged once)', { from: move.toPath, to: move.fromPath, ...errorFields(error) })
    }
    return movedBack
  }
  return await repairAbandoned(deps.db, 'folder-move', listed.map((m) => m.id), { reread: (ids) => deps.db.select().from(folderMoves).where(inArray(folderMoves.id, ids)), repair }, opts.afterListing)
}

/** The intents whose folder failed to move back, by server: logged the first time, not every round after. */
const failedMoves = loggedFailures()

/**
 * Moves each intent's folder back where the rows look for it, then removes the intent. One move
 * that fails (a rename refused) keeps its intent and is answered among `failures`; the others go on.
 */
async function putBack(deps: AppDeps, moves: (typeof folderMoves.$inferSelect)[]) {
  const root = rootOf(deps)
  const inside = (p: string) => !isAbsolute(p) && !relative(root, join(root, p)).startsWith('..')
  let movedBack = 0
  const failures: { move: typeof folderMoves.$inferSelect; error: unknown }[] = []
  for (const move of moves) {
    try {
      const from = join(root, move.fromPath)
      const to = join(root, move.toPath)
      if (inside(move.fromPath) && inside(move.toPath) && existsSync(to) && !existsSync(from)) {
        mkdirSync(dirname(from), { recursive: true })
        renameSync(to, from)
        movedBack++
        loggerOf(deps.config).warn('moved a folder back: the rows naming its new place were never written', { from: move.toPath, to: move.fromPath })
      }
      await deps.db.delete(folderMoves).where(eq(folderMoves.id, move.id))
    } catch (error) {
      failures.push({ move, error })
    }
  }
  return { movedBack, failures }
}

/**
 * The folders a folder move under way (in any process, or left by a dead one) has for source or
 * target, relative to repositories/ (`owner` or `owner/name.git`): what is in them is no
 * unadopted repository's, and nothing but the move (or its repair) may touch it.
 */
export async function movingFolders(deps: AppDeps): Promise<string[]> {
  return (await deps.db.select({ from: folderMoves.fromPath, to: folderMoves.toPath }).from(folderMoves)).flatMap((m) => [m.from, m.to])
}

/** Whether `path` (relative to repositories/) is one of `moving` (movingFolders) or inside one. */
export const isMoving = (moving: readonly string[], path: string): boolean => moving.some((m) => path === m || path.startsWith(`${m}/`))
