import { and, asc, eq, gt, inArray, lte, notExists, sql, getTableColumns, type SQL } from 'drizzle-orm'
import { writeTransaction, type Db } from '../db/client'
import { hookPayloads, hookTasks, type HookTaskRow } from '../db/schema'
import { inJsonList } from '../db/sql'

/**
 * Reading hook tasks with their text. A task's text is the `hook_payloads` row it refers to,
 * shared with the other tasks sent the same text; tasks written before that table hold it
 * themselves (`payload`). Every read of tasks that needs the text goes through `selectTasks`
 * (the deliveries API and page), which answers rows whose `payload` is the text either way, or
 * through `payloadTexts` from the task's own columns (delivery: each shared text read once).
 */

/** A task's columns, its `payload` being its text wherever it is kept. */
function taskColumns() {
  return { ...getTableColumns(hookTasks), payload: sql<string>`coalesce(${hookPayloads.text}, ${hookTasks.payload})` }
}

/** `SELECT` of tasks with their text (add where / order / limit). */
export function selectTasks(db: Db) {
  return db.select(taskColumns()).from(hookTasks).leftJoin(hookPayloads, eq(hookPayloads.id, hookTasks.payloadId))
}

/**
 * The texts of tasks, the hook_payloads rows among them kept by id for the next tasks that share
 * them (the ten deliveries of one event to ten hooks read its text once, not ten times), those of
 * a batch of tasks read in one statement (`load`). Safe to keep: a row's text never changes, it
 * is deleted only once no task refers to it, and its id is never given to another row
 * (AUTOINCREMENT on SQLite, a sequence on PostgreSQL). At most `keep` texts are kept, the oldest
 * forgotten first.
 */
export function payloadTexts(db: Db, keep = 128) {
  const kept = new Map<number, string>()
  const keepText = (id: number, text: string) => {
    if (kept.size >= keep) kept.delete(kept.keys().next().value!)
    kept.set(id, text)
  }
  const read = db
    .select({ text: hookPayloads.text })
    .from(hookPayloads)
    .where(eq(hookPayloads.id, sql.placeholder('id')))
    .prepare()
  const readMany = db.select({ id: hookPayloads.id, text: hookPayloads.text }).from(hookPayloads).where(inJsonList(hookPayloads.id, 'ids')).prepare()
  return {
    /** Reads the texts of these tasks not kept yet, in one statement (as many as are kept at most). */
    async load(tasks: Pick<HookTaskRow, 'payloadId'>[]): Promise<void> {
      const ids = [...new Set(tasks.map((t) => t.payloadId).filter((id): id is number => id !== null && !kept.has(id)))].slice(0, keep)
      if (ids.length === 0) return
      for (const row of (await readMany.execute({ ids: JSON.stringify(ids) })) as { id: number; text: string }[]) keepText(row.id, row.text)
    },
    /** The text of a task read without it (its `payload` column: '' when a hook_payloads row holds it). */
    async of(task: Pick<HookTaskRow, 'payload' | 'payloadId'>): Promise<string> {
      if (task.payloadId === null) return task.payload
      let text = kept.get(task.payloadId)
      if (text === undefined) {
        text = ((await read.execute({ id: task.payloadId })) as { text: string }[])[0]?.text ?? task.payload
        keepText(task.payloadId, text)
      }
      return text
    },
  }
}

/** Tasks matching `where`, with their text. */
export async function tasksWhere(db: Db, where: SQL | undefined): Promise<HookTaskRow[]> {
  return (await selectTasks(db).where(where)) as HookTaskRow[]
}

/** Payload rows looked at by one step of the sweep. */
export const SWEEP_STEP = 1000

/**
 * One step of the sweep of payload rows no task refers to any more (their hooks were deleted,
 * with their tasks, by the schema's cascades: a hook's, its repository's or its owner's
 * deletion): the next SWEEP_STEP rows after `afterId` are looked at (a read), and those no task
 * refers to are deleted (a short write, only when there are some). Answers where the next step
 * starts, 0 once past the last row. A payload row is written in the transaction of its first
 * task, so none is ever seen before a task refers to it.
 */
export async function sweepPayloads(db: Db, afterId: number): Promise<number> {
  const window = await db.select({ id: hookPayloads.id }).from(hookPayloads).where(gt(hookPayloads.id, afterId)).orderBy(asc(hookPayloads.id)).limit(SWEEP_STEP)
  if (window.length === 0) return 0
  const last = window[window.length - 1]!.id
  const unreferenced = and(
    gt(hookPayloads.id, afterId),
    lte(hookPayloads.id, last),
    notExists(db.select({ one: sql`1` }).from(hookTasks).where(eq(hookTasks.payloadId, hookPayloads.id))),
  )
  const orphans = (await db.select({ id: hookPayloads.id }).from(hookPayloads).where(unreferenced)).map((r) => r.id)
  if (orphans.length) {
    await writeTransaction(db, async () => {
      await db.delete(hookPayloads).where(and(inArray(hookPayloads.id, orphans), unreferenced))
    })
  }
  return window.length < SWEEP_STEP ? 0 : last
}
