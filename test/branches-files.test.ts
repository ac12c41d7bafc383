import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { connect } from 'node:net'
import { randomBytes } from 'node:crypto'
import { startTestServer, type TestServer, type TestUser } from './helpers'
import { gitOk, makeWorkRepo, remoteUrl, sh, tempDir } from './git-fixture'
import { definitionFor, GLOB_STEP_BUDGET } from '../src/modules/files/editorconfig'
import { latencyProbe } from './latency-probe'

let s: TestServer
let alice: TestUser
let work: Awaited<ReturnType<typeof makeWorkRepo>>
const dirs: string[] = []

beforeAll(async () => {
  s = await startTestServer()
  alice = await s.user('alice')
  await s.user('bob')
  for (const [name, priv] of [['proj', false], ['hidden', true], ['void', false]] as const)
    expect((await s.post('/user/repos', { name, private: priv }, { token: alice.token })).status).toBe(201)
  work = await makeWorkRepo()
  dirs.push(work.dir)
  for (const repo of ['proj', 'hidden']) {
    const url = remoteUrl(s.url, `alice/${repo}.git`, 'alice', alice.token)
    await gitOk(work.dir, 'push', url, '--all')
    await gitOk(work.dir, 'push', url, '--tags')
  }
})
afterAll(async () => {
  await s.stop()
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

const bytes = async (path: string, init: RequestInit = {}) => {
  const res = await fetch(s.url + path, init)
  return { res, body: Buffer.from(await res.arrayBuffer()) }
}

/** Sends a request line byte for byte (no client-side URL normalisation). */
function rawRequest(path: string): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(s.url)
  return new Promise((resolve, reject) => {
    const sock = connect(Number(port), hostname, () => sock.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`))
    let data = ''
    sock.on('data', (d) => (data += d.toString('latin1')))
    sock.on('end', () => resolve({ status: Number(data.split(' ')[1]), text: data }))
    sock.on('error', reject)
  })
}

describe('branches', () => {
  test('list: one record per branch with head commit, users resolved by e-mail', async () => {
    const r = await s.get('/repos/alice/proj/branches', { token: alice.token })
    expect(r.status).toBe(200)
    expect(r.body.map((b: any) => b.name)).toEqual(['dev', 'feature/slash', 'master'])
    const master = r.body.find((b: any) => b.name === 'master')
    const sha = await gitOk(work.dir, 'rev-parse', 'master')
    expect(master).toEqual({
      name: 'master',
      commit: {
        id: sha,
        message: 'First commit\n\nWith a body.\n',
        url: `${s.config.baseUrl}alice/proj/commit/${sha}`,
        author: { name: 'Alice A', email: 'alice@example.com', username: 'alice' },
        committer: { name: 'Alice A', email: 'alice@example.com', username: 'alice' },
        verification: { verified: false, reason: 'gpg.error.not_signed_commit', signature: '', signer: null, payload: '' },
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$/),
      },
      protected: false,
      user_can_push: true,
      user_can_merge: true,
      enable_status_check: false,
      status_check_contexts: [],
      required_approvals: 0,
      effective_branch_protection_name: '',
    })
    const anon = await s.get('/repos/alice/proj/branches')
    expect(anon.body[0].user_can_push).toBe(false)
    expect((await s.get('/repos/alice/hidden/branches')).status).toBe(404)
    expect((await s.get('/repos/alice/void/branches')).body).toEqual([])
  })

  test('paging only when asked', async () => {
    const first = await s.get('/repos/alice/proj/branches?limit=2')
    expect(first.body.map((b: any) => b.name)).toEqual(['dev', 'feature/slash'])
    expect(first.headers.get('x-total-count')).toBe('3')
    expect(first.headers.get('link')).toContain('rel="next"')
    const second = await s.get('/repos/alice/proj/branches?limit=2&page=2')
    expect(second.body.map((b: any) => b.name)).toEqual(['master'])
  })

  test('one branch, slashes included; unknown → 404', async () => {
    const r = await s.get('/repos/alice/proj/branches/feature/slash')
    expect(r.status).toBe(200)
    expect(r.body.name).toBe('feature/slash')
    expect(r.body.commit.id).toBe(await gitOk(work.dir, 'rev-parse', 'feature/slash'))
    expect(r.body.commit.message).toBe('Feature work\n')
    expect((await s.get('/repos/alice/proj/branches/feature')).status).toBe(404)
    expect((await s.get('/repos/alice/proj/branches/nope')).status).toBe(404)
  })
})

describe('raw files', () => {
  test('text, binary and image blobs byte for byte with the right headers', async () => {
    const text = await bytes('/api/v1/repos/alice/proj/raw/master/README.md')
    expect(text.res.status).toBe(200)
    expect(text.res.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(text.body.equals(work.files['README.md']!)).toBe(true)
    const bin = await bytes('/api/v1/repos/alice/proj/raw/master/bin/data.bin')
    expect(bin.res.headers.get('content-type')).toBe('application/octet-stream')
    expect(bin.res.headers.get('content-disposition')).toStartWith('attachment; filename="data.bin"')
    expect(bin.body.equals(work.files['bin/data.bin']!)).toBe(true)
    const png = await bytes('/api/v1/repos/alice/proj/raw/master/image.png')
    expect(png.res.headers.get('content-type')).toBe('image/png')
    expect(png.res.headers.get('content-disposition')).toStartWith('inline')
    expect(png.body.equals(work.files['image.png']!)).toBe(true)
  })

  test('a small blob is answered with its length; a large one (past 256 KiB) streams, whole, byte for byte', async () => {
    const small = await bytes('/api/v1/repos/alice/proj/raw/master/README.md')
    expect(small.res.headers.get('content-length')).toBe(String(work.files['README.md']!.length))
    // On a branch of its own, pushed to a repository of its own: the fixture's stay as they are.
    const big = Buffer.concat([randomBytes(300 * 1024), Buffer.from('end\n')])
    const text = Buffer.from('line of text\n'.repeat(40_000))
    expect((await s.post('/user/repos', { name: 'sizes' }, { token: alice.token })).status).toBe(201)
    const dir = tempDir()
    dirs.push(dir)
    await gitOk(dir, 'init', '-q', '--initial-branch=main')
    writeFileSync(join(dir, 'big.bin'), big)
    writeFileSync(join(dir, 'big.txt'), text)
    writeFileSync(join(dir, 'empty.txt'), '')
    await gitOk(dir, 'add', '-A')
    await gitOk(dir, 'commit', '-q', '-m', 'sizes')
    await gitOk(dir, 'push', '-q', remoteUrl(s.url, 'alice/sizes.git', 'alice', alice.token), 'main')
    const bin = await bytes('/api/v1/repos/alice/sizes/raw/main/big.bin')
    expect(bin.res.headers.get('content-type')).toBe('application/octet-stream')
    expect(bin.body.equals(big)).toBe(true)
    const txt = await bytes('/alice/sizes/raw/branch/main/big.txt')
    expect(txt.res.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(txt.body.equals(text)).toBe(true)
    const none = await bytes('/api/v1/repos/alice/sizes/raw/main/empty.txt')
    expect([none.res.status, none.body.length]).toEqual([200, 0])
  })

  test('ref forms: branch with slash, tag, commit id, ?ref=, default branch, web URLs', async () => {
    const sha = await gitOk(work.dir, 'rev-parse', 'master')
    const cases: [string, string][] = [
      ['/api/v1/repos/alice/proj/raw/feature/slash/feature.txt', 'feature file\n'],
      ['/api/v1/repos/alice/proj/raw/v1.0/docs/deep/note.txt', 'nested note\n'],
      ['/api/v1/repos/alice/proj/raw/v2.0/dev.txt', 'dev only\n'],
      [`/api/v1/repos/alice/proj/raw/${sha}/docs/deep/note.txt`, 'nested note\n'],
      [`/api/v1/repos/alice/proj/raw/${sha.slice(0, 10)}/docs/deep/note.txt`, 'nested note\n'],
      ['/api/v1/repos/alice/proj/raw/dev.txt?ref=dev', 'dev only\n'],
      ['/api/v1/repos/alice/proj/raw/docs/deep/note.txt', 'nested note\n'],
      ['/alice/proj/raw/branch/feature/slash/feature.txt', 'feature file\n'],
      ['/alice/proj/raw/tag/v1.0/docs/deep/note.txt', 'nested note\n'],
      [`/alice/proj/raw/commit/${sha}/docs/deep/note.txt`, 'nested note\n'],
    ]
    for (const [path, want] of cases) {
      const { res, body } = await bytes(path)
      expect([path, res.status]).toEqual([path, 200])
      expect(body.toString()).toBe(want)
    }
    for (const path of [
      '/api/v1/repos/alice/proj/raw/master/missing.txt',
      '/api/v1/repos/alice/proj/raw/master/docs',
      '/api/v1/repos/alice/proj/raw/dev.txt?ref=nope',
      '/api/v1/repos/alice/void/raw/master/README.md',
      '/api/v1/repos/alice/hidden/raw/master/README.md',
      '/alice/hidden/raw/master/README.md',
    ])
      expect([path, (await bytes(path)).res.status]).toEqual([path, 404])
    const priv = await bytes('/api/v1/repos/alice/hidden/raw/master/README.md', { headers: { authorization: `token ${alice.token}` } })
    expect(priv.body.equals(work.files['README.md']!)).toBe(true)
  })
})

/** Every file under dir, relative path → bytes. */
function treeOf(dir: string): Record<string, Buffer> {
  const out: Record<string, Buffer> = {}
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name)
      if (statSync(p).isDirectory()) walk(p)
      else out[relative(dir, p)] = readFileSync(p)
    }
  }
  walk(dir)
  return out
}

describe('archives', () => {
  test('zip and tar.gz of a ref unpack to the pushed tree', async () => {
    const hasUnzip = (await sh(['which', 'unzip'], '/')).code === 0
    for (const [path, ext] of [
      ['/api/v1/repos/alice/proj/archive/master.zip', 'zip'],
      ['/api/v1/repos/alice/proj/archive/master.tar.gz', 'tar.gz'],
      ['/alice/proj/archive/master.zip', 'zip'],
      ['/alice/proj/archive/v1.0.tar.gz', 'tar.gz'],
    ] as const) {
      const { res, body } = await bytes(path)
      expect(res.status).toBe(200)
      const ref = path.split('/archive/')[1]!.replace(`.${ext}`, '')
      expect(res.headers.get('content-disposition')).toStartWith(`attachment; filename="proj-${ref}.${ext}"`)
      const dir = tempDir('warren-archive-')
      dirs.push(dir)
      writeFileSync(join(dir, `a.${ext}`), body)
      const out = join(dir, 'out')
      mkdirSync(out)
      const cmd =
        ext === 'tar.gz'
          ? ['tar', '-xzf', join(dir, `a.${ext}`), '-C', out]
          : hasUnzip
            ? ['unzip', '-q', join(dir, `a.${ext}`), '-d', out]
            : ['python3', '-c', `import zipfile,sys; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])`, join(dir, `a.${ext}`), out]
      expect((await sh(cmd, dir)).code).toBe(0)
      const tree = treeOf(join(out, 'proj'))
      expect(Object.keys(tree).sort()).toEqual(Object.keys(work.files).sort())
      for (const [p, data] of Object.entries(work.files)) expect(tree[p]!.equals(data)).toBe(true)
    }
    const devZip = await bytes('/api/v1/repos/alice/proj/archive/feature/slash.zip')
    expect(devZip.res.status).toBe(200)
    expect(devZip.res.headers.get('content-disposition')).toStartWith('attachment; filename="proj-feature-slash.zip"')
    const sha = await gitOk(work.dir, 'rev-parse', 'master')
    expect((await bytes(`/api/v1/repos/alice/proj/archive/${sha.slice(0, 7)}.tar.gz`)).res.status).toBe(200)
    for (const path of [
      '/api/v1/repos/alice/proj/archive/master.rar',
      '/api/v1/repos/alice/proj/archive/nope.zip',
      '/api/v1/repos/alice/proj/archive/.zip',
      '/api/v1/repos/alice/void/archive/master.zip',
      '/api/v1/repos/alice/hidden/archive/master.zip',
    ])
      expect([path, (await bytes(path)).res.status]).toEqual([path, 404])
  })
})

describe('editorconfig', () => {
  test('properties of the matching sections, later ones overriding', async () => {
    expect((await s.get('/repos/alice/proj/editorconfig/src/app.ts')).body).toEqual({
      end_of_line: 'lf',
      insert_final_newline: true,
      indent_style: 'space',
      indent_size: '2',
      tab_width: 2,
    })
    expect((await s.get('/repos/alice/proj/editorconfig/Makefile')).body).toEqual({
      end_of_line: 'lf',
      insert_final_newline: true,
      indent_style: 'tab',
      indent_size: 'tab',
    })
    expect((await s.get('/repos/alice/proj/editorconfig/lib/x/y.go')).body).toEqual({
      end_of_line: 'lf',
      insert_final_newline: true,
      indent_style: 'tab',
      indent_size: '8',
      tab_width: 8,
    })
    expect((await s.get('/repos/alice/proj/editorconfig/docs/README.md')).body).toEqual({
      end_of_line: 'lf',
      insert_final_newline: true,
      charset: 'utf-8',
    })
    expect((await s.get('/repos/alice/void/editorconfig/a.txt')).status).toBe(404)
    expect((await s.get('/repos/alice/hidden/editorconfig/a.txt')).status).toBe(404)
  })

  test('glob forms and no match', () => {
    const text = '[*.{c,h}]\nindent_size=4\n[src/[ab]?.txt]\ncharset=latin1\n[n{1..3}.md]\nend_of_line=crlf\n[**/deep/*]\nindent_style=space\n'
    expect(definitionFor(text, 'x/y.c')).toEqual({ indent_size: '4', tab_width: 4 })
    expect(definitionFor(text, 'src/a1.txt')).toEqual({ charset: 'latin1' })
    expect(definitionFor(text, 'lib/src/a1.txt')).toBeNull()
    expect(definitionFor(text, 'n2.md')).toEqual({ end_of_line: 'crlf' })
    expect(definitionFor(text, 'n4.md')).toBeNull()
    expect(definitionFor(text, 'a/b/deep/f')).toEqual({ indent_style: 'space' })
    expect(definitionFor(text, 'y.cpp')).toBeNull()
  })
})

describe('editorconfig globs', () => {
  const sectionFor = (glob: string, path: string) => definitionFor(`[${glob}]\ncharset=utf-8\n`, path) !== null

  test('each glob form matches what it should and nothing else', () => {
    const cases: [string, string, boolean][] = [
      ['*.ts', 'a.ts', true],
      ['*.ts', 'src/deep/a.ts', true],
      ['src/*.ts', 'src/a.ts', true],
      ['src/*.ts', 'src/x/a.ts', false],
      ['src/**.ts', 'src/x/y/a.ts', true],
      ['**/deep/*', 'a/b/deep/f', true],
      ['/lib/**', 'lib/a/b', true],
      ['/lib/**', 'x/lib/a', false],
      ['?.md', 'a.md', true],
      ['?.md', 'ab.md', false],
      ['src/?', 'src/a', true],
      ['a?b', 'a/b', false],
      ['[abc].txt', 'b.txt', true],
      ['[abc].txt', 'd.txt', false],
      ['[a-c]x', 'bx', true],
      ['[!a].txt', 'b.txt', true],
      ['[!a].txt', 'a.txt', false],
      ['{a,b}.js', 'b.js', true],
      ['{a,b}.js', 'c.js', false],
      ['*.{js,{ts,tsx}}', 'x.tsx', true],
      ['{single}', '{single}', true],
      ['f{1..3}', 'f2', true],
      ['f{1..3}', 'f4', false],
      ['f{1..3}', 'f02', false],
      ['f{-2..12}', 'f-1', true],
      ['f{-2..12}', 'f12', true],
      ['f{-2..12}', 'f13', false],
      ['a\\*b', 'a*b', true],
      ['a\\*b', 'axb', false],
      ['Makefile', 'sub/Makefile', true],
      ['Makefile', 'Makefile.in', false],
    ]
    for (const [glob, path, expected] of cases) expect([glob, path, sectionFor(glob, path)]).toEqual([glob, path, expected])
  })

  test('pathological globs answer quickly and correctly over HTTP, without holding other requests', async () => {
    expect((await s.post('/user/repos', { name: 'globs', auto_init: false }, { token: alice.token })).status).toBe(201)
    const dir = tempDir('warren-globs-')
    dirs.push(dir)
    const star = '*a'.repeat(400)
    const text = [
      '[**a**a**a**a**a**ab]\nindent_style=tab\n',
      `[${star}b]\ncharset=latin1\n`,
      `[{${Array.from({ length: 50 }, () => '*a').join(',')}}c]\nend_of_line=crlf\n`,
      '[*a]\ninsert_final_newline=true\n',
    ].join('')
    writeFileSync(join(dir, '.editorconfig'), text)
    await gitOk(dir, 'init', '-q', '-b', 'master')
    await gitOk(dir, 'add', '.')
    await gitOk(dir, 'commit', '-q', '-m', 'globs')
    await gitOk(dir, 'push', '-q', remoteUrl(s.url, 'alice/globs.git', 'alice', alice.token), 'master')
    const probe = latencyProbe(s.url)
    for (const n of [100, 400, 1600]) {
      const r = await probe.during(`${n}`, () => s.get(`/repos/alice/globs/editorconfig/${'a'.repeat(n)}`))
      // Either answered (only `[*a]` matches) or refused as too complex: never a stall.
      if (r.status === 200) expect(r.body).toEqual({ insert_final_newline: true })
      else expect([r.status, r.body.message]).toEqual([422, 'The .editorconfig globs are too complex to match'])
    }
    expect((await s.get(`/repos/alice/globs/editorconfig/${'a'.repeat(60)}b`)).body).toEqual({ indent_style: 'tab', indent_size: 'tab' })
    const { held, answers } = await probe.stop()
    expect(answers).toBeGreaterThan(0)
    expect(held).toEqual([])
  })

  test('matching work stays bounded as globs and paths grow: O(glob × path), and never past the step budget', () => {
    const steps = (n: number) => {
      const budget = { steps: GLOB_STEP_BUDGET }
      definitionFor(`[${'*a'.repeat(n)}b]\ncharset=x\n`.repeat(4), 'a'.repeat(4 * n), budget)
      return GLOB_STEP_BUDGET - budget.steps
    }
    const [small, large] = [steps(25), steps(100)]
    expect(small).toBeGreaterThan(0)
    // Glob and path each 4× longer: at most 16× the node visits (plus slack for the constant part).
    expect(large).toBeLessThanOrEqual(16 * small + 1000)
    // Past the budget the lookup is refused, whatever the input's size, rather than run on.
    expect(() => definitionFor(`[${'*a'.repeat(400)}b]\ncharset=x\n`.repeat(4), 'a'.repeat(100_000))).toThrow('The .editorconfig globs are too complex to match')
  })

  test('an oversized .editorconfig is refused with 422', async () => {
    expect((await s.post('/user/repos', { name: 'bigec' }, { token: alice.token })).status).toBe(201)
    const dir = tempDir('warren-bigec-')
    dirs.push(dir)
    writeFileSync(join(dir, '.editorconfig'), '[*]\ncharset=utf-8\n' + '# padding\n'.repeat(8000))
    await gitOk(dir, 'init', '-q', '-b', 'master')
    await gitOk(dir, 'add', '.')
    await gitOk(dir, 'commit', '-q', '-m', 'big')
    await gitOk(dir, 'push', '-q', remoteUrl(s.url, 'alice/bigec.git', 'alice', alice.token), 'master')
    const r = await s.get('/repos/alice/bigec/editorconfig/a.txt')
    expect([r.status, r.body.message]).toEqual([422, 'The .editorconfig is larger than 64 KiB'])
  })
})

describe('safety', () => {
  test('path traversal is refused', async () => {
    for (const path of [
      '/api/v1/repos/alice/proj/raw/master/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
      '/api/v1/repos/alice/proj/raw/master/docs/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd',
      '/api/v1/repos/alice/proj/raw/master/../../../../etc/passwd',
      '/alice/proj/raw/master/..%2f..%2f..%2fetc%2fpasswd',
      '/api/v1/repos/alice/proj/editorconfig/%2e%2e/x.ts',
      '/api/v1/repos/alice/proj/archive/%2e%2e%2fmaster.zip',
    ]) {
      const r = await rawRequest(path)
      expect([path, r.status >= 400 && r.status < 500]).toEqual([path, true])
      expect(r.text).not.toContain('root:')
    }
  })

  test('option-like refs never reach git as options', async () => {
    const marker = join(tempDir('warren-marker-'), `pwned-${randomBytes(6).toString('hex')}`)
    dirs.push(join(marker, '..'))
    const evil = [`--upload-pack=touch ${marker}`, `--output=${marker}`, `--exec=touch ${marker}`, '-h']
    for (const ref of evil) {
      const e = encodeURIComponent(ref)
      for (const path of [
        `/api/v1/repos/alice/proj/archive/${e}.zip`,
        `/api/v1/repos/alice/proj/archive/${e}.tar.gz`,
        `/alice/proj/archive/${e}.zip`,
        `/api/v1/repos/alice/proj/raw/${e}/README.md`,
        `/api/v1/repos/alice/proj/raw/README.md?ref=${e}`,
        `/alice/proj/raw/branch/${e}/README.md`,
        `/api/v1/repos/alice/proj/branches/${e}`,
        `/alice/proj.git/info/refs?service=${e}`,
      ]) {
        const r = await rawRequest(path)
        expect([path, r.status >= 400 && r.status < 500]).toEqual([path, true])
      }
    }
    expect(existsSync(marker)).toBe(false)
  })
})
