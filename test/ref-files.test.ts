// runs in one half: sqlite
import { afterAll, describe, expect, test } from 'bun:test'
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs'
import { createHash } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { tempDir } from './git-fixture'
import { listRefEntries, readPeeledRefs, readRefStateNow, readRefsUnder } from '../src/git/ref-files'
import { readRef } from '../src/git/merge'
import { headBranchOf, readBranchAndTagRefs } from '../src/git/ref-state'
import { branchExists, objectStoreOf, repositorySize, resolveCommitish, resolveRefPrefix, tagCommit } from '../src/git/refs'
import { cloneBareRepository, initBareRepository, objectFormatOf } from '../src/git/init'
import { DEFAULT_GIT_LIMITS, type GitRepo } from '../src/git/run'

/**
 * Refs read from git's ref files without a git process (src/git/ref-files.ts), checked against
 * git itself on the same repository in every state a ref can be in: loose, packed, an annotated
 * tag loose and packed, a symbolic ref, a lock file of a ref being written, a packed-refs of an
 * old git (not fully peeled); and the repository set-up and size read without git (init.ts,
 * refs.ts).
 */

const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
const dir = () => {
  const d = tempDir()
  dirs.push(d)
  return d
}
const repoOf = (gitDir: string): GitRepo => ({ gitDir, limits: DEFAULT_GIT_LIMITS })
const IDENTITY = { GIT_AUTHOR_NAME: 'alice', GIT_AUTHOR_EMAIL: 'alice@example.com', GIT_COMMITTER_NAME: 'alice', GIT_COMMITTER_EMAIL: 'alice@example.com' }

