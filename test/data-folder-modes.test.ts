// runs in one half: sqlite
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chmodSync, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../src/db/client'
import { DIALECT } from '../src/db/dialect'
import { startTestServer, type TestServer } from './helpers'

// The modes of warren.db and its -wal/-shm files, set by the SQLite opener. On PostgreSQL the
// database is not in the data folder: its files are the PostgreSQL server's, under its own modes.
const onPostgres = DIALECT === 'postgres'

/** A running test server, whose data folder holds its SQLite database (none is started on PostgreSQL). */
let s: TestServer
beforeAll(async () => {
  if (!onPostgres) s = await startTestServer()
})
afterAll(async () => {
  if (!onPostgres) await s.stop()
})

describe.skipIf(onPostgres)('file modes of the data folder', () => {
  const mode = (path: string) => statSync(path).mode & 0o777

  test('a new data folder: 0700, warren.db and its -wal/-shm 0600', () => {
    const parent = mkdtempSync(join(tmpdir(), 'warren-modes-'))
    try {
      const dir = join(parent, 'data')
      const db = openDatabase(dir)
      db.$client.exec('CREATE TABLE IF NOT EXISTS mode_probe (x)')
      expect(mode(dir)).toBe(0o700)
      for (const name of ['warren.db', 'warren.db-wal', 'warren.db-shm']) {
        expect(existsSync(join(dir, name))).toBe(true)
        expect(mode(join(dir, name))).toBe(0o600)
      }
      db.$client.close()
    } finally {
      rmSync(parent, { recursive: true, force: true })
    }
  })

  test('an existing data folder made world-readable is narrowed at start (a leftover -wal too)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-modes-'))
    // An older Warren still running (or crashed): its -wal file is in place when the next one starts.
    const older = openDatabase(dir)
    try {
      older.$client.exec('CREATE TABLE IF NOT EXISTS mode_probe (x)')
      chmodSync(dir, 0o755)
      chmodSync(join(dir, 'warren.db'), 0o644)
      chmodSync(join(dir, 'warren.db-wal'), 0o666)
      const db = openDatabase(dir)
      expect(mode(dir)).toBe(0o700)
      expect(mode(join(dir, 'warren.db'))).toBe(0o600)
      expect(mode(join(dir, 'warren.db-wal'))).toBe(0o600)
      expect(mode(join(dir, 'warren.db-shm'))).toBe(0o600)
      db.$client.close()
    } finally {
      older.$client.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('the running test server\'s database is not readable by others', () => {
    expect(mode(s.dataDir)).toBe(0o700)
    expect(mode(join(s.dataDir, 'warren.db')) & 0o077).toBe(0)
  })
})
