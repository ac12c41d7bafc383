import { defineConfig } from 'drizzle-kit'

/**
 * PostgreSQL migrations, generated from the tables derived from the SQLite schema
 * (src/db/pg-schema.ts); scripts/db-generate.sh runs this config beside drizzle.config.ts.
 */
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/pg-schema-kit.ts',
  out: './drizzle-pg',
})
