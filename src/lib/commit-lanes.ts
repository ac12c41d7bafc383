/**
 * The lanes of a commit graph (Gitea's graph page, drawn without `git log --graph`): commits come
 * in an order that shows no parent before its children (`git log --date-order`), one row each;
 * each lane waits for one commit, a commit takes the leftmost lane waiting for it (the others
 * end there: a branch forked from it), hands that lane on to its first parent and opens a lane
 * for each other parent (a merge) unless one already waits for it (then a line joins that lane).
 * Lanes never move sideways: a lane that ends leaves its column free for the next lane to open,
 * so every line is straight down but where it forks or joins.
 *
 * Linear and bounded: a commit costs its parents plus a heap operation, whatever the number of
 * lanes, so the commits before a page (skipped, `keep` false) cost no drawing; a kept row draws
 * at most MAX_COLUMNS lanes (those past them are left out, a commit or line past them drawn in
 * the last column, and the layout says it was cut).
 */

/** Columns drawn; a commit or line past them is drawn in the last one. */
export const MAX_COLUMNS = 32

/** A line of the graph between a row and the one below it: from a column there to a column here. */
export interface LaneLine {
  from: number
  to: number
  /** The lane's flow (its colour). */
  flow: number
}

/** A commit's row: its column and flow, and the lines reaching it from the row above. */
export interface LaneRow {
  id: string
  column: number
  flow: number
  above: LaneLine[]
}

interface Lane {
  /** The commit this lane leads to. */
  expects: string
  flow: number
  /** The row the lane left from a commit's dot, and that dot's column (else it leaves from its own column). */
  row: number
  from: number
}

/** The smallest free column first. */
class MinHeap {
  private items: number[] = []
  get size() {
    return this.items.length
  }
  push(n: number) {
    const a = this.items
    a.push(n)
    for (let i = a.length - 1; i > 0; ) {
      const p = (i - 1) >> 1
      if (a[p]! <= a[i]!) break
      ;[a[p], a[i]] = [a[i]!, a[p]!]
      i = p
    }
  }
  pop(): number | undefined {
    const a = this.items
    const top = a[0]
    const last = a.pop()
    if (a.length && last !== undefined) {
      a[0] = last
      for (let i = 0; ; ) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < a.length && a[l]! < a[m]!) m = l
        if (r < a.length && a[r]! < a[m]!) m = r
        if (m === i) break
        ;[a[m], a[i]] = [a[i]!, a[m]!]
        i = m
      }
    }
    return top
  }
}

const clamp = (column: number) => Math.min(column, MAX_COLUMNS - 1)

export class CommitLanes {
  private lanes: (Lane | null)[] = []
  private free = new MinHeap()
  /** Which lanes wait for each commit. */
  private waiting = new Map<string, number[]>()
  /** Lines from the last row's dot to lanes that already waited for one of its other parents. */
  private joins: { from: number; lane: number }[] = []
  private row = -1
  private flows = 0
  /** Lanes open now (the others' columns are free). */
  private opened = 0
  /** Whether a kept row had a lane past MAX_COLUMNS. */
  cut = false

  /** A free column (the leftmost). */
  private open(): number {
    const free = this.free.pop()
    if (free !== undefined) return free
    this.lanes.push(null)
    return this.lanes.length - 1
  }

  private wait(commit: string, lane: number) {
    const list = this.waiting.get(commit)
    if (list) list.push(lane)
    else this.waiting.set(commit, [lane])
  }

  private put(column: number, lane: Lane) {
    if (!this.lanes[column]) this.opened++
    this.lanes[column] = lane
  }

  private close(column: number) {
    if (this.lanes[column]) this.opened--
    this.lanes[column] = null
    this.free.push(column)
  }

  /** Where a lane is drawn leaving the last row, and where it reaches the row of `next` (undefined: the page's end). */
  private lineOf(lane: Lane, column: number, next: { id: string; column: number } | undefined): LaneLine {
    const from = lane.row === this.row - (next ? 1 : 0) ? lane.from : column
    const to = next && lane.expects === next.id ? next.column : column
    if (from >= MAX_COLUMNS || to >= MAX_COLUMNS) this.cut = true
    return { from: clamp(from), to: clamp(to), flow: lane.flow }
  }

  /** The lines between the last row and the next one (or the page's end). */
  private linesTo(next: { id: string; column: number } | undefined): LaneLine[] {
    const lines: LaneLine[] = []
    const drawn = Math.min(this.lanes.length, MAX_COLUMNS)
    for (let i = 0; i < drawn; i++) {
      const lane = this.lanes[i]
      if (lane) lines.push(this.lineOf(lane, i, next))
    }
    if (lines.length < this.opened) this.cut = true
    for (const join of this.joins) {
      const lane = this.lanes[join.lane]!
      const to = next && lane.expects === next.id ? next.column : join.lane
      if (to >= MAX_COLUMNS) this.cut = true
      lines.push({ from: clamp(join.from), to: clamp(to), flow: lane.flow })
    }
    return lines
  }

  /** The next commit (in an order with children before parents); its row when `keep`. */
  add(id: string, parents: readonly string[], keep: boolean): LaneRow | null {
    this.row++
    const into = this.waiting.get(id)
    this.waiting.delete(id)
    let column: number
    let flow: number
    if (into?.length) {
      column = into.reduce((a, b) => Math.min(a, b))
      flow = this.lanes[column]!.flow
    } else {
      column = this.open()
      flow = ++this.flows
    }
    const above = keep ? this.linesTo({ id, column }) : null
    if (keep && column >= MAX_COLUMNS) this.cut = true
    for (const lane of into ?? []) if (lane !== column) this.close(lane)
    this.joins = []
    const distinct = [...new Set(parents)]
    if (!distinct.length) this.close(column)
    else {
      this.put(column, { expects: distinct[0]!, flow, row: this.row, from: column })
      this.wait(distinct[0]!, column)
    }
    for (const parent of distinct.slice(1)) {
      const already = this.waiting.get(parent)
      if (already?.length) {
        this.joins.push({ from: column, lane: already[0]! })
        continue
      }
      const lane = this.open()
      this.put(lane, { expects: parent, flow: ++this.flows, row: this.row, from: column })
      this.wait(parent, lane)
    }
    return above ? { id, column: clamp(column), flow, above } : null
  }

  /** The lines leaving the last row downwards (to commits past the page). */
  below(): LaneLine[] {
    return this.linesTo(undefined)
  }
}
