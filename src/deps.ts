import type { Config } from './config'
import { openDatabase, prepareDataFolder, type Db } from './db/client'
import { DIALECT } from './db/dialect'
import { Auth } from './auth/caller'

/** What every module needs: built once by the CLI (or a test) and handed to createApp. */
export interface AppDeps {
  config: Config
  db: Db
  auth: Auth
}

export async function createDeps(config: Config, db?: Db): Promise<AppDeps> {
  db ??= await openConfiguredDatabase(config)
  return { config, db, auth: new Auth(db, config) }
}

/**
 * The database the configuration names: PostgreSQL at WARREN_DATABASE_URL, else SQLite in the data
 * folder. The process's dialect (read when it started, src/db/dialect.ts) must agree.
 */
export async function openConfiguredDatabase(config: Config): Promise<Db> {
  const wanted = config.databaseUrl ? 'postgres' : 'sqlite'
  if (wanted !== DIALECT) throw new Error(`this process runs on ${DIALECT} (WARREN_DATABASE_URL when it started) but its configuration names ${wanted}`)
  if (!config.databaseUrl) return openDatabase(config.dataDir)
  prepareDataFolder(config.dataDir)
  // Imported on PostgreSQL only: its client, Bun's SQL and drizzle's PostgreSQL dialect are never
  // loaded into a SQLite process.
  const { openPostgres } = await import('./db/postgres')
  // The page caches serve requests, which the main thread answers: a worker thread (the webhook
  // deliveries') keeps no listening connection, its caches keep nothing.
  return openPostgres(config.databaseUrl, {
    poolSize: config.databasePoolSize,
    synchronousCommit: config.databaseSynchronousCommit,
    listen: Bun.isMainThread,
  })
}
