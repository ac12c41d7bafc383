import { resolve } from 'node:path'

/** Everything Warren reads from its environment, as one typed object. */
export interface Config {
  host: string
  port: number
  /** Folder holding the SQLite file and the repositories. */
  dataDir: string
  /** Public root URL, always with a trailing slash (Gitea's ROOT_URL). */
  baseUrl: string
  /** Domain and port used to build `ssh_url` fields. */
  sshDomain: string
  sshPort: number
  sshUser: string
  /** Domain of the placeholder address shown for hidden e-mails. */
  noReplyDomain: string
  /** Cost of Bun.password (argon2id); tests lower it, production keeps the default. */
  passwordMemoryCost: number
  passwordTimeCost: number
  /**
   * Time limit of a long git process in seconds (archives, clones, fetches and pushes:
   * upload-pack, receive-pack), WARREN_GIT_TIMEOUT, default 600.
   */
  gitTimeout: number
  /** Time limit of a quick git process in seconds (ref reads, cat-file, rev-parse, config), WARREN_GIT_QUICK_TIMEOUT, default 30. */
  gitQuickTimeout: number
  /** Admin created on first start when no user exists. */
  initialAdmin?: { username: string; password: string; email: string }
}

function withSlash(url: string): string {
  return url.endsWith('/') ? url : url + '/'
}

function intFrom(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${name} must be a port number, got "${value}"`)
  return n
}

/** A positive number of seconds (fractions allowed), at most a day. */
function secondsFrom(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined || value === '') return fallback
  const n = Number(value)
  if (!Number.isFinite(n) || n <= 0 || n > 86400) throw new Error(`${name} must be a number of seconds (0 < s <= 86400), got "${value}"`)
  return n
}

export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const port = overrides.port ?? intFrom(env.WARREN_PORT, 3000, 'WARREN_PORT')
  const baseUrl = withSlash(overrides.baseUrl ?? env.WARREN_BASE_URL ?? `http://localhost:${port}/`)
  const host = new URL(baseUrl).hostname
  const admin =
    env.WARREN_ADMIN_USER && env.WARREN_ADMIN_PASSWORD && env.WARREN_ADMIN_EMAIL
      ? { username: env.WARREN_ADMIN_USER, password: env.WARREN_ADMIN_PASSWORD, email: env.WARREN_ADMIN_EMAIL }
      : undefined
  return {
    host: env.WARREN_HOST ?? '0.0.0.0',
    port,
    dataDir: resolve(env.WARREN_DATA ?? './data'),
    baseUrl,
    sshDomain: env.WARREN_SSH_DOMAIN ?? host,
    sshPort: intFrom(env.WARREN_SSH_PORT, 22, 'WARREN_SSH_PORT'),
    sshUser: env.WARREN_SSH_USER ?? 'git',
    noReplyDomain: env.WARREN_NO_REPLY_DOMAIN ?? 'noreply.localhost',
    passwordMemoryCost: 19456,
    passwordTimeCost: 2,
    gitTimeout: secondsFrom(env.WARREN_GIT_TIMEOUT, 600, 'WARREN_GIT_TIMEOUT'),
    gitQuickTimeout: secondsFrom(env.WARREN_GIT_QUICK_TIMEOUT, 30, 'WARREN_GIT_QUICK_TIMEOUT'),
    initialAdmin: admin,
    ...overrides,
  }
}
