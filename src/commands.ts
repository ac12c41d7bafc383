import { closeDatabase, tryLock, withLock } from './db/client'
import { asLeader } from './jobs/leadership'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { join } from 'node:path'
import { loadConfig, type Config } from './config'
import { createDeps, type AppDeps } from './deps'
import { startServer } from './server'
import { ApiError } from './lib/errors'
import { errorFields, loggerOf, type LogFields, type Logger } from './lib/log'
import { countUsers, createUser, getUserByName } from './modules/users/service'
import { deleteUser, editUser } from './modules/admin/service'
import { repairAtStart } from './modules/repos/repair'
import { reconcilePendingPushes } from './push'
import { runPreReceiveHook } from './push/pre-receive-hook'
import { WARREN_VERSION } from './version'
import { startMirrorScheduler } from './jobs/mirror-scheduler'
import { startPullChecker } from './jobs/pull-checker'
import { startWebhookWorker } from './jobs/webhook-worker'
import { startNotifier } from './jobs/notifier'
import { startAutoMerger } from './jobs/auto-merger'
import { startLeftoverRepair } from './jobs/leftover-repair'
import { startRepositorySweep } from './jobs/repository-sweep'
import { repairPullMerges } from './modules/pulls/merge'
import { checkGit, MIN_GIT_VERSION } from './ops/git-check'
import { BackgroundJobs, shutdown } from './ops/shutdown'
import { releaseServeMark, runningServer, SERVE_MARK, takeServeMark } from './ops/serve-mark'
import { doctor, printDoctorReport } from './ops/doctor'
import { dump, restore } from './ops/dump'
import { users } from './db/schema'
import { asc, eq } from 'drizzle-orm'

/** How long after the server listens the JIT policy of the start (src/cli.ts) ends: the first requests' handlers are compiled by then. */
const NORMAL_JIT_AFTER_MS = 1000

const ENVIRONMENT = `Settings come from WARREN_* environment variables (see the README's table); the
data folder is WARREN_DATA (./data).`

const USAGE = `warren ${WARREN_VERSION}: a self-hosted git service with a Gitea-compatible API

Usage:
  warren [serve]                         start the server
  warren admin user create               create a user
  warren admin user list                 list the users
  warren admin user change-password      set a user's password
  warren admin user delete               delete a user
  warren doctor [--fix]                  check (and repair) the database, repositories and git
  warren dump [--file F]                 write one archive of the data folder (server may run)
  warren restore --file F                restore a dump into an empty data folder
  warren --version

Every command takes --help. ${ENVIRONMENT}`

function fail(message: string): never {
  console.error(`warren: ${message}`)
  process.exit(1)
}

/** A command: its usage text, its options (node:util parseArgs) and what it does. */
interface Command {
  usage: string
  options: NonNullable<ParseArgsConfig['options']>
  /** Options that must be given. */
  required?: string[]
  run(values: Record<string, string | boolean | undefined>): Promise<void>
}

/** Opens the data folder (migrating it), runs `fn`, closes the database; API errors exit 1. */
async function withDeps<T>(fn: (deps: AppDeps) => Promise<T> | T): Promise<T> {
  const deps = await createDeps(loadConfig())
  try {
    return await fn(deps)
  } catch (e) {
    if (e instanceof ApiError) fail(e.message)
    throw e
  } finally {
    await closeDatabase(deps.db)
  }
}

/**
 * `warren serve`: everything the server says, its errors too, is a line of its log (WARREN_LOG:
 * text or JSON), so a log collector reads all of it; errors nothing else caught end the process
 * as they would without these handlers, said in the log's format first.
 */
async function serve() {
  const config = loadConfig()
  const log = loggerOf(config)
  const fail = (message: string, fields?: LogFields): never => {
    log.error(message, fields)
    process.exit(1)
  }
  process.on('uncaughtException', (e) => fail('uncaught error', errorFields(e)))
  process.on('unhandledRejection', (e) => fail('unhandled rejection', errorFields(e)))
  try {
    await serveWith(config, log, fail)
  } catch (e) {
    fail('the server failed to start', errorFields(e))
  }
}

