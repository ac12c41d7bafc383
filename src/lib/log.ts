/**
 * Warren's log: one line per event, as text (`2024-05-01T10:00:00.000Z INFO request method=GET ...`)
 * or JSON (`{"time":...,"level":"info","msg":"request","method":"GET",...}`), chosen by
 * WARREN_LOG (text|json); lines below WARREN_LOG_LEVEL (debug|info|warn|error) are dropped.
 * Info and debug go to stdout, warnings and errors to stderr.
 */

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]
export const LOG_FORMATS = ['text', 'json'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

export type LogFields = Record<string, string | number | boolean | null | undefined>

export interface Logger {
  debug(msg: string, fields?: LogFields): void
  info(msg: string, fields?: LogFields): void
  warn(msg: string, fields?: LogFields): void
  error(msg: string, fields?: LogFields): void
  enabled(level: LogLevel): boolean
}

/** A text value as it reads in a text line: bare when plain, else JSON-quoted. */
const textValue = (v: string | number | boolean | null) => (typeof v === 'string' && !/^[\w./:@+-]+$/.test(v) ? JSON.stringify(v) : String(v))

/** Credentials written into a URL (`https://user:secret@host/`), wherever a logged text holds one, masked. */
const maskUrlCredentials = (text: string) => text.replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi, '$1…@')

/** Query parameters the API reads a token from (caller.ts), by their decoded name. */
const SECRET_PARAMS = new Set(['token', 'access_token'])

/**
 * A request's URL as the log shows it: the path and query (the scheme, host and any
 * credentials before them left out), the values of token parameters masked however their names
 * are spelled (`%74oken=` is read as `token=` too).
 */
export function loggedPath(url: string): string {
  const path = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i, '')
  const q = path.indexOf('?')
  if (q < 0) return path
  const query = path
    .slice(q + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=')
      const name = eq < 0 ? '' : ([...new URLSearchParams(`${pair.slice(0, eq)}=`).keys()][0] ?? '')
      return SECRET_PARAMS.has(name.toLowerCase()) ? `${pair.slice(0, eq)}=…` : pair
    })
  return `${path.slice(0, q + 1)}${query.join('&')}`
}

function line(format: LogFormat, level: LogLevel, msg: string, fields: LogFields): string {
  const time = new Date().toISOString()
  msg = maskUrlCredentials(msg)
  const defined = Object.entries(fields)
    .filter((e): e is [string, string | number | boolean | null] => e[1] !== undefined)
    .map(([k, v]): [string, string | number | boolean | null] => [k, typeof v === 'string' ? maskUrlCredentials(v) : v])
  if (format === 'json') return JSON.stringify({ time, level, msg, ...Object.fromEntries(defined) })
  return [time, level.toUpperCase(), msg, ...defined.map(([k, v]) => `${k}=${textValue(v)}`)].join(' ')
}

/** What a logger is made from: the process's configuration (src/config.ts) has both. */
export interface LogSettings {
  logFormat: LogFormat
  logLevel: LogLevel
}

const loggers = new WeakMap<LogSettings, Logger>()

/** The logger of a configuration (one per config object). */
export function loggerOf(config: LogSettings): Logger {
  const known = loggers.get(config)
  if (known) return known
  const threshold = LOG_LEVELS.indexOf(config.logLevel)
  const enabled = (level: LogLevel) => LOG_LEVELS.indexOf(level) >= threshold
  const write = (level: LogLevel) => (msg: string, fields: LogFields = {}) => {
    if (!enabled(level)) return
    const text = line(config.logFormat, level, msg, fields) + '\n'
    if (level === 'warn' || level === 'error') process.stderr.write(text)
    else process.stdout.write(text)
  }
  const logger: Logger = { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error'), enabled }
  loggers.set(config, logger)
  return logger
}

/** An error as log fields: its message and the first lines of its stack. */
export function errorFields(error: unknown): LogFields {
  if (!(error instanceof Error)) return { error: String(error) }
  const cause = error.cause instanceof Error ? { cause: error.cause.message } : {}
  return { error: error.message, ...cause, stack: error.stack?.split('\n').slice(1, 6).map((s) => s.trim()).join(' | ') }
}

/**
 * The failures already logged, per owner (a server's deps), by key (a row id): what a repair
 * retries every round is logged the first time it fails, not every round after, and again only
 * once it failed anew after succeeding (`delete` the key then).
 */
export function loggedFailures(): (owner: object) => Set<number> {
  const byOwner = new WeakMap<object, Set<number>>()
  return (owner) => {
    let logged = byOwner.get(owner)
    if (!logged) byOwner.set(owner, (logged = new Set()))
    return logged
  }
}
