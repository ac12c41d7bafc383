/**
 * A small streaming tar (POSIX ustar, with pax headers for long paths and large sizes): what
 * `warren dump` writes and `warren restore` reads, with no `tar` command needed. Regular files
 * and directories only; files are copied in chunks, never held whole in memory.
 */
import { closeSync, openSync, readSync, writeSync } from 'node:fs'

const BLOCK = 512
const CHUNK = 1024 * 1024

export interface TarEntry {
  path: string
  type: 'file' | 'directory'
  mode: number
  mtime: number
  size: number
}

function octal(value: number, width: number): string {
  return value.toString(8).padStart(width - 1, '0') + '\0'
}

function header(name: string, type: string, mode: number, size: number, mtime: number): Buffer {
  const h = Buffer.alloc(BLOCK)
  h.write(name, 0, 100, 'utf8')
  h.write(octal(mode & 0o7777, 8), 100, 'ascii')
  h.write(octal(0, 8), 108, 'ascii')
  h.write(octal(0, 8), 116, 'ascii')
  h.write(octal(size, 12), 124, 'ascii')
  h.write(octal(Math.max(0, Math.floor(mtime)), 12), 136, 'ascii')
  h.write('        ', 148, 'ascii')
  h.write(type, 156, 'ascii')
  h.write('ustar\0', 257, 'ascii')
  h.write('00', 263, 'ascii')
  let sum = 0
  for (const byte of h) sum += byte
  h.write(octal(sum, 7) + ' ', 148, 'ascii')
  return h
}

/** One pax record: "<length> <key>=<value>\n", the length counting itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`
  let length = Buffer.byteLength(body) + 1
  while (String(length).length + Buffer.byteLength(body) !== length) length = String(length).length + Buffer.byteLength(body)
  return `${length}${body}`
}

/** Largest size the ustar field holds (11 octal digits); past it a pax `size` record. */
const USTAR_MAX_SIZE = 0o77777777777

export class TarWriter {
  private readonly fd: number
  constructor(file: string) {
    this.fd = openSync(file, 'wx', 0o600)
  }

  private entryHeader(entry: TarEntry): void {
    const name = entry.type === 'directory' ? entry.path.replace(/\/?$/, '/') : entry.path
    const records: string[] = []
    if (Buffer.byteLength(name) > 99 || !/^[\x20-\x7e]*$/.test(name)) records.push(paxRecord('path', name))
    if (entry.size > USTAR_MAX_SIZE) records.push(paxRecord('size', String(entry.size)))
    if (records.length) {
      const data = Buffer.from(records.join(''))
      writeSync(this.fd, header('PaxHeader', 'x', 0o644, data.length, entry.mtime))
      this.writePadded(data)
    }
    const shortName = Buffer.byteLength(name) > 99 ? name.slice(-99) : name
    writeSync(this.fd, header(shortName, entry.type === 'directory' ? '5' : '0', entry.mode, entry.size > USTAR_MAX_SIZE ? 0 : entry.size, entry.mtime))
  }

  private writePadded(data: Uint8Array): void {
    writeSync(this.fd, data)
    const pad = (BLOCK - (data.length % BLOCK)) % BLOCK
    if (pad) writeSync(this.fd, Buffer.alloc(pad))
  }

  addDirectory(path: string, mode: number, mtime: number): void {
    this.entryHeader({ path, type: 'directory', mode, mtime, size: 0 })
  }

  addBytes(path: string, data: Uint8Array, mode = 0o600, mtime = Date.now() / 1000): void {
    this.entryHeader({ path, type: 'file', mode, mtime, size: data.length })
    this.writePadded(data)
  }

  /**
   * Copies a file of `size` bytes (its size when listed). A file that shrank meanwhile is
   * padded with zeros to the size announced (files Warren changes are replaced by rename,
   * so an open file keeps its content).
   */
  addFile(path: string, source: number, size: number, mode: number, mtime: number): void {
    this.entryHeader({ path, type: 'file', mode, mtime, size })
    const buffer = Buffer.alloc(Math.min(CHUNK, Math.max(size, 1)))
    let written = 0
    while (written < size) {
      const want = Math.min(buffer.length, size - written)
      const got = readSync(source, buffer, 0, want, written)
      if (got <= 0) {
        buffer.fill(0, 0, want)
        writeSync(this.fd, buffer, 0, want)
        written += want
        continue
      }
      writeSync(this.fd, buffer, 0, got)
      written += got
    }
    const pad = (BLOCK - (size % BLOCK)) % BLOCK
    if (pad) writeSync(this.fd, Buffer.alloc(pad))
  }

