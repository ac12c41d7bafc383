import type { Config } from '../../config'

/** One effective setting as the administrator's configuration page shows it. */
export interface SettingShown {
  /** The `WARREN_*` variable that sets it. */
  variable: string
  label: string
  value: string
}

export interface SettingsGroup {
  title: string
  settings: SettingShown[]
}

const yesNo = (v: boolean) => (v ? 'yes' : 'no')
const bytes = (n: number) => {
  for (const [unit, size] of [['GiB', 1024 ** 3], ['MiB', 1024 ** 2], ['KiB', 1024]] as const) if (n >= size && n % size === 0) return `${n / size} ${unit}`
  return `${n} bytes`
}
const seconds = (n: number) => `${n} s`

/**
 * Where the database is, without what could let someone in: a PostgreSQL URL's user, password
 * and query (which may carry a password) are left out; its host, port and database name stay.
 */
export function databaseShown(config: Config): string {
  if (!config.databaseUrl) return `SQLite, in ${config.dataDir}`
  try {
    const url = new URL(config.databaseUrl)
    return `PostgreSQL, ${url.hostname}${url.port ? `:${url.port}` : ''}${url.pathname}`
  } catch {
    return 'PostgreSQL'
  }
}

/**
 * The effective settings an operator chose (Gitea's `/-/admin/config` summary), grouped, each
 * with the variable that sets it. Written out setting by setting, so a secret is never shown: the
 * initial administrator's password, the database's credentials and anything added to Config
 * later appear only once someone lists them here.
 */
export function configSummary(config: Config): SettingsGroup[] {
  const s = (variable: string, label: string, value: string | number | boolean): SettingShown => ({
    variable: `WARREN_${variable}`,
    label,
    value: typeof value === 'boolean' ? yesNo(value) : String(value),
  })
  return [
    {
      title: 'Server',
      settings: [
        s('BASE_URL', 'Public root URL', config.baseUrl),
        s('HOST', 'Listens on', `${config.host}:${config.port}`),
        s('DATA', 'Data folder', config.dataDir),
        s('DATABASE_URL', 'Database', databaseShown(config)),
        s('DATABASE_POOL', 'Database connections per process', config.databasePoolSize),
        s('DATABASE_SYNCHRONOUS_COMMIT', 'Synchronous commit (PostgreSQL)', config.databaseSynchronousCommit),
        s('LOG', 'Log format', config.logFormat),
        s('LOG_LEVEL', 'Log level', config.logLevel),
        s('SHUTDOWN_GRACE', 'Shutdown grace', seconds(config.shutdownGraceMs / 1000)),
      ],
    },
    {
      title: 'SSH',
      settings: [
        s('START_SSH_SERVER', 'Built-in SSH server', config.startSshServer),
        s('SSH_DOMAIN', 'Clone domain', `${config.sshUser}@${config.sshDomain}:${config.sshPort}`),
        s('SSH_LISTEN_HOST', 'Listens on', `${config.sshListenHost}:${config.sshListenPort}`),
        s('SSH_MAX_CONNECTIONS', 'Connections at most', config.sshMaxConnections),
        s('SSH_IDLE_TIMEOUT', 'Idle timeout', seconds(config.sshIdleTimeoutMs / 1000)),
      ],
    },
    {
      title: 'Accounts and sign-in',
      settings: [
        s('WEB_REGISTRATION', 'Open registration', config.webRegistration),
        s('MIN_PASSWORD_LENGTH', 'Shortest password', config.minPasswordLength),
        s('SESSION_LIFETIME', 'Web session lifetime', seconds(config.sessionLifetime)),
        s('LOGIN_MAX_FAILURES_PER_ACCOUNT', 'Failed sign-ins per account', config.loginFailuresPerAccount),
        s('LOGIN_MAX_FAILURES_PER_ADDRESS', 'Failed sign-ins per address', config.loginFailuresPerAddress),
        s('LOGIN_FAILURE_WINDOW', 'Failure window', seconds(config.loginFailureWindowMs / 1000)),
        s('NO_REPLY_DOMAIN', 'Hidden e-mail domain', config.noReplyDomain),
        s('OAUTH2_ENABLED', 'OAuth2 provider', config.oauth2Enabled),
      ],
    },
    {
      title: 'Mail',
      // Never the SMTP password.
      settings: [
        s('MAILER_ENABLED', 'Mailer', config.mailer !== null),
        ...(config.mailer
          ? [
              s('MAILER_PROTOCOL', 'Protocol', config.mailer.protocol),
              s('MAILER_HOST', 'SMTP server', `${config.mailer.host}:${config.mailer.port}`),
              s('MAILER_USER', 'SMTP user', config.mailer.user || '(none)'),
              s('MAILER_FROM', 'From', config.mailer.from),
              s('MAILER_MAX_ATTEMPTS', 'Attempts per mail', config.mailer.maxAttempts),
            ]
          : []),
        s('REGISTER_EMAIL_CONFIRM', 'New accounts confirm their address', config.registerEmailConfirm),
        s('ACTIVE_CODE_LIVE_MINUTES', 'Activation link lifetime', seconds(config.activeCodeLifetime)),
        s('RESET_PASSWD_CODE_LIVE_MINUTES', 'Password reset link lifetime', seconds(config.resetPasswordCodeLifetime)),
      ],
    },
    {
      title: 'Repositories',
      settings: [
        s('DEFAULT_BRANCH', 'Default branch', config.defaultBranch),
        s('MIRROR_ENABLED', 'Mirrors', config.mirrorEnabled),
        s('MIRROR_WORKERS', 'Mirror updates at once', config.mirrorWorkers),
        s('MIGRATIONS_ALLOW_LOCALNETWORKS', 'Migrations may reach local networks', config.migrationsAllowLocalNetworks),
        s('GIT_TIMEOUT', 'Git time limit', seconds(config.gitTimeout)),
        s('MAX_PUSH_SIZE', 'Largest push', bytes(config.maxPushSize)),
        s('MAX_ATTACHMENT_SIZE', 'Largest attachment', bytes(config.maxAttachmentSize)),
        s('MAX_API_BODY', 'Largest API request body', bytes(config.maxApiBody)),
      ],
    },
    {
      title: 'Webhooks',
      settings: [
        s('WEBHOOK_ALLOWED_HOST_LIST', 'Allowed hosts', config.webhookAllowedHostList),
        s('WEBHOOK_DELIVER_TIMEOUT', 'Delivery time limit', seconds(config.webhookDeliverTimeout)),
        s('WEBHOOK_CONCURRENCY', 'Deliveries at once', config.webhookConcurrency),
        s('WEBHOOK_MAX_ATTEMPTS', 'Attempts per delivery', config.webhookMaxAttempts),
        s('MAX_HOOKS_PER_REPO', 'Webhooks per repository', config.maxHooksPerRepo),
      ],
    },
    {
      title: 'Rendering',
      settings: [
        s('MARKDOWN_WORKERS', 'Markdown workers', config.markdownWorkers),
        s('MARKDOWN_TIMEOUT_MS', 'Markdown time limit', `${config.markdownTimeoutMs} ms`),
        s('WEB_MAX_FILE_VIEW', 'Largest file shown', bytes(config.webMaxFileView)),
        s('WEB_MAX_HIGHLIGHT', 'Largest file highlighted', bytes(config.webMaxHighlight)),
      ],
    },
  ]
}
