import { join } from 'node:path'
import { tryLock, withLock } from './db/client'
import { asLeader } from './jobs/leadership'
import { loadConfig, type Config } from './config'
import { createDeps } from './deps'
import { startServer } from './server'
import { errorFields, loggerOf, type LogFields, type Logger } from './lib/log'
import { countUsers, createUser } from './modules/users/service'
import { repairAtStart } from './modules/repos/repair'
import { reconcilePendingPushes } from './push'
import { startMirrorScheduler } from './jobs/mirror-scheduler'
import { startPullChecker } from './jobs/pull-checker'
import { startWebhookWorker } from './jobs/webhook-worker'
import { startNotifier } from './jobs/notifier'
import { startMailer } from './jobs/mailer'
import { startAutoMerger } from './jobs/auto-merger'
import { startCommitRefs } from './jobs/commit-refs'
import { startPushMirrorer } from './jobs/push-mirrorer'
import { startLeftoverRepair } from './jobs/leftover-repair'
import { startRepositorySweep } from './jobs/repository-sweep'
import { startIdleCollection } from './jobs/idle-collection'
import { repairPullMerges } from './modules/pulls/merge'
import { makeSigningKeyIfMissing } from './modules/oauth2/signing-key'
import { checkGit, MIN_GIT_VERSION } from './ops/git-check'
import { BackgroundJobs, shutdown } from './ops/shutdown'
import { releaseServeMark, takeServeMark } from './ops/serve-mark'

/**
 * `warren serve` (src/commands.ts imports this module for that command only: the app, its
 * routes and the background jobs are not loaded by the other commands).
 */

/**
 * How many answered requests end the JIT policy of the start (src/cli.ts): a server under traffic
 * compiles its hot code as usual from then on, while an idle one, whose only code running is its
 * background jobs' polls (once a second or less), spends no CPU or memory optimizing code that
 * runs that rarely (idle RSS 2 to 4 MiB lower than with the normal policy back a second after
 * listening).
 */
const NORMAL_JIT_AFTER_REQUESTS = 100

/**
 * `warren serve`: everything the server says, its errors too, is a line of its log (WARREN_LOG:
 * text or JSON), so a log collector reads all of it; errors nothing else caught end the process
 * as they would without these handlers, said in the log's format first.
 */
export async function serve() {
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
    // Taken before the database opens (of two starting at once, one gets it), given back whichever
    // way this process ends, and only by it.
    const other = takeServeMark(config.dataDir)
    if (other) fail(`${other > 0 ? `a Warren (process ${other})` : 'another Warren'} already holds ${config.dataDir} (serving it, or warren doctor --fix repairing it); stop it first`)
    process.on('exit', () => releaseServeMark(config.dataDir))
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
    // Once serving traffic, the JIT compiles hot code as usual again (made reluctant by the entry, src/cli.ts).
    server = startServer(deps, { afterRequests: { count: NORMAL_JIT_AFTER_REQUESTS, run: () => Bun.unsafe.setJITPolicy(1) } }).server
  } catch (e) {
    const code = (e as { code?: string }).code
    if (code === 'EADDRINUSE') fail(`port ${config.port} on ${config.host} is already in use (another Warren?); set WARREN_PORT to another port`)
    throw e
  }
  // Background jobs: each one registered here is stopped by the shutdown sequence
  // (src/ops/shutdown.ts) before the database closes. Add new jobs with jobs.add(name, job).
  const jobs = new BackgroundJobs()
  if (serving) jobs.add('serving lock', { stop: () => serving.release() })
  jobs.add('idle collection', startIdleCollection())
  // Started once the server listens, after the event loop's next turn: the first requests are
  // answered before the jobs' first queries (a stop before then starts none of them).
  let stopping = false
  setTimeout(() => {
    if (stopping) return
    // The OAuth2 provider's signing key, made on the first start (one that exists is read on first use).
    if (config.oauth2Enabled) makeSigningKeyIfMissing(config.dataDir)
    // With several processes on one PostgreSQL database, each job runs in one of them (asLeader).
    jobs.add('mirror scheduler', asLeader(deps, 'mirror-scheduler', () => startMirrorScheduler(deps)))
    jobs.add('pull request checker', asLeader(deps, 'pull-checker', () => startPullChecker(deps)))
    jobs.add('webhook deliveries', asLeader(deps, 'webhook-deliveries', () => startWebhookWorker(deps)))
    jobs.add('notifications', asLeader(deps, 'notifier', () => startNotifier(deps)))
    jobs.add('scheduled merges', asLeader(deps, 'auto-merger', () => startAutoMerger(deps)))
    jobs.add('push mirrors on commit', asLeader(deps, 'push-mirrorer', () => startPushMirrorer(deps)))
    jobs.add('issue references of commits', asLeader(deps, 'commit-refs', () => startCommitRefs(deps)))
    // The mail queue's sender, while the mailer is on (mails queued while it is off wait in the queue).
    if (config.mailer) jobs.add('mailer', asLeader(deps, 'mailer', () => startMailer(deps)))
    // Several processes on PostgreSQL: what one leaves when it dies is repaired while the others
    // serve. On SQLite one process owns the database, and the start-up repairs above suffice.
    if (config.databaseUrl) jobs.add('leftover repairs', asLeader(deps, 'leftover-repair', () => startLeftoverRepair(deps)))
    // The start-up repairs' walk of every repository, a batch at a time while serving.
    if (alone) jobs.add('repository sweep', startRepositorySweep(deps, { startedAt }))
  }, 0)
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
