/**
 * Whose request the code running now serves, for what shares work out between clients where no
 * request is at hand (db/read-thread.ts: the reads a Drizzle driver is handed carry no request).
 * The server runs each request's handling inside `servingClient` (server.ts); its key is the
 * client's address as failures are counted under (auth/caller.ts `clientAddress`), worked out only
 * when first asked, as most requests never ask. Outside a request (background jobs): ''.
 */
import { AsyncLocalStorage } from 'node:async_hooks'

const serving = new AsyncLocalStorage<() => string>()

/** Runs `handle` as the work of the client `key` says (called at most once, when first asked). */
export function servingClient<T>(key: () => string, handle: () => T): T {
  let known: string | undefined
  return serving.run(() => (known ??= key()), handle)
}

/** The key of the client whose request is being served now; '' outside a request. */
export const currentClient = (): string => serving.getStore()?.() ?? ''
