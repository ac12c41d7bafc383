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
  /** Markdown render workers (WARREN_MARKDOWN_WORKERS, 2). */
  markdownWorkers: number
  /** Longest one markdown render may take, in ms (WARREN_MARKDOWN_TIMEOUT_MS, 3000); past it: 422. */
  markdownTimeoutMs: number
  /** Renders that may wait for a worker (WARREN_MARKDOWN_QUEUE, 32); past it: 503. */
  markdownQueue: number
  /** Largest API request body in bytes, whatever its type or framing (WARREN_MAX_API_BODY, 32 MiB); past it: 413. */
  maxApiBody: number
  /** Largest git push (pack) body in bytes, as sent and after gzip (WARREN_MAX_PUSH_SIZE, 4 GiB); past it: 413. */
  maxPushSize: number
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

/** A whole number in [min, max] from the environment. */
function boundedFrom(value: string | undefined, fallback: number, name: string, min: number, max: number): number {
  if (value === undefined || value === '') return fallback
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < min || n > max) throw new Error(`${name} must be a whole number from ${min} to ${max}, got "${value}"`)
  return n
}

const MiB = 1024 * 1024

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
    initialAdmin: admin,
    markdownWorkers: boundedFrom(env.WARREN_MARKDOWN_WORKERS, 2, 'WARREN_MARKDOWN_WORKERS', 1, 64),
    markdownTimeoutMs: boundedFrom(env.WARREN_MARKDOWN_TIMEOUT_MS, 3000, 'WARREN_MARKDOWN_TIMEOUT_MS', 10, 600_000),
    markdownQueue: boundedFrom(env.WARREN_MARKDOWN_QUEUE, 32, 'WARREN_MARKDOWN_QUEUE', 0, 100_000),
    maxApiBody: boundedFrom(env.WARREN_MAX_API_BODY, 32 * MiB, 'WARREN_MAX_API_BODY', 1024, 1024 * MiB),
    maxPushSize: boundedFrom(env.WARREN_MAX_PUSH_SIZE, 4096 * MiB, 'WARREN_MAX_PUSH_SIZE', MiB, 64 * 1024 * MiB),
    ...overrides,
  }
}
