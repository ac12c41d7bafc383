#!/usr/bin/env bun
import { parseArgs } from 'node:util'
import { join } from 'node:path'
import { loadConfig } from './config'
import { createDeps } from './deps'
import { startServer } from './server'
import { ApiError } from './lib/errors'
import { countUsers, createUser } from './modules/users/service'
import { repairRepositories } from './modules/repos/service'
import { reconcileRepositories } from './modules/repos/git-sync'
import { WARREN_VERSION } from './version'
import { startMirrorScheduler } from './jobs/mirror-scheduler'

const USAGE = `warren ${WARREN_VERSION}: a self-hosted git service with a Gitea-compatible API

Usage:
  warren [serve]                       start the server (configured by WARREN_* variables)
  warren admin user create --username U --password P --email E [--admin]
  warren --help | --version

Environment: WARREN_HOST (0.0.0.0), WARREN_PORT (3000), WARREN_DATA (./data),
WARREN_BASE_URL (http://localhost:PORT/); on first start WARREN_ADMIN_USER,
WARREN_ADMIN_PASSWORD and WARREN_ADMIN_EMAIL create that admin when no user exists;
WARREN_MIGRATIONS_ALLOW_LOCALNETWORKS (false) lets migrations reach local addresses;
WARREN_MIRROR_WORKERS (2) mirror updates at once.`

function fail(message: string): never {
  console.error(`warren: ${message}`)
  process.exit(1)
}

async function serve() {
  const config = loadConfig()
  const deps = createDeps(config)
  repairRepositories(deps)
  // Before serving: no push runs yet, so pushes a crash left pending are settled too.
  const reconciled = await reconcileRepositories(deps, { settlePending: true })
  if (reconciled.updated) console.log(`warren: brought ${reconciled.updated} of ${reconciled.checked} repositories in line with git`)
  if (config.initialAdmin && countUsers(deps) === 0) {
    const admin = await createUser(deps, { ...config.initialAdmin, isAdmin: true })
    console.log(`warren: created admin user "${admin.name}"`)
  }
  const { server } = startServer(deps)
  const mirrorScheduler = startMirrorScheduler(deps)
  console.log(`warren: listening on http://${config.host}:${server.port} (public URL ${config.baseUrl})`)
  console.log(`warren: data in ${config.dataDir} (database ${join(config.dataDir, 'warren.db')})`)
  const stop = async () => {
    server.stop()
    // Running mirror fetches are stopped (what they changed is recorded) before the database closes.
    await mirrorScheduler.stop()
    deps.db.$client.close()
    process.exit(0)
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}

async function adminUserCreate(args: string[]) {
  const { values } = parseArgs({
    args,
    options: {
      username: { type: 'string' },
      password: { type: 'string' },
      email: { type: 'string' },
      admin: { type: 'boolean', default: false },
      'must-change-password': { type: 'boolean', default: false },
    },
    strict: true,
  })
  for (const key of ['username', 'password', 'email'] as const) if (!values[key]) fail(`--${key} is required`)
  // Works whether or not the server runs: SQLite in WAL mode takes a second writer safely.
  const deps = createDeps(loadConfig())
  try {
    const user = await createUser(deps, {
      username: values.username!,
      password: values.password!,
      email: values.email!,
      isAdmin: values.admin,
      mustChangePassword: values['must-change-password'],
    })
    console.log(`New user '${user.name}' has been successfully created${user.isAdmin ? ' (site administrator)' : ''}.`)
  } catch (e) {
    if (e instanceof ApiError) fail(e.message)
    throw e
  } finally {
    deps.db.$client.close()
  }
}

async function main(argv: string[]) {
  const [command = 'serve', ...rest] = argv
  if (command === '--help' || command === '-h' || command === 'help') return console.log(USAGE)
  if (command === '--version' || command === '-v') return console.log(WARREN_VERSION)
  if (command === 'serve') return serve()
  if (command === 'admin' && rest[0] === 'user' && rest[1] === 'create') return adminUserCreate(rest.slice(2))
  fail(`unknown command "${argv.join(' ')}"\n\n${USAGE}`)
}

main(process.argv.slice(2)).catch((e) => fail(e instanceof Error ? e.message : String(e)))
