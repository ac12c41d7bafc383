/**
 * The SQL fragments that SQLite and PostgreSQL spell differently, so that every query in the
 * services is written once: each helper answers the fragment of the process's dialect (DIALECT,
 * decided at load). `sqlFor(dialect)` builds them for a dialect given explicitly, which is how
 * test/sql-dialect.test.ts runs the same helper on both databases.
 *
 * Everything else the services write is standard SQL both accept alike: comparisons, `+`/`-` on
 * integers, EXISTS, lower(), LIKE with ESCAPE on a lower-cased column, drizzle's operators and
 * aggregates (count(), max(), min(), which map their results to numbers). Booleans are compared
 * with drizzle's eq(column, true | false) and bound as JS booleans, never as 0/1: PostgreSQL's
 * booleans are not integers.
 */
import { sql, type Column, type Placeholder, type SQL, type SQLWrapper } from 'drizzle-orm'
import { DIALECT, type Dialect } from './dialect'
import { QueryBuilder as SQLiteQueryBuilder } from 'drizzle-orm/sqlite-core'

/**
 * A list of values as one JSON array, so a statement's text and size are the same whatever the
 * list's length: the values themselves (bound as the array's JSON text), the name of a placeholder
 * bound to that JSON text (`execute({ [name]: JSON.stringify(ids) })`), or an SQL expression
 * giving a JSON array (a group of everyJsonGroup).
 */
export type JsonList = readonly (string | number)[] | string | SQL

/** Groups of values as one JSON array of arrays: the groups themselves, or a placeholder's name (as JsonList). */
export type JsonGroups = readonly (readonly (string | number)[])[] | string

/** The helpers of one dialect (see each one's comment on the exported binding below). */
export interface DialectSql {
  inJsonList(column: Column, list: JsonList): SQL
  everyJsonGroup(groups: JsonGroups, condition: (group: SQL) => SQL): SQL
  jsonElement(list: JsonList, index: number): SQL
  greatestOf(a: SQLWrapper | number, b: SQLWrapper | number): SQL
  containsText(haystack: SQLWrapper, needle: SQLWrapper | string): SQL
  likeIgnoringCase(text: SQLWrapper, pattern: string | Placeholder): SQL
  jsonRecords(list: string, alias: string, columns: Record<string, Column>): SQL
  inRowsOf(column: Column, subquery: SQLWrapper): SQL
  notIndexed(column: Column): SQL
}

/** The alias of everyJsonGroup's row; its `value` is the group at hand. */
const GROUP = sql.raw('json_group')

/** A JSON list as an SQL value: bound (values, placeholder) or as given (an expression). */
function jsonOf(list: JsonList | JsonGroups): SQL | Placeholder | string {
  if (typeof list === 'string') return sql.placeholder(list)
  if (Array.isArray(list)) return JSON.stringify(list)
  return list as SQL
}

/** An array index written into a statement's text: a non-negative safe integer, or a programming error. */
function elementIndex(index: number): number {
  if (!Number.isSafeInteger(index) || index < 0) throw new Error(`sql: ${index} is not an array index`)
  return index
}

/** An integer literal in the statement's text (a constant like 0 needs no parameter); anything else as given. */
const operand = (value: SQLWrapper | number): SQLWrapper | SQL =>
  typeof value === 'number' && Number.isSafeInteger(value) ? sql.raw(String(value)) : (value as SQLWrapper)

/**
 * PostgreSQL's type of a column's values, for casting the text of JSON elements: the column's own
 * SQL type, or for a SQLite column standing in for its derived one (src/db/pg-schema.ts) the type
 * the derivation gives it.
 */
function pgTypeOf(column: Column): string {
  // By its kind's name: importing pg-core to ask would load it into every SQLite process.
  if (column.columnType.startsWith('Pg')) return column.getSQLType()
  const derived = ({ number: 'bigint', string: 'text', boolean: 'boolean' } as Record<string, string>)[column.dataType]
  if (!derived) throw new Error(`sql: no PostgreSQL type known for column ${column.name} (${column.columnType})`)
  return derived
}

