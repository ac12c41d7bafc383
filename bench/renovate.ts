/**
 * The real Renovate against Warren: `npx bun bench/renovate.ts`.
 *
 * Installs Renovate and the Node.js it needs (both pinned, from the npm registry) into a cache
 * folder outside the project (`WARREN_RENOVATE_CACHE`, default `~/.cache/warren-renovate`),
 * starts `warren serve` on a temp data folder and a free port, builds the scene through the API
 * and git over HTTP, runs Renovate twice with `platform: gitea` (the first run opens the pull
 * requests, the second must find them up to date and open nothing more), then checks through the
 * API what it did. Prints PASS/FAIL lines and exits non-zero when a check fails.
 *
 * The scene: `alice/presets` holds `default.json` (a shared preset with a regex manager on the
 * `gitea-tags` datasource), `alice/lib` has the tags v1.0.0 and v1.1.0, `alice/app` holds a
 * `renovate.json` extending `local>alice/presets`, a `package.json` with an old `is-number` and a
 * `deps.env` pinning alice/lib at v1.0.0. The bot `renovate` writes to `alice/app` as a
 * collaborator. Only registry.npmjs.org is needed from the internet.
 *
 * `WARREN_RENOVATE_KEEP=1` keeps the temp folder (Warren's data and log, Renovate's log); it is
 * kept anyway when a check fails. The calls each run made, as Warren's request log shows them, are
 * printed (method, path with numbers and hashes folded, statuses, count).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { homedir, tmpdir } from 'node:os'
import { join } from 'node:path'
import { basic, freePort, SOURCES, startServe } from '../test/process-helpers'
import { checkRun, foldedCalls, type RequestLine } from './lib/renovate-checks'

const RENOVATE_VERSION = '44.121.2'
// Renovate 44 requires Node ^24.11; the `node-<os>-<arch>` packages ship Node's own binaries.
const NODE_VERSION = '24.21.0'
const NODE_PACKAGE = `node-${process.platform}-${process.arch}`

const cacheRoot = process.env.WARREN_RENOVATE_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'warren-renovate')
const installDir = join(cacheRoot, `renovate-${RENOVATE_VERSION}-node-${NODE_VERSION}`)
const nodeBin = join(installDir, 'node_modules', NODE_PACKAGE, 'bin', 'node')
const renovateMain = join(installDir, 'node_modules', 'renovate', 'dist', 'renovate.js')

async function run(cmd: string[], opts: { cwd?: string; env?: Record<string, string | undefined> } = {}) {
  const proc = Bun.spawn(cmd, { cwd: opts.cwd, env: opts.env ?? process.env, stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  if (code !== 0) throw new Error(`${cmd.join(' ')} exited ${code}\n${stdout}${stderr}`)
  return stdout
}

async function install() {
  if (existsSync(nodeBin) && existsSync(renovateMain)) return
  console.log(`installing renovate@${RENOVATE_VERSION} and ${NODE_PACKAGE}@${NODE_VERSION} into ${installDir} (about a minute, once)`)
  mkdirSync(installDir, { recursive: true })
  writeFileSync(
    join(installDir, 'package.json'),
    JSON.stringify({ private: true, dependencies: { renovate: RENOVATE_VERSION, [NODE_PACKAGE]: NODE_VERSION } }, null, 2),
  )
  // The npm found on PATH may run an older Node than Renovate's engines ask for: it only unpacks.
  await run(['npm', 'install', '--no-audit', '--no-fund', '--engine-strict=false', '--loglevel=error'], { cwd: installDir })
  if (!existsSync(nodeBin) || !existsSync(renovateMain)) throw new Error(`the install in ${installDir} lacks ${nodeBin} or ${renovateMain}`)
}

// ---- the scene ----

const ADMIN = { name: 'root', password: 'root-password-1' }
const ALICE = { name: 'alice', password: 'alice-password-1' }
const BOT = { name: 'renovate', password: 'renovate-password-1' }

async function api(base: string, auth: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: { authorization: auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`)
  return text ? JSON.parse(text) : null
}

const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Alice',
  GIT_AUTHOR_EMAIL: 'alice@example.com',
  GIT_COMMITTER_NAME: 'Alice',
  GIT_COMMITTER_EMAIL: 'alice@example.com',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
}

/** A repository of alice's, created through the API and filled by a push over HTTP. */
async function pushRepo(base: string, work: string, name: string, commits: { files: Record<string, string>; tags?: { name: string; annotated: boolean }[] }[]) {
  await api(base, basic(ALICE.name, ALICE.password), 'POST', '/user/repos', { name, default_branch: 'main', private: false })
  const dir = join(work, 'src', name)
  mkdirSync(dir, { recursive: true })
  await run(['git', 'init', '-q', '-b', 'main', dir], { env: gitEnv })
  for (const [i, commit] of commits.entries()) {
    for (const [path, content] of Object.entries(commit.files)) writeFileSync(join(dir, path), content)
    await run(['git', 'add', '-A'], { cwd: dir, env: gitEnv })
    await run(['git', 'commit', '-q', '-m', `${name}: commit ${i + 1}`], { cwd: dir, env: gitEnv })
    for (const tag of commit.tags ?? [])
      await run(['git', 'tag', ...(tag.annotated ? ['-a', '-m', `release ${tag.name}`] : []), tag.name], { cwd: dir, env: gitEnv })
  }
  const remote = new URL(`${base}/${ALICE.name}/${name}.git`)
  remote.username = ALICE.name
  remote.password = ALICE.password
  await run(['git', 'push', '-q', remote.toString(), 'main', '--tags'], { cwd: dir, env: gitEnv })
}

