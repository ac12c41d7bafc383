import type { Config } from './config'
import { openDatabase, type Db } from './db/client'
import { Auth } from './auth/caller'

/** What every module needs: built once by the CLI (or a test) and handed to createApp. */
export interface AppDeps {
  config: Config
  db: Db
  auth: Auth
}

export function createDeps(config: Config, db: Db = openDatabase(config.dataDir)): AppDeps {
  return { config, db, auth: new Auth(db, config) }
}
