import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core'

/** Users and organisations share this table (and one name space), as in Gitea. */
export const users = sqliteTable(
  'users',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    name: text('name').notNull(),
    lowerName: text('lower_name').notNull(),
    fullName: text('full_name').notNull().default(''),
    /** Primary e-mail (users); public contact address (organisations, may be ''). */
    email: text('email').notNull().default(''),
    keepEmailPrivate: integer('keep_email_private', { mode: 'boolean' }).notNull().default(false),
    passwordHash: text('password_hash').notNull().default(''),
    /** 0 = individual user, 1 = organisation. */
    type: integer('type').notNull().default(0),
    isAdmin: integer('is_admin', { mode: 'boolean' }).notNull().default(false),
    isActive: integer('is_active', { mode: 'boolean' }).notNull().default(true),
    prohibitLogin: integer('prohibit_login', { mode: 'boolean' }).notNull().default(false),
    mustChangePassword: integer('must_change_password', { mode: 'boolean' }).notNull().default(false),
    allowGitHook: integer('allow_git_hook', { mode: 'boolean' }).notNull().default(false),
    allowImportLocal: integer('allow_import_local', { mode: 'boolean' }).notNull().default(false),
    allowCreateOrganization: integer('allow_create_organization', { mode: 'boolean' }).notNull().default(true),
    /** -1 = the server default (unlimited). */
    maxRepoCreation: integer('max_repo_creation').notNull().default(-1),
    loginName: text('login_name').notNull().default(''),
    sourceId: integer('source_id').notNull().default(0),
    location: text('location').notNull().default(''),
    website: text('website').notNull().default(''),
    description: text('description').notNull().default(''),
    language: text('language').notNull().default(''),
    /** The web theme the user chose ('' = the site's default); kept for `/user/settings`. */
    theme: text('theme').notNull().default(''),
    /** 'unified' | 'split' | '' (the default, unified), as `/user/settings` sets it. */
    diffViewStyle: text('diff_view_style').notNull().default(''),
    /** Gitea's KeepActivityPrivate: the heatmap and activity feeds show others nothing of the user. */
    keepActivityPrivate: integer('keep_activity_private', { mode: 'boolean' }).notNull().default(false),
    /**
     * Which issue and pull request notifications are also mailed (Gitea's
     * email_notifications_preference): 'enabled' (all), 'onmention' (only those mentioning the
     * user), 'disabled'.
     */
    emailNotificationsPreference: text('email_notifications_preference').notNull().default('enabled'),
    /** public | limited | private */
    visibility: text('visibility').notNull().default('public'),
    repoAdminChangeTeamAccess: integer('repo_admin_change_team_access', { mode: 'boolean' }).notNull().default(false),
    numFollowers: integer('num_followers').notNull().default(0),
    numFollowing: integer('num_following').notNull().default(0),
    numStars: integer('num_stars').notNull().default(0),
    numRepos: integer('num_repos').notNull().default(0),
    /** Organisations only. */
    numTeams: integer('num_teams').notNull().default(0),
    numMembers: integer('num_members').notNull().default(0),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
    lastLoginUnix: integer('last_login_unix').notNull().default(0),
    /** The uploaded avatar's file name under {data}/avatars (a content hash, modules/avatars); '' = the default avatar. */
    avatar: text('avatar').notNull().default(''),
  },
  // users_avatar_idx: whether a row still names an uploaded avatar's file (avatars/storage.ts isNamed).
  (t) => [uniqueIndex('users_lower_name_uq').on(t.lowerName), index('users_type_idx').on(t.type, t.lowerName), index('users_avatar_idx').on(t.avatar)],
)

/** Every address of a user, the primary one included (users.email mirrors the primary). */
export const emailAddresses = sqliteTable(
  'email_addresses',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    email: text('email').notNull(),
    lowerEmail: text('lower_email').notNull(),
    isPrimary: integer('is_primary', { mode: 'boolean' }).notNull().default(false),
    isActivated: integer('is_activated', { mode: 'boolean' }).notNull().default(true),
  },
  (t) => [uniqueIndex('email_addresses_lower_email_uq').on(t.lowerEmail), index('email_addresses_user_idx').on(t.userId)],
)
export type EmailRow = typeof emailAddresses.$inferSelect

export const accessTokens = sqliteTable(
  'access_tokens',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** SHA-256 (hex) of the secret; the secret itself is never stored. */
    tokenHash: text('token_hash').notNull(),
    tokenLastEight: text('token_last_eight').notNull(),
    /**
     * The token's scope, normalised (src/auth/scopes.ts), e.g. `read:user,write:issue`. Tokens
     * made before scopes existed got `all` (the default), so they keep working as they did; every
     * token made since is given its scope explicitly.
     */
    scope: text('scope').notNull().default('all'),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [uniqueIndex('access_tokens_hash_uq').on(t.tokenHash), index('access_tokens_user_idx').on(t.userId)],
)
export type AccessTokenRow = typeof accessTokens.$inferSelect

