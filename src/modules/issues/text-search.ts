/**
 * The issue searches by text (`q`: the issue list of a repository and its page, GET
 * /repos/issues/search): issues whose title or description, and for the search across
 * repositories a plain comment, hold `q` anywhere, ignoring case (likeIgnoringCase).
 *
 * No b-tree serves a substring, so without help each search reads every issue of its scope (and
 * their comments): the trigram indexes of those texts (drizzle/0048: SQLite's FTS5; drizzle-pg/0040:
 * pg_trgm's) find the candidates first, and the LIKE is kept on the rows found, so the answer is
 * the LIKE's whatever the index folds or splits. A text the index cannot look up (fewer than three
 * characters, or on PostgreSQL no three letters or digits in a row, which pg_trgm needs) is
 * searched by the LIKE alone, as before. The candidates are the site's (a common word in a small
 * repository finds many); where PostgreSQL has no pg_trgm (drizzle-pg/0040 then makes no index)
 * they are found by reading the tables, with the same answers.
 */
import { and, eq, exists, or, sql, type Placeholder, type SQL } from 'drizzle-orm'
import type { Db } from '../../db/client'
import { containsPattern, likeIgnoringCase, queryBuilder } from '../../db/sql'
import { comments, issues } from '../../db/schema'
import { PLAIN_COMMENT } from '../comments/types'

const qb = queryBuilder()

/**
 * Whether the trigram index of the database can look `q` up (see above). When it does, its
 * candidates are the search's selective term: the caller's terms on the repository (its id, its
 * state) are then not looked up in an index on SQLite (db/sql.ts notIndexed), which otherwise read
 * every issue of the repository, or every ready repository, and checked each against the list.
 */
export function textSearchUsesIndex(db: Db, q: string): boolean {
  // FTS5 reads a query's text up to a NUL (the edge refuses one in a query; a caller that did not
  // would get FTS5's syntax error, not an answer).
  if (q.includes('\0')) return false
  if (db.$runtime.dialect === 'postgres') return /[\p{L}\p{N}]{3}/u.test(q)
  return [...q].length >= 3
}

/** An FTS5 phrase: the text as one quoted string (its quotes doubled), matched by the trigram tokenizer as a substring. */
const phrase = (q: string) => `"${q.replaceAll('"', '""')}"`

/** How a text is searched (textSearchUsesIndex's answer). */
export type TextSearchShape = 'indexed' | 'scanned'

/** The text's values for a condition written with TEXT_PATTERN and TEXT_MATCH (issueTextConditionShape). */
export const textSearchParams = (q: string) => ({ textPattern: containsPattern(q), textMatch: phrase(q) })
const TEXT_PATTERN = sql.placeholder('textPattern')
const TEXT_MATCH = sql.placeholder('textMatch')

/**
 * The ids of the issues whose text may hold the text (all of those that do; on SQLite perhaps more,
 * its index folding case beyond ASCII): their titles and descriptions, and with `inComments` the
 * issues of the plain comments holding it. `pattern` is the text's LIKE pattern, `match` its FTS5 phrase.
 */
function candidates(db: Db, pattern: string | Placeholder, match: string | Placeholder, inComments: boolean): SQL {
  if (db.$runtime.dialect === 'postgres') {
    const parts = [
      sql`SELECT ${issues.id} FROM ${issues} WHERE ${likeIgnoringCase(issues.title, pattern)}`,
      sql`SELECT ${issues.id} FROM ${issues} WHERE ${likeIgnoringCase(issues.content, pattern)}`,
      // The condition of the partial index of plain comments, written as it is (type = 0).
      ...(inComments ? [sql`SELECT ${comments.issueId} FROM ${comments} WHERE ${comments.type} = ${sql.raw(String(PLAIN_COMMENT))} AND ${likeIgnoringCase(comments.content, pattern)}`] : []),
    ]
    return sql`${issues.id} IN (${sql.join(parts, sql` UNION `)})`
  }
  const parts = [
    sql`SELECT rowid FROM issues_text_trgm WHERE issues_text_trgm MATCH ${match}`,
    ...(inComments ? [sql`SELECT ${comments.issueId} FROM ${comments} WHERE ${comments.id} IN (SELECT rowid FROM comments_text_trgm WHERE comments_text_trgm MATCH ${match})`] : []),
  ]
  return sql`${issues.id} IN (${sql.join(parts, sql` UNION `)})`
}

/** The condition on `issues` that its text holds the text of `pattern` (and `match`, to find the candidates in the index). */
function textCondition(db: Db, pattern: string | Placeholder, match: string | Placeholder | undefined, inComments: boolean): SQL {
  const holding = or(
    likeIgnoringCase(issues.title, pattern),
    likeIgnoringCase(issues.content, pattern),
    inComments
      ? exists(qb.select({ one: comments.id }).from(comments).where(and(eq(comments.issueId, issues.id), eq(comments.type, PLAIN_COMMENT), likeIgnoringCase(comments.content, pattern))))
      : undefined,
  )!
  return match === undefined ? holding : and(candidates(db, pattern, match, inComments), holding)!
}

/**
 * The ids of the issues whose title, description or a plain comment may hold the text whose LIKE
 * pattern and FTS5 phrase are bound to `pattern` and `match` (textSearchParams' values): for a
 * statement prepared per shape whose other filter looks for a text (a mention) that
 * textSearchUsesIndex can look up, the candidates to test first.
 */
export const textCandidatesShape = (db: Db, pattern: Placeholder, match: Placeholder): SQL => candidates(db, pattern, match, true)

/** The condition on `issues` (in a query reading the table by that name) that its text holds `q`. */
export function issueTextCondition(db: Db, q: string, opts: { inComments: boolean }): SQL {
  return textCondition(db, containsPattern(q), textSearchUsesIndex(db, q) ? phrase(q) : undefined, opts.inComments)
}

/** issueTextCondition for a statement prepared per `shape` (textSearchUsesIndex's), its text bound as textSearchParams give it. */
export const issueTextConditionShape = (db: Db, shape: TextSearchShape, opts: { inComments: boolean }): SQL =>
  textCondition(db, TEXT_PATTERN, shape === 'indexed' ? TEXT_MATCH : undefined, opts.inComments)
