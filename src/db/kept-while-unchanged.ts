import { changeMarkOf, type Db } from './client'

/**
 * Rows read by key (a token's hash, a repository's owner and name), kept in memory while the
 * database is unchanged, as its change mark says (changeMarkOf: on PostgreSQL any process's
 * commit moves it, through LISTEN/NOTIFY), so that a hot point read is not sent again on every
 * request. Any write forgets them all. A row read while a write landed is not kept (it may
 * predate the write). Inside a write transaction the database is read and nothing is kept: the
 * transaction sees its own writes before its commit moves the mark, and a rollback would undo
 * what it saw without moving it. At most `maxEntries` are kept, the oldest out first. What is
 * kept is shared: callers hand out copies of what they let others change.
 */
export class KeptWhileUnchanged<V> {
  private readonly kept = new Map<string, V>()
  private mark = ''
  private readonly changeMark: () => string

  constructor(
    private readonly db: Db,
    private readonly maxEntries: number,
  ) {
    this.changeMark = changeMarkOf(db)
  }

  /** The row under `key`: the one kept, or `read()`'s (kept when it found one). */
  async get(key: string, read: () => Promise<V | undefined>): Promise<V | undefined> {
    if (this.db.$runtime.inWriteTransaction()) return await read()
    const mark = this.changeMark()
    if (mark !== this.mark) {
      this.kept.clear()
      this.mark = mark
    }
    const held = this.kept.get(key)
    if (held !== undefined) return held
    const value = await read()
    if (value !== undefined && this.mark === mark && this.changeMark() === mark) {
      if (this.kept.size >= this.maxEntries) this.kept.delete(this.kept.keys().next().value!)
      this.kept.set(key, value)
    }
    return value
  }

  /** How many rows are kept now (for tests). */
  get size(): number {
    return this.kept.size
  }
}
