// runs in one half: sqlite
/**
 * The one object reader and the one tree entry type of src/git: readObject's bound through the
 * batch reader (whole up to `maxBytes`, none past it, with `cut` exactly the first `maxBytes`),
 * names resolved in order, and a tree's single level parsed in process and walked by ls-tree
 * giving the same entries.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import { gitOk, tempDir } from './git-fixture'
import { blobSize, objectInfos, readObject, resolveObject } from '../src/git/objects'
import { DEFAULT_GIT_LIMITS, type GitRepo } from '../src/git/run'
import { filesInFolders, treeEntries, walkTree, type TreeEntry } from '../src/git/tree'

const big = randomBytes(300_000)
let dir: string
let repo: GitRepo
let commit: string

beforeAll(async () => {
  dir = tempDir('warren-objects-')
  await gitOk(dir, 'init', '-q', '--initial-branch=main')
  const files: Record<string, string | Buffer> = { 'big.bin': big, 'small.txt': 'small\n', 'run.sh': '#!/bin/sh\n', 'ISSUE_TEMPLATE/bug.md': 'bug\n', 'ISSUE_TEMPLATE/deep/no.md': 'no\n', '.github/issue_template/ask.md': 'ask\n' }
  for (const [p, data] of Object.entries(files)) {
    mkdirSync(join(dir, p, '..'), { recursive: true })
    writeFileSync(join(dir, p), data)
  }
  chmodSync(join(dir, 'run.sh'), 0o755)
  symlinkSync('small.txt', join(dir, 'link'))
  await gitOk(dir, 'add', '-A')
  await gitOk(dir, 'commit', '-q', '-m', 'one')
  await gitOk(dir, 'update-index', '--add', '--cacheinfo', `160000,${await gitOk(dir, 'rev-parse', 'HEAD')},sub`)
  await gitOk(dir, 'commit', '-q', '-m', 'a submodule')
  commit = await gitOk(dir, 'rev-parse', 'HEAD')
  repo = { gitDir: join(dir, '.git'), limits: DEFAULT_GIT_LIMITS }
})
afterAll(() => rmSync(dir, { recursive: true, force: true }))

describe('readObject', () => {
  test('whole up to maxBytes, no bytes past it, with cut exactly the first maxBytes', async () => {
    const id = await gitOk(dir, 'rev-parse', 'HEAD:big.bin')
    const whole = await readObject(repo, id, big.length)
    expect(whole && { type: whole.type, size: whole.size, same: whole.content?.equals(big) }).toEqual({ type: 'blob', size: big.length, same: true })
    expect((await readObject(repo, id, big.length - 1))?.content).toBeNull()
    const cut = await readObject(repo, id.slice(0, 12), 1000, { cut: true })
    expect(cut && { oid: cut.oid, size: cut.size, same: cut.content?.equals(big.subarray(0, 1000)) }).toEqual({ oid: id, size: big.length, same: true })
    expect(await readObject(repo, 'f'.repeat(40), 10)).toBeNull()
    expect(await readObject(repo, 'main', 10)).toBeNull()
  })

  test('names resolve in order through the batch reader; peels', async () => {
    const infos = await objectInfos(repo, ['main', 'nothing-here', `${commit}^{tree}`, 'main^'])
    expect(infos.map((i) => i?.type ?? null)).toEqual(['commit', null, 'tree', 'commit'])
    const found = await resolveObject(repo, 'main', 'tree')
    expect(found?.object.oid).toBe(commit)
    expect(found?.peeled?.oid).toBe(await gitOk(dir, 'rev-parse', 'HEAD^{tree}'))
  })

  test("a path relative to a work tree (`rev:./x`, `rev:../x`, `rev:.`) is nothing, and the batch reader lives on", async () => {
    const infos = await objectInfos(repo, ['main:./a.txt', 'main:../a.txt', 'main:.', 'main:..', `${commit}:./x/y`])
    expect(infos).toEqual([null, null, null, null, null])
    expect((await objectInfos(repo, ['main', 'main:.hidden-name-is-fine']))[0]?.type).toBe('commit')
  })
})

describe('TreeEntry', () => {
  test('a parsed level and a walked level are the same entries; walks add sizes', async () => {
    const tree = await gitOk(dir, 'rev-parse', 'HEAD^{tree}')
    const walked: Required<TreeEntry>[] = []
    expect(await walkTree(repo, commit, {}, (e) => void walked.push(e))).toBe(true)
    const parsed = await treeEntries(repo, tree)
    expect(parsed).toEqual(walked.map(({ size, ...e }) => e))
    expect(Object.fromEntries(walked.map((e) => [e.path, [e.kind, e.mode]]))).toEqual({
      '.github': ['dir', '040000'],
      ISSUE_TEMPLATE: ['dir', '040000'],
      'big.bin': ['file', '100644'],
      link: ['symlink', '120000'],
      'run.sh': ['executable', '100755'],
      'small.txt': ['file', '100644'],
      sub: ['submodule', '160000'],
    })
    for (const e of walked) expect(e.size).toBe(e.kind === 'dir' || e.kind === 'submodule' ? 0 : (await blobSize(repo, e.oid))!)
  })

  test('recursive walks give whole paths; filesInFolders the files directly inside folders, bounded', async () => {
    const paths: string[] = []
    await walkTree(repo, commit, { recursive: true }, (e) => void paths.push(e.path))
    expect(paths).toContain('ISSUE_TEMPLATE/deep/no.md')
    const folders = ['ISSUE_TEMPLATE', '.github/issue_template', 'missing']
    expect((await filesInFolders(repo, commit, folders, 10)).map((f) => [f.path, f.size])).toEqual([
      ['.github/issue_template/ask.md', 4],
      ['ISSUE_TEMPLATE/bug.md', 4],
    ])
    expect(await filesInFolders(repo, commit, folders, 1)).toHaveLength(1)
  })
})
