import { afterAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

const root = resolve(import.meta.dir, '..')
const dirs: string[] = []
const tempData = () => {
  const dir = mkdtempSync(join(tmpdir(), 'warren-cli-'))
  dirs.push(dir)
  return dir
}
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })))

/** Only what the CLI needs: no WARREN_* leaking in from the caller's environment. */
const envFor = (dataDir: string, extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? '',
  HOME: process.env.HOME ?? '',
  WARREN_DATA: dataDir,
  ...extra,
})

async function cli(dataDir: string, ...args: string[]) {
  const proc = Bun.spawn([process.execPath, 'src/cli.ts', ...args], { cwd: root, env: envFor(dataDir), stdout: 'pipe', stderr: 'pipe' })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { stdout, stderr, code }
}

const basic = (name: string, password: string) => 'Basic ' + Buffer.from(`${name}:${password}`).toString('base64')

function freePort(): number {
  const probe = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') })
  const port = probe.port!
  probe.stop(true)
  return port
}

/** Starts `warren serve` and waits until /api/v1/version answers. */
async function serve(dataDir: string, extra: Record<string, string> = {}) {
  const port = freePort()
  const proc = Bun.spawn([process.execPath, 'src/cli.ts', 'serve'], {
    cwd: root,
    env: envFor(dataDir, { WARREN_PORT: String(port), WARREN_HOST: '127.0.0.1', ...extra }),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const url = `http://127.0.0.1:${port}`
  for (let i = 0; i < 200; i++) {
    const ok = await fetch(`${url}/api/v1/version`).then((r) => r.ok, () => false)
    if (ok) return { url, proc }
    if (proc.exitCode !== null) break
    await Bun.sleep(50)
  }
  proc.kill()
  throw new Error(`warren serve did not start: ${await new Response(proc.stderr).text()}`)
}

describe('warren admin user create', () => {
  test('creates a user without a running server; errors exit 1 with a clear message', async () => {
    const data = tempData()
    const ok = await cli(data, 'admin', 'user', 'create', '--username', 'boss', '--password', 'pw-boss', '--email', 'boss@example.com', '--admin')
    expect(ok.code).toBe(0)
    expect(ok.stdout).toContain("'boss'")
    expect(ok.stdout).toContain('administrator')

    const taken = await cli(data, 'admin', 'user', 'create', '--username', 'BOSS', '--password', 'x', '--email', 'other@example.com')
    expect(taken.code).toBe(1)
    expect(taken.stderr).toContain('already exists')
    const takenEmail = await cli(data, 'admin', 'user', 'create', '--username', 'other', '--password', 'x', '--email', 'Boss@example.com')
    expect(takenEmail.code).toBe(1)
    expect(takenEmail.stderr).toContain('e-mail already in use')
    const badEmail = await cli(data, 'admin', 'user', 'create', '--username', 'other', '--password', 'x', '--email', 'nope')
    expect(badEmail.code).toBe(1)
    expect(badEmail.stderr).toContain('Email')
    const badName = await cli(data, 'admin', 'user', 'create', '--username', 'bad name', '--password', 'x', '--email', 'o@example.com')
    expect(badName.code).toBe(1)
    expect(badName.stderr).toContain('UserName')
    const missing = await cli(data, 'admin', 'user', 'create', '--username', 'other', '--email', 'o@example.com')
    expect(missing.code).toBe(1)
    expect(missing.stderr).toContain('--password is required')
    const unknownOption = await cli(data, 'admin', 'user', 'create', '--username', 'other', '--pasword', 'x', '--email', 'o@example.com')
    expect(unknownOption.code).toBe(1)
    expect(unknownOption.stderr).toContain('pasword')
    const unknownCommand = await cli(data, 'admin', 'frobnicate')
    expect(unknownCommand.code).toBe(1)
    expect(unknownCommand.stderr).toContain('unknown command')

    // nothing but boss was created: a server on that folder has exactly one user
    const { url, proc } = await serve(data)
    try {
      const res = await fetch(`${url}/api/v1/admin/users`, { headers: { authorization: basic('boss', 'pw-boss') } })
      expect(res.status).toBe(200)
      const list = (await res.json()) as any[]
      expect(list.map((u) => u.login)).toEqual(['boss'])
      expect(list[0].is_admin).toBe(true)
    } finally {
      proc.kill()
      await proc.exited
    }
  }, 30_000)
})

describe('warren serve', () => {
  test('creates the WARREN_ADMIN_* admin on first start; the CLI works while it runs', async () => {
    const data = tempData()
    const admin = { WARREN_ADMIN_USER: 'siteadmin', WARREN_ADMIN_PASSWORD: 'pw-site', WARREN_ADMIN_EMAIL: 'site@example.com' }
    const { url, proc } = await serve(data, admin)
    try {
      const me = await fetch(`${url}/api/v1/user`, { headers: { authorization: basic('siteadmin', 'pw-site') } })
      expect(me.status).toBe(200)
      const body = (await me.json()) as any
      expect(body.login).toBe('siteadmin')
      expect(body.is_admin).toBe(true)

      const created = await cli(data, 'admin', 'user', 'create', '--username', 'live', '--password', 'pw-live', '--email', 'live@example.com')
      expect(created.code).toBe(0)
      const live = await fetch(`${url}/api/v1/user`, { headers: { authorization: basic('live', 'pw-live') } })
      expect(live.status).toBe(200)
      expect(((await live.json()) as any).is_admin).toBe(false)
    } finally {
      proc.kill()
      await proc.exited
    }

    // a second start with other WARREN_ADMIN_* values creates nobody: users already exist
    const again = await serve(data, { ...admin, WARREN_ADMIN_USER: 'second', WARREN_ADMIN_EMAIL: 'second@example.com' })
    try {
      expect((await fetch(`${again.url}/api/v1/users/second`)).status).toBe(404)
      expect((await fetch(`${again.url}/api/v1/users/siteadmin`)).status).toBe(200)
    } finally {
      again.proc.kill()
      await again.proc.exited
    }
  }, 30_000)
})