async function serveWith(config: Config, log: Logger, fail: (message: string, fields?: LogFields) => never) {
  // Git's absence (or an old git) is said before serving, not as a 500 on the first clone; the
  // check (a spawn of `git --version`) runs while the database opens.
  const gitChecked = checkGit()
  // The start-up repairs below assume nothing else works on the data: a second server would have
  // the first one's repositories being created and the objects of pushes it receives removed.
  // On SQLite one process serves a data folder (the serve mark refuses a second). On PostgreSQL
  // several may, sharing the repositories folder: each holds the shared "serving" lock while it
  // runs, and a process repairs at start only when it can take that lock exclusively (no other
  // is serving); otherwise it leaves the data as the running ones keep it.
  if (!config.databaseUrl) {
    const other = runningServer(config.dataDir)
    if (other) fail(`a Warren (process ${other}) already serves ${config.dataDir}; stop it first (or remove ${join(config.dataDir, SERVE_MARK)} if that process is not Warren)`)
  }
  const deps = await createDeps(config)
  const git = await gitChecked
  if (!git.ok) fail(`${git.problem}; Warren needs git ${MIN_GIT_VERSION.join('.')} or later on PATH`)
  // Starts one at a time ("starting"); alone when no other holds "serving", which each running
  // process holds shared for as long as it runs (a crash frees it with the connection).
  const startedAt = Date.now()
  const { held: serving, alone } = await withLock(deps.db, 'starting', async () => {
    const alone = await tryLock(deps.db, 'serving', 'exclusive')
    await alone?.release()
    const held = await tryLock(deps.db, 'serving', 'shared')
    if (alone) {
      // What a crash leaves, at a cost bounded by what was under way, not by the data's size:
      // unfinished repositories, pending pushes (no push runs yet, so each is settled: the only
      // repositories whose refs can be unrecorded), merges. Reading every repository, folder and
      // release asset is left to the background sweep started below.
      await repairAtStart(deps)
      const reconciled = await reconcilePendingPushes(deps)
      if (reconciled.updated) log.info(`recorded the pushes a stop interrupted in ${reconciled.updated} repositories`)
      const mergesRepaired = await repairPullMerges(deps)
      if (mergesRepaired) log.info(`marked ${mergesRepaired} pull requests merged whose merge a stop interrupted`)
    } else log.info('another Warren serves this database: start-up repairs are left to the first one (what a process that dies leaves is repaired by the one running the background jobs)')
    return { held, alone: !!alone }
  })
  if (config.initialAdmin && await countUsers(deps) === 0) {
    const admin = await createUser(deps, { ...config.initialAdmin, isAdmin: true })
    log.info(`created admin user "${admin.name}"`)
  }
  let server: ReturnType<typeof startServer>['server']
  try {
    server = startServer(deps).server
  } catch (e) {
    const code = (e as { code?: string }).code
    if (code === 'EADDRINUSE') fail(`port ${config.port} on ${config.host} is already in use (another Warren?); set WARREN_PORT to another port`)
    throw e
  }
  if (!config.databaseUrl) takeServeMark(config.dataDir)
  // Background jobs: each one registered here is stopped by the shutdown sequence
  // (src/ops/shutdown.ts) before the database closes. Add new jobs with jobs.add(name, job).
  const jobs = new BackgroundJobs()
  if (serving) jobs.add('serving lock', { stop: () => serving.release() })
  // Started once the server listens, after the event loop's next turn: the first requests are
  // answered before the jobs' first queries (a stop before then starts none of them).
  let stopping = false
  setTimeout(() => {
    if (stopping) return
    // With several processes on one PostgreSQL database, each job runs in one of them (asLeader).
    jobs.add('mirror scheduler', asLeader(deps, 'mirror-scheduler', () => startMirrorScheduler(deps)))
    jobs.add('pull request checker', asLeader(deps, 'pull-checker', () => startPullChecker(deps)))
    jobs.add('webhook deliveries', asLeader(deps, 'webhook-deliveries', () => startWebhookWorker(deps)))
    jobs.add('notifications', asLeader(deps, 'notifier', () => startNotifier(deps)))
    jobs.add('scheduled merges', asLeader(deps, 'auto-merger', () => startAutoMerger(deps)))
    // Several processes on PostgreSQL: what one leaves when it dies is repaired while the others
    // serve. On SQLite one process owns the database, and the start-up repairs above suffice.
    if (config.databaseUrl) jobs.add('leftover repairs', asLeader(deps, 'leftover-repair', () => startLeftoverRepair(deps)))
    // The start-up repairs' walk of every repository, a batch at a time while serving.
    if (alone) jobs.add('repository sweep', startRepositorySweep(deps, { startedAt }))
  }, 0)
  // The start is over: the JIT compiles hot code as usual again (made reluctant by the entry, src/cli.ts).
  setTimeout(() => Bun.unsafe.setJITPolicy(1), NORMAL_JIT_AFTER_MS).unref()
  log.info(`listening on http://${config.host}:${server.port} (public URL ${config.baseUrl})`, { git: git.version })
  if (config.startSshServer) {
    // Imported only when the SSH server is on (ssh2 and its ciphers are not loaded otherwise).
    const { startSshServer } = await import('./ssh/server')
    const ssh = jobs.add('ssh server', await startSshServer(deps))
    log.info(`SSH on ${config.sshListenHost}:${ssh.port}`, { hostKey: ssh.hostKey.publicKey })
  }
  log.info(`data in ${config.dataDir} (database ${config.databaseUrl ? 'PostgreSQL' : join(config.dataDir, 'warren.db')})`)
  // SIGTERM / SIGINT: one orderly shutdown; a second signal cuts off what still runs at once.
  const cutNow = new AbortController()
  const onSignal = async (signal: string) => {
    if (stopping) return cutNow.abort()
    stopping = true
    log.info('signal received', { signal })
    shutdown(deps, server, jobs, log, cutNow.signal)
      .then(() => {
        if (!config.databaseUrl) releaseServeMark(config.dataDir)
        process.exit(0)
      })
      .catch((e) => fail('shutdown failed', errorFields(e)))
  }
  process.on('SIGINT', async () => await onSignal('SIGINT'))
  process.on('SIGTERM', async () => await onSignal('SIGTERM'))
}

