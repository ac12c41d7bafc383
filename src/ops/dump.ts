/**
 * `warren dump` and `warren restore`. A dump is one tar archive of the data folder:
 * - `warren-dump.json` (what wrote it, when);
 * - `warren.db`: a consistent copy of the database made with SQLite's online backup
 *   (`VACUUM INTO`), while the server may go on serving and writing;
 * - then every other file of the data folder (the repositories, attachments, ...), copied
 *   after the database: a repository changed meanwhile is newer than its record, which the
 *   start-up reconciliation brings in line (refs are read from git), and a folder created
 *   meanwhile is restored unadopted (an administrator adopts or deletes it). Inside a repository, refs are copied before
 *   objects, so every ref copied points at objects copied (git writes objects before refs and
 *   never changes an object file).
 * `restore` unpacks it into an empty (or absent) data folder.
 */
import { Database } from 'bun:sqlite'
import { chmodSync, closeSync, existsSync, lstatSync, type Stats, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, statSync, utimesSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, normalize, resolve, sep } from 'node:path'
import type { Config } from '../config'
import { GITEA_COMPAT_VERSION, WARREN_VERSION } from '../version'
import { readTar, TarWriter } from './tar'
import { SERVE_MARK } from './serve-mark'
import { migrated } from '../db/client'

const MANIFEST = 'warren-dump.json'
const DATABASE = 'warren.db'
/** Never copied as files: the database (copied by SQLite instead), its journal, the server's mark. */
const SKIPPED = new Set([DATABASE, `${DATABASE}-wal`, `${DATABASE}-shm`, `${DATABASE}-journal`, SERVE_MARK])

const stamp = () => new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)

/**
 * dump and restore copy the embedded SQLite database with the repositories; with PostgreSQL the
 * database is the server's to back up (pg_dump), and the repositories folder a plain copy.
 */
function sqliteOnly(config: Config, command: string): void {
  if (config.databaseUrl)
    throw new Error(`${command} works with the embedded SQLite database; with PostgreSQL use pg_dump / pg_restore for the database and copy ${join(config.dataDir, 'repositories')}`)
}

/** Writes the dump; returns the archive's path. */
export async function dump(config: Config, file?: string): Promise<string> {
  sqliteOnly(config, 'dump')
  const dataDir = config.dataDir
  const dbFile = join(dataDir, DATABASE)
  if (!existsSync(dbFile)) throw new Error(`no Warren database in ${dataDir} (set WARREN_DATA)`)
  const target = resolve(file ?? `warren-dump-${stamp()}.tar`)
  if (existsSync(target)) throw new Error(`${target} already exists`)
  if (target.startsWith(dataDir + sep)) throw new Error('the dump cannot be written inside the data folder it copies')
  const scratch = mkdtempSync(join(tmpdir(), 'warren-dump-'))
  const writer = new TarWriter(target)
  try {
    // SQLite's online backup: one read transaction, so the copy is one consistent state even
    // while the server writes; the server is never blocked (WAL).
    const snapshot = join(scratch, DATABASE)
    const source = new Database(dbFile, { readonly: false, create: false })
    try {
      source.exec('PRAGMA busy_timeout = 10000')
      source.prepare('VACUUM INTO ?').run(snapshot)
      chmodSync(snapshot, 0o600)
    } finally {
      source.close()
    }
    const manifest = { format: 1, warren: WARREN_VERSION, gitea: GITEA_COMPAT_VERSION, created: new Date().toISOString() }
    writer.addBytes(MANIFEST, Buffer.from(JSON.stringify(manifest, null, 2) + '\n'))
    addTree(writer, snapshot, DATABASE)
    for (const name of ordered(readdirSync(dataDir))) if (!SKIPPED.has(name)) addTree(writer, join(dataDir, name), name)
    writer.finish()
  } catch (e) {
    try {
      writer.finish()
    } catch {}
    rmSync(target, { force: true })
    throw e
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
  return target
}

/** Sibling names with `objects` last (a repository's refs before its objects), else sorted. */
const ordered = (names: string[]) => names.sort((a, b) => Number(a === 'objects') - Number(b === 'objects') || (a < b ? -1 : a > b ? 1 : 0))

/** What the dump leaves out and why, said on stderr (never silently: the operator may need it). */
const skip = (name: string, why: string) => console.warn(`warren: dump: skipped ${JSON.stringify(name)}: ${why}`)

/**
 * Adds a file or a folder (recursively); what vanishes meanwhile (a lock, a loose ref packed) is
 * skipped, and git's lock files. A symbolic link at the data folder's top to a folder is copied
 * as that folder (`followed`: its target's stat); one to a folder inside the repositories fails
 * the dump; other links and special files are not copied, nor names that are not UTF-8 (the
 * archive's paths are): each is said.
 */
function addTree(writer: TarWriter, path: string, name: string, followed?: Stats): void {
  let stat
  try {
    stat = followed ?? lstatSync(path)
  } catch {
    return
  }
  if (stat.isDirectory()) {
    writer.addDirectory(name, stat.mode, stat.mtimeMs / 1000)
    let raw: Buffer[]
    try {
      raw = readdirSync(path, { encoding: 'buffer' })
    } catch {
      return
    }
    const names: string[] = []
    for (const child of raw) {
      const text = child.toString('utf8')
      if (Buffer.from(text, 'utf8').equals(child)) names.push(text)
      else skip(`${name}/${text}`, 'its name is not UTF-8')
    }
    for (const child of ordered(names)) addTree(writer, join(path, child), `${name}/${child}`)
    return
  }
  // git's lock files (a ref or the index being written: regular files), never a folder: owners and
  // repositories may be named `*.lock`.
  if (stat.isFile() && name.endsWith('.lock')) return
  if (stat.isSymbolicLink()) {
    const target = (() => {
      try {
        return statSync(path)
      } catch {
        return null
      }
    })()
    // A folder of the data folder kept elsewhere (repositories/ on another disk): copied as a folder.
    if (target?.isDirectory() && !name.includes('/')) return addTree(writer, path, name, target)
    if (target?.isDirectory() && name.startsWith('repositories/'))
      throw new Error(`${path} is a symbolic link to a folder: the dump would lose the repositories in it (make it a folder, or dump its target's data folder)`)
    return skip(name, 'a symbolic link')
  }
  if (!stat.isFile()) return skip(name, 'not a regular file')
  let fd: number
  try {
    fd = openSync(path, 'r')
  } catch {
    return
  }
  try {
    writer.addFile(name, fd, statSync(path).size, stat.mode, stat.mtimeMs / 1000)
  } finally {
    closeSync(fd)
  }
}

/** The most a dump's manifest may hold (Warren writes a few lines). */
const MAX_MANIFEST_BYTES = 64 * 1024

/** Whether version `a` (`x.y.z`, maybe with a pre-release after `-`) is newer than `b`; one that does not read as a version is. */
export function newerVersion(a: string, b: string): boolean {
  const parts = (v: string) => /^\d{1,9}(\.\d{1,9}){0,3}(-.*)?$/.test(v) ? v.split('-')[0]!.split('.').map(Number) : null
  const [x, y] = [parts(a), parts(b)]
  if (!x || !y) return !x
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) > (y[i] ?? 0)
  return false
}

