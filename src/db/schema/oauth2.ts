import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from './users'

/**
 * Warren as an OAuth2 and OpenID Connect provider (src/modules/oauth2): the applications people
 * register, the grants they give them, the authorisation codes of the code flow, and the access
 * and refresh tokens issued. Every secret (client secret, code, token) is stored as its SHA-256
 * only: each is 32 random bytes, so a fast hash is enough and lookups stay one index probe.
 */
export const oauth2Applications = sqliteTable(
  'oauth2_applications',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    /** The owner (the user who registered it). */
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** Public identifier (a UUID, as Gitea's). */
    clientId: text('client_id').notNull(),
    /** SHA-256 (hex) of the client secret, shown once when made or regenerated. */
    clientSecretHash: text('client_secret_hash').notNull(),
    /** Confidential clients authenticate with their secret; public ones must use PKCE. */
    confidentialClient: integer('confidential_client', { mode: 'boolean' }).notNull().default(true),
    /** Trusted: a person who granted it once is not asked again (Gitea's skip_secondary_authorization). */
    skipSecondaryAuthorization: integer('skip_secondary_authorization', { mode: 'boolean' }).notNull().default(false),
    /** JSON array of the registered redirect URIs, matched exactly. */
    redirectUris: text('redirect_uris').notNull().default('[]'),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [uniqueIndex('oauth2_applications_client_id_uq').on(t.clientId), index('oauth2_applications_user_idx').on(t.userId)],
)
export type OAuth2ApplicationRow = typeof oauth2Applications.$inferSelect

/** A person's consent to an application: one per (user, application); revoking it ends its tokens. */
export const oauth2Grants = sqliteTable(
  'oauth2_grants',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    applicationId: integer('application_id')
      .notNull()
      .references(() => oauth2Applications.id, { onDelete: 'cascade' }),
    /** The scope as granted (OAuth2's space-separated form, e.g. `openid email read:repository`). */
    scope: text('scope').notNull().default(''),
    /** The API scope its access tokens carry, normalised as a personal access token's (src/auth/scopes.ts). */
    tokenScope: text('token_scope').notNull().default('all'),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [uniqueIndex('oauth2_grants_user_app_uq').on(t.userId, t.applicationId), index('oauth2_grants_app_idx').on(t.applicationId)],
)
export type OAuth2GrantRow = typeof oauth2Grants.$inferSelect

/**
 * Authorisation codes: short-lived, and used once: an exchanged code is kept, marked `used`, until
 * it expires, so that a second use is known as such and revokes what the first one issued (RFC 6749
 * 4.1.2).
 */
export const oauth2AuthorizationCodes = sqliteTable(
  'oauth2_authorization_codes',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    grantId: integer('grant_id')
      .notNull()
      .references(() => oauth2Grants.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    /** PKCE (RFC 7636): the challenge and its method (`S256` or `plain`), or '' without PKCE. */
    codeChallenge: text('code_challenge').notNull().default(''),
    codeChallengeMethod: text('code_challenge_method').notNull().default(''),
    /** The redirect URI the code was issued for; the exchange must name the same one. */
    redirectUri: text('redirect_uri').notNull(),
    /** The OpenID Connect nonce of the authorisation request, echoed in the id_token ('' when none). */
    nonce: text('nonce').notNull().default(''),
    used: integer('used', { mode: 'boolean' }).notNull().default(false),
    expiresUnix: integer('expires_unix').notNull(),
  },
  (t) => [uniqueIndex('oauth2_codes_hash_uq').on(t.codeHash), index('oauth2_codes_grant_idx').on(t.grantId), index('oauth2_codes_expires_idx').on(t.expiresUnix)],
)

/**
 * Access and refresh tokens of a grant. A refresh token is used once: using it marks it `used`
 * and issues a new pair; presenting a used one again revokes the whole grant (RFC 6749 10.4,
 * OAuth 2.0 Security BCP: a refresh token replayed means it leaked).
 */
export const oauth2Tokens = sqliteTable(
  'oauth2_tokens',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    grantId: integer('grant_id')
      .notNull()
      .references(() => oauth2Grants.id, { onDelete: 'cascade' }),
    /** `access` or `refresh`. */
    kind: text('kind').notNull(),
    tokenHash: text('token_hash').notNull(),
    used: integer('used', { mode: 'boolean' }).notNull().default(false),
    createdUnix: integer('created_unix').notNull(),
    expiresUnix: integer('expires_unix').notNull(),
  },
  (t) => [uniqueIndex('oauth2_tokens_hash_uq').on(t.tokenHash), index('oauth2_tokens_grant_idx').on(t.grantId), index('oauth2_tokens_expires_idx').on(t.expiresUnix)],
)
