import { and, asc, eq, gt, inArray, lte, notExists, sql, getTableColumns, type SQL } from 'drizzle-orm'
import { writeTransaction, type Db } from '../db/client'
import { hookPayloads, hookTasks, type HookTaskRow } from '../db/schema'

/**
 * Reading hook tasks with their text. A task's text is the `hook_payloads` row it refers to,
 * shared with the other tasks sent the same text; tasks written before that table hold it
 * themselves (`payload`). Every read of tasks that needs the text (delivery, the deliveries API
 * and page) goes through `selectTasks`, which answers rows whose `payload` is the text either way.
 */

/** A task's columns, its `payload` being its text wherever it is kept. */
function taskColumns() {
  return { ...getTableColumns(hookTasks), payload: sql<string>`coalesce(${hookPayloads.text}, ${hookTasks.payload})` }
}

/** `SELECT` of tasks with their text (add where / order / limit). */
export function selectTasks(db: Db) {
  return db.select(taskColumns()).from(hookTasks).leftJoin(hookPayloads, eq(hookPayloads.id, hookTasks.payloadId))
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
