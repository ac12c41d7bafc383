import { timingSafeEqual } from 'node:crypto'
import { and, asc, count, eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { oauth2Applications, type OAuth2ApplicationRow } from '../../db/schema'
import { hashToken } from '../../auth/secrets'
import { notFound, unprocessable } from '../../lib/errors'
import { nowUnix } from '../../lib/time'
import { pathNumber } from '../../lib/path-number'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
import { checkRequiredText } from '../../lib/validate'
import { MAX_REDIRECT_URI, MAX_REDIRECT_URIS } from './model'

/**
 * OAuth2 applications (Gitea's `/user/applications/oauth2`): a user registers a client, with its
 * redirect URIs and whether it is confidential; the client secret is shown once, when the
 * application is made and each time it is updated (Gitea regenerates it on every PATCH), and only
 * its SHA-256 is kept.
 */

export interface ApplicationOptions {
  name?: string
  confidential_client?: boolean
  skip_secondary_authorization?: boolean
  redirect_uris?: string[]
}

/** A new client secret: 32 random bytes as hex, after a prefix that says what it is. */
const newClientSecret = (): string => 'ocs_' + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')

/** Schemes a browser must never be sent to with a code (they run or show what follows them). */
const REFUSED_SCHEMES = new Set(['javascript:', 'data:', 'vbscript:', 'file:', 'blob:', 'about:'])

/**
 * The registered redirect URIs: at least one; each an absolute URI without a fragment (RFC 6749
 * 3.1.2), of a scheme a browser may be redirected to with a code (http(s), or a native
 * application's own scheme), without spaces or control characters; duplicates kept once.
 */
function checkRedirectUris(uris: string[] | undefined): string[] {
  const list = [...new Set(uris ?? [])]
  if (list.length === 0) throw unprocessable('Required', 'RedirectURIs')
  if (list.length > MAX_REDIRECT_URIS) throw unprocessable(`at most ${MAX_REDIRECT_URIS} redirect URIs`, 'RedirectURIs')
  for (const uri of list) {
    let url: URL | undefined
    try {
      url = new URL(uri)
    } catch {}
    const bad =
      !url ||
      uri.length > MAX_REDIRECT_URI ||
      /[\s\x00-\x1f\x7f]/.test(uri) ||
      uri.includes('#') ||
      REFUSED_SCHEMES.has(url.protocol) ||
      ((url.protocol === 'http:' || url.protocol === 'https:') && !url.hostname)
    if (bad) throw unprocessable(`invalid redirect URI: ${uri}`, 'RedirectURIs')
  }
  return list
}

const fields = (opts: ApplicationOptions) => ({
  name: checkRequiredText(opts.name ?? '', 255, 'Name'),
  redirectUris: JSON.stringify(checkRedirectUris(opts.redirect_uris)),
  confidentialClient: opts.confidential_client ?? false,
  skipSecondaryAuthorization: opts.skip_secondary_authorization ?? false,
})

/** Registers an application for `userId`; answers it with its secret (422 past the per-user limit). */
export async function createApplication(deps: AppDeps, userId: number, opts: ApplicationOptions): Promise<{ row: OAuth2ApplicationRow; secret: string }> {
  const values = fields(opts)
  const secret = newClientSecret()
  const now = nowUnix()
  const row = await writeTransaction(deps.db, async () => {
    const [{ n }] = await deps.db.select({ n: count() }).from(oauth2Applications).where(eq(oauth2Applications.userId, userId))
    if (n >= deps.config.oauth2MaxApplicationsPerUser) throw unprocessable(`a user may register at most ${deps.config.oauth2MaxApplicationsPerUser} OAuth2 applications`, 'Name')
    const [made] = await deps.db
      .insert(oauth2Applications)
      .values({ userId, ...values, clientId: crypto.randomUUID(), clientSecretHash: hashToken(secret), createdUnix: now, updatedUnix: now })
      .returning()
    return made!
  })
  return { row, secret }
}

export async function listApplications(deps: AppDeps, userId: number, page: Page): Promise<Paged<OAuth2ApplicationRow>> {
  return await selectPage(deps.db, oauth2Applications, eq(oauth2Applications.userId, userId), asc(oauth2Applications.id), page)
}

/** One of the user's applications by the id in a path; 404 for another's or an unknown one. */
export async function getApplication(deps: AppDeps, userId: number, idText: string): Promise<OAuth2ApplicationRow> {
  const id = pathNumber(idText)
  const row = Number.isSafeInteger(id)
    ? (await deps.db.select().from(oauth2Applications).where(and(eq(oauth2Applications.id, id), eq(oauth2Applications.userId, userId))))[0]
    : undefined
  if (!row) throw notFound(`OAuth Application does not exist [id: ${idText}]`)
  return row
}

/** Replaces an application's fields and regenerates its secret, as Gitea's PATCH does; answers it with the new secret. */
export async function updateApplication(deps: AppDeps, userId: number, idText: string, opts: ApplicationOptions): Promise<{ row: OAuth2ApplicationRow; secret: string }> {
  const { id } = await getApplication(deps, userId, idText)
  const values = fields(opts)
  const secret = newClientSecret()
  const [row] = await writeTransaction(deps.db, async () =>
    await deps.db
      .update(oauth2Applications)
      .set({ ...values, clientSecretHash: hashToken(secret), updatedUnix: nowUnix() })
      .where(and(eq(oauth2Applications.id, id), eq(oauth2Applications.userId, userId)))
      .returning(),
  )
  if (!row) throw notFound(`OAuth Application does not exist [id: ${idText}]`)
  return { row, secret }
}

/** Deletes an application, and with it its grants, codes and tokens (foreign keys). */
export async function deleteApplication(deps: AppDeps, userId: number, idText: string): Promise<void> {
  const { id } = await getApplication(deps, userId, idText)
  await writeTransaction(deps.db, async () => await deps.db.delete(oauth2Applications).where(and(eq(oauth2Applications.id, id), eq(oauth2Applications.userId, userId))))
}

/** The application of a client id (undefined when none). */
export async function applicationByClientId(deps: AppDeps, clientId: string): Promise<OAuth2ApplicationRow | undefined> {
  if (!clientId || clientId.length > 64 || clientId.includes('\u0000')) return undefined
  return (await deps.db.select().from(oauth2Applications).where(eq(oauth2Applications.clientId, clientId)))[0]
}

/** Whether `secret` is the application's client secret (compared as hashes, in constant time). */
export function clientSecretMatches(app: OAuth2ApplicationRow, secret: string): boolean {
  if (!secret || secret.length > 256) return false
  const given = Buffer.from(hashToken(secret))
  const expected = Buffer.from(app.clientSecretHash)
  return given.length === expected.length && timingSafeEqual(given, expected)
}
