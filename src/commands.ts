import { closeDatabase } from './db/client'
import { parseArgs, type ParseArgsConfig } from 'node:util'
import { loadConfig } from './config'
import { createDeps, type AppDeps } from './deps'
import { ApiError } from './lib/errors'
import { createUser, getUserByName } from './modules/users/service'
import { deleteUser, editUser } from './modules/admin/service'
import { createBadge, deleteBadge, listBadges } from './modules/admin/badges'
import { WARREN_VERSION } from './version'
import { users } from './db/schema'
import { asc, eq } from 'drizzle-orm'

const ENVIRONMENT = `Settings come from WARREN_* environment variables (see the README's table); the
data folder is WARREN_DATA (./data).`

const USAGE = `warren ${WARREN_VERSION}: a self-hosted git service with a Gitea-compatible API

Usage:
  warren [serve]                         start the server
  warren admin user create               create a user
  warren admin user list                 list the users
  warren admin user change-password      set a user's password
  warren admin user delete               delete a user
  warren admin badge create              make a badge (given to users by the API)
  warren admin badge list                list the badges
  warren admin badge delete              delete a badge (taken from everyone)
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

/** Prints rows as columns, the first row the heading. */
function printTable(table: string[][]): void {
  const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)))
  for (const row of table) console.log(row.map((cell, i) => cell.padEnd(widths[i]!)).join('  ').trimEnd())
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

const COMMANDS: Record<string, Command> = {
  serve: {
    usage: `warren serve: start the server (the default command).

${ENVIRONMENT} Stops on SIGTERM or SIGINT: requests in flight finish within
WARREN_SHUTDOWN_GRACE seconds (30); a second signal cuts them off at once.`,
    options: {},
    run: async () => await (await import('./serve')).serve(),
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
        printTable([['ID', 'Username', 'Email', 'IsActive', 'IsAdmin'], ...rows.map((u) => [String(u.id), u.name, u.email, String(u.isActive), String(u.isAdmin)])])
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
  'admin badge create': {
    usage: `warren admin badge create --slug S [--description D] [--image-url URL]

Makes a badge (Gitea 1.23 has no API for this), which a site administrator then gives users with
POST /api/v1/admin/users/{username}/badges {"badge_slugs": ["S"]}. The slug: letters, digits,
dashes, underscores and dots, at most 100; the image URL: http or https.`,
    options: { slug: { type: 'string' }, description: { type: 'string', default: '' }, 'image-url': { type: 'string', default: '' } },
    required: ['slug'],
    run: (values) =>
      withDeps(async (deps) => {
        const badge = await createBadge(deps, { slug: values.slug as string, description: values.description as string, imageUrl: values['image-url'] as string })
        console.log(`Badge '${badge.slug}' has been created (ID ${badge.id}).`)
      }),
  },
  'admin badge list': {
    usage: `warren admin badge list

Lists the badges: ID, slug, description, image URL.`,
    options: {},
    run: () =>
      withDeps(async (deps) => {
        printTable([['ID', 'Slug', 'Description', 'ImageURL'], ...(await listBadges(deps)).map((b) => [String(b.id), b.slug, b.description, b.imageUrl])])
      }),
  },
  'admin badge delete': {
    usage: `warren admin badge delete --slug S

Deletes a badge; every user holding it loses it.`,
    options: { slug: { type: 'string' } },
    required: ['slug'],
    run: (values) =>
      withDeps(async (deps) => {
        await deleteBadge(deps, values.slug as string)
        console.log(`Badge '${values.slug}' has been deleted.`)
      }),
  },
  doctor: {
    usage: `warren doctor [--fix] [--timeout SECONDS]

Checks git (present, version), the database (integrity, foreign keys), every repository's
folder and its git health (git fsck --connectivity-only, at most --timeout seconds in all,
default 300), the push hooks (hooks/channel-2*/), and temporary objects interrupted git
processes left; it lists folders no repository accounts for (unadopted: an administrator adopts
or deletes them through /api/v1/admin/unadopted), which are not a fault. Exits 1 when a problem
was found (and not fixed).
--fix repairs what it safely can: unfinished repositories, the folders of deleted repositories a
crash left, repository records out of step with git (only of repositories git's check found
sound), missing or altered push hooks, stale temporary objects.
With a server running (its lock on warren.lock on SQLite, the serving lock on PostgreSQL), only the repairs
that are safe beside it are made.`,
    options: { fix: { type: 'boolean', default: false }, timeout: { type: 'string', default: '300' } },
    run: async (values) => {
      const seconds = Number(values.timeout)
      if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 86400) fail('--timeout must be a number of seconds (0 < s <= 86400)')
      const { doctor, printDoctorReport } = await import('./ops/doctor')
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
      const { dump } = await import('./ops/dump')
      const file = await dump(loadConfig(), values.file as string | undefined)
      console.log(`Dump written to ${file}`)
    },
  },
  restore: {
    usage: `warren restore --file F

Restores a dump made by \`warren dump\` into the data folder (WARREN_DATA), which must be empty or
absent; a folder holding anything is refused, and so is a dump of a newer Warren (its version,
or its database's migrations). Then start the server on it.`,
    options: { file: { type: 'string' } },
    required: ['file'],
    run: async (values) => {
      const config = loadConfig()
      const { restore } = await import('./ops/dump')
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