const sqliteSql: DialectSql = {
  inJsonList: (column, list) => sql`${column} IN (SELECT value FROM json_each(${jsonOf(list)}))`,
  // json_each gives an array element that is itself an array as its JSON text, which json_each reads again.
  everyJsonGroup: (groups, condition) =>
    sql`NOT EXISTS (SELECT 1 FROM json_each(${jsonOf(groups)}) AS ${GROUP} WHERE NOT (${condition(sql`${GROUP}.value`)}))`,
  // An element that is an array or an object is given as its JSON text.
  jsonElement: (list, index) => sql`json_extract(${jsonOf(list)}, ${sql.raw(`'$[${elementIndex(index)}]'`)})`,
  // SQLite's max() with two arguments is the scalar maximum (with one it would be the aggregate).
  greatestOf: (a, b) => sql`max(${operand(a)}, ${operand(b)})`,
  containsText: (haystack, needle) => sql`instr(${haystack}, ${needle}) > 0`,
  // SQLite's LIKE ignores the case of ASCII letters.
  likeIgnoringCase: (text, pattern) => sql`${text} LIKE ${pattern} ESCAPE '\\'`,
  // LIMIT -1 (no limit) keeps the rows a table of their own, read first: flattened into the
  // statement, the planner may scan the other table by an index on another condition (a
  // pending-tasks index) and read the JSON again for each of its rows.
  jsonRecords: (list, alias, columns) =>
    sql`(SELECT ${sql.join(
      Object.keys(columns).map((name) => sql`value ->> ${'$.' + name} AS ${sql.identifier(name)}`),
      sql`, `,
    )} FROM json_each(${sql.placeholder(list)}) LIMIT -1) AS ${sql.identifier(alias)}`,
  inRowsOf: (column, subquery) => sql`${column} IN (${subquery})`,
  // SQLite's unary plus: the value as is, but a term on it is never looked up in an index.
  notIndexed: (column) => sql`+${column}`,
}

const postgresSql: DialectSql = {
  // The JSON text is cast from text, not bound as json: a driver that types parameters from the
  // statement (Bun's) would otherwise encode the string as a JSON string, not read it as an array.
  // Each element's text is cast to the column's type, so the comparison is the column's own.
  // `= ANY(ARRAY(...))`, not `IN (SELECT ...)`: the array is made once (an InitPlan) and the
  // column's index is searched for each element; the planner takes a set-returning function for
  // 100 rows whatever the list's length, and for `IN` it then reads the whole table into a hash
  // (a 10,000-row seq scan to find a page's 30 labels).
  inJsonList: (column, list) =>
    sql`${column} = ANY(ARRAY(SELECT value::${sql.raw(pgTypeOf(column))} FROM json_array_elements_text(((${jsonOf(list)})::text)::json)))`,
  everyJsonGroup: (groups, condition) =>
    sql`NOT EXISTS (SELECT 1 FROM json_array_elements(((${jsonOf(groups)})::text)::json) AS ${GROUP}(value) WHERE NOT (${condition(sql`${GROUP}.value`)}))`,
  jsonElement: (list, index) => sql`(((${jsonOf(list)})::text)::json -> ${sql.raw(String(elementIndex(index)))})`,
  greatestOf: (a, b) => sql`greatest(${operand(a)}, ${operand(b)})`,
  containsText: (haystack, needle) => sql`strpos(${haystack}, ${needle}) > 0`,
  // PostgreSQL's LIKE is case-sensitive; ILIKE ignores case (of every letter, not only ASCII).
  likeIgnoringCase: (text, pattern) => sql`${text} ILIKE ${pattern} ESCAPE '\\'`,
  jsonRecords: (list, alias, columns) =>
    sql`json_to_recordset(((${sql.placeholder(list)})::text)::json) AS ${sql.identifier(alias)}(${sql.join(
      Object.entries(columns).map(([name, column]) => sql`${sql.identifier(name)} ${sql.raw(pgTypeOf(column))}`),
      sql`, `,
    )})`,
  // A correlated `IN (subquery)` is a filter PostgreSQL runs for every row of the column's table
  // (a seq or full index scan, the subquery once per row); `= ANY(ARRAY(...))` is an index
  // condition: the subquery run once per outer row, its ids looked up in the index.
  inRowsOf: (column, subquery) => sql`${column} = ANY(ARRAY(${subquery}))`,
  // PostgreSQL chooses its indexes from its statistics: the column as is.
  notIndexed: (column) => sql`${column}`,
}

/** The helpers spelled for `dialect`. */
export const sqlFor = (dialect: Dialect): DialectSql => (dialect === 'postgres' ? postgresSql : sqliteSql)

const forProcess = sqlFor(DIALECT)

/**
 * `column IN (list)`, the list bound as one JSON array (see JsonList). On PostgreSQL the elements
 * are cast to the column's type (bigint for Warren's integer columns, text for text ones).
 */
