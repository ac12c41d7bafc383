// runs in one half: sqlite
/**
 * Trees of a contents write built folder by folder (git/tree-write.ts treeByFolders: each folder a
 * change reaches listed anew, all written by one `git mktree --batch`, their ids made here first)
 * are byte for byte the trees the index's way makes (read-tree, update-index, write-tree): the
 * same ids, in SHA-1 and SHA-256 repositories, for new folders, removals that empty folders,
 * moves, modes and names whose order in a tree is git's own (a folder `a` beside `a-b` and `a.txt`).
 * A name not plainly storable, and a change that empties the root, take the index's way.
 */
import { afterAll, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { gitOk, tempDir } from './git-fixture'
import { DEFAULT_GIT_LIMITS, type GitRepo } from '../src/git/run'
import { keptIndexesUsed, treeWithChanges, writeBlob, type TreeChange } from '../src/git/tree-write'

const dirs: string[] = []
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

/** A bare repository of `format` with one commit of `files` (path → content; executable when the path ends in `.sh`). */
async function repoWith(format: 'sha1' | 'sha256', files: Record<string, string>) {
  const dir = tempDir('warren-tree-write-')
  dirs.push(dir)
  const gitDir = join(dir, 'r.git')
  await gitOk(dir, 'init', '-q', '--bare', `--object-format=${format}`, gitDir)
  const repo: GitRepo = { gitDir, limits: DEFAULT_GIT_LIMITS }
  const changes: TreeChange[] = []
  const blobs = new Map<string, string>()
  for (const [path, content] of Object.entries(files)) {
    let oid = blobs.get(content)
    if (!oid) blobs.set(content, (oid = await writeBlob(repo, Buffer.from(content))))
    changes.push({ path, mode: path.endsWith('.sh') ? '100755' : '100644', oid })
  }
  // The base itself made the index's way (a promise of changes never takes the folders' way).
  const tree = await treeWithChanges(repo, null, Promise.resolve(changes))
  const base = (await gitOk(gitDir, 'commit-tree', tree, '-m', 'base')).trim()
  return { repo, base }
}

const files = {
  'README.md': 'readme\n',
  'a/one.txt': '1\n',
  'a/deep/er/two.txt': '2\n',
  'a-b': 'dash\n',
  'a.txt': 'dot\n',
  'only/lonely.txt': 'alone\n',
  'run.sh': '#!/bin/sh\n',
  'x/y/z.txt': 'z\n',
}

describe('trees built folder by folder', () => {
  for (const format of ['sha1', 'sha256'] as const)
    test(`are the index's trees, id for id (${format})`, async () => {
      const { repo, base } = await repoWith(format, files)
      const blob = async (text: string) => await writeBlob(repo, Buffer.from(text))
      const cases: TreeChange[][] = [
        [{ path: 'a/one.txt', mode: '100644', oid: await blob('1 changed\n') }],
        [{ path: 'new/folder/deep/file.txt', mode: '100644', oid: await blob('new\n') }],
        [{ path: 'only/lonely.txt', remove: true }],
        [{ path: 'x/y/z.txt', remove: true }, { path: 'x/w.txt', mode: '100755', oid: await blob('w\n') }],
        [{ path: 'a/deep/er/two.txt', remove: true }, { path: 'a/deep/two.txt', mode: '100644', oid: await blob('2\n') }],
        [{ path: 'a-c', mode: '100644', oid: await blob('c\n') }, { path: 'a/0', mode: '100644', oid: await blob('0\n') }, { path: 'a_', mode: '100644', oid: await blob('_\n') }],
        [{ path: 'run.sh', mode: '100644', oid: await blob('#!/bin/sh\n') }],
        [{ path: 'README.md', remove: true }, { path: 'docs/README.md', mode: '100644', oid: await blob('readme\n') }],
      ]
      for (const changes of cases) {
        const used = keptIndexesUsed()
        const byFolders = await treeWithChanges(repo, base, changes)
        // The folders' way took no index.
        expect(keptIndexesUsed()).toBe(used)
        const byIndex = await treeWithChanges(repo, base, Promise.resolve(changes))
        expect(byFolders).toBe(byIndex)
        // And git finds it whole.
        await gitOk(repo.gitDir, 'fsck', '--no-dangling', '--strict', byFolders)
      }
    })

  test('a folder of thousands of entries: the same tree (the index way then does the work, in git)', async () => {
    const many: Record<string, string> = {}
    for (let i = 0; i < 2100; i++) many[`big/f${i}.txt`] = 'same\n'
    const { repo, base } = await repoWith('sha1', many)
    const oid = await writeBlob(repo, Buffer.from('changed\n'))
    const changes: TreeChange[] = [{ path: 'big/f7.txt', mode: '100644', oid }, { path: 'big/f8.txt', remove: true }]
    expect(await treeWithChanges(repo, base, changes)).toBe(await treeWithChanges(repo, base, Promise.resolve(changes)))
  })

  test('a name not plainly storable, and a change emptying the root, take the index way (its rules refuse `.git` names)', async () => {
    const { repo, base } = await repoWith('sha1', { 'one.txt': '1\n' })
    const oid = await writeBlob(repo, Buffer.from('x\n'))
    const spaced = await treeWithChanges(repo, base, [{ path: 'with space/é.txt', mode: '100644', oid }])
    expect(await gitOk(repo.gitDir, 'ls-tree', '-r', '--name-only', '-z', spaced)).toBe('one.txt\0with space/é.txt\0')
    await expect(treeWithChanges(repo, base, [{ path: 'sub/.git./config', mode: '100644', oid }])).rejects.toThrow('invalid path')
    const emptied = await treeWithChanges(repo, base, [{ path: 'one.txt', remove: true }])
    expect(emptied).toBe((await gitOk(repo.gitDir, 'hash-object', '-t', 'tree', '/dev/null')).trim())
  })
})
