import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { randomBytes } from 'node:crypto'

/**
 * Real git CLI for tests: fixed identity, no user/system config, never prompts, and no automatic
 * maintenance (a `git maintenance run --auto` process after every commit, fetch and merge of the
 * tests' own clones, which no test reads).
 */
export async function sh(args: string[], cwd: string, env: Record<string, string> = {}) {
  const proc = Bun.spawn(args, {
    cwd,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: cwd,
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_TERMINAL_PROMPT: '0',
      GIT_ASKPASS: '/bin/false',
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: 'maintenance.auto',
      GIT_CONFIG_VALUE_0: 'false',
      GIT_AUTHOR_NAME: 'Alice A',
      GIT_AUTHOR_EMAIL: 'alice@example.com',
      GIT_COMMITTER_NAME: 'Alice A',
      GIT_COMMITTER_EMAIL: 'alice@example.com',
      ...env,
    },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
  return { code, stdout, stderr }
}

export const git = (cwd: string, ...args: string[]) => sh(['git', ...args], cwd)

/** git that must succeed; returns trimmed stdout. */
export async function gitOk(cwd: string, ...args: string[]): Promise<string> {
  const r = await git(cwd, ...args)
  if (r.code !== 0) throw new Error(`git ${args.join(' ')} failed (${r.code}): ${r.stderr}`)
  return r.stdout.trim()
}

export const tempDir = (prefix = 'warren-git-') => mkdtempSync(join(tmpdir(), prefix))

/** `http://user:secret@host/path` for git remotes. */
export function remoteUrl(base: string, path: string, user?: string, secret?: string): string {
  const u = new URL(base + '/' + path)
  if (user !== undefined) u.username = encodeURIComponent(user)
  if (secret !== undefined) u.password = encodeURIComponent(secret)
  return u.toString()
}

/**
 * A working repository with branches master, dev, feature/slash and tags v1.0 (lightweight)
 * and v2.0 (annotated). `files` holds master's tree (text, binary, nested, .editorconfig).
 */
export async function makeWorkRepo() {
  const dir = tempDir('warren-work-')
  const files: Record<string, Buffer> = {
    'README.md': Buffer.from('# Project\n\nHello, wörld.\n'),
    'bin/data.bin': Buffer.concat([Buffer.from([0, 1, 2, 255, 0]), randomBytes(3000)]),
    'docs/deep/note.txt': Buffer.from('nested note\n'),
    'image.png': Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(64)]),
    '.editorconfig': Buffer.from(
      [
        'root = true',
        '[*]',
        'end_of_line = lf',
        'insert_final_newline = true',
        '[*.{js,ts}]',
        'indent_style = space',
        'indent_size = 2',
        '[Makefile]',
        'indent_style = tab',
        '[lib/**.go]',
        'indent_style = tab',
        'tab_width = 8',
        '[*.md]',
        'trim_trailing_whitespace = false',
        'charset = utf-8',
        '',
      ].join('\n'),
    ),
  }
  await gitOk(dir, 'init', '-q', '--initial-branch=master')
  for (const [p, data] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, p)), { recursive: true })
    writeFileSync(join(dir, p), data)
  }
  await gitOk(dir, 'add', '-A')
  await gitOk(dir, 'commit', '-q', '-m', 'First commit\n\nWith a body.')
  await gitOk(dir, 'tag', 'v1.0')
  await gitOk(dir, 'checkout', '-q', '-b', 'dev')
  writeFileSync(join(dir, 'dev.txt'), 'dev only\n')
  await gitOk(dir, 'add', 'dev.txt')
  await gitOk(dir, 'commit', '-q', '-m', 'Dev work')
  await gitOk(dir, 'checkout', '-q', '-b', 'feature/slash')
  writeFileSync(join(dir, 'feature.txt'), 'feature file\n')
  await gitOk(dir, 'add', 'feature.txt')
  await gitOk(dir, 'commit', '-q', '-m', 'Feature work')
  await gitOk(dir, 'tag', '-a', 'v2.0', '-m', 'Release 2.0')
  await gitOk(dir, 'checkout', '-q', 'master')
  return { dir, files }
}

/** Every ref of a repository → object id (`git show-ref`, tags peeled too). */
export async function refsOf(dir: string): Promise<Record<string, string>> {
  const out = await gitOk(dir, 'show-ref', '--dereference')
  const refs: Record<string, string> = {}
  for (const line of out.split('\n').filter(Boolean)) {
    const [id, ref] = line.split(' ')
    refs[ref!] = id!
  }
  return refs
}

/** A working repository on branch main with one commit (a.txt = "one\n"). */
export async function oneCommitRepo(): Promise<string> {
  const dir = tempDir()
  await gitOk(dir, 'init', '-q', '--initial-branch=main')
  writeFileSync(join(dir, 'a.txt'), 'one\n')
  await gitOk(dir, 'add', 'a.txt')
  await gitOk(dir, 'commit', '-q', '-m', 'one')
  return dir
}