/** SSH public keys of users (type 1) and, later, of deploy keys (type 2). */
export const publicKeys = sqliteTable(
  'public_keys',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    ownerId: integer('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    fingerprint: text('fingerprint').notNull(),
    content: text('content').notNull(),
    keyType: text('key_type').notNull(),
    type: integer('type').notNull().default(1),
    /** The owner proved holding the key: signed their verification token with it (the keys settings page, Gitea's VerifySSHKey); a verified key's SSH signatures verify commits. */
    verified: integer('verified', { mode: 'boolean' }).notNull().default(false),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [index('public_keys_owner_idx').on(t.ownerId), index('public_keys_fingerprint_idx').on(t.fingerprint)],
)
export type PublicKeyRow = typeof publicKeys.$inferSelect

/** OpenPGP keys; sub-keys are rows whose primaryKeyId names their primary key's keyId. */
export const gpgKeys = sqliteTable(
  'gpg_keys',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    ownerId: integer('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    keyId: text('key_id').notNull(),
    primaryKeyId: text('primary_key_id').notNull().default(''),
    /** base64 of the binary public-key packet. */
    content: text('content').notNull(),
    /** JSON array of {email, verified}. */
    emails: text('emails').notNull().default('[]'),
    canSign: integer('can_sign', { mode: 'boolean' }).notNull().default(false),
    canEncryptComms: integer('can_encrypt_comms', { mode: 'boolean' }).notNull().default(false),
    canEncryptStorage: integer('can_encrypt_storage', { mode: 'boolean' }).notNull().default(false),
    canCertify: integer('can_certify', { mode: 'boolean' }).notNull().default(false),
    /** The owner proved holding the key: signed their verification token with it (POST /user/gpg_key_verify). */
    verified: integer('verified', { mode: 'boolean' }).notNull().default(false),
    createdUnix: integer('created_unix').notNull(),
    /** 0 = never expires. */
    expiredUnix: integer('expired_unix').notNull().default(0),
    addedUnix: integer('added_unix').notNull(),
  },
  (t) => [index('gpg_keys_owner_idx').on(t.ownerId), index('gpg_keys_key_id_idx').on(t.keyId)],
)
export type GpgKeyRow = typeof gpgKeys.$inferSelect

export const follows = sqliteTable(
  'follows',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    /** The follower. */
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The one followed. */
    followId: integer('follow_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [uniqueIndex('follows_pair_uq').on(t.userId, t.followId), index('follows_follow_idx').on(t.followId)],
)

/**
 * Blocks (Gitea's user_blocking): `blockerId` (a user, or an organisation through its owners)
 * blocked `blockeeId`, who may then no longer follow the blocker, star or watch its repositories,
 * open issues, comment or react there, or be made a collaborator (`auth/blocking.ts`).
 */
export const userBlocks = sqliteTable(
  'user_blocks',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    blockerId: integer('blocker_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    blockeeId: integer('blockee_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** The blocker's own note (PUT's `?note=`), at most 255 characters as Gitea's column. */
    note: text('note').notNull().default(''),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [uniqueIndex('user_blocks_pair_uq').on(t.blockerId, t.blockeeId), index('user_blocks_blockee_idx').on(t.blockeeId)],
)

/**
 * Badges a site administrator gives users (Gitea's `badge`): made and removed by the operator's
 * `warren admin badge` (Gitea 1.23 has no API for them), given and taken through
 * `/admin/users/{username}/badges` by slug.
 */
export const badges = sqliteTable(
  'badges',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    slug: text('slug').notNull(),
    description: text('description').notNull().default(''),
    imageUrl: text('image_url').notNull().default(''),
  },
  (t) => [uniqueIndex('badges_slug_uq').on(t.slug)],
)
export type BadgeRow = typeof badges.$inferSelect

/** Which user holds which badge (Gitea's `user_badge`), once each. */
export const userBadges = sqliteTable(
  'user_badges',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    badgeId: integer('badge_id')
      .notNull()
      .references(() => badges.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
  },
  (t) => [uniqueIndex('user_badges_pair_uq').on(t.userId, t.badgeId), index('user_badges_badge_idx').on(t.badgeId)],
)

/**
 * A user's TOTP second factor (Gitea's `two_factor`), at most one a user, deleted with them. The
 * secret is sealed with the data folder's key (`lib/secret-box.ts`, as Gitea encrypts it with its
 * SECRET_KEY); the scratch (recovery) token is kept only as its SHA-256; the last passcode that
 * signed in is kept so that it cannot sign in again (Gitea's LastUsedPasscode).
 */
export const twoFactors = sqliteTable(
  'two_factor',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    secretSealed: text('secret_sealed').notNull(),
    scratchHash: text('scratch_hash').notNull(),
    lastUsedPasscode: text('last_used_passcode').notNull().default(''),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [uniqueIndex('two_factor_user_uq').on(t.userId)],
)
export type TwoFactorRow = typeof twoFactors.$inferSelect