/** An archive path as a path inside `root`; refused when it would leave it. */
function inside(root: string, path: string): string {
  const clean = normalize(path)
  if (clean.startsWith('/') || clean === '..' || clean.startsWith(`..${sep}`) || clean.split(sep).includes('..'))
    throw new Error(`the archive holds a path outside the data folder: ${JSON.stringify(path)}`)
  return join(root, clean)
}

/** Restores a dump into the data folder, which must be empty or absent; returns the files written. */
export async function restore(config: Config, file: string): Promise<number> {
  sqliteOnly(config, 'restore')
  const dataDir = config.dataDir
  const archive = resolve(file)
  if (!existsSync(archive)) throw new Error(`${archive} does not exist`)
  if (existsSync(dataDir) && readdirSync(dataDir).length > 0)
    throw new Error(`the data folder ${dataDir} is not empty: restore only into an empty or new folder (set WARREN_DATA)`)
  let first = true
  let files = 0
  const directories: { path: string; mode: number; mtime: number }[] = []
  mkdirSync(dataDir, { recursive: true, mode: 0o700 })
  try {
    readTar(archive, (entry, read) => {
      if (first) {
        first = false
        if (entry.path !== MANIFEST) throw new Error('not a Warren dump (no warren-dump.json first)')
        if (entry.size > MAX_MANIFEST_BYTES) throw new Error('not a Warren dump (its warren-dump.json is too large)')
        const chunks: Buffer[] = []
        read((chunk) => chunks.push(Buffer.from(chunk)))
        let manifest: { format?: number; warren?: unknown }
        try {
          manifest = JSON.parse(Buffer.concat(chunks).toString('utf8'))
        } catch {
          throw new Error('not a Warren dump (its warren-dump.json is not JSON)')
        }
        if (manifest?.format !== 1) throw new Error(`unknown dump format ${manifest?.format}`)
        // A dump written by a newer Warren may hold what this one cannot read or would serve wrongly.
        if (manifest.warren !== undefined && (typeof manifest.warren !== 'string' || newerVersion(manifest.warren, WARREN_VERSION)))
          throw new Error(`the dump was written by Warren ${String(manifest.warren).slice(0, 40)}, newer than this one (${WARREN_VERSION}): restore it with that version or a newer one`)
        return
      }
      const path = inside(dataDir, entry.path)
      if (entry.type === 'directory') {
        mkdirSync(path, { recursive: true, mode: 0o700 })
        directories.push({ path, mode: entry.mode, mtime: entry.mtime })
        return
      }
      mkdirSync(dirname(path), { recursive: true, mode: 0o700 })
      const fd = openSync(path, 'wx', entry.mode & 0o777)
      try {
        read((chunk) => writeSync(fd, chunk))
      } finally {
        closeSync(fd)
      }
      utimesSync(path, entry.mtime, entry.mtime)
      files++
    })
    if (first) throw new Error('the archive is empty')
    // Modes last (a read-only folder would refuse its own files); the data folder stays 0700.
    for (const d of directories.reverse()) {
      chmodSync(d.path, d.mode & 0o777)
      utimesSync(d.path, d.mtime, d.mtime)
    }
    chmodSync(dataDir, 0o700)
    if (!existsSync(join(dataDir, DATABASE))) throw new Error('the archive holds no database')
    // A database migrated past this binary's migrations (migrated throws) is refused as well.
    const restored = new Database(join(dataDir, DATABASE), { readonly: true })
    try {
      migrated(restored)
    } finally {
      restored.close()
    }
  } catch (e) {
    // The folder was empty: leave it so, for another try.
    for (const name of readdirSync(dataDir)) rmSync(join(dataDir, name), { recursive: true, force: true })
    throw e
  }
  return files
}
