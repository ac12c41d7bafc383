// runs in one half: sqlite
import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

/**
 * The layers of src/ (ARCHITECTURE.md): each imports only those below it, and no files import
 * each other around a loop. The rules are .dependency-cruiser.cjs's, checked here with the real
 * dependency-cruiser over every file, so `npm test` fails on an import that breaks them.
 */
test('src/ keeps its layers, with no import cycle', async () => {
  const root = join(import.meta.dir, '..')
  const proc = Bun.spawn([join(root, 'node_modules/.bin/depcruise'), 'src', '--config', '.dependency-cruiser.cjs', '--output-type', 'err'], {
    cwd: root,
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  // Each broken rule is a line naming the rule and the import; the whole report on failure.
  const broken = out.split('\n').filter((line) => /^\s*error /.test(line)).map((line) => line.trim())
  expect({ broken, stderr: err.trim() }).toEqual({ broken: [], stderr: '' })
  expect(code).toBe(0)
  // It read the tree (an empty run would pass vacuously).
  expect(out).toMatch(/no dependency violations found \(\d{3,} modules/)
})

/**
 * Every JSX file of src/ names its JSX runtime itself: Bun takes tsconfig.json's `jsxImportSource`
 * from the folder it is started in, so `warren` started elsewhere (an installed command) would
 * otherwise look for React's runtime (test/cli.test.ts starts a server from another folder).
 */
test('every .tsx file of src/ names the warren-jsx runtime in its first line', async () => {
  const root = join(import.meta.dir, '..')
  const files = [...new Bun.Glob('src/**/*.tsx').scanSync({ cwd: root })]
  expect(files.length).toBeGreaterThan(10)
  const without = files.filter((f) => !readFileSync(join(root, f), 'utf8').startsWith('/** @jsxImportSource warren-jsx */'))
  expect(without).toEqual([])
})