const COMMANDS: Record<string, Command> = {
  serve: {
    usage: `warren serve: start the server (the default command).

${ENVIRONMENT} Stops on SIGTERM or SIGINT: requests in flight finish within
WARREN_SHUTDOWN_GRACE seconds (30); a second signal cuts them off at once.`,
    options: {},
    run: serve,
  },
  'admin user create': {
    usage: `warren admin user create --username U --password P --email E [--admin] [--must-change-password]

Creates a user; works whether or not the server is running. The password must have at least
WARREN_MIN_PASSWORD_LENGTH (8) characters.`,
    options: {
      username: { type: 'string' },
      password: { type: 'string' },
      email: { type: 'string' },
      admin: { type: 'boolean', default: false },
      'must-change-password': { type: 'boolean', default: false },
    },
    required: ['username', 'password', 'email'],
    // Works whether or not the server runs: SQLite in WAL mode takes a second writer safely.
    run: (values) =>
      withDeps(async (deps) => {
        const user = await createUser(deps, {
          username: values.username as string,
          password: values.password as string,
          email: values.email as string,
          isAdmin: values.admin as boolean,
          mustChangePassword: values['must-change-password'] as boolean,
        })
        console.log(`New user '${user.name}' has been successfully created${user.isAdmin ? ' (site administrator)' : ''}.`)
      }),
  },
  'admin user list': {
    usage: `warren admin user list [--admin]

Lists the users (not organisations): ID, name, e-mail, whether active and whether site admin.
--admin lists the site administrators only.`,
    options: { admin: { type: 'boolean', default: false } },
    run: (values) =>
      withDeps(async (deps) => {
        const where = values.admin ? eq(users.isAdmin, true) : undefined
        const rows = (await deps.db
          .select({ id: users.id, name: users.name, email: users.email, isActive: users.isActive, isAdmin: users.isAdmin, type: users.type })
          .from(users)
          .where(where)
          .orderBy(asc(users.id)))
          .filter((u) => u.type === 0)
        const table = [['ID', 'Username', 'Email', 'IsActive', 'IsAdmin'], ...rows.map((u) => [String(u.id), u.name, u.email, String(u.isActive), String(u.isAdmin)])]
        const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)))
        for (const row of table) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd())
      }),
  },
  'admin user change-password': {
    usage: `warren admin user change-password --username U --password P [--must-change-password]

Sets a user's password (at least WARREN_MIN_PASSWORD_LENGTH characters, 8 by default).
--must-change-password makes the API refuse the user until an admin sets another one.`,
    options: { username: { type: 'string' }, password: { type: 'string' }, 'must-change-password': { type: 'boolean', default: false } },
    required: ['username', 'password'],
    run: (values) =>
      withDeps(async (deps) => {
        const user = await getUserByName(deps, values.username as string)
        await editUser(deps, user, { password: values.password as string, must_change_password: values['must-change-password'] as boolean })
        console.log(`Password of '${user.name}' has been successfully updated.`)
      }),
  },
  'admin user delete': {
    usage: `warren admin user delete --username U

Deletes a user; refused while the user owns repositories or belongs to an organisation
(as DELETE /api/v1/admin/users/{username}).`,
    options: { username: { type: 'string' } },
    required: ['username'],
    run: (values) =>
      withDeps(async (deps) => {
        const user = await getUserByName(deps, values.username as string)
        await deleteUser(deps, user, null)
        console.log(`User '${user.name}' has been deleted.`)
      }),
  },
  doctor: {
    usage: `warren doctor [--fix] [--timeout SECONDS]

Checks git (present, version), the database (integrity, foreign keys), every repository's
folder and its git health (git fsck --connectivity-only, at most --timeout seconds in all,
default 300), folders no repository accounts for, and temporary objects interrupted git
processes left. Exits 1 when a problem was found (and not fixed).
--fix repairs what it safely can: unfinished repositories, unaccounted folders (moved to
repositories/.orphaned), repository records out of step with git, stale temporary objects.
With the server running, only the repairs that are safe beside it are made.`,
    options: { fix: { type: 'boolean', default: false }, timeout: { type: 'string', default: '300' } },
    run: async (values) => {
      const seconds = Number(values.timeout)
      if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 86400) fail('--timeout must be a number of seconds (0 < s <= 86400)')
      const report = await doctor(loadConfig(), { fix: values.fix as boolean, timeoutMs: seconds * 1000 })
      printDoctorReport(report)
      if (!report.healthy) process.exit(1)
    },
  },
  dump: {
    usage: `warren dump [--file F]

Writes one archive (tar) of the data folder: a consistent copy of the database made with
SQLite's online backup (the server may keep running and serving), then the repositories and
every other file of the data folder (attachments ...). Default file:
warren-dump-<date>-<time>.tar in the current folder.`,
    options: { file: { type: 'string' } },
    run: async (values) => {
      const file = await dump(loadConfig(), values.file as string | undefined)
      console.log(`Dump written to ${file}`)
    },
  },
  restore: {
    usage: `warren restore --file F

Restores a dump made by \`warren dump\` into the data folder (WARREN_DATA), which must be empty or
absent; a folder holding anything is refused. Then start the server on it.`,
    options: { file: { type: 'string' } },
    required: ['file'],
    run: async (values) => {
      const config = loadConfig()
      const n = await restore(config, values.file as string)
      console.log(`Restored ${n} files into ${config.dataDir}`)
    },
  },
}