async function buildScene(base: string, work: string) {
  const admin = basic(ADMIN.name, ADMIN.password)
  for (const user of [ALICE, BOT])
    await api(base, admin, 'POST', '/admin/users', {
      username: user.name,
      password: user.password,
      email: `${user.name}@example.com`,
      must_change_password: false,
    })
  const preset = {
    description: "alice's shared Renovate preset",
    fetchChangeLogs: 'off',
    dependencyDashboard: true,
    labels: ['dependencies'],
    customManagers: [
      {
        customType: 'regex',
        managerFilePatterns: ['/(^|/)deps\\.env$/'],
        matchStrings: ['LIB_VERSION=(?<currentValue>\\S+)'],
        datasourceTemplate: 'gitea-tags',
        registryUrlTemplate: base,
        depNameTemplate: 'alice/lib',
      },
    ],
  }
  await pushRepo(base, work, 'presets', [{ files: { 'default.json': JSON.stringify(preset, null, 2) + '\n' } }])
  await pushRepo(base, work, 'lib', [
    { files: { 'README.md': '# lib\n' }, tags: [{ name: 'v1.0.0', annotated: true }] },
    { files: { 'README.md': '# lib\n\nNow with more.\n' }, tags: [{ name: 'v1.1.0', annotated: false }] },
  ])
  await pushRepo(base, work, 'app', [
    {
      files: {
        'renovate.json': JSON.stringify({ $schema: 'https://docs.renovatebot.com/renovate-schema.json', extends: ['local>alice/presets'] }, null, 2) + '\n',
        'package.json': JSON.stringify({ name: 'app', version: '1.0.0', private: true, dependencies: { 'is-number': '6.0.0' } }, null, 2) + '\n',
        'deps.env': 'LIB_VERSION=v1.0.0\n',
      },
    },
  ])
  const alice = basic(ALICE.name, ALICE.password)
  await api(base, alice, 'PUT', `/repos/${ALICE.name}/app/collaborators/${BOT.name}`, { permission: 'write' })
  await api(base, alice, 'POST', `/repos/${ALICE.name}/app/labels`, { name: 'dependencies', color: '#0366d6' })
  const token = await api(base, basic(BOT.name, BOT.password), 'POST', `/users/${BOT.name}/tokens`, {
    name: 'renovate',
    scopes: ['write:repository', 'write:issue', 'read:user', 'read:organization', 'read:misc'],
  })
  return token.sha1 as string
}

// ---- the run ----