export const inJsonList: DialectSql['inJsonList'] = forProcess.inJsonList

/**
 * True when `condition(group)` holds for every group of `groups` (an array of arrays, bound as one
 * JSON value whatever their number, or a placeholder's name bound to its JSON text): `group` stands for the group at hand as a JSON array, for
 * inJsonList(column, group). Every group must be non-empty only if the condition needs it to be.
 */
export const everyJsonGroup: DialectSql['everyJsonGroup'] = forProcess.everyJsonGroup

/**
 * Element `index` (from 0) of a JSON array (see JsonList), as JSON: an element that is itself an
 * array is a JsonList for inJsonList. Out of range, NULL (which inJsonList matches with nothing).
 */
export const jsonElement: DialectSql['jsonElement'] = forProcess.jsonElement

/**
 * The greater of two values (SQLite's scalar max(a, b), PostgreSQL's greatest(a, b)); for
 * counters that must not go below zero: `greatestOf(sql\`${t.n} - 1\`, 0)`. Both arguments are
 * meant to be non-null (SQLite answers NULL for a NULL argument, PostgreSQL ignores it).
 */
export const greatestOf: DialectSql['greatestOf'] = forProcess.greatestOf

/**
 * Whether `haystack` contains `needle` as a plain substring (no wildcards; SQLite's instr,
 * PostgreSQL's strpos), case-sensitively: wrap both sides in lower() to ignore case.
 */
export const containsText: DialectSql['containsText'] = forProcess.containsText

/**
 * `text LIKE pattern ESCAPE '\'` ignoring case: SQLite's LIKE (which ignores the case of ASCII
 * letters), PostgreSQL's ILIKE (which ignores the case of all letters). Build `pattern` with
 * containsPattern.
 */
export const likeIgnoringCase: DialectSql['likeIgnoringCase'] = forProcess.likeIgnoringCase

/**
 * Rows given as one JSON array of objects, as a table named `alias` (for `UPDATE ... FROM`, or
 * `INSERT ... SELECT`): the array is bound to the placeholder `list` (its JSON text, one statement
 * text whatever the number of rows, prepared once); each key of `columns` is a property of the
 * objects and a column of the table, of the type of the column it names (booleans as JSON
 * booleans). Read a column as `recordField(alias, key)`.
 */
export const jsonRecords: DialectSql['jsonRecords'] = forProcess.jsonRecords

/**
 * `column IN (subquery)`, where the subquery may be correlated (with a jsonRecords table's row, a
 * lane of tasks as in src/webhooks/dispatcher.ts): on both databases the column's index is
 * searched for each id the subquery answers, so a join on it costs what the subquery returns.
 */
export const inRowsOf: DialectSql['inRowsOf'] = forProcess.inRowsOf

/**
 * A column whose terms SQLite must not look up in an index (`+column`), for a statement whose
 * selective term is another: SQLite plans without statistics (Warren never runs ANALYZE: a full
 * one holds the write lock for half a second at 100,000 rows, a sampled one misjudged these very
 * columns), and takes an equality on an index's leading column for about ten rows, cheaper than
 * the 25 it assumes of any `IN (subquery)`, so it read every ready repository (`status = ?`) or
 * every issue of a repository before a list of a few ids. PostgreSQL, which has statistics: the
 * column as is.
 */
export const notIndexed: DialectSql['notIndexed'] = forProcess.notIndexed

/** A column of a jsonRecords table. */
export const recordField = (alias: string, name: string): SQL => sql`${sql.identifier(alias)}.${sql.identifier(name)}`

/** A LIKE pattern matching `text` anywhere, LIKE's own wildcards escaped (for `ESCAPE '\'`, as the helpers above write it). */
export const containsPattern = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => '\\' + c)}%`

/**
 * A query builder for subqueries built apart from any database (the visibility rule's), in the
 * process's dialect: each dialect renders its own tables' aliases and joins.
 */
export function queryBuilder(): SQLiteQueryBuilder {
  if (DIALECT !== 'postgres') return new SQLiteQueryBuilder()
  // Required, on PostgreSQL only: importing pg-core would load it into every SQLite process.
  pgBuilder ??= (require('./pg-schema') as typeof import('./pg-schema')).pgQueryBuilder
  return pgBuilder() as unknown as SQLiteQueryBuilder
}

let pgBuilder: (() => unknown) | undefined