/** git in `cwd`, which must succeed: its output. */
function gitOk(args: string[], opts: { cwd?: string; stdin?: Buffer } = {}): string {
  const r = Bun.spawnSync(['git', ...args], { cwd: opts.cwd, stdin: opts.stdin, env: { ...process.env, ...IDENTITY } })
  if (r.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr.toString()}`)
  return r.stdout.toString()
}

/** The bytes of the objects as `git count-objects -v` counts them (size, size-pack and size-garbage, each rounded down to KiB). */
function countedBytes(gitDir: string): number {
  let kib = 0
  for (const m of gitOk(['count-objects', '-v'], { cwd: gitDir }).matchAll(/^(size|size-pack|size-garbage): (\d+)$/gm)) kib += Number(m[2])
  return kib * 1024
}

/** What git says: each ref under refs/heads and refs/tags with its object, and peeled. */
function gitRefs(gitDir: string): { listed: Record<string, string>; peeled: Record<string, string> } {
  const out = gitOk(['for-each-ref', '--format=%(objectname) %(*objectname) %(refname)', 'refs/heads', 'refs/tags'], { cwd: gitDir })
  const listed: Record<string, string> = {}
  const peeled: Record<string, string> = {}
  for (const line of out.split('\n').filter(Boolean)) {
    const [id, peel, ref] = line.split(' ')
    listed[ref!] = id!
    peeled[ref!] = peel || id!
  }
  return { listed, peeled }
}

/** A bare repository with two branches (one nested), a lightweight and an annotated tag. */
function sample(): string {
  const work = dir()
  gitOk(['init', '-q', '-b', 'main', work])
  gitOk(['commit', '-q', '--allow-empty', '-m', 'one'], { cwd: work })
  gitOk(['tag', 'light'], { cwd: work })
  gitOk(['tag', '-a', 'v1', '-m', 'annotated'], { cwd: work })
  gitOk(['branch', 'feature/x'], { cwd: work })
  gitOk(['commit', '-q', '--allow-empty', '-m', 'two'], { cwd: work })
  const bare = join(dir(), 'r.git')
  gitOk(['clone', '-q', '--bare', work, bare])
  return bare
}

describe('refs from the ref files', () => {
  test('loose, then packed: the same refs and ids as git, in its order; peeled ids once the tags are packed', async () => {
    const bare = sample()
    // A bare clone packs every ref: the annotated tag peels from packed-refs.
    const all = ['refs/heads/main', 'refs/heads/feature/x', 'refs/tags/light', 'refs/tags/v1', 'refs/heads/missing', 'refs/heads/feature']
    let git = gitRefs(bare)
    expect(Object.entries((await readRefsUnder(bare, ['refs/heads', 'refs/tags']))!)).toEqual(Object.entries(git.listed))
    const peeled = (await readPeeledRefs(bare, all))!
    expect(Object.fromEntries(peeled)).toEqual(git.peeled)
    expect(git.listed['refs/tags/v1']).not.toBe(git.peeled['refs/tags/v1'])
    // A ref moved after packing is loose again, and the loose file wins over packed-refs.
    gitOk(['update-ref', 'refs/heads/feature/x', git.listed['refs/heads/main']!], { cwd: bare })
    gitOk(['update-ref', 'refs/heads/new', git.listed['refs/heads/main']!], { cwd: bare })
    git = gitRefs(bare)
    expect(Object.entries((await readRefsUnder(bare, ['refs/heads', 'refs/tags']))!)).toEqual(Object.entries(git.listed))
    expect(Object.fromEntries((await readPeeledRefs(bare, [...all, 'refs/heads/new']))!)).toEqual(git.peeled)
    // A deleted packed ref is gone from both.
    gitOk(['update-ref', '-d', 'refs/tags/light'], { cwd: bare })
    git = gitRefs(bare)
    expect((await readRefsUnder(bare, ['refs/heads', 'refs/tags']))!).toEqual(git.listed)
    expect((await readPeeledRefs(bare, ['refs/tags/light']))!.size).toBe(0)
  })

  test('where only git can tell, the answer is null and the callers ask git: the same answers either way', async () => {
    const bare = sample()
    const repo = repoOf(bare)
    const main = gitOk(['rev-parse', 'refs/heads/main'], { cwd: bare }).trim()
    const one = gitOk(['rev-parse', 'refs/tags/v1^{commit}'], { cwd: bare }).trim()
    // A loose annotated tag: its peeled commit only git's object store says.
    gitOk(['tag', '-a', 'v2', '-m', 'loose annotated', main], { cwd: bare })
    expect(await readPeeledRefs(bare, ['refs/tags/v2'])).toBeNull()
    expect(await tagCommit(repo, 'v2')).toBe(main)
    expect(await tagCommit(repo, 'v1')).toBe(one)
    expect(await resolveCommitish(repo, 'v2')).toBe(main)
    // A symbolic ref under refs/heads.
    gitOk(['symbolic-ref', 'refs/heads/alias', 'refs/heads/main'], { cwd: bare })
    expect(await readRefsUnder(bare, ['refs/heads'])).toBeNull()
    expect(await readPeeledRefs(bare, ['refs/heads/alias'])).toBeNull()
    expect((await readBranchAndTagRefs(repo))!['refs/heads/alias']).toBe(main)
    expect(await readRef(repo, 'refs/heads/alias')).toBe(main)
    rmSync(join(bare, 'refs/heads/alias'))
    // A ref being written (its lock file there): git lists what is committed.
    writeFileSync(join(bare, 'refs/heads/main.lock'), '0'.repeat(40) + '\n')
    expect(await readRefsUnder(bare, ['refs/heads'])).toBeNull()
    expect(Object.keys((await readBranchAndTagRefs(repo))!)).not.toContain('refs/heads/main.lock')
    rmSync(join(bare, 'refs/heads/main.lock'))
    // A loose file that is not an id.
    writeFileSync(join(bare, 'refs/heads/broken'), 'not an id\n')
    expect(await readPeeledRefs(bare, ['refs/heads/broken'])).toBeNull()
    expect(await branchExists(repo, 'broken')).toBe(false)
    rmSync(join(bare, 'refs/heads/broken'))
    // packed-refs written by a git before fully-peeled (no header): peeled ids are git's to say.
    const packed = readFileSync(join(bare, 'packed-refs'), 'latin1')
    writeFileSync(join(bare, 'packed-refs'), packed.replace(/^#.*\n/, ''))
    expect(await readPeeledRefs(bare, ['refs/tags/v1'])).toBeNull()
    expect(await tagCommit(repo, 'v1')).toBe(one)
  })

  test('the callers agree with git on branches, tags, prefixes of paths and HEAD', async () => {
    const bare = sample()
    const repo = repoOf(bare)
    const x = gitOk(['rev-parse', 'refs/heads/feature/x'], { cwd: bare }).trim()
    expect(await branchExists(repo, 'feature/x')).toBe(true)
    expect(await branchExists(repo, 'feature')).toBe(false)
    expect(await resolveRefPrefix(repo, ['feature', 'x', 'src', 'a.ts'])).toEqual({ sha: x, ref: 'feature/x', rest: ['src', 'a.ts'] })
    expect(await readRef(repo, 'refs/heads/nothing')).toBeNull()
    expect(await headBranchOf(repo)).toBe('main')
    gitOk(['symbolic-ref', 'HEAD', 'refs/heads/unborn'], { cwd: bare })
    expect(await headBranchOf(repo)).toBe('unborn')
    gitOk(['update-ref', '--no-deref', 'HEAD', x], { cwd: bare })
    expect(await headBranchOf(repo)).toBeNull()
    // A reftable store (a newer git's): git's answer, never the files'.
    mkdirSync(join(bare, 'reftable'))
    expect(await readRefsUnder(bare, ['refs/heads'])).toBeNull()
    expect(await readPeeledRefs(bare, ['refs/heads/main'])).toBeNull()
  })
})

describe('repository set-up and size without git processes', () => {
  test('a new repository and a fork carry the served settings once each, as git reads them', async () => {
    const path = join(dir(), 'o', 'new.git')
    await initBareRepository(path, 'trunk')
    const settings = (gitDir: string) => gitOk(['config', '--list', '--local'], { cwd: gitDir }).split('\n').filter((l) => !l.startsWith('core.') && l)
    const served = ['http.receivepack=true', 'uploadpack.allowfilter=true', 'uploadpack.allowanysha1inwant=true', 'receive.denynonfastforwards=false', 'receive.unpacklimit=1']
    expect(settings(path)).toEqual(served)
    expect(gitOk(['symbolic-ref', 'HEAD'], { cwd: path }).trim()).toBe('refs/heads/trunk')
    const fork = join(dir(), 'o', 'fork.git')
    await cloneBareRepository(sample(), fork)
    expect(settings(fork).sort()).toEqual([...served].sort())
    // Made again over a folder that is there (re-initialised): still once each.
    await initBareRepository(path, 'trunk')
    expect(settings(path)).toEqual(served)
    expect(await objectFormatOf(repoOf(path))).toBe('sha1')
    const sha256 = join(dir(), 's.git')
    gitOk(['init', '-q', '--bare', '--object-format=sha256', sha256])
    expect(await objectFormatOf(repoOf(sha256))).toBe('sha256')
  })

  test('a small ref state is read at once: the same files and contents as read awaited; past its bounds, or holding a FIFO, null at once', async () => {
    const bare = sample()
    const id = gitOk(['rev-parse', 'main'], { cwd: bare }).trim()
    // Loose refs beside packed ones, nested folders, an empty folder, a lock file, a symbolic link.
    mkdirSync(join(bare, 'refs', 'heads', 'deep', 'er'), { recursive: true })
    writeFileSync(join(bare, 'refs', 'heads', 'deep', 'er', 'b'), `${id}\n`)
    writeFileSync(join(bare, 'refs', 'heads', 'loose'), `${id}\n`)
    writeFileSync(join(bare, 'refs', 'heads', 'loose.lock'), `${id}\n`)
    mkdirSync(join(bare, 'refs', 'empty'))
    symlinkSync(join(bare, 'refs', 'heads', 'loose'), join(bare, 'refs', 'heads', 'linked'))
    const files = ['HEAD', 'config', 'packed-refs', 'shallow']
    const awaited = async () => {
      const names = [...files, ...(await listRefEntries(bare, 'refs', 2000))!.map((e) => e.name)]
      return { names, contents: await Promise.all(names.map((n) => readFile(join(bare, n)).then((b) => new Uint8Array(b), () => null))) }
    }
    const now = readRefStateNow(bare, files, { entries: 64, bytes: 256 * 1024, folderBytes: 8192 })!
    const expected = await awaited()
    expect(now.names).toEqual(expected.names)
    expect(now.names).toContain('refs/heads/deep/er/b')
    expect(now.names).toContain('refs/empty')
    expect(now.contents.map((c) => c && Buffer.from(c).toString('latin1'))).toEqual(expected.contents.map((c) => c && Buffer.from(c).toString('latin1')))
    expect(now.contents[files.indexOf('shallow')]).toBeNull()
    expect(now.contents[now.names.indexOf('refs/heads/linked')]).toEqual(now.contents[now.names.indexOf('refs/heads/loose')])
    // Bounds: entries under refs/, bytes in all (config and packed-refs alone weigh more than 100 bytes).
    const entries = expected.names.length - files.length
    expect(readRefStateNow(bare, files, { entries, bytes: 256 * 1024, folderBytes: 8192 })).not.toBeNull()
    expect(readRefStateNow(bare, files, { entries: entries - 1, bytes: 256 * 1024, folderBytes: 8192 })).toBeNull()
    expect(readRefStateNow(bare, files, { entries: 64, bytes: 100, folderBytes: 8192 })).toBeNull()
    // A folder larger than its bound (a size its file system gives it: ext4's blocks, other file systems' bytes of names).
    const largest = Math.max(...['refs', 'refs/heads', 'refs/heads/deep', 'refs/heads/deep/er', 'refs/tags', 'refs/empty'].map((f) => statSync(join(bare, f)).size))
    expect(readRefStateNow(bare, files, { entries: 64, bytes: 256 * 1024, folderBytes: largest })).not.toBeNull()
    expect(readRefStateNow(bare, files, { entries: 64, bytes: 256 * 1024, folderBytes: largest - 1 })).toBeNull()
    // A FIFO is opened without waiting for a writer and never read.
    Bun.spawnSync(['mkfifo', join(bare, 'refs', 'heads', 'pipe')])
    expect(readRefStateNow(bare, files, { entries: 64, bytes: 256 * 1024, folderBytes: 8192 })).toBeNull()
    // No refs folder at all: the state files alone.
    const bareNoRefs = join(dir(), 'n.git')
    mkdirSync(bareNoRefs)
    writeFileSync(join(bareNoRefs, 'HEAD'), 'ref: refs/heads/main\n')
    expect(readRefStateNow(bareNoRefs, files, { entries: 64, bytes: 1024, folderBytes: 8192 })).toEqual({ names: files, contents: [new Uint8Array(Buffer.from('ref: refs/heads/main\n')), null, null, null] })
  })

  test('the size after a change reads only the loose-object folders that changed, and is what git counts after each change', async () => {
    const bare = sample()
    const repo = repoOf(bare)
    const counted = () => countedBytes(bare)
    const looseCount = () => Number(/^count: (\d+)$/m.exec(gitOk(['count-objects', '-v'], { cwd: bare }))![1])
    const write = (text: string) => gitOk(['hash-object', '-w', '--stdin'], { cwd: bare, stdin: Buffer.from(text) }).trim()
    const objects = join(bare, 'objects')
    const looseFolders = () => readdirSync(objects).filter((f) => /^[0-9a-f]{2}$/.test(f))
    const near = async () => {
      const store = await objectStoreOf(repo)
      expect(store.bytes - counted()).toBeGreaterThanOrEqual(0)
      expect(store.bytes - counted()).toBeLessThan(3 * 1024)
      expect(store.loose).toBe(looseCount())
      return store
    }
    for (let i = 0; i < 40; i++) write(`object ${i}\n${'y'.repeat(i * 300)}`)
    // Every folder settled (last changed an hour ago): kept once read.
    const anHourAgo = Date.now() / 1000 - 3600
    for (const f of looseFolders()) utimesSync(join(objects, f), anHourAgo, anHourAgo)
    const first = await near()
    // New objects (new folders or kept ones changed), then one removed: each read as git counts.
    const added = [write('one more\n'), write(`a larger one\n${'z'.repeat(20_000)}`)]
    const second = await near()
    expect(second.loose).toBe(first.loose + 2)
    expect(second.bytes).toBeGreaterThan(first.bytes)
    rmSync(join(objects, added[1]!.slice(0, 2), added[1]!.slice(2)))
    const third = await near()
    expect(third.loose).toBe(first.loose + 1)
    // A folder changed within 2 s of its read (its time a whole second just ahead, so that a
    // busy machine's pauses cannot age it past 2 s before the read), the time set back to that
    // second after an object is added: its sum was not kept, so the object is counted.
    const folder = looseFolders()[0]!
    let text = ''
    for (let i = 0; ; i++) {
      text = `racing ${i}\n`
      if (createHash('sha1').update(`blob ${text.length}\0${text}`).digest('hex').startsWith(folder)) break
    }
    const second0 = Math.ceil(Date.now() / 1000) + 1
    utimesSync(join(objects, folder), second0, second0)
    const before = await near()
    write(text)
    utimesSync(join(objects, folder), second0, second0)
    expect(statSync(join(objects, folder), { bigint: true }).mtimeNs).toBe(BigInt(second0) * 1_000_000_000n)
    const after = await near()
    expect(after.loose).toBe(before.loose + 1)
    // Packed, every loose object goes: the packs' bytes alone.
    gitOk(['gc', '-q', '--prune=now'], { cwd: bare })
    const packed = await near()
    expect(packed.loose).toBe(0)
    expect(packed.packs).toBe(1)
  })

  test("the size is the objects' on disk as git counts them (loose objects by their blocks, packs by their bytes)", async () => {
    const bare = sample()
    const repo = repoOf(bare)
    // count-objects rounds each of its three figures down to KiB.
    const counted = () => countedBytes(bare)
    const packedOnly = await repositorySize(repo)
    expect(packedOnly).toBeGreaterThan(0)
    expect(packedOnly - counted()).toBeGreaterThanOrEqual(0)
    expect(packedOnly - counted()).toBeLessThan(3 * 1024)
    // A loose object adds its disk blocks.
    const id = gitOk(['hash-object', '-w', '--stdin'], { cwd: bare, stdin: Buffer.alloc(50_000, 'x') }).trim()
    const withLoose = await repositorySize(repo)
    expect(withLoose).toBe(packedOnly + statSync(join(bare, 'objects', id.slice(0, 2), id.slice(2))).blocks * 512)
    expect(withLoose - counted()).toBeGreaterThanOrEqual(0)
    expect(withLoose - counted()).toBeLessThan(3 * 1024)
  })
})
