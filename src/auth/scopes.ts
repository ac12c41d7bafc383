import { ApiError } from '../lib/errors'

/*
 * Scoped access tokens, as Gitea has them since 1.19: a token grants `read:` or `write:` on each
 * category of the API (write implies read), `all` (write on every category), and `public-only`,
 * which limits whatever else it grants to public repositories, organisations and users. A token's
 * scope is stored normalised (the form Gitea stores and returns): each category once, at its
 * highest level, in the fixed order below, `public-only` first, and every category at write
 * spelled `all`. Tokens made before scopes existed were given `all`, so they keep working.
 *
 * Each API route declares the categories it belongs to (the pipeline's `scope` need); a token
 * passes when it holds every one of them at the request's level: read for GET and HEAD, write
 * for everything else. Passwords are not limited by scopes.
 */

/** The categories, in Gitea's order (the order a normalised scope lists them in). */
export const SCOPE_CATEGORIES = ['activitypub', 'admin', 'misc', 'notification', 'organization', 'package', 'issue', 'repository', 'user'] as const
export type ScopeCategory = (typeof SCOPE_CATEGORIES)[number]

/** 1 = read, 2 = write (which includes read). */
export type ScopeLevel = 1 | 2
const READ: ScopeLevel = 1
const WRITE: ScopeLevel = 2

/** A token's scope, parsed once when the token is looked up. */
export interface TokenScope {
  /** The scope as stored (normalised), e.g. `read:user,write:issue`. */
  text: string
  /** Level granted on each category (absent: none). */
  levels: Partial<Record<ScopeCategory, ScopeLevel>>
  /** Limited to public repositories, organisations and users. */
  publicOnly: boolean
}

const CATEGORY_SET = new Set<string>(SCOPE_CATEGORIES)

/** The longest scope list accepted when a token is made (every scope of both levels fits). */
export const MAX_SCOPES = 2 * SCOPE_CATEGORIES.length + 2

/**
 * Parses a comma-separated scope (stored or asked for); empty items are skipped, as Gitea does.
 * Throws `invalid access token scope: <item>` for anything else it does not know.
 */
export function parseScope(text: string): TokenScope {
  const levels: TokenScope['levels'] = {}
  let publicOnly = false
  for (const item of text.split(',')) {
    if (item === '') continue
    if (item === 'all') {
      for (const c of SCOPE_CATEGORIES) levels[c] = WRITE
      continue
    }
    if (item === 'public-only') {
      publicOnly = true
      continue
    }
    const colon = item.indexOf(':')
    const level = item.slice(0, colon)
    const category = item.slice(colon + 1)
    if (colon < 0 || (level !== 'read' && level !== 'write') || !CATEGORY_SET.has(category)) throw new Error(`invalid access token scope: ${item}`)
    const c = category as ScopeCategory
    levels[c] = Math.max(levels[c] ?? 0, level === 'write' ? WRITE : READ) as ScopeLevel
  }
  return { text: normalText(levels, publicOnly), levels, publicOnly }
}

/** Gitea's normal form: `public-only` first, then each category at its level, all writes as `all`. */
function normalText(levels: TokenScope['levels'], publicOnly: boolean): string {
  const parts: string[] = publicOnly ? ['public-only'] : []
  if (SCOPE_CATEGORIES.every((c) => levels[c] === WRITE)) parts.push('all')
  else for (const c of SCOPE_CATEGORIES) if (levels[c]) parts.push(`${levels[c] === WRITE ? 'write' : 'read'}:${c}`)
  return parts.join(',')
}

/**
 * The normalised scope of a token asked for with `scopes` (Gitea joins the list with commas,
 * so an item may itself hold several). 400 with Gitea's messages when one is unknown or when
 * the token would have no scope at all.
 */
export function scopeForNewToken(scopes: readonly string[]): string {
  let scope: TokenScope
  try {
    scope = parseScope(scopes.join(','))
  } catch (e) {
    throw new ApiError(400, `invalid access token scope provided: ${(e as Error).message}`)
  }
  if (!scope.text) throw new ApiError(400, 'access token must have a scope')
  return scope.text
}

/** The level a request needs: read for GET and HEAD (and OPTIONS), write for the rest, as Gitea. */
export const scopeLevelOf = (method: string): ScopeLevel =>
  method === 'POST' || method === 'PUT' || method === 'PATCH' || method === 'DELETE' ? WRITE : READ

/** Null when `scope` holds every category at `level`, else why not, in Gitea's words (a 403). */
export function scopeRefusal(scope: TokenScope, categories: readonly ScopeCategory[], level: ScopeLevel): string | null {
  if (categories.every((c) => (scope.levels[c] ?? 0) >= level)) return null
  const required = categories.map((c) => `${level === WRITE ? 'write' : 'read'}:${c}`).join(' ')
  return `token does not have at least one of required scope(s), required=[${required}], token scope=${scope.text}`
}

/** 403 unless `scope` holds every category at `level`. */
export function requireScope(scope: TokenScope, categories: readonly ScopeCategory[], level: ScopeLevel): void {
  const refusal = scopeRefusal(scope, categories, level)
  if (refusal) throw new ApiError(403, refusal)
}

/** The scope of a token made before scopes existed, and of a token made without asking for one by the service. */
export const ALL_SCOPE = 'all'

/** Parsed scopes of stored tokens; there are few distinct ones, so each is parsed once. */
const parsed = new Map<string, TokenScope>()

/** The parsed scope of a stored token (a stored scope that no longer parses grants nothing). */
export function storedScope(text: string): TokenScope {
  let scope = parsed.get(text)
  if (!scope) {
    try {
      scope = parseScope(text)
    } catch {
      scope = { text, levels: {}, publicOnly: false }
    }
    // Bounded: normalised scopes are few (each category at one of three levels, with or without public-only).
    if (parsed.size < 4096) parsed.set(text, scope)
  }
  return scope
}

/** The OpenID Connect scopes (they say what an id_token and userinfo tell, not what the API allows). */
export const OIDC_SCOPES = ['openid', 'profile', 'email', 'groups'] as const

/**
 * The API scope of the access tokens of an OAuth2 grant, from the scope the person granted
 * (space-separated), as Gitea (since 1.22) derives it: the items that are not OpenID Connect
 * scopes, read as a personal access token's (`read:repository`, `write:issue`, `public-only`, ...),
 * limit the token; when there are none, or one of them is not a token scope (`repo`, a client's
 * own word), the token has full access (`all`), as every token had before 1.22.
 */
export function grantTokenScope(grantScope: string): string {
  const items = grantScope.split(' ').filter((s) => s !== '' && !(OIDC_SCOPES as readonly string[]).includes(s))
  if (items.length === 0) return ALL_SCOPE
  try {
    return parseScope(items.join(',')).text || ALL_SCOPE
  } catch {
    return ALL_SCOPE
  }
}
