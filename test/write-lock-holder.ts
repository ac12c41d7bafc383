/**
 * A worker thread for test/sqlite-transactions.test.ts: opens the data folder's database, joins
 * the write lock's shared holder it is given, takes the write lock in a transaction, says so,
 * and commits when told.
 */
import { sql } from 'drizzle-orm'
import { closeDatabase, openDatabase, shareWriteLock, writeTransaction } from '../src/db/client'

declare const self: Worker

self.onmessage = async (event: MessageEvent<{ dataDir: string; writeLock: SharedArrayBuffer | null }>) => {
  const db = openDatabase(event.data.dataDir)
  if (event.data.writeLock) shareWriteLock(db, event.data.writeLock)
  const commit = new Promise<void>((resolve) => (self.onmessage = () => resolve()))
  await writeTransaction(db, async () => {
    await db.run(sql`insert into t values (1)`)
    self.postMessage('holding')
    await commit
  })
  await closeDatabase(db)
  self.postMessage('committed')
}
