import { resolve } from 'node:path'
import { isPostgresUrl } from './db/dialect'
import { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from './lib/log'
import { parseHostAllowList } from './lib/host-allow-list'
import { isSafeRefName } from './git/ref-name'

/** Everything Warren reads from its environment, as one typed object. */
export interface Config {
  host: string
  port: number
  /** Folder holding the SQLite file and the repositories. */
  dataDir: string
  /** WARREN_DATABASE_URL: a postgres:// URL puts the metadata in PostgreSQL; null: SQLite in dataDir. */
  databaseUrl: string | null
  /**
   * Several processes on one PostgreSQL database: how often one that is not running a background
   * job asks again whether it may (its holder may have died), ms (WARREN_JOB_RETRY_MS, 5000).
   */
  jobRetryMs: number
  /** How often the leader looks for what a dead process left (src/jobs/leftover-repair.ts), ms (WARREN_LEFTOVER_REPAIR_MS, 3000). */
  leftoverRepairMs: number
  /** WARREN_DATABASE_POOL: PostgreSQL connections per process. */
  databasePoolSize: number
  /**
   * WARREN_DATABASE_SYNCHRONOUS_COMMIT (default false): whether a write on PostgreSQL waits until
   * its commit is flushed to disk. False is SQLite's `synchronous=NORMAL` (db/postgres.ts).
   */
  databaseSynchronousCommit: boolean
  /** Public root URL, always with a trailing slash (Gitea's ROOT_URL). */
  baseUrl: string
  /** Domain and port used to build `ssh_url` fields. */
  sshDomain: string
  sshPort: number
  sshUser: string
  /** Run the built-in SSH server (WARREN_START_SSH_SERVER, Gitea's START_SSH_SERVER; default false). */
  startSshServer: boolean
  /** Where it listens (WARREN_SSH_LISTEN_HOST, default WARREN_HOST; WARREN_SSH_LISTEN_PORT, default WARREN_SSH_PORT). */
  sshListenHost: string
  sshListenPort: number
  /** SSH connections at once, signed in or not (WARREN_SSH_MAX_CONNECTIONS, 512); more are closed at once. */
  sshMaxConnections: number
  /**
   * SSH connections that have not signed in yet, all addresses together (WARREN_SSH_MAX_UNAUTHENTICATED,
   * a quarter of sshMaxConnections): always less than sshMaxConnections, so the rest stays for clients that sign in.
   */
  sshMaxUnauthenticated: number
  /** Of those, from one address (an IPv6 /64; WARREN_SSH_MAX_UNAUTHENTICATED_PER_ADDRESS, 16). */
  sshMaxUnauthenticatedPerAddress: number
  /** A connection not signed in this long after it opened is closed, ms (WARREN_SSH_LOGIN_GRACE_TIME, seconds, 30; OpenSSH's LoginGraceTime). */
  sshLoginGraceMs: number
  /** Signed-in SSH connections of one user (a deploy key: of that key) at once (WARREN_SSH_MAX_CONNECTIONS_PER_USER, 32). */
  sshMaxConnectionsPerUser: number
  /** A signed-in connection on whose channels no data moved this long is closed, ms (WARREN_SSH_IDLE_TIMEOUT, seconds, 60). */
  sshIdleTimeoutMs: number
  /** Domain of the placeholder address shown for hidden e-mails. */
  noReplyDomain: string
  /** Cost of Bun.password (argon2id); tests lower it, production keeps the default. */
  passwordMemoryCost: number
  passwordTimeCost: number
  /** Failed sign-ins (wrong passwords) allowed per account in a window; 0 = no limit. */
  loginFailuresPerAccount: number
  /** Failed sign-ins (wrong passwords or tokens) allowed per client address in a window; 0 = no limit. */
  loginFailuresPerAddress: number
  /** Length of that window, in milliseconds (the variable gives seconds). */
  loginFailureWindowMs: number
  /** Accounts (and, separately, addresses) whose failures are remembered at most; the oldest go first. */
  loginFailureCapacity: number
  /**
   * Time limit of a long git process in seconds (archives, clones, fetches and pushes:
   * upload-pack, receive-pack), WARREN_GIT_TIMEOUT, default 600.
   */
  gitTimeout: number
  /** Time limit of a quick git process in seconds (ref reads, cat-file, rev-parse, config), WARREN_GIT_QUICK_TIMEOUT, default 30. */
  gitQuickTimeout: number
  /** Markdown render workers (WARREN_MARKDOWN_WORKERS, 2). */
  markdownWorkers: number
  /** Longest one markdown render may take, in ms (WARREN_MARKDOWN_TIMEOUT_MS, 3000); past it: 422. */
  markdownTimeoutMs: number
  /** Renders that may wait for a worker (WARREN_MARKDOWN_QUEUE, 32); past it: 503. */
  markdownQueue: number
  /** Render workers one client address may hold at once (WARREN_MARKDOWN_WORKERS_PER_CLIENT; 0, the default: all workers but one, at least one). */
  markdownWorkersPerClient: number
  /** How long a worker thread (markdown renderers, webhook deliveries) stays without work before it ends, in ms (WARREN_WORKER_IDLE, seconds, 30). */
  workerIdleMs: number
  /** Largest API request body in bytes, whatever its type or framing (WARREN_MAX_API_BODY, 32 MiB); past it: 413. */
  maxApiBody: number
  /** Largest git push (pack) body in bytes, as sent and after gzip (WARREN_MAX_PUSH_SIZE, 4 GiB); past it: 413. */
  maxPushSize: number
  /** Largest release asset in bytes (WARREN_MAX_ATTACHMENT_SIZE, 100 MiB), streamed to disk; past it: 413, nothing stored. */
  maxAttachmentSize: number
  /** Largest package file in bytes (WARREN_MAX_PACKAGE_FILE_SIZE, 1 GiB; Gitea's [packages] LIMIT_SIZE_*), streamed to disk; past it: 413, nothing stored. */
  maxPackageFileSize: number
  /**
   * The Git LFS server at `/{owner}/{repo}.git/info/lfs` and `git-lfs-authenticate` over SSH
   * (WARREN_LFS_START_SERVER, Gitea's LFS_START_SERVER; default false, as Gitea's app.example.ini).
   */
  lfsStartServer: boolean
  /**
   * Whether nobody may edit repositories' git hooks (WARREN_DISABLE_GIT_HOOKS, Gitea's
   * [security] DISABLE_GIT_HOOKS; default true, as Gitea): off, site administrators and users
   * given `allow_git_hook` edit them (`/repos/{o}/{r}/hooks/git`), programs the server runs at pushes.
   */
  disableGitHooks: boolean
  /** Largest LFS object accepted, bytes (WARREN_LFS_MAX_FILE_SIZE, Gitea's LFS_MAX_FILE_SIZE; 0, the default: no limit). */
  lfsMaxFileSize: number
  /** How long the token `git-lfs-authenticate` hands out lasts, seconds (WARREN_LFS_HTTP_AUTH_EXPIRY, Gitea's LFS_HTTP_AUTH_EXPIRY: 20 minutes). */
  lfsHttpAuthExpiry: number
  /** LFS locks listed per page at most (WARREN_LFS_LOCKS_PAGING_NUM, Gitea's LFS_LOCKS_PAGING_NUM: 50). */
  lfsLocksPagingNum: number
  /**
   * The types an issue's or comment's attachment may have (WARREN_ATTACHMENT_ALLOWED_TYPES,
   * Gitea's [attachment] ALLOWED_TYPES: comma-separated `.ext` extensions and MIME types, with
   * `image/*` wildcards, the wildcard of every type allowing all; Gitea's list by default).
   * Release assets take any type.
   */
  attachmentAllowedTypes: string[]
  /**
   * The default branch of a new repository (WARREN_DEFAULT_BRANCH, Gitea's [repository]
   * DEFAULT_BRANCH, `main`): the branch `auto_init` commits to and a generated one starts on when
   * neither the request nor the template names one. An empty repository's first push makes the
   * pushed branch its default, whatever this says.
   */
  defaultBranch: string
  /**
   * Files listed for one commit in commit records (`…/pulls/{index}/commits`) and push payloads
   * (WARREN_MAX_COMMIT_FILES, 1000); past it the list stops and the record says `files_truncated`.
   */
  maxCommitFiles: number
  /**
   * Largest diff or patch served (`…/git/commits/{sha}.diff`, `…/pulls/{index}.diff`, `.patch`),
   * bytes (WARREN_MAX_DIFF_SIZE, 64 MiB): 406 when that shows in the first 256 KiB, read before
   * answering; past it once streaming, the stream is cut with an error.
   */
  maxDiffSize: number
  /**
   * Largest blob whose content `…/git/blobs/{sha}` and the contents API include, and the largest
   * file the contents API writes, bytes (WARREN_MAX_BLOB_SIZE, 10 MiB, Gitea's [api]
   * DEFAULT_MAX_BLOB_SIZE): a larger one is read with `content: null` (its download_url serves
   * it) and refused with 413 on write, nothing written.
   */
  maxBlobSize: number
  /** Entries read of one tree listing or language count (WARREN_MAX_TREE_ENTRIES, 200000); past it the listing says `truncated`. */
  maxTreeEntries: number
  /** Commits one comparison (`…/compare/{basehead}`) lists (WARREN_MAX_COMPARE_COMMITS, 250); `total_commits` counts them all. */
  maxCompareCommits: number
  /** Refs one `…/git/refs` answer lists (WARREN_MAX_LISTED_REFS, 10000). */
  maxListedRefs: number
  /**
   * Migrations may reach loopback, link-local, private and unique-local addresses
   * (WARREN_MIGRATIONS_ALLOW_LOCALNETWORKS, Gitea's [migrations] ALLOW_LOCALNETWORKS); default false.
   * Local paths stay admin-only even then.
   */
  migrationsAllowLocalNetworks: boolean
  /**
   * Mirrors (pull and push) on (WARREN_MIRROR_ENABLED, default true; Gitea's `[mirror] ENABLED`):
   * off, the push mirror routes and mirror-sync answer 400 and /settings/repository says so.
   */
  mirrorEnabled: boolean
  /** Pull and push mirrors: default interval and the shortest allowed one, seconds (Gitea: 8h, 10m). */
  mirrorDefaultInterval: number
  mirrorMinInterval: number
  /** Mirror updates run at once at most (WARREN_MIRROR_WORKERS, default 2). */
  mirrorWorkers: number
  /** Shortest password accepted for a new or changed password (WARREN_MIN_PASSWORD_LENGTH, 8, Gitea's MIN_PASSWORD_LENGTH). */
  minPasswordLength: number
  /** How long a web sign-in lasts, in seconds (WARREN_SESSION_LIFETIME, seconds, 7 days; at most a year). */
  sessionLifetime: number
  /**
   * Whether visitors may create their own account at `/user/sign_up` (WARREN_WEB_REGISTRATION,
   * default false: Gitea's [service] DISABLE_REGISTRATION turned the other way, off unless asked).
   */
  webRegistration: boolean
  /** Largest file the web file view shows (WARREN_WEB_MAX_FILE_VIEW, 1 MiB); past it: "too large, download raw". */
  webMaxFileView: number
  /** Largest file the web file view highlights (WARREN_WEB_MAX_HIGHLIGHT, 256 KiB); past it: plain text with line numbers. */
  webMaxHighlight: number
  /** Log lines as text or JSON (WARREN_LOG), and the least level written (WARREN_LOG_LEVEL). */
  logFormat: LogFormat
  logLevel: LogLevel
  /** On SIGTERM/SIGINT, how long requests in flight may run before they are cut off, ms (WARREN_SHUTDOWN_GRACE, seconds, 30). */
  shutdownGraceMs: number
  /**
   * Where webhooks may be delivered (WARREN_WEBHOOK_ALLOWED_HOST_LIST, Gitea's [webhook]
   * ALLOWED_HOST_LIST): `external` (default), `private`, `loopback`, `*`, host names with
   * wildcards, CIDR ranges; comma-separated (src/lib/host-allow-list.ts).
   */
  webhookAllowedHostList: string
  /** Time limit of one webhook delivery, connect to last byte, seconds (WARREN_WEBHOOK_DELIVER_TIMEOUT, 5). */
  webhookDeliverTimeout: number
  /** Webhook deliveries in flight at once, across repositories (WARREN_WEBHOOK_CONCURRENCY, 8). */
  webhookConcurrency: number
  /** Attempts per delivery when the receiver is unreachable or answers 5xx (WARREN_WEBHOOK_MAX_ATTEMPTS, 4). */
  webhookMaxAttempts: number
  /** Wait before the first retry, seconds, doubled for each next one (WARREN_WEBHOOK_RETRY_DELAY, 10). */
  webhookRetryDelay: number
  /**
   * Gitea 1.3–1.14's `secret` field inside gitea/gogs payloads, for receivers of that era
   * (WARREN_WEBHOOK_PAYLOAD_SECRET, default false: as Gitea since 1.15 the secret only keys the
   * signature headers, which are always sent, and never travels in a body a receiver may log).
   */
  webhookPayloadSecret: boolean
  /** Webhooks one repository, or one organisation, may have (WARREN_MAX_HOOKS_PER_REPO, 100); past it: 422. */
  maxHooksPerRepo: number
  /** Branch protection rules, and tag protection rules, one repository may have (WARREN_MAX_PROTECTIONS_PER_REPO, 100 of each); past it: 422. */
  maxProtectionsPerRepo: number
  /** Releases (drafts included) one repository may have (WARREN_MAX_RELEASES_PER_REPO, 10000); past it: 422. */
  maxReleasesPerRepo: number
  /**
   * Entries a contents listing of one folder shows (WARREN_MAX_CONTENTS_LIST_ENTRIES, 1000, as
   * GitHub's contents API): Gitea pages nothing here; past it the list stops, in git's order.
   */
  maxContentsListEntries: number
  /**
   * The reactions people may give issues and comments (WARREN_REACTIONS, comma-separated, Gitea's
   * [ui] REACTIONS; default `+1, -1, laugh, hooray, confused, heart, rocket, eyes`): at most 64
   * names of at most 32 characters; any other reaction is refused with 403, as Gitea does.
   */
  reactions: string[]
  /**
   * Entries of a git tree listing per page (WARREN_DEFAULT_GIT_TREES_PER_PAGE, 1000, Gitea's
   * [api] DEFAULT_GIT_TREES_PER_PAGE), as GET /settings/api reports it to the git trees API's clients.
   */
  gitTreesPerPage: number
  /**
   * Warren as an OAuth2 / OpenID Connect provider (WARREN_OAUTH2_ENABLED, Gitea's [oauth2] ENABLED;
   * default true): off, its endpoints and the applications API answer 404 and its tokens sign nobody in.
   */
  oauth2Enabled: boolean
  /** Lifetime of an OAuth2 access token, seconds (WARREN_OAUTH2_ACCESS_TOKEN_EXPIRATION_TIME, 3600, Gitea's). */
  oauth2AccessTokenLifetime: number
  /** Lifetime of an OAuth2 refresh token, seconds (WARREN_OAUTH2_REFRESH_TOKEN_EXPIRATION_TIME, in hours as Gitea's: 730). */
  oauth2RefreshTokenLifetime: number
  /** Lifetime of an authorisation code, seconds (WARREN_OAUTH2_AUTHORIZATION_CODE_LIFETIME, 600: Gitea's ten minutes). */
  oauth2CodeLifetime: number
  /** OAuth2 applications one user may register (WARREN_OAUTH2_MAX_APPLICATIONS_PER_USER, 100); past it: 422. */
  oauth2MaxApplicationsPerUser: number
  /**
   * Outgoing mail (Gitea's [mailer]): on (WARREN_MAILER_ENABLED, default false), mails are queued
   * in the database with the change that causes them and sent by the `mailer` background job
   * (src/jobs/mailer.ts) to the SMTP server WARREN_MAILER_HOST:WARREN_MAILER_PORT (Gitea's
   * SMTP_ADDR, SMTP_PORT), over `smtp`, `smtps` (TLS from the start) or `smtp+starttls`
   * (WARREN_MAILER_PROTOCOL, Gitea's PROTOCOL: by default `smtps` on port 465, `smtp+starttls`
   * on 587, otherwise `smtp`), signed in with WARREN_MAILER_USER / WARREN_MAILER_PASSWD when a user
   * is set, from WARREN_MAILER_FROM (Gitea's FROM). The operator's host is trusted as Gitea trusts
   * it: the webhooks' outbound policy does not apply to it.
   */
  mailer: MailerConfig | null
  /**
   * New accounts made at `/user/sign_up` stay inactive until their address is confirmed by the
   * mailed link (WARREN_REGISTER_EMAIL_CONFIRM, Gitea's [service] REGISTER_EMAIL_CONFIRM; default
   * false; needs the mailer).
   */
  registerEmailConfirm: boolean
  /** How long an activation link stays valid, seconds (WARREN_ACTIVE_CODE_LIVE_MINUTES, minutes, 180, Gitea's). */
  activeCodeLifetime: number
  /** How long a password reset link stays valid, seconds (WARREN_RESET_PASSWD_CODE_LIVE_MINUTES, minutes, 180, Gitea's). */
  resetPasswordCodeLifetime: number
  /** Admin created on first start when no user exists. */
  initialAdmin?: { username: string; password: string; email: string }
}

/** Gitea's [mailer] PROTOCOL values Warren speaks. */
export const MAILER_PROTOCOLS = ['smtp', 'smtps', 'smtp+starttls'] as const
export type MailerProtocol = (typeof MAILER_PROTOCOLS)[number]

/** Where and how mail is sent (Config.mailer). */
export interface MailerConfig {
  protocol: MailerProtocol
  host: string
  port: number
  /** '' = no sign-in. */
  user: string
  passwd: string
  /** The From header, e.g. `Warren <warren@example.com>`. */
  from: string
  /** Accept any certificate of the server (WARREN_MAILER_FORCE_TRUST_SERVER_CERT, Gitea's FORCE_TRUST_SERVER_CERT; default false). */
  forceTrustServerCert: boolean
  /** Attempts to send one mail before it is given up (WARREN_MAILER_MAX_ATTEMPTS, 10). */
  maxAttempts: number
  /** Wait before the first retry, seconds, doubled for each next one up to an hour (WARREN_MAILER_RETRY_DELAY, 10). */
  retryDelay: number
  /** Time limit of one connection to the server, seconds (WARREN_MAILER_TIMEOUT, 30). */
  timeout: number
}

/** A value that goes into a mail header: one line, bounded. */
function headerValueFrom(value: string, name: string): string {
  if (/[\r\n\x00]/.test(value) || value.length > 320) throw new Error(`${name} must be one line of at most 320 characters`)
  return value
}

/** WARREN_MAILER_*: null while the mailer is off. */
function mailerFrom(env: Record<string, string | undefined>, host: string): MailerConfig | null {
  if (!boolFrom(env.WARREN_MAILER_ENABLED, 'WARREN_MAILER_ENABLED')) return null
  const smtpHost = (env.WARREN_MAILER_HOST ?? '').trim()
  if (!smtpHost || !/^[A-Za-z0-9.:[\]_-]{1,255}$/.test(smtpHost)) throw new Error(`WARREN_MAILER_HOST must name the SMTP server when WARREN_MAILER_ENABLED is true, got "${smtpHost}"`)
  const portGiven = env.WARREN_MAILER_PORT
  const inferred: MailerProtocol = portGiven === '465' ? 'smtps' : portGiven === '587' ? 'smtp+starttls' : 'smtp'
  const protocol = choiceFrom(env.WARREN_MAILER_PROTOCOL, MAILER_PROTOCOLS, 'WARREN_MAILER_PROTOCOL', inferred)
  const fallbackPort = protocol === 'smtps' ? 465 : protocol === 'smtp+starttls' ? 587 : 25
  return {
    protocol,
    host: smtpHost,
    port: boundedFrom(portGiven, fallbackPort, 'WARREN_MAILER_PORT', 1, 65535),
    user: headerValueFrom(env.WARREN_MAILER_USER ?? '', 'WARREN_MAILER_USER'),
    passwd: env.WARREN_MAILER_PASSWD ?? '',
    from: headerValueFrom(env.WARREN_MAILER_FROM?.trim() || `Warren <noreply@${host}>`, 'WARREN_MAILER_FROM'),
    forceTrustServerCert: boolFrom(env.WARREN_MAILER_FORCE_TRUST_SERVER_CERT, 'WARREN_MAILER_FORCE_TRUST_SERVER_CERT'),
    maxAttempts: boundedFrom(env.WARREN_MAILER_MAX_ATTEMPTS, 10, 'WARREN_MAILER_MAX_ATTEMPTS', 1, 100),
    retryDelay: secondsFrom(env.WARREN_MAILER_RETRY_DELAY, 10, 'WARREN_MAILER_RETRY_DELAY'),
    timeout: secondsFrom(env.WARREN_MAILER_TIMEOUT, 30, 'WARREN_MAILER_TIMEOUT'),
  }
}

function withSlash(url: string): string {
  return url.endsWith('/') ? url : url + '/'
}

/** true / false (also 1 / 0); `fallback` (false) when unset. */
function boolFrom(value: string | undefined, name: string, fallback = false): boolean {
  if (value === undefined || value === '') return fallback
  if (['true', '1'].includes(value.toLowerCase())) return true
  if (['false', '0'].includes(value.toLowerCase())) return false
  throw new Error(`${name} must be true or false, got "${value}"`)
}

/** One of `choices` (`fallback` when unset). */
function choiceFrom<T extends string>(value: string | undefined, choices: readonly T[], name: string, fallback: T): T {
  if (value === undefined || value === '') return fallback
  const found = choices.find((c) => c === value.toLowerCase())
  if (!found) throw new Error(`${name} must be one of ${choices.join(', ')}, got "${value}"`)
  return found
}

/** A port number (default when unset). */
const portFrom = (value: string | undefined, fallback: number, name: string) => boundedFrom(value, fallback, name, 0, 65535)
/** A positive number of seconds (fractions allowed), at most a day. */
function secondsFrom(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback
  const n = Number(value)
  if (!Number.isFinite(n) || n <= 0 || n > 86400) throw new Error(`${name} must be a number of seconds (0 < s <= 86400), got "${value}"`)
  return n
}

/** A whole number in [min, max] from the environment. */
function boundedFrom(value: string | undefined, fallback: number, name: string, min: number, max: number): number {
  if (value === undefined || value === '') return fallback
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new Error(`${name} must be a whole number from ${min} to ${max}, got "${value}"`)
  return n
}

const MiB = 1024 * 1024

/** Gitea 1.23's default [attachment] ALLOWED_TYPES. */
const DEFAULT_ATTACHMENT_TYPES =
  '.avif,.cpuprofile,.csv,.dmp,.docx,.fodg,.fodp,.fods,.fodt,.gif,.gz,.jpeg,.jpg,.json,.jsonc,.log,.md,.mov,.mp4,.odf,.odg,.odp,.ods,.odt,.patch,.pdf,.png,.pptx,.svg,.tgz,.txt,.webm,.webp,.xls,.xlsx,.zip'

/** WARREN_DEFAULT_BRANCH: a branch name git accepts (`main` when unset). */
function branchNameFrom(value: string | undefined): string {
  const name = value === undefined || value.trim() === '' ? 'main' : value.trim()
  if (!isSafeRefName(name)) throw new Error(`WARREN_DEFAULT_BRANCH must be a branch name (git check-ref-format), got "${value}"`)
  return name
}

/** WARREN_ATTACHMENT_ALLOWED_TYPES: `.ext` or `type/subtype` entries (lower-cased), bounded in number and length. */
function attachmentTypesFrom(value: string | undefined): string[] {
  const text = value === undefined || value.trim() === '' ? DEFAULT_ATTACHMENT_TYPES : value
  const types = [...new Set(text.split(',').map((n) => n.trim().toLowerCase()).filter(Boolean))]
  if (types.length > 256 || types.some((n) => n.length > 128 || !/^(\.[^\s/,]+|[a-z0-9.+*-]+\/[a-z0-9.+*-]+)$/.test(n)))
    throw new Error(`WARREN_ATTACHMENT_ALLOWED_TYPES must list at most 256 file extensions (.ext) or MIME types (type/subtype, type/*), got "${value}"`)
  return types
}

const DEFAULT_REACTIONS = ['+1', '-1', 'laugh', 'hooray', 'confused', 'heart', 'rocket', 'eyes']

/** WARREN_REACTIONS: comma-separated names, bounded in number and length. */
function reactionsFrom(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') return DEFAULT_REACTIONS
  const names = [...new Set(value.split(',').map((n) => n.trim()).filter(Boolean))]
  if (names.length > 64 || names.some((n) => n.length > 32 || /[\x00-\x1f\x7f]/.test(n)))
    throw new Error(`WARREN_REACTIONS must list at most 64 names of at most 32 printable characters, got "${value}"`)
  return names
}

/** WARREN_WEBHOOK_ALLOWED_HOST_LIST, checked at start (an entry that parses as nothing stops the server). */
/** WARREN_DATABASE_URL: empty for SQLite, else a postgres:// or postgresql:// URL. */
function databaseUrlFrom(value: string | undefined): string | null {
  if (!value) return null
  if (!isPostgresUrl(value)) throw new Error(`WARREN_DATABASE_URL must be a postgres:// URL (or unset, for SQLite in the data folder)`)
  return value
}

/**
 * The SSH connection bounds (src/ssh/limits.ts): unauthenticated connections take at most part of
 * the whole (a quarter unless set), and one address at most part of those.
 */
function sshConnectionLimits(env: Record<string, string | undefined>) {
  const sshMaxConnections = boundedFrom(env.WARREN_SSH_MAX_CONNECTIONS, 512, 'WARREN_SSH_MAX_CONNECTIONS', 2, 1_000_000)
  const unauthenticated = env.WARREN_SSH_MAX_UNAUTHENTICATED
  const sshMaxUnauthenticated = boundedFrom(unauthenticated, Math.max(1, Math.floor(sshMaxConnections / 4)), 'WARREN_SSH_MAX_UNAUTHENTICATED', 1, sshMaxConnections - 1)
  const perAddress = boundedFrom(env.WARREN_SSH_MAX_UNAUTHENTICATED_PER_ADDRESS, Math.min(16, sshMaxUnauthenticated), 'WARREN_SSH_MAX_UNAUTHENTICATED_PER_ADDRESS', 1, sshMaxUnauthenticated)
  return {
    sshMaxConnections,
    sshMaxUnauthenticated,
    sshMaxUnauthenticatedPerAddress: perAddress,
    sshLoginGraceMs: 1000 * secondsFrom(env.WARREN_SSH_LOGIN_GRACE_TIME, 30, 'WARREN_SSH_LOGIN_GRACE_TIME'),
    sshMaxConnectionsPerUser: boundedFrom(env.WARREN_SSH_MAX_CONNECTIONS_PER_USER, 32, 'WARREN_SSH_MAX_CONNECTIONS_PER_USER', 1, sshMaxConnections),
    sshIdleTimeoutMs: 1000 * secondsFrom(env.WARREN_SSH_IDLE_TIMEOUT, 60, 'WARREN_SSH_IDLE_TIMEOUT'),
  }
}

/** WARREN_WEBHOOK_ALLOWED_HOST_LIST, checked at start (an entry that parses as nothing stops the server). */
function hostListFrom(value: string | undefined): string {
  const text = value?.trim() || 'external'
  try {
    parseHostAllowList(text)
  } catch (e) {
    throw new Error(`WARREN_WEBHOOK_ALLOWED_HOST_LIST: ${(e as Error).message}`)
  }
  return text
}

/**
 * The default largest API request body (WARREN_MAX_API_BODY): JSON, forms, multipart, text, counted
 * as it arrives whatever its framing and refused with 413 past it (src/app.ts). Git packs have
 * their own bound (maxPushSize).
 */
export const MAX_API_BODY = 32 * MiB

export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const port = overrides.port ?? portFrom(env.WARREN_PORT, 3000, 'WARREN_PORT')
  const baseUrl = withSlash(overrides.baseUrl ?? env.WARREN_BASE_URL ?? `http://localhost:${port}/`)
  const host = new URL(baseUrl).hostname
  const admin =
    env.WARREN_ADMIN_USER && env.WARREN_ADMIN_PASSWORD && env.WARREN_ADMIN_EMAIL
      ? { username: env.WARREN_ADMIN_USER, password: env.WARREN_ADMIN_PASSWORD, email: env.WARREN_ADMIN_EMAIL }
      : undefined
  const listenHost = env.WARREN_HOST ?? '0.0.0.0'
  const mailer = overrides.mailer !== undefined ? overrides.mailer : mailerFrom(env, host)
  const registerEmailConfirm = boolFrom(env.WARREN_REGISTER_EMAIL_CONFIRM, 'WARREN_REGISTER_EMAIL_CONFIRM')
  if (registerEmailConfirm && !mailer) throw new Error('WARREN_REGISTER_EMAIL_CONFIRM needs the mailer (WARREN_MAILER_ENABLED=true)')
  const sshPort = portFrom(env.WARREN_SSH_PORT, 22, 'WARREN_SSH_PORT')
  return {
    host: listenHost,
    port,
    dataDir: resolve(env.WARREN_DATA ?? './data'),
    databaseUrl: databaseUrlFrom(env.WARREN_DATABASE_URL),
    databasePoolSize: boundedFrom(env.WARREN_DATABASE_POOL, 10, 'WARREN_DATABASE_POOL', 2, 1000),
    jobRetryMs: boundedFrom(env.WARREN_JOB_RETRY_MS, 5000, 'WARREN_JOB_RETRY_MS', 50, 600_000),
    leftoverRepairMs: boundedFrom(env.WARREN_LEFTOVER_REPAIR_MS, 3000, 'WARREN_LEFTOVER_REPAIR_MS', 50, 600_000),
    databaseSynchronousCommit: boolFrom(env.WARREN_DATABASE_SYNCHRONOUS_COMMIT, 'WARREN_DATABASE_SYNCHRONOUS_COMMIT'),
    baseUrl,
    sshDomain: env.WARREN_SSH_DOMAIN ?? host,
    sshPort,
    sshUser: env.WARREN_SSH_USER ?? 'git',
    startSshServer: boolFrom(env.WARREN_START_SSH_SERVER, 'WARREN_START_SSH_SERVER'),
    sshListenHost: env.WARREN_SSH_LISTEN_HOST ?? listenHost,
    sshListenPort: portFrom(env.WARREN_SSH_LISTEN_PORT, sshPort, 'WARREN_SSH_LISTEN_PORT'),
    ...sshConnectionLimits(env),
    noReplyDomain: env.WARREN_NO_REPLY_DOMAIN ?? 'noreply.localhost',
    passwordMemoryCost: 19456,
    passwordTimeCost: 2,
    loginFailuresPerAccount: boundedFrom(env.WARREN_LOGIN_MAX_FAILURES_PER_ACCOUNT, 10, 'WARREN_LOGIN_MAX_FAILURES_PER_ACCOUNT', 0, 1_000_000),
    loginFailuresPerAddress: boundedFrom(env.WARREN_LOGIN_MAX_FAILURES_PER_ADDRESS, 100, 'WARREN_LOGIN_MAX_FAILURES_PER_ADDRESS', 0, 1_000_000),
    loginFailureWindowMs: 1000 * boundedFrom(env.WARREN_LOGIN_FAILURE_WINDOW, 300, 'WARREN_LOGIN_FAILURE_WINDOW', 1, 86_400),
    loginFailureCapacity: boundedFrom(env.WARREN_LOGIN_FAILURE_CAPACITY, 10_000, 'WARREN_LOGIN_FAILURE_CAPACITY', 1, 1_000_000),
    gitTimeout: secondsFrom(env.WARREN_GIT_TIMEOUT, 600, 'WARREN_GIT_TIMEOUT'),
    gitQuickTimeout: secondsFrom(env.WARREN_GIT_QUICK_TIMEOUT, 30, 'WARREN_GIT_QUICK_TIMEOUT'),
    migrationsAllowLocalNetworks: boolFrom(env.WARREN_MIGRATIONS_ALLOW_LOCALNETWORKS, 'WARREN_MIGRATIONS_ALLOW_LOCALNETWORKS'),
    mirrorEnabled: boolFrom(env.WARREN_MIRROR_ENABLED, 'WARREN_MIRROR_ENABLED', true),
    mirrorDefaultInterval: 8 * 3600,
    mirrorMinInterval: 600,
    mirrorWorkers: boundedFrom(env.WARREN_MIRROR_WORKERS, 2, 'WARREN_MIRROR_WORKERS', 1, 64),
    minPasswordLength: boundedFrom(env.WARREN_MIN_PASSWORD_LENGTH, 8, 'WARREN_MIN_PASSWORD_LENGTH', 1, 255),
    sessionLifetime: boundedFrom(env.WARREN_SESSION_LIFETIME, 7 * 86_400, 'WARREN_SESSION_LIFETIME', 60, 366 * 86_400),
    webRegistration: boolFrom(env.WARREN_WEB_REGISTRATION, 'WARREN_WEB_REGISTRATION'),
    webMaxFileView: boundedFrom(env.WARREN_WEB_MAX_FILE_VIEW, 1024 * 1024, 'WARREN_WEB_MAX_FILE_VIEW', 1024, 16 * 1024 * 1024),
    webMaxHighlight: boundedFrom(env.WARREN_WEB_MAX_HIGHLIGHT, 256 * 1024, 'WARREN_WEB_MAX_HIGHLIGHT', 0, 4 * 1024 * 1024),
    logFormat: choiceFrom(env.WARREN_LOG, LOG_FORMATS, 'WARREN_LOG', 'text'),
    logLevel: choiceFrom(env.WARREN_LOG_LEVEL, LOG_LEVELS, 'WARREN_LOG_LEVEL', 'info'),
    shutdownGraceMs: 1000 * secondsFrom(env.WARREN_SHUTDOWN_GRACE, 30, 'WARREN_SHUTDOWN_GRACE'),
    initialAdmin: admin,
    webhookAllowedHostList: hostListFrom(env.WARREN_WEBHOOK_ALLOWED_HOST_LIST),
    webhookDeliverTimeout: secondsFrom(env.WARREN_WEBHOOK_DELIVER_TIMEOUT, 5, 'WARREN_WEBHOOK_DELIVER_TIMEOUT'),
    webhookConcurrency: boundedFrom(env.WARREN_WEBHOOK_CONCURRENCY, 8, 'WARREN_WEBHOOK_CONCURRENCY', 1, 256),
    webhookMaxAttempts: boundedFrom(env.WARREN_WEBHOOK_MAX_ATTEMPTS, 4, 'WARREN_WEBHOOK_MAX_ATTEMPTS', 1, 20),
    webhookRetryDelay: secondsFrom(env.WARREN_WEBHOOK_RETRY_DELAY, 10, 'WARREN_WEBHOOK_RETRY_DELAY'),
    webhookPayloadSecret: boolFrom(env.WARREN_WEBHOOK_PAYLOAD_SECRET, 'WARREN_WEBHOOK_PAYLOAD_SECRET'),
    markdownWorkers: boundedFrom(env.WARREN_MARKDOWN_WORKERS, 2, 'WARREN_MARKDOWN_WORKERS', 1, 64),
    markdownTimeoutMs: boundedFrom(env.WARREN_MARKDOWN_TIMEOUT_MS, 3000, 'WARREN_MARKDOWN_TIMEOUT_MS', 10, 600_000),
    markdownQueue: boundedFrom(env.WARREN_MARKDOWN_QUEUE, 32, 'WARREN_MARKDOWN_QUEUE', 0, 100_000),
    markdownWorkersPerClient: boundedFrom(env.WARREN_MARKDOWN_WORKERS_PER_CLIENT, 0, 'WARREN_MARKDOWN_WORKERS_PER_CLIENT', 0, 64),
    workerIdleMs: 1000 * boundedFrom(env.WARREN_WORKER_IDLE, 30, 'WARREN_WORKER_IDLE', 1, 86_400),
    maxApiBody: boundedFrom(env.WARREN_MAX_API_BODY, MAX_API_BODY, 'WARREN_MAX_API_BODY', 1024, 1024 * MiB),
    maxPushSize: boundedFrom(env.WARREN_MAX_PUSH_SIZE, 4096 * MiB, 'WARREN_MAX_PUSH_SIZE', MiB, 64 * 1024 * MiB),
    maxAttachmentSize: boundedFrom(env.WARREN_MAX_ATTACHMENT_SIZE, 100 * MiB, 'WARREN_MAX_ATTACHMENT_SIZE', 1, 64 * 1024 * MiB),
    maxPackageFileSize: boundedFrom(env.WARREN_MAX_PACKAGE_FILE_SIZE, 1024 * MiB, 'WARREN_MAX_PACKAGE_FILE_SIZE', 1, 64 * 1024 * MiB),
    lfsStartServer: boolFrom(env.WARREN_LFS_START_SERVER, 'WARREN_LFS_START_SERVER'),
    disableGitHooks: boolFrom(env.WARREN_DISABLE_GIT_HOOKS, 'WARREN_DISABLE_GIT_HOOKS', true),
    lfsMaxFileSize: boundedFrom(env.WARREN_LFS_MAX_FILE_SIZE, 0, 'WARREN_LFS_MAX_FILE_SIZE', 0, Number.MAX_SAFE_INTEGER),
    lfsHttpAuthExpiry: secondsFrom(env.WARREN_LFS_HTTP_AUTH_EXPIRY, 1200, 'WARREN_LFS_HTTP_AUTH_EXPIRY'),
    lfsLocksPagingNum: boundedFrom(env.WARREN_LFS_LOCKS_PAGING_NUM, 50, 'WARREN_LFS_LOCKS_PAGING_NUM', 1, 1000),
    attachmentAllowedTypes: attachmentTypesFrom(env.WARREN_ATTACHMENT_ALLOWED_TYPES),
    defaultBranch: branchNameFrom(env.WARREN_DEFAULT_BRANCH),
    maxCommitFiles: boundedFrom(env.WARREN_MAX_COMMIT_FILES, 1000, 'WARREN_MAX_COMMIT_FILES', 1, 100_000),
    maxDiffSize: boundedFrom(env.WARREN_MAX_DIFF_SIZE, 64 * MiB, 'WARREN_MAX_DIFF_SIZE', 1024, 4096 * MiB),
    maxBlobSize: boundedFrom(env.WARREN_MAX_BLOB_SIZE, 10 * MiB, 'WARREN_MAX_BLOB_SIZE', 1, 1024 * MiB),
    maxTreeEntries: boundedFrom(env.WARREN_MAX_TREE_ENTRIES, 200_000, 'WARREN_MAX_TREE_ENTRIES', 1000, 10_000_000),
    maxCompareCommits: boundedFrom(env.WARREN_MAX_COMPARE_COMMITS, 250, 'WARREN_MAX_COMPARE_COMMITS', 1, 10_000),
    maxListedRefs: boundedFrom(env.WARREN_MAX_LISTED_REFS, 10_000, 'WARREN_MAX_LISTED_REFS', 1, 1_000_000),
    maxHooksPerRepo: boundedFrom(env.WARREN_MAX_HOOKS_PER_REPO, 100, 'WARREN_MAX_HOOKS_PER_REPO', 1, 1_000_000),
    maxProtectionsPerRepo: boundedFrom(env.WARREN_MAX_PROTECTIONS_PER_REPO, 100, 'WARREN_MAX_PROTECTIONS_PER_REPO', 1, 1000),
    maxContentsListEntries: boundedFrom(env.WARREN_MAX_CONTENTS_LIST_ENTRIES, 1000, 'WARREN_MAX_CONTENTS_LIST_ENTRIES', 1, 100_000),
    maxReleasesPerRepo: boundedFrom(env.WARREN_MAX_RELEASES_PER_REPO, 10_000, 'WARREN_MAX_RELEASES_PER_REPO', 1, 10_000_000),
    gitTreesPerPage: boundedFrom(env.WARREN_DEFAULT_GIT_TREES_PER_PAGE, 1000, 'WARREN_DEFAULT_GIT_TREES_PER_PAGE', 1, 100_000),
    reactions: reactionsFrom(env.WARREN_REACTIONS),
    oauth2Enabled: boolFrom(env.WARREN_OAUTH2_ENABLED, 'WARREN_OAUTH2_ENABLED', true),
    oauth2AccessTokenLifetime: boundedFrom(env.WARREN_OAUTH2_ACCESS_TOKEN_EXPIRATION_TIME, 3600, 'WARREN_OAUTH2_ACCESS_TOKEN_EXPIRATION_TIME', 1, 366 * 86_400),
    oauth2RefreshTokenLifetime: 3600 * boundedFrom(env.WARREN_OAUTH2_REFRESH_TOKEN_EXPIRATION_TIME, 730, 'WARREN_OAUTH2_REFRESH_TOKEN_EXPIRATION_TIME', 1, 10 * 8784),
    oauth2CodeLifetime: boundedFrom(env.WARREN_OAUTH2_AUTHORIZATION_CODE_LIFETIME, 600, 'WARREN_OAUTH2_AUTHORIZATION_CODE_LIFETIME', 1, 3600),
    oauth2MaxApplicationsPerUser: boundedFrom(env.WARREN_OAUTH2_MAX_APPLICATIONS_PER_USER, 100, 'WARREN_OAUTH2_MAX_APPLICATIONS_PER_USER', 1, 100_000),
    mailer,
    registerEmailConfirm,
    activeCodeLifetime: 60 * boundedFrom(env.WARREN_ACTIVE_CODE_LIVE_MINUTES, 180, 'WARREN_ACTIVE_CODE_LIVE_MINUTES', 1, 30 * 1440),
    resetPasswordCodeLifetime: 60 * boundedFrom(env.WARREN_RESET_PASSWD_CODE_LIVE_MINUTES, 180, 'WARREN_RESET_PASSWD_CODE_LIVE_MINUTES', 1, 30 * 1440),
    ...overrides,
  }
}
