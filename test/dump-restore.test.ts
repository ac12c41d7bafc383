import { afterAll, describe, expect, test } from 'bun:test'
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config'
import { Database } from 'bun:sqlite'
import { dump, restore } from '../src/ops/dump'
import { TarWriter, readTar } from '../src/ops/tar'
import { logOutput } from './log-capture'

/**
 * `warren dump` and `warren restore` below the command line (the commands themselves are in
 * test/cli.test.ts): the tar archive they write and read, a restore of a hostile archive and a
 * dump of odd file names, each a refusal or a bound that a hostile input once got past.
 */

const dirs: string[] = []
const temp = (prefix = 'warren-review-') => {
  const d = mkdtempSync(join(tmpdir(), prefix))
  dirs.push(d)
  return d
}
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

describe('the dump archive (tar)', () => {
  test('long and non-ASCII paths, empty and multi-chunk files read back as written; system tar reads it too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-tar-'))
    try {
      const big = Buffer.alloc(2.5 * 1024 * 1024 + 7)
      for (let i = 0; i < big.length; i++) big[i] = (i * 31) % 251
      writeFileSync(join(dir, 'big'), big)
      const files: Record<string, Buffer> = {
        [`repositories/${'o'.repeat(40)}/${'n'.repeat(100)}.git/objects/pack/pack-${'a'.repeat(40)}.idx`]: Buffer.from('long path'),
        'attachments/ünïcödé.txt': Buffer.from('non-ascii'),
        'empty': Buffer.alloc(0),
      }
      const archive = join(dir, 'a.tar')
      const writer = new TarWriter(archive)
      writer.addDirectory('repositories', 0o755, 1_700_000_000)
      for (const [path, data] of Object.entries(files)) writer.addBytes(path, data, 0o640, 1_700_000_000)
      const fd = openSync(join(dir, 'big'), 'r')
      writer.addFile('big', fd, big.length, 0o600, 1_700_000_000)
      closeSync(fd)
      writer.finish()
      const read: Record<string, Buffer> = {}
      const kinds: string[] = []
      readTar(archive, (entry, content) => {
        kinds.push(`${entry.type}:${entry.mode.toString(8)}:${entry.mtime}`)
        if (entry.type === 'directory') return
        const chunks: Buffer[] = []
        content((chunk) => chunks.push(Buffer.from(chunk)))
        read[entry.path] = Buffer.concat(chunks)
      })
      expect(Object.keys(read)).toEqual([...Object.keys(files), 'big'])
      for (const [path, data] of Object.entries(files)) expect(read[path]!.equals(data)).toBe(true)
      expect(read.big!.equals(big)).toBe(true)
      expect(kinds[0]).toBe('directory:755:1700000000')
      expect(kinds[1]).toBe('file:640:1700000000')
      // the archive is ordinary tar: the system's tar lists the same paths
      if (Bun.which('tar')) expect(Bun.spawnSync(['tar', '-tf', archive]).stdout.toString().trim().split('\n')).toEqual(['repositories/', ...Object.keys(files), 'big'])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

/** One raw ustar header block, as a hostile archive may write it (any type, size field and link). */
function tarHeader(name: string, type: string, size: number | string, link = ''): Buffer {
  const h = Buffer.alloc(512)
  h.write(name, 0, 100, 'utf8')
  h.write('0000644\0', 100, 'ascii')
  h.write('0000000\0', 108, 'ascii')
  h.write('0000000\0', 116, 'ascii')
  h.write(typeof size === 'number' ? size.toString(8).padStart(11, '0') + '\0' : size, 124, 12, 'ascii')
  h.write('14530000000\0', 136, 'ascii')
  h.write('        ', 148, 'ascii')
  h.write(type, 156, 'ascii')
  h.write(link, 157, 100, 'utf8')
  h.write('ustar\0', 257, 'ascii')
  h.write('00', 263, 'ascii')
  let sum = 0
  for (const b of h) sum += b
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'ascii')
  return h
}
const padded = (data: Buffer) => Buffer.concat([data, Buffer.alloc((512 - (data.length % 512)) % 512)])
const tarFile = (name: string, data: Buffer) => Buffer.concat([tarHeader(name, '0', data.length), padded(data)])
const paxRecord = (key: string, value: string) => {
  const body = ` ${key}=${value}\n`
  let n = body.length + 1
  while (String(n).length + body.length !== n) n = String(n).length + body.length
  return `${n}${body}`
}
const MANIFEST = tarFile('warren-dump.json', Buffer.from('{"format":1}'))
const END = Buffer.alloc(1024)

/** Restores `entries` (after a valid manifest) into a new data folder beside an `outside` folder; the error, if any. */
async function restoreHostile(...entries: Buffer[]): Promise<{ error: string | null; data: string; outside: string }> {
  const root = temp('warren-restore-')
  const data = join(root, 'data')
  const outside = join(root, 'outside')
  const archive = join(root, 'hostile.tar')
  writeFileSync(archive, Buffer.concat([MANIFEST, ...entries, tarFile('warren.db', Buffer.from('x')), END]))
  let error: string | null = null
  try {
    await restore(loadConfig({}, { dataDir: data }), archive)
  } catch (e) {
    error = (e as Error).message
  }
  return { error, data, outside }
}

describe('warren restore of a hostile archive', () => {
  test('paths leaving the data folder (../, absolute, through a pax path) are refused and nothing is written', async () => {
    for (const entry of [
      tarFile('../outside/escaped', Buffer.from('pwned')),
      tarFile('repositories/../../outside/escaped', Buffer.from('pwned')),
      tarFile('/tmp/warren-review-absolute', Buffer.from('pwned')),
      Buffer.concat([tarHeader('PaxHeader', 'x', paxRecord('path', '../outside/escaped').length), padded(Buffer.from(paxRecord('path', '../outside/escaped'))), tarFile('innocent', Buffer.from('pwned'))]),
    ]) {
      const r = await restoreHostile(entry)
      expect(r.error).toContain('outside the data folder')
      expect(existsSync(join(r.outside, 'escaped'))).toBe(false)
      expect(readdirSync(r.data)).toEqual([])
    }
    expect(existsSync('/tmp/warren-review-absolute')).toBe(false)
  })

  test('symbolic and hard links are never made: a file "through" a link lands inside the data folder', async () => {
    const r = await restoreHostile(
      tarHeader('link', '2', 0, join(tmpdir(), 'warren-review-target')),
      tarHeader('hard', '1', 0, '/etc/passwd'),
      tarFile('link/file', Buffer.from('inside')),
    )
    expect(r.error).toBeNull()
    expect(existsSync(join(tmpdir(), 'warren-review-target'))).toBe(false)
    expect(existsSync(join(r.data, 'hard'))).toBe(false)
    expect(readdirSync(join(r.data, 'link'))).toEqual(['file'])
  })

  test('a huge pax header, a negative or garbled size are refused (no allocation of the declared size, no endless loop)', async () => {
    const huge = await restoreHostile(tarHeader('PaxHeader', 'x', 0o77777777777), Buffer.alloc(512))
    expect(huge.error).toContain('pax header')
    const negative = paxRecord('size', '-1024')
    const backwards = await restoreHostile(tarHeader('PaxHeader', 'x', negative.length), padded(Buffer.from(negative)), tarFile('f', Buffer.alloc(0)))
    expect(backwards.error).toContain('size')
    const garbled = await restoreHostile(tarHeader('f', '0', 'zzzzzzzzzzz\0'))
    expect(garbled.error).toContain('size')
    const badRecord = '99999 path=x\n'
    const overrun = await restoreHostile(tarHeader('PaxHeader', 'x', badRecord.length), padded(Buffer.from(badRecord)), tarFile('f', Buffer.alloc(0)))
    expect(overrun.error).toContain('pax header')
    for (const r of [huge, backwards, garbled, overrun]) expect(readdirSync(r.data)).toEqual([])
  })
})


describe('warren dump of a data folder with odd file names', () => {
  test('names with newlines, tabs, quotes, backslashes, non-ASCII and long ones round-trip; links, special and non-UTF-8 names are left out and said', async () => {
    const root = temp('warren-dump-odd-')
    const data = join(root, 'data')
    const folder = join(data, 'attachments', '1')
    mkdirSync(folder, { recursive: true })
    new Database(join(data, 'warren.db')).close()
    const names = ['new\nline', 'tab\there', 'back\\slash', 'PaxHeader', 'x'.repeat(250), 'ünï😀', ' lead', '-dash', `"quote'`, `${'a'.repeat(99)}é`, '.hidden']
    for (const n of names) writeFileSync(join(folder, n), `content of ${n}`)
    writeFileSync(Buffer.concat([Buffer.from(`${folder}/bad`), Buffer.from([0xff, 0xfe])]), 'not utf-8')
    symlinkSync('/etc/passwd', join(folder, 'link'))
    let archive = ''
    const said = await logOutput(async () => {
      archive = await dump(loadConfig({}, { dataDir: data }), join(root, 'dump.tar'))
    }, () => true)
    expect(said).toContain('warren: dump: skipped "attachments/1/link": a symbolic link')
    expect(said).toContain(`warren: dump: skipped ${JSON.stringify('attachments/1/bad\uFFFD\uFFFD')}: its name is not UTF-8`)
    const copy = join(root, 'copy')
    await restore(loadConfig({}, { dataDir: copy }), archive)
    expect(readdirSync(join(copy, 'attachments', '1')).sort()).toEqual([...names].sort())
    for (const n of names) expect(readFileSync(join(copy, 'attachments', '1', n), 'utf8')).toBe(`content of ${n}`)
  })
})
