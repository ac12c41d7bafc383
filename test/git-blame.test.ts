// runs in one half: sqlite
import { afterAll, expect, test } from 'bun:test'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { gitOk, tempDir } from './git-fixture'
import { blameOf } from '../src/git/blame'
import { DEFAULT_GIT_LIMITS, type GitRepo } from '../src/git/run'

/**
 * Blame (src/git/blame.ts): git's own, kept by commit, path and mailmap, so the same blame asked
 * again runs no git and a new `.mailmap` at HEAD (which git applies to a bare repository's blame)
 * is followed at once.
 */

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

test('the same blame is kept; a .mailmap committed at HEAD renames its authors at once, the lines unchanged', async () => {
  const work = tempDir()
  dirs.push(work)
  await gitOk(work, 'init', '-q', '--initial-branch=main')
  writeFileSync(join(work, 'a.txt'), 'one\ntwo\n')
  await gitOk(work, 'add', 'a.txt')
  await gitOk(work, 'commit', '-q', '-m', 'first')
  writeFileSync(join(work, 'a.txt'), 'one\nthree\n')
  await gitOk(work, 'commit', '-q', '-am', 'second')
  const [first, second] = [await gitOk(work, 'rev-parse', 'HEAD~1'), await gitOk(work, 'rev-parse', 'HEAD')]
  const bare = join(work, 'bare.git')
  await gitOk(work, 'clone', '-q', '--bare', work, bare)
  const repo: GitRepo = { gitDir: bare, limits: DEFAULT_GIT_LIMITS }

  const blame = (await blameOf(repo, second, 'a.txt'))!
  expect(blame.lines).toEqual([{ sha: first, text: 'one' }, { sha: second, text: 'three' }])
  expect([...blame.commits.values()].map((c) => [c.sha, c.author, c.summary])).toEqual([[first, 'Alice A', 'first'], [second, 'Alice A', 'second']])
  // Kept: the same answer again, without git.
  expect(await blameOf(repo, second, 'a.txt')).toBe(blame)
  expect(await blameOf(repo, second, 'missing.txt')).toBeNull()

  // A .mailmap on the default branch: git maps the authors of every blame, old commits' too.
  writeFileSync(join(work, '.mailmap'), 'Alice Mapped <alice@example.com>\n')
  await gitOk(work, 'add', '.mailmap')
  await gitOk(work, 'commit', '-q', '-m', 'mailmap')
  await gitOk(work, 'push', '-q', bare, 'main')
  const mapped = (await blameOf(repo, second, 'a.txt'))!
  expect(mapped.lines).toEqual(blame.lines)
  expect([...mapped.commits.values()].map((c) => c.author)).toEqual(['Alice Mapped', 'Alice Mapped'])
})