  finish(): void {
    writeSync(this.fd, Buffer.alloc(BLOCK * 2))
    closeSync(this.fd)
  }
}

const field = (h: Buffer, start: number, length: number) => h.toString('utf8', start, start + length).replace(/\0.*$/s, '')
const octalField = (h: Buffer, start: number, length: number) => parseInt(field(h, start, length).trim() || '0', 8)

/** Largest pax header read (Warren's hold a path and a size: a few hundred bytes). */
const MAX_PAX_HEADER = 1024 * 1024

/** An entry's size as a byte count, else an error (a hostile size must not move the reader backwards or nowhere). */
function entrySize(text: string): number {
  const size = /^[0-7]{1,12}$/.test(text) ? parseInt(text, 8) : /^\d{1,16}$/.test(text) ? Number(text) : NaN
  if (!Number.isSafeInteger(size)) throw new Error(`bad entry size in the archive: ${JSON.stringify(text.slice(0, 20))}`)
  return size
}

/** The records of a pax header ("<length> <key>=<value>\n" each), else an error. */
function paxRecords(data: Buffer): Record<string, string> {
  const pax: Record<string, string> = {}
  for (let at = 0; at < data.length; ) {
    if (data[at] === 0) break
    const space = data.indexOf(0x20, at)
    const length = space > at && space - at <= 7 ? Number(data.toString('ascii', at, space)) : NaN
    if (!Number.isSafeInteger(length) || at + length > data.length || space + 1 >= at + length || data[at + length - 1] !== 0x0a)
      throw new Error('bad pax header in the archive')
    const record = data.toString('utf8', space + 1, at + length - 1)
    const eq = record.indexOf('=')
    if (eq <= 0) throw new Error('bad pax header in the archive')
    pax[record.slice(0, eq)] = record.slice(eq + 1)
    at += length
  }
  return pax
}

/**
 * Reads a tar file entry by entry: `onEntry` gets each entry and a `read` that copies its
 * content, in chunks, to `sink` (called at most once; unread content is skipped).
 */
export function readTar(file: string, onEntry: (entry: TarEntry, read: (sink: (chunk: Uint8Array) => void) => void) => void): void {
  const fd = openSync(file, 'r')
  try {
    let offset = 0
    const h = Buffer.alloc(BLOCK)
    let pax: Record<string, string> = {}
    for (;;) {
      if (readSync(fd, h, 0, BLOCK, offset) < BLOCK) throw new Error('the archive ends early (truncated?)')
      offset += BLOCK
      if (h.every((b) => b === 0)) return
      let sum = 0
      for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : h[i]!
      if (sum !== octalField(h, 148, 8)) throw new Error('not a tar archive (bad header checksum)')
      const type = String.fromCharCode(h[156]!)
      let size = entrySize(field(h, 124, 12).trim() || '0')
      const prefix = field(h, 345, 155)
      let path = (prefix ? `${prefix}/` : '') + field(h, 0, 100)
      const dataStart = offset
      if (type === 'x') {
        if (size > MAX_PAX_HEADER) throw new Error(`the archive has a pax header of ${size} bytes (at most ${MAX_PAX_HEADER} are read)`)
        const data = Buffer.alloc(size)
        if (readSync(fd, data, 0, size, offset) < size) throw new Error('the archive ends early (truncated?)')
        pax = paxRecords(data)
        offset += Math.ceil(size / BLOCK) * BLOCK
        continue
      }
      if (pax.path) path = pax.path
      if (pax.size !== undefined) size = entrySize(pax.size)
      pax = {}
      offset = dataStart + Math.ceil(size / BLOCK) * BLOCK
      if (type !== '0' && type !== '\0' && type !== '5') continue
      const entry: TarEntry = { path: path.replace(/\/$/, ''), type: type === '5' ? 'directory' : 'file', mode: octalField(h, 100, 8), mtime: octalField(h, 136, 12), size }
      onEntry(entry, (sink) => {
        const buffer = Buffer.alloc(Math.min(CHUNK, Math.max(size, 1)))
        for (let done = 0; done < size; ) {
          const got = readSync(fd, buffer, 0, Math.min(buffer.length, size - done), dataStart + done)
          if (got <= 0) throw new Error('the archive ends early (truncated?)')
          sink(buffer.subarray(0, got))
          done += got
        }
      })
    }
  } finally {
    closeSync(fd)
  }
}