/**
 * The usage of a group of commands (the words leading to several, `admin` or `admin user`): their
 * lines of the general usage. Undefined when the words lead to none.
 */
function groupUsage(words: string[]): string | undefined {
  const prefix = words.join(' ')
  if (!prefix || Object.keys(COMMANDS).every((name) => !name.startsWith(`${prefix} `))) return undefined
  const lines = USAGE.split('\n').filter((line) => line.startsWith(`  warren ${prefix} `))
  return `warren ${prefix}: ${lines.length} commands\n\nUsage:\n${lines.join('\n')}\n\nEvery command takes --help. ${ENVIRONMENT}`
}

async function main(argv: string[]) {
  if (argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') return console.log(USAGE)
  if (argv[0] === '--version' || argv[0] === '-v') return console.log(WARREN_VERSION)
  // git's pre-receive hook of client pushes, in the compiled binary (src/push/hook.ts).
  if (argv[0] === '__pre-receive-hook') return await runPreReceiveHook()
  // The longest run of leading words that names a command ("admin user list").
  const words = argv.length === 0 || argv[0]!.startsWith('-') ? ['serve'] : []
  let name = words.length ? 'serve' : ''
  let rest = words.length ? argv : []
  for (let i = argv.length; i > 0 && !name; i--) {
    const candidate = argv.slice(0, i).join(' ')
    if (COMMANDS[candidate]) {
      name = candidate
      rest = argv.slice(i)
    }
  }
  const command = COMMANDS[name]
  if (!command) {
    const group = groupUsage(argv.filter((arg) => arg !== '--help' && arg !== '-h'))
    // A group of commands (`admin`, `admin user`) shows its commands, as Gitea's CLI does.
    if (group) return console.log(group)
    fail(`unknown command "${argv.join(' ')}"\n\n${USAGE}`)
  }
  if (rest.includes('--help') || rest.includes('-h')) return console.log(command.usage)
  let values: Record<string, string | boolean | undefined>
  try {
    values = parseArgs({ args: rest, options: command.options, strict: true, allowPositionals: false }).values as typeof values
  } catch (e) {
    fail(`${(e as Error).message}\n\n${command.usage}`)
  }
  for (const key of command.required ?? []) if (!values[key]) fail(`--${key} is required\n\n${command.usage}`)
  // The start's JIT policy (src/cli.ts) is for a server's start: other commands (a dump of a large
  // data folder...) may run long, with the normal one.
  if (name !== 'serve') Bun.unsafe.setJITPolicy(1)
  await command.run(values)
}

main(process.argv.slice(2)).catch((e) => fail(e instanceof Error ? e.message : String(e)))
