/**
 * Whether an error says the database could not be reached, rather than that a statement was
 * wrong: PostgreSQL refusing a connection (too many clients for the server, the database or the
 * role; the server starting or shutting down), nothing listening, a connection cut or one
 * that could not be made in time. Such a request may succeed when retried, so the API answers it
 * 503 with Retry-After instead of 500. Drizzle wraps the driver's error (its `cause`).
 */
export function databaseUnavailable(e: unknown): boolean {
  for (let error = e, depth = 0; error && depth < 4; error = (error as { cause?: unknown }).cause, depth++) {
    const { code, errno } = error as { code?: unknown; errno?: unknown }
    if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true
    if (typeof errno === 'string' && (UNAVAILABLE_STATES.has(errno) || errno.startsWith('08'))) return true
  }
  return false
}

/**
 * Whether an error is a foreign key violation: a write naming a row (a repository, a user, a
 * label) that a concurrent request deleted after this one read it. The request refers to what no
 * longer exists, so the API answers it 404 rather than 500 (nothing was written: the statement
 * failed, and its transaction with it). SQLite's extended code; PostgreSQL's SQLSTATE 23503
 * (Bun's SQL client puts it in `errno`). Drizzle wraps the driver's error (its `cause`).
 */
export function referenceGone(e: unknown): boolean {
  for (let error = e, depth = 0; error && depth < 4; error = (error as { cause?: unknown }).cause, depth++) {
    const { code, errno, message } = error as { code?: unknown; errno?: unknown; message?: unknown }
    // A deletion refused by a row still referring to it says nothing is gone (Drizzle's wrapper names the statement).
    if (typeof message === 'string' && /^Failed query: delete /i.test(message)) return false
    if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || errno === FOREIGN_KEY_VIOLATION) return true
  }
  return false
}

/** PostgreSQL's SQLSTATE foreign_key_violation. */
const FOREIGN_KEY_VIOLATION = '23503'

/** The code of a read the SQLite read thread could not answer: it or the database went away (db/read-thread.ts). */
export const READ_THREAD_GONE = 'WARREN_READ_THREAD_GONE'

/** Bun's SQL client: the connection failed, was refused, timed out, or was cut; the read thread gone. */
const UNREACHABLE_CODES = new Set([
  READ_THREAD_GONE,
  'ERR_POSTGRES_CONNECTION_CLOSED',
  'ERR_POSTGRES_CONNECTION_FAILED',
  'ERR_POSTGRES_CONNECTION_REFUSED',
  'ERR_POSTGRES_CONNECTION_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
])

/**
 * PostgreSQL's SQLSTATEs for a server that will not take the session now (class 08, connection
 * exceptions, is matched by prefix): too many connections (for the server, the database or the
 * role), out of resources, shut down by an administrator or a crash, starting up.
 */
const UNAVAILABLE_STATES = new Set(['53000', '53100', '53200', '53300', '57P01', '57P02', '57P03'])

/** Seconds a client is told to wait before retrying when the database is unavailable. */
export const UNAVAILABLE_RETRY_AFTER = '5'
