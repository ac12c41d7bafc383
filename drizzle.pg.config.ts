import { defineConfig } from 'drizzle-kit'

// src/db/schema exports the tables of the process's dialect (src/db/dialect.ts): for drizzle-kit
// to read the PostgreSQL ones (derived from the SQLite schema by src/db/pg-schema.ts), this run
// is a PostgreSQL one. No connection is made: generating migrations needs none.
process.env.WARREN_DATABASE_URL ||= 'postgres://drizzle-kit.invalid/warren'

/** PostgreSQL migrations; scripts/db-generate.sh runs this config beside drizzle.config.ts. */
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/schema/index.ts',
  out: './drizzle-pg',
})
