// runs in one half: sqlite
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { copyFileSync, existsSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { gitOk, oneCommitRepo, refsOf, remoteUrl } from './git-fixture'
import { root, runCli, startServe, tempDirs, type Served } from './process-helpers'

/**
 * The single binary as an operator gets it: `npm run binary` builds dist/warren, which is copied
 * alone into an empty folder (no sources, no node_modules, no drizzle/ beside it) and run there.
 */
const temp = tempDirs()
let folder: string
let binary: string[]
let server: Served | undefined
/** Only git's folder on PATH: no bun, no node_modules. */
const onlyGit = { PATH: Bun.which('git')!.replace(/\/git$/, '') }

beforeAll(async () => {
  const build = Bun.spawn(['npm', 'run', 'binary'], { cwd: root, stdout: 'pipe', stderr: 'pipe', env: process.env })
  const [out, err, code] = await Promise.all([new Response(build.stdout).text(), new Response(build.stderr).text(), build.exited])
  if (code !== 0) throw new Error(`npm run binary failed: ${out}\n${err}`)
  folder = temp.make('warren-binary-')
  copyFileSync(join(root, 'dist', 'warren'), join(folder, 'warren'))
  binary = [join(folder, 'warren')]
}, 120_000)

afterAll(async () => {
  await server?.stop()
  temp.cleanup()
})

describe('the single binary', () => {
  test('runs alone from an empty folder: creates its data folder, an admin, serves git, the API and the docs page', async () => {
    expect(readdirSync(folder)).toEqual(['warren'])
    expect(statSync(binary[0]!).mode & 0o111).not.toBe(0)
    const data = join(folder, 'data')
    const created = await runCli(binary, data, ['admin', 'user', 'create', '--username', 'root', '--password', 'root-password', '--email', 'root@example.com', '--admin'], { cwd: folder, env: onlyGit })
    expect(created.stderr).toBe('')
    expect(created.code).toBe(0)
    expect(existsSync(join(data, 'warren.db'))).toBe(true)

    server = await startServe(binary, data, onlyGit, { cwd: folder })
    const url = server.url
    const auth = { authorization: 'Basic ' + Buffer.from('root:root-password').toString('base64'), 'content-type': 'application/json' }
    const repo = await fetch(`${url}/api/v1/user/repos`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'first', auto_init: true, license: 'MIT', gitignores: 'Node' }) })
    expect(repo.status).toBe(201)
    // the licence and .gitignore templates are inside the binary
    const license = await fetch(`${url}/api/v1/repos/root/first/raw/LICENSE`, { headers: auth })
    expect(license.status).toBe(200)
    expect(await license.text()).toContain('MIT License')
    expect((await fetch(`${url}/api/v1/repos/root/first/raw/.gitignore`, { headers: auth })).status).toBe(200)

    // push, then clone
    const work = await oneCommitRepo()
    const remote = remoteUrl(url, 'root/first.git', 'root', 'root-password')
    await gitOk(work, 'push', '-q', remote, 'main:pushed')
    const clone = temp.make('warren-binary-clone-')
    await gitOk(clone, 'clone', '-q', remote, 'first')
    const refs = await refsOf(join(clone, 'first'))
    expect(refs['refs/remotes/origin/pushed']).toBe(await gitOk(work, 'rev-parse', 'main'))

    // markdown is rendered by its worker, which the binary carries too
    const md = await fetch(`${url}/api/v1/markdown`, { method: 'POST', headers: auth, body: JSON.stringify({ Text: '# Title' }) })
    expect(md.status).toBe(200)
    expect(await md.text()).toContain('<h1')

    // the issue search reads on the read thread (SQLite), which the binary carries too
    expect((await fetch(`${url}/api/v1/repos/root/first/issues`, { method: 'POST', headers: auth, body: JSON.stringify({ title: 'Found by the search' }) })).status).toBe(201)
    const found = await fetch(`${url}/api/v1/repos/issues/search?q=search`, { headers: auth })
    expect(found.status).toBe(200)
    expect(((await found.json()) as { title: string }[]).map((i) => i.title)).toEqual(['Found by the search'])

    // the docs page and every asset it loads
    const page = await fetch(`${url}/api/swagger`)
    expect(page.status).toBe(200)
    const html = await page.text()
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((a) => a.startsWith('/'))
    expect(assets.length).toBeGreaterThanOrEqual(2)
    for (const asset of assets) {
      const r = await fetch(new URL(asset, url))
      expect(r.status).toBe(200)
      expect((await r.arrayBuffer()).byteLength).toBeGreaterThan(1000)
    }
    const spec = await fetch(`${url}/swagger.v1.json`)
    expect(spec.status).toBe(200)
    expect(((await spec.json()) as any).paths['/api/v1/repos/{owner}/{repo}']).toBeDefined()
    const home = (await (await fetch(`${url}/`)).json()) as any
    expect(home).toMatchObject({ name: 'Warren', docs_url: expect.stringContaining('/api/swagger') })

    // nothing was written beside the binary but its data folder
    expect(readdirSync(folder).sort()).toEqual(['data', 'warren'])
    // nothing but info lines: no warning (a minifier's output once made Elysia's code analysis warn)
    expect(server.output().split('\n').filter((line) => line && !line.includes(' INFO '))).toEqual([])
    expect(await server.stop()).toBe(0)
    server = undefined
  }, 120_000)
})
