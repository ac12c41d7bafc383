/**
 * A Bun macro (imported `with { type: 'macro' }`): runs when the importing file is transpiled or
 * bundled, reads the migrations drizzle-kit wrote in drizzle/ and inlines them as data. Running
 * from the sources, they are read as the code loads; `bun build --compile` carries them inside
 * the single binary, which then needs no drizzle/ folder beside it.
 */
import { readMigrationFiles, type MigrationMeta } from 'drizzle-orm/migrator'
import { resolve } from 'node:path'

export function migrationsOfFolder(): MigrationMeta[] {
  return readMigrationFiles({ migrationsFolder: resolve(import.meta.dir, '../../drizzle') })
}
