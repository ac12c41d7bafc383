import { is } from 'drizzle-orm'
import { getTableConfig, SQLiteTable } from 'drizzle-orm/sqlite-core'
import * as tables from './schema/tables'

/**
 * Which tables a write may have changed, for the change marks scoped to tables (changeMarkOf with
 * tables, PostgreSQL's: db/postgres.ts). A statement is known by the table it writes, by its text
 * as Drizzle and Warren's own SQL begin it (`insert into "t"`, `update "t"`, `delete from "t"`);
 * a table of the schema changes itself and every table a foreign key's ON DELETE or ON UPDATE
 * action (cascade, set null, set default) reaches from it, however far. Any other statement, or a
 * table not in the schema (another version's), is taken to have changed every table (null). No
 * trigger exists to change more.
 */
export function tableWrittenBy(text: string): string | null {
  const written = WRITTEN_TABLE.exec(text)?.[1]
  return written !== undefined && reachedFrom().has(written) ? written : null
}

/** The tables a change of `table`'s rows may change (itself first); null for a table not in the schema. */
export function tablesReachedFrom(table: string): readonly string[] | null {
  return reachedFrom().get(table) ?? null
}

const WRITTEN_TABLE = /^\s*(?:insert\s+into|update|delete\s+from)\s+"([a-z0-9_]+)"\s/i

let reached: Map<string, readonly string[]> | undefined

/** Each table of the schema → itself and the tables its rows' changes may change by a foreign key's action. */
function reachedFrom(): Map<string, readonly string[]> {
  if (reached) return reached
  const acting = (action: string | undefined) => action === 'cascade' || action === 'set null' || action === 'set default'
  const dependents = new Map<string, Set<string>>()
  for (const value of Object.values(tables)) {
    if (!is(value, SQLiteTable)) continue
    const config = getTableConfig(value)
    dependents.set(config.name, dependents.get(config.name) ?? new Set())
    for (const key of config.foreignKeys) {
      if (!acting(key.onDelete) && !acting(key.onUpdate)) continue
      const parent = getTableConfig(key.reference().foreignTable).name
      const set = dependents.get(parent) ?? new Set<string>()
      set.add(config.name)
      dependents.set(parent, set)
    }
  }
  reached = new Map()
  for (const table of dependents.keys()) {
    const seen = new Set([table])
    for (const t of seen) for (const d of dependents.get(t) ?? []) seen.add(d)
    reached.set(table, [...seen])
  }
  return reached
}
