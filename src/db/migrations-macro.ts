/**
 * A Bun macro (imported `with { type: 'macro' }`): runs when the importing file is transpiled or
 * bundled, reads the migrations drizzle-kit wrote in a folder at the project's root (drizzle/ for
 * SQLite, drizzle-pg/ for PostgreSQL) and inlines them as data. Running from the sources, they are
 * read as the code loads; `bun build --compile` carries them inside the single binary, which then
 * needs no migrations folder beside it. The folder must be a literal at the call (macro arguments
 * are evaluated at build time).
 */
import { readMigrationFiles, type MigrationMeta } from 'drizzle-orm/migrator'
import { resolve } from 'node:path'

export function migrationsOfFolder(folder: 'drizzle' | 'drizzle-pg' = 'drizzle'): MigrationMeta[] {
  return readMigrationFiles({ migrationsFolder: resolve(import.meta.dir, '../..', folder) })
}

/**
 * The times (drizzle's folderMillis) of the migrations in a folder: all a start needs to know
 * whether one is pending (client.ts `appliedAll`), a few numbers where the list holds every
 * migration's SQL.
 */
export function migrationTimesOfFolder(folder: 'drizzle' | 'drizzle-pg' = 'drizzle'): number[] {
  return migrationsOfFolder(folder).map((m) => m.folderMillis)
}
