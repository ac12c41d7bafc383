/** Settings every SQLite connection of Warren's takes (db/client.ts's, the read thread's), in a module of their own so a thread needs nothing else. */

/**
 * Compiled statements each connection keeps, by their text (bun:sqlite's `query()` cache, the
 * most recently used; a class-wide setting). Bun keeps 20, fewer than the statements one request
 * and the webhook thread's rounds use (26 for a POST issue with the outbox, about 25 for a
 * delivery round): each was compiled again at nearly every use, 5 µs for the smallest, 250 µs for
 * a join of two wide tables, 21% of the CPU of a server filing issues to 10 hooks (a profile of
 * the API and the delivery loops on one thread). A compiled statement takes 10-80 KB of SQLite's
 * memory (the widest of Warren's joins the most): 256 of them up to 20 MiB, made only as they are used.
 */
export const STATEMENTS_KEPT = 256

/** How long a transaction waits for SQLite's write lock, held by another connection (the webhook thread's), before it fails. */
export const BUSY_TIMEOUT_MS = 10_000
