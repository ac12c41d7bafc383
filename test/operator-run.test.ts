// runs in one half: sqlite
/**
 * Warren as an operator starts it: the bundle `npm start` runs (from any working folder), the
 * `npm run warren` script, the `warren` command's help, and what the log says. Every server here
 * runs on SQLite in a data folder of its own (no WARREN_DATABASE_URL reaches it), whatever the
 * test run's database: what is checked is the process, not the database.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { freePort, root, runCli, SOURCES, startServe, tempDirs, type Served } from './process-helpers'

const dirs = tempDirs()
/** Real processes on a busy machine: a bound that catches a hang, never a timing (as every process test here). */
const PROCESS_TEST_TIMEOUT = 120_000
afterAll(dirs.cleanup)

/** The swagger-ui-dist files the docs page serves, as the package has them. */
const packaged = (name: string) => readFileSync(join(root, 'node_modules/swagger-ui-dist', name))

/** The log's lines once `wanted` holds for one of them (the request line is written just after the answer). */
async function logLines(server: Served, wanted: (lines: string[]) => boolean): Promise<string[]> {
  let lines: string[] = []
  for (let i = 0; i < 600; i++) {
    lines = server.output().split('\n').filter(Boolean)
    if (wanted(lines)) break
    await Bun.sleep(50)
  }
  return lines
}

