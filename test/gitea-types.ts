/**
 * The records of Gitea 1.23 as a client sees them: the field names of an interface in gitea-js
 * 1.23's type declarations (generated from Gitea's own swagger). A test compares Warren's answer
 * with them, so a field Gitea's clients read and Warren leaves out fails the suite.
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

let source: string | undefined

function declarations(): string {
  if (source === undefined) {
    const require = createRequire(import.meta.url)
    const main = require.resolve('gitea-js')
    source = readFileSync(join(dirname(main), 'index.d.ts'), 'utf8')
  }
  return source
}

/** The fields of gitea-js's `interface <name> { ... }`, in declaration order. */
export function giteaFields(name: string): string[] {
  const text = declarations()
  const start = text.search(new RegExp(`\\ninterface ${name} \\{\\n`))
  if (start < 0) throw new Error(`gitea-js declares no interface ${name}`)
  const body = text.slice(text.indexOf('{', start) + 1, text.indexOf('\n}', start))
  const fields: string[] = []
  for (const line of body.split('\n')) {
    const m = /^ {4}([A-Za-z_][A-Za-z0-9_]*)\??:/.exec(line)
    if (m) fields.push(m[1]!)
  }
  return fields
}

/** The fields of Gitea's record `name` that `record` lacks (an empty list when none is missing). */
export function missingGiteaFields(name: string, record: object, except: string[] = []): string[] {
  return giteaFields(name).filter((f) => !(f in record) && !except.includes(f))
}
