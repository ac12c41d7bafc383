import { describe, expect, test } from 'bun:test'
import type { HLJSApi } from 'highlight.js'
import { CODE_LANGUAGES, languageOf } from '../src/lib/code-language'

/**
 * The main thread's table of file names to highlighting languages (lib/code-language.ts, which
 * loads no highlight.js) checked against highlight.js's common build, the one the render workers
 * load: every language it names is there, every key highlight.js knows names the same language,
 * and every alias of highlight.js's languages that is a file extension is in the table (a new
 * highlight.js with a new alias fails here until the table says where it goes).
 */
const mod = require('highlight.js/lib/common')
const hljs = (mod.default ?? mod) as HLJSApi

/** highlight.js's aliases that name no file extension (a REPL, a console transcript, a spelling of the language's name), and plain text, which is not highlighted. */
const NOT_EXTENSIONS = new Set(['golang', 'console', 'shellsession', 'ipython', 'pycon', 'irb', 'text', 'txt', 'c#', 'obj-c', 'obj-c++', 'objc', 'objective-c++'])

describe('file languages', () => {
  const { byExtension, byName } = CODE_LANGUAGES
  test('every language of the table is one of highlight.js/lib/common, by its own name', () => {
    const known = new Set(hljs.listLanguages())
    const missing = [...Object.values(byExtension), ...Object.values(byName)].filter((language) => !known.has(language))
    expect(missing).toEqual([])
  })

  test('an extension highlight.js knows as a name or alias names the same language in the table', () => {
    const differ = Object.entries(byExtension).filter(([extension, language]) => {
      const theirs = hljs.getLanguage(extension)
      return theirs !== undefined && theirs !== hljs.getLanguage(language)
    })
    expect(differ).toEqual([])
  })

  test('every alias of highlight.js/lib/common that is a file extension is in the table', () => {
    const absent: string[] = []
    for (const language of hljs.listLanguages()) {
      for (const alias of hljs.getLanguage(language)!.aliases ?? []) {
        if (!NOT_EXTENSIONS.has(alias) && !Object.hasOwn(byExtension, alias)) absent.push(`${alias} (${language})`)
      }
    }
    expect(absent).toEqual([])
  })

  test('a name says its language by its whole name or its last extension, in any case; others none', () => {
    expect(languageOf('main.ts')).toBe('typescript')
    expect(languageOf('Component.TSX')).toBe('typescript')
    expect(languageOf('archive.tar.gz')).toBeUndefined()
    expect(languageOf('Makefile')).toBe('makefile')
    expect(languageOf('Gemfile')).toBe('ruby')
    expect(languageOf('index.html')).toBe('xml')
    expect(languageOf('Cargo.toml')).toBe('ini')
    expect(languageOf('README')).toBeUndefined()
    expect(languageOf('notes.txt')).toBeUndefined()
    expect(languageOf('x.constructor')).toBeUndefined()
    expect(languageOf('__proto__')).toBeUndefined()
    expect(languageOf('.bashrc')).toBe(undefined)
  })
})