describe('the bundle npm start runs, started from another working folder', () => {
  let bin: string
  let server: Served
  beforeAll(async () => {
    const out = dirs.make('warren-bundle-')
    // package.json's "build" command, into a folder of its own.
    const script: string = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.build
    const args = script.split(/\s+/).map((arg) => (arg === 'dist/bin' ? join(out, 'dist/bin') : arg))
    const build = Bun.spawnSync(args, { cwd: root, stderr: 'pipe', stdout: 'pipe' })
    expect([build.exitCode, build.stderr.toString()]).toEqual([0, ''])
    bin = join(out, 'dist/bin')
    // Started from a folder that holds nothing of Warren's: the assets are found beside the bundle.
    const elsewhere = dirs.make('warren-elsewhere-')
    server = await startServe(['bun', join(bin, 'cli.js')], join(elsewhere, 'data'), { WARREN_LOG: 'json' }, { cwd: elsewhere })
  }, PROCESS_TEST_TIMEOUT)
  afterAll(() => server?.stop())

  test('a start reads only the chunks it runs: none holds highlight.js, the repository templates or node:https', () => {
    // What `warren serve` evaluates: the entry, the commands and serve chunks (imported by it
    // dynamically), and every chunk those import statically (what a later import() loads is not read).
    const files = readdirSync(bin)
    const chunk = (prefix: string) => files.find((name) => name.startsWith(prefix) && name.endsWith('.js'))!
    const read = new Set<string>()
    const visit = (name: string) => {
      if (read.has(name)) return
      read.add(name)
      const text = readFileSync(join(bin, name), 'utf8')
      for (const m of text.matchAll(/\b(?:from|import)\s*"\.\/([^"]+\.js)"/g)) visit(m[1]!)
    }
    for (const name of ['cli.js', chunk('commands-'), chunk('serve-')]) visit(name)
    expect(read.size).toBeGreaterThan(3)
    const holding = (piece: RegExp) => [...read].filter((name) => piece.test(readFileSync(join(bin, name), 'utf8')))
    // highlight.js (known by one of its messages): in the render workers only; the templates: when
    // a repository is made with a first commit; node:https (and node:http under it): at a
    // webhook's first HTTPS delivery.
    const highlightJs = /beforeMatch cannot be used with starts/
    expect(holding(highlightJs)).toEqual([])
    expect(holding(/GNU AFFERO GENERAL PUBLIC LICENSE/)).toEqual([])
    expect(holding(/\b(?:from|require\()\s*"(?:node:)?https?"/)).toEqual([])
    // ...which the bundle does hold, elsewhere.
    expect(highlightJs.test(readFileSync(join(bin, 'modules/markdown/render-worker.js'), 'utf8'))).toBe(true)
    expect(files.some((name) => name.endsWith('.js') && readFileSync(join(bin, name), 'utf8').includes('GNU AFFERO GENERAL PUBLIC LICENSE'))).toBe(true)
    expect(files.some((name) => name.endsWith('.js') && /\bimport\("(?:node:)?https"\)/.test(readFileSync(join(bin, name), 'utf8')))).toBe(true)
  }, PROCESS_TEST_TIMEOUT)

  test("the issue search's reads run on the read thread, found in the bundle", async () => {
    const res = await fetch(`${server.url}/api/v1/repos/issues/search?q=anything`)
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual([])
    expect(existsSync(join(bin, 'db/read-thread-worker.js'))).toBe(true)
  }, PROCESS_TEST_TIMEOUT)

  test('the docs page and every asset it loads answer 200 with the real files', async () => {
    const page = await fetch(`${server.url}/api/swagger`)
    expect(page.status).toBe(200)
    const html = await page.text()
    const loaded = [...html.matchAll(/(?:src|href)="\/api\/swagger\/assets\/([^"]+)"/g)].map((m) => m[1]!).sort()
    expect(loaded).toEqual(['swagger-ui-bundle.js', 'swagger-ui.css'])
    // (The preset is left for the next test, which serves it broken: an asset is read once.)
    for (const name of [...loaded, 'favicon-32x32.png']) {
      const res = await fetch(`${server.url}/api/swagger/assets/${name}`)
      expect([name, res.status]).toEqual([name, 200])
      expect(Buffer.from(await res.arrayBuffer()).equals(packaged(name))).toBe(true)
    }
    const lines = await logLines(server, (l) => l.some((line) => line.includes('favicon-32x32.png')))
    const logged = lines.map((line) => JSON.parse(line)).filter((e) => e.msg === 'request' && e.path.startsWith('/api/swagger'))
    expect(logged.map((e) => e.status)).toEqual([200, 200, 200, 200])
  }, PROCESS_TEST_TIMEOUT)

  test('an asset that cannot be read answers 500 in the error shape, and the log says 500 and why, in its own format', async () => {
    // A broken install: the preset's copy beside the bundle is gone.
    const preset = readdirSync(bin).find((name) => name.startsWith('swagger-ui-standalone-preset-'))!
    rmSync(join(bin, preset))
    const res = await fetch(`${server.url}/api/swagger/assets/swagger-ui-standalone-preset.js?x=1`)
    expect(res.status).toBe(500)
    expect(await res.json()).toEqual({ message: 'Internal server error', url: 'http://localhost:' + server.port + '/api/swagger' })
    const lines = await logLines(server, (l) => l.some((line) => line.includes('"status":500')))
    // Every line the server wrote is one JSON object (WARREN_LOG=json): no error in Bun's own format.
    const entries = lines.map((line) => {
      try {
        return JSON.parse(line)
      } catch {
        throw new Error(`a line not in the log's format: ${line}`)
      }
    })
    const about = entries.filter((e) => typeof e.path === 'string' && e.path.startsWith('/api/swagger/assets/swagger-ui-standalone-preset.js'))
    expect(about.map((e) => [e.level, e.msg, e.status])).toEqual([
      ['error', 'internal error', undefined],
      ['info', 'request', 500],
    ])
    expect(about[0].error).toContain('ENOENT')
  }, PROCESS_TEST_TIMEOUT)

  test('a start that fails (the port is taken) says so in the log\'s format too', async () => {
    const other = dirs.make('warren-taken-')
    const { code, stdout, stderr } = await runCli(SOURCES, other, ['serve'], { env: { WARREN_LOG: 'json', WARREN_HOST: '127.0.0.1', WARREN_PORT: String(server.port) } })
    expect(code).toBe(1)
    const entries = (stdout + stderr).split('\n').filter(Boolean).map((line) => JSON.parse(line))
    expect(entries.filter((e) => e.level === 'error').map((e) => e.msg)).toEqual([`port ${server.port} on 127.0.0.1 is already in use (another Warren?); set WARREN_PORT to another port`])
  }, PROCESS_TEST_TIMEOUT)

  test('the OpenAPI document names a relative server, so "Try it out" calls the host the page was opened on', async () => {
    const spec = (await (await fetch(`${server.url}/swagger.v1.json`)).json()) as { servers: { url: string }[] }
    expect(spec.servers).toEqual([{ url: '/' }])
  }, PROCESS_TEST_TIMEOUT)
})

describe('the OpenAPI server under a base URL with a path', () => {
  test('is that path alone, without the host the base URL names', async () => {
    const data = dirs.make('warren-base-')
    const server = await startServe(SOURCES, data, { WARREN_BASE_URL: 'https://git.example.com/warren/' })
    try {
      const spec = (await (await fetch(`${server.url}/swagger.v1.json`)).json()) as { servers: { url: string }[] }
      expect(spec.servers).toEqual([{ url: '/warren/' }])
      // The page finds the document, its scripts and its styles under that path too, as the proxy serves them.
      const page = await (await fetch(`${server.url}/api/swagger`)).text()
      expect(page).toContain('"url":"/warren/swagger.v1.json"')
      expect(page).toContain('src="/warren/api/swagger/assets/swagger-ui-bundle.js"')
      expect(page).toContain('href="/warren/api/swagger/assets/swagger-ui.css"')
    } finally {
      await server.stop()
    }
  }, PROCESS_TEST_TIMEOUT)
})

describe('the warren command', () => {
  test('`warren admin --help` and `warren admin user --help` exit 0 with the commands of the group', async () => {
    const data = dirs.make('warren-help-')
    for (const [words, commands] of [[['admin'], 7], [['admin', 'user'], 4]] as const) {
      const { code, stdout, stderr } = await runCli(SOURCES, data, [...words, '--help'])
      expect({ code, stderr }).toEqual({ code: 0, stderr: '' })
      expect(stdout).toStartWith(`warren ${words.join(' ')}: ${commands} commands`)
      for (const command of ['create', 'list', 'change-password', 'delete']) expect(stdout).toContain(`warren admin user ${command}`)
    }
    // A group without --help shows the same; a word that names no group is refused.
    expect((await runCli(SOURCES, data, ['admin'])).code).toBe(0)
    const wrong = await runCli(SOURCES, data, ['admin', 'usr', '--help'])
    expect([wrong.code, wrong.stderr.split('\n')[0]]).toEqual([1, 'warren: unknown command "admin usr --help"'])
    expect(existsSync(join(data, 'warren.db'))).toBe(false)
  }, PROCESS_TEST_TIMEOUT)

  test('SIGTERM to `npm run warren -- serve` stops the server: the port is free once npm has exited', async () => {
    const data = dirs.make('warren-npm-')
    const port = freePort()
    const npm = await startServe(['npm', 'run', '--silent', 'warren', '--'], data, {}, { port })
    const mark = join(data, 'warren.pid')
    let serverPid = 0
    try {
      serverPid = Number(readFileSync(mark, 'utf8'))
      expect(serverPid).toBeGreaterThan(0)
      npm.proc.kill('SIGTERM')
      // The server itself goes (a server left running keeps npm waiting on its output: the wait
      // is bounded so that the test fails rather than hangs).
      for (let i = 0; i < 1200 && alive(serverPid); i++) await Bun.sleep(50)
      expect(alive(serverPid)).toBe(false)
      expect(await npm.proc.exited).toBe(0)
      // An orderly stop (the server removes its mark), and the port is free.
      expect(existsSync(mark)).toBe(false)
      const probe = Bun.serve({ port, hostname: '127.0.0.1', fetch: () => new Response('') })
      probe.stop(true)
      expect(npm.output()).toContain('signal received signal=SIGTERM')
    } finally {
      // Never leave a server behind when the test fails.
      if (serverPid && alive(serverPid)) process.kill(serverPid, 'SIGKILL')
      if (npm.proc.exitCode === null) npm.proc.kill('SIGKILL')
    }
  }, PROCESS_TEST_TIMEOUT)
})

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