async function runRenovate(endpoint: string, token: string, work: string, logName: string) {
  const logFile = join(work, logName)
  const proc = Bun.spawn([nodeBin, renovateMain], {
    cwd: work,
    env: {
      // The machine's network settings (proxies, extra CA certificates) pass; Renovate's own
      // settings and a developer's tokens do not.
      ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(RENOVATE_|LOG_|GITHUB_COM_TOKEN$|WARREN_)/.test(name))),
      PATH: `${join(installDir, 'node_modules', NODE_PACKAGE, 'bin')}:${process.env.PATH ?? ''}`,
      HOME: join(work, 'home'),
      RENOVATE_PLATFORM: 'gitea',
      RENOVATE_ENDPOINT: `${endpoint}/api/v1`,
      RENOVATE_TOKEN: token,
      RENOVATE_REPOSITORIES: `${ALICE.name}/app`,
      RENOVATE_REQUIRE_CONFIG: 'required',
      RENOVATE_ONBOARDING: 'false',
      // Renovate then reads renovate.json through the contents API before cloning.
      RENOVATE_OPTIMIZE_FOR_DISABLED: 'true',
      RENOVATE_GIT_AUTHOR: 'Renovate Bot <renovate@example.com>',
      RENOVATE_BASE_DIR: join(work, 'renovate-base'),
      RENOVATE_CACHE_DIR: join(work, 'renovate-cache'),
      RENOVATE_REPOSITORY_CACHE: 'disabled',
      // re2 (an optional native module) is not built: its install fetches a binary from GitHub.
      RENOVATE_X_IGNORE_RE2: 'true',
      LOG_LEVEL: 'debug',
      LOG_FORMAT: 'json',
    },
    stdout: Bun.file(logFile),
    stderr: 'pipe',
  })
  const killer = setTimeout(() => proc.kill('SIGKILL'), 10 * 60_000)
  const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited])
  clearTimeout(killer)
  return { code, stderr, log: readFileSync(logFile, 'utf8'), logFile }
}

/** The request lines of Warren's log (WARREN_LOG=json) in `output`. */
function requestLines(output: string): RequestLine[] {
  return output.split('\n').flatMap((line) => {
    try {
      const entry = JSON.parse(line)
      return entry.msg === 'request' ? [entry as RequestLine] : []
    } catch {
      return []
    }
  })
}

async function main() {
  await install()
  const work = mkdtempSync(join(tmpdir(), 'warren-renovate-'))
  mkdirSync(join(work, 'home'))
  const port = freePort()
  const base = `http://127.0.0.1:${port}`
  console.log(`working in ${work}`)
  const server = await startServe(
    SOURCES,
    join(work, 'data'),
    {
      WARREN_BASE_URL: `${base}/`,
      WARREN_LOG: 'json',
      WARREN_ADMIN_USER: ADMIN.name,
      WARREN_ADMIN_PASSWORD: ADMIN.password,
      WARREN_ADMIN_EMAIL: 'root@example.com',
    },
    { port },
  )
  let failed = true
  try {
    const token = await buildScene(base, work)
    // Two runs: the first opens the pull requests, the second finds them up to date.
    const runs = []
    for (const n of [1, 2]) {
      const before = server.output().length
      console.log(`renovate run ${n}: renovate@${RENOVATE_VERSION} on node ${NODE_VERSION} against ${base}`)
      const renovate = await runRenovate(base, token, work, `renovate-${n}.log`)
      let requests = requestLines(server.output().slice(before))
      // The scene ends with the bot's token: what follows is Renovate's.
      requests = requests.slice(requests.findLastIndex((r) => r.method === 'POST' && r.path === `/api/v1/users/${BOT.name}/tokens`) + 1)
      writeFileSync(join(work, `warren-requests-${n}.log`), requests.map((r) => `${r.method} ${r.path} ${r.status}`).join('\n') + '\n')
      console.log(`API calls of run ${n} (${requests.length} requests):`)
      for (const line of foldedCalls(requests, ALICE.name)) console.log(`  ${line}`)
      runs.push({ ...renovate, requests })
    }
    console.log('')
    failed = !(await checkRun({ base, owner: ALICE.name, auth: basic(ALICE.name, ALICE.password), runs }))
  } catch (e) {
    console.log(`FAIL  the harness itself: ${e instanceof Error ? e.stack : e}`)
  } finally {
    const code = await server.stop()
    writeFileSync(join(work, 'warren.log'), server.output())
    if (code !== 0) console.log(`(warren serve exited ${code})`)
    if (failed || process.env.WARREN_RENOVATE_KEEP === '1')
      console.log(`logs kept in ${work}: renovate-N.log (JSON lines), warren.log, warren-requests-N.log`)
    else rmSync(work, { recursive: true, force: true })
  }
  console.log(failed ? '\nRENOVATE AGAINST WARREN: FAIL' : '\nRENOVATE AGAINST WARREN: PASS')
  process.exit(failed ? 1 : 0)
}

await main()
