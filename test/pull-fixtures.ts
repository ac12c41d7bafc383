import { expect } from 'bun:test'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { TestServer, TestUser } from './helpers'
import { gitOk, oneCommitRepo, remoteUrl, tempDir } from './git-fixture'

/**
 * A repository of `owner`'s with main (a.txt = "one\n") pushed, and a working copy whose
 * `origin` is it (pushes as the owner).
 */
export async function pushedRepo(s: TestServer, owner: TestUser, name: string, dirs: string[]) {
  const r = await s.post('/user/repos', { name }, { token: owner.token })
  expect(r.status).toBe(201)
  const dir = await oneCommitRepo()
  dirs.push(dir)
  await gitOk(dir, 'remote', 'add', 'origin', remoteUrl(s.url, `${owner.name}/${name}.git`, owner.name, owner.password))
  await gitOk(dir, 'push', '-q', 'origin', 'main')
  return { id: r.body.id as number, dir }
}

/** Commits `files` on `branch` (created from `from` when given) in the working copy `dir`; answers the commit. */
export async function commitOn(dir: string, branch: string, files: Record<string, string>, message: string, from?: string): Promise<string> {
  if (from) await gitOk(dir, 'checkout', '-q', '-B', branch, from)
  else await gitOk(dir, 'checkout', '-q', branch)
  for (const [path, content] of Object.entries(files)) writeFileSync(join(dir, path), content)
  await gitOk(dir, 'add', '-A')
  await gitOk(dir, 'commit', '-q', '-m', message)
  return gitOk(dir, 'rev-parse', 'HEAD')
}

/** `forker`'s fork of `owner/name`, cloned, with `branch` (one commit adding fix.txt) pushed to it; answers the clone and the commit. */
export async function forkWithBranch(s: TestServer, owner: TestUser, name: string, forker: TestUser, branch: string, dirs: string[]) {
  expect((await s.post(`/repos/${owner.name}/${name}/forks`, {}, { token: forker.token })).status).toBe(202)
  const work = tempDir()
  dirs.push(work)
  await gitOk(work, 'clone', '-q', remoteUrl(s.url, `${forker.name}/${name}.git`, forker.name, forker.password), 'w')
  const w = join(work, 'w')
  const head = await commitOn(w, branch, { 'fix.txt': 'fixed\n' }, `${forker.name} fixes`, 'main')
  await gitOk(w, 'push', '-q', 'origin', branch)
  return { dir: w, head }
}
