/*
 * `@login` mentions, as Gitea's mention parser finds them: the name after the start, white space,
 * `(` or `[`, and before the end, white space, `)`, `]`, or one of `:,;.?!` that ends a word.
 * Both forms fold the text the same way (brackets, line breaks and word-ending punctuation made
 * spaces, the whole padded with a space each side and lower-cased) and then look for ` @login `:
 * the issue search's `mentioned` filter in SQL (src/modules/issues/search.ts), the notification
 * consumer in code (src/notify/).
 */

/** What is made a space before looking for ` @login ` (each piece by as many spaces). */
export const MENTION_BREAKS = ['\n', '\r', '\t', '(', '[', ')', ']', ': ', ', ', '; ', '. ', '? ', '! '] as const

/** At most this many distinct names are taken from one text (the rest are not notified). */
export const MAX_MENTIONS = 50

/** `text` folded as the matcher reads it. */
export function foldForMentions(text: string): string {
  let folded = ` ${text.toLowerCase()} `
  for (const piece of MENTION_BREAKS) folded = folded.split(piece).join(' '.repeat(piece.length))
  return folded
}

const MENTION = / @([0-9a-z_.-]+)(?= )/g

/** The lower-cased names `text` mentions, in order of first mention, at most `max`. */
export function mentionedNames(text: string, max = MAX_MENTIONS): string[] {
  const names = new Set<string>()
  for (const match of foldForMentions(text).matchAll(MENTION)) {
    if (names.size >= max) break
    names.add(match[1]!)
  }
  return [...names]
}
