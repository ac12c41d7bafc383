/**
 * Markdown inputs that make a naive renderer grow faster than linear, by family, and plain prose
 * of the same size as the control. Each builder returns a text of about `size` characters. Shared
 * by bench/markdown.ts (times them) and test/markdown-render.test.ts (renders each at 256 KB).
 */
const fill = (unit: string, size: number) => unit.repeat(Math.max(1, Math.floor(size / unit.length)))

/** Ordinary prose: paragraphs of words with a little markup, the control every family is compared to. */
export function prose(size: number): string {
  const paragraph =
    'The quick brown fox jumps over the lazy dog while a *gentle* breeze moves through the ' +
    'trees, and the **river** runs past the old mill with `code` and a [link](https://example.com/page) in it.\n\n'
  return fill(paragraph, size)
}

export const HOSTILE_FAMILIES: Record<string, (size: number) => string> = {
  // Brackets: link openers that never close, closers that never open, nesting, unclosed destinations.
  'open brackets': (n) => fill('[', n),
  'open brackets with text': (n) => fill('[a', n),
  'close brackets': (n) => fill('a]', n),
  'nested brackets': (n) => fill('[', n / 2) + 'a' + fill(']', n / 2),
  'unclosed links': (n) => fill('[a](', n),
  'bracket paren mix': (n) => fill('[ (](', n),
  // Emphasis: runs of delimiters, openers without closers, mismatched kinds, nesting.
  'asterisks': (n) => fill('*', n),
  'underscores': (n) => fill('_', n),
  'nested emphasis': (n) => fill('*', n / 2) + 'a' + fill('_', n / 2),
  'emphasis openers': (n) => fill('*a ', n),
  'emphasis closers': (n) => fill('a_ ', n),
  'mixed emphasis': (n) => fill('*a _b ', n),
  'strong and emphasis': (n) => fill('*a **a ', n),
  'strikethrough runs': (n) => fill('~a ~~b ', n),
  // Blocks: nesting as deep as the input allows.
  'nested blockquotes': (n) => fill('>', n),
  'nested blockquotes spaced': (n) => fill('> ', n),
  'nested lists': (n) => fill('- ', n - 1) + 'a',
  'nested ordered lists': (n) => fill('1. ', n - 1) + 'a',
  'indented lists': (n) => Array.from({ length: Math.floor(n / 40) }, (_, i) => ' '.repeat(2 * (i % 18)) + '- item\n').join(''),
  // Code spans: backtick runs of every length, none matching.
  'backtick runs': (n) => fill('`a``', n),
  'backtick ladder': (n) => {
    let out = ''
    for (let i = 1; out.length < n; i++) out += '`'.repeat(i) + 'a'
    return out.slice(0, n)
  },
  // HTML and entities: tags, comments, declarations that never close; entity-like runs.
  'open tags': (n) => fill('<a ', n),
  'html-ish': (n) => fill('<a ', n / 3) + fill('<div>', n / 3) + fill('<!--', n / 3),
  'lone less-than': (n) => fill('<', n),
  'unclosed tags, stray closers': (n) => fill('<div>', n / 2) + fill('</span>', n / 2),
  'nested html': (n) => fill('<div><span>', n / 2) + fill('</span></div>', n / 2),
  'entities': (n) => fill('&amp;&#1234;&#x1F600;&nbsp', n),
  // Link reference definitions: many definitions, many uses, one definition used many times.
  'reference definitions': (n) => fill('[a]: /u\n', n / 2) + fill('[a][a]', n / 2),
  'many references': (n) => Array.from({ length: Math.floor(n / 24) }, (_, i) => `[r${i}]: /u${i}\n`).join('') + fill('[r1] ', n / 2),
  'reference expansion': (n) => `[a]: /${'x'.repeat(Math.floor(n / 2))}\n\n` + fill('[a]', n / 2),
  // GFM: tables, autolink literals, and Gitea's references.
  'wide table': (n) => `${fill('|a', n / 4)}\n${fill('|-', n / 4)}\n${fill('|b', n / 2)}\n`,
  'table rows': (n) => `|a|b|\n|-|-|\n${fill('|x|\n', n)}`,
  'autolink literals': (n) => fill('www.a.b http://a@b.c ', n),
  'gfm references': (n) => fill('#1 @a [[a| ', n),
  'one long paragraph': (n) => fill('a\n', n),
}
