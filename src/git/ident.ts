/**
 * git's rules for an identity (ident.c), so the server refuses or avoids what `git commit-tree`
 * would die on (a 500 otherwise).
 */

/**
 * A character that is not git's "crud" (ident.c `crud()`: every byte up to the space, and
 * `. , : ; < > " \ '`). Characters past ASCII are never crud (their UTF-8 bytes are all ≥ 0x80).
 */
const NOT_CRUD = /[^\x00-\x20.,:;<>"\\']/

/**
 * Whether git takes `name` as the name of an author, committer or tagger: git strips crud from
 * both ends and dies ("name consists only of disallowed characters") when nothing is left, so a
 * name needs one character that is not crud.
 */
export const gitTakesName = (name: string): boolean => NOT_CRUD.test(name)

/**
 * A date of git's raw form (`<unix seconds> <±hhmm>`) as GIT_AUTHOR_DATE / GIT_COMMITTER_DATE must
 * say it: `@` first, which git reads as Unix seconds whatever their value (a bare number is read
 * so only from 100000000 up to 2100, anything else being refused or taken for another format).
 */
export const gitDateArg = (raw: string): string => `@${raw}`
