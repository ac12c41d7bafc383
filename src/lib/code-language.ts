/**
 * The highlighting language of a file, from its name alone (never guessed from the text: guessing
 * runs every grammar), as a static table: the main thread asks this on every file view and must
 * not load highlight.js to answer (its grammars are several MiB of memory; the highlighting itself
 * runs in the render pool's workers, lib/highlight.ts). Each value is a language of
 * `highlight.js/lib/common`, the build the workers load, and each key highlight.js also knows as
 * an alias names the same language there: test/web-code-language.test.ts checks both against
 * highlight.js, and that every alias of its languages that is a file extension is here, so the
 * table and the library never drift apart.
 */

/** Language by file extension (lower case, without the dot). */
const BY_EXTENSION: Record<string, string> = {
  // highlight.js's own names and aliases of its common languages that are file extensions.
  bash: 'bash', sh: 'bash', zsh: 'bash',
  c: 'c', h: 'c',
  cpp: 'cpp', cc: 'cpp', cxx: 'cpp', 'c++': 'cpp', hpp: 'cpp', hh: 'cpp', hxx: 'cpp', 'h++': 'cpp',
  cs: 'csharp',
  css: 'css', less: 'less', scss: 'scss',
  diff: 'diff', patch: 'diff',
  go: 'go',
  graphql: 'graphql', gql: 'graphql',
  ini: 'ini', toml: 'ini',
  java: 'java', jsp: 'java',
  js: 'javascript', jsx: 'javascript', mjs: 'javascript', cjs: 'javascript',
  json: 'json', jsonc: 'json', json5: 'json',
  kt: 'kotlin', kts: 'kotlin', ktm: 'kotlin', ktx: 'kotlin',
  lua: 'lua', pluto: 'lua',
  mk: 'makefile', mak: 'makefile', make: 'makefile',
  md: 'markdown', markdown: 'markdown', mkdown: 'markdown', mkd: 'markdown',
  m: 'objectivec', mm: 'objectivec',
  pl: 'perl', pm: 'perl',
  php: 'php',
  py: 'python', gyp: 'python',
  r: 'r',
  rb: 'ruby', gemspec: 'ruby', podspec: 'ruby', thor: 'ruby',
  rs: 'rust',
  sql: 'sql',
  swift: 'swift',
  ts: 'typescript', tsx: 'typescript', mts: 'typescript', cts: 'typescript',
  vb: 'vbnet',
  wat: 'wasm', wast: 'wasm',
  xml: 'xml', html: 'xml', htm: 'xml', xhtml: 'xml', svg: 'xml', rss: 'xml', atom: 'xml', xsd: 'xml', xsl: 'xml', xjb: 'xml', plist: 'xml', wsf: 'xml',
  yml: 'yaml', yaml: 'yaml',
}

/** Language by whole file name (lower case), for files known by name rather than extension. */
const BY_NAME: Record<string, string> = {
  makefile: 'makefile', gnumakefile: 'makefile',
  gemfile: 'ruby', rakefile: 'ruby', podfile: 'ruby', vagrantfile: 'ruby',
}

/** The table itself (for the test that checks it against highlight.js). */
export const CODE_LANGUAGES = { byExtension: BY_EXTENSION, byName: BY_NAME } as const

/** The highlight.js language of a file name, if any (`Object.hasOwn`: a name like `constructor` is none). */
export function languageOf(name: string): string | undefined {
  const lower = name.toLowerCase()
  if (Object.hasOwn(BY_NAME, lower)) return BY_NAME[lower]
  const dot = lower.lastIndexOf('.')
  if (dot < 0) return undefined
  const extension = lower.slice(dot + 1)
  return Object.hasOwn(BY_EXTENSION, extension) ? BY_EXTENSION[extension] : undefined
}
