import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { expect } from 'bun:test'
import { gitOk, remoteUrl, tempDir } from './git-fixture'
import type { TestServer, TestUser } from './helpers'

/**
 * The code pages' fixture: a repository pushed with the real git client, holding hostile and
 * large files, a history with several branches (one of 5,000 added files), an annotated tag with
 * a release whose notes are hostile, and a pull request.
 */

export const HOSTILE_HTML = '<script>alert(1)</script><img src=x onerror="alert(2)">'
export const LONG_TS_LINES = 2000

function write(dir: string, path: string, content: string | Buffer) {
  mkdirSync(dirname(join(dir, path)), { recursive: true })
  writeFileSync(join(dir, path), content)
}

/** Pushes a repository `name` for `owner` (created through the API first, its default branch the fixture's `master`) with the fixture's history. */
export async function pushCodeFixture(s: TestServer, owner: TestUser, name: string, opts: { private?: boolean; manyFiles?: number } = {}) {
  expect((await s.post('/user/repos', { name, private: opts.private ?? false, default_branch: 'master' }, { token: owner.token })).status).toBe(201)
  const dir = tempDir('warren-webcode-')
  await gitOk(dir, 'init', '-q', '-b', 'master')
  write(dir, 'README.md', `# ${name}\n\n${HOSTILE_HTML}\n\n[x](javascript:alert(3))\n`)
  write(dir, 'src/main.ts', '// entry\nexport const answer: number = 42\n')
  write(dir, 'evil.html', `<!doctype html>${HOSTILE_HTML}`)
  write(dir, 'evil.svg', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(4)</script></svg>')
  write(dir, 'bin.dat', Buffer.from([0, 1, 2, 3, 255, 0]))
  write(dir, 'long.ts', Array.from({ length: LONG_TS_LINES }, (_, i) => `export const v${i + 1}: number = ${i + 1} // line ${i + 1}`).join('\n') + '\n')
  write(dir, 'big.txt', 'a line of a large file\n'.repeat(Math.ceil((10 * 1024 * 1024) / 23)))
  write(dir, 'oneline.js', 'x'.repeat(1024 * 1024))
  await gitOk(dir, 'add', '-A')
  await gitOk(dir, 'commit', '-q', '-m', 'First files\n\nWith a body that says <b>why</b>.')
  write(dir, 'src/main.ts', '// entry\nexport const answer: number = 42\nexport const question = "six times nine"\n')
  await gitOk(dir, 'commit', '-q', '-am', 'Ask the question')
  await gitOk(dir, 'tag', '-a', 'v1.0', '-m', 'Version 1.0')
  await gitOk(dir, 'checkout', '-q', '-b', 'feature')
  write(dir, 'src/main.ts', '// entry\nexport const answer: number = 43\nexport const question = "six times nine"\n')
  write(dir, 'src/extra.ts', 'export const extra = true\n')
  await gitOk(dir, 'add', '-A')
  await gitOk(dir, 'commit', '-q', '-m', 'Change the answer')
  await gitOk(dir, 'checkout', '-q', '-b', 'other', 'master')
  write(dir, 'docs/other.md', 'other\n')
  await gitOk(dir, 'add', '-A')
  await gitOk(dir, 'commit', '-q', '-m', 'Another change')
  for (let i = 1; i <= 34; i++) await gitOk(dir, 'commit', '-q', '--allow-empty', '-m', `Empty step ${i}`)
  if (opts.manyFiles) {
    await gitOk(dir, 'checkout', '-q', '-b', 'many', 'master')
    for (let i = 0; i < opts.manyFiles; i++) write(dir, `many/${Math.floor(i / 100)}/f${i}.txt`, `file ${i}\nsecond line\n`)
    await gitOk(dir, 'add', '-A')
    await gitOk(dir, 'commit', '-q', '-m', `Add ${opts.manyFiles} files`)
  }
  await gitOk(dir, 'push', '-q', remoteUrl(s.url, `${owner.name}/${name}.git`, owner.name, owner.password), '--all')
  await gitOk(dir, 'push', '-q', remoteUrl(s.url, `${owner.name}/${name}.git`, owner.name, owner.password), '--tags')
  const sha = async (rev: string) => await gitOk(dir, 'rev-parse', rev)
  return { dir, sha }
}
