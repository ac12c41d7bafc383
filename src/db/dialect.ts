/**
 * Which database this process runs on, decided once when it starts: PostgreSQL when
 * WARREN_DATABASE_URL is a postgres:// (or postgresql://) URL, else the embedded SQLite in the
 * data folder. The schema module and the dialect-specific SQL of the db layer read it as they
 * load, so one process serves one dialect (a test run picks one for all its servers).
 */
export type Dialect = 'sqlite' | 'postgres'

export const isPostgresUrl = (url: string | undefined): boolean => /^postgres(ql)?:\/\//i.test(url ?? '')

export const DIALECT: Dialect = isPostgresUrl(process.env.WARREN_DATABASE_URL) ? 'postgres' : 'sqlite'
