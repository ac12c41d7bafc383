import { expect } from 'bun:test'
import { gitOk, remoteUrl, sh, tempDir } from './git-fixture'
import type { TestServer, TestUser } from './helpers'

/** Empty commits on the fixture's `long` branch. */
const STEPS = 120
/** Commits the fixture pushes: 7 made by hand and the STEPS empty ones. */
export const GRAPH_FIXTURE_COMMITS = 7 + STEPS

/**
 * The commit graph's fixture, pushed with the real git client for `alice`: master: Initial,
 * Second (tag v1.0), Master moves, Merge feature (feature: Feature work, Feature more, forked at
 * Second); side: Side change (from Master moves); long: STEPS empty commits from the merge.
 * Committed by "Carol Committer", authored by Alice but Feature work, by "Bob Builder"; dates a
 * day apart from 2020-01-01.
 */
export async function pushGraphFixture(s: TestServer, alice: TestUser, name: string, priv = false) {
  expect((await s.post('/user/repos', { name, private: priv, default_branch: 'master' }, { token: alice.token })).status).toBe(201)
  const dir = tempDir('warren-graph-')
  let day = 0
  // Each commit a day after the last, committed by Carol; authored by Alice unless said.
  const run = async (args: string[], author = ['Alice A', 'alice@example.com']) => {
    const date = new Date(Date.UTC(2020, 0, 1 + day++)).toISOString()
    const env = { GIT_AUTHOR_NAME: author[0]!, GIT_AUTHOR_EMAIL: author[1]!, GIT_COMMITTER_NAME: 'Carol Committer', GIT_COMMITTER_EMAIL: 'carol@example.com', GIT_AUTHOR_DATE: date, GIT_COMMITTER_DATE: date }
    const r = await sh(['git', ...args], dir, env)
    if (r.code !== 0) throw new Error(r.stderr)
  }
  const commit = (message: string, author?: string[]) => run(['commit', '-q', '--allow-empty', '-m', message], author)
  await gitOk(dir, 'init', '-q', '-b', 'master')
  await commit('Initial')
  await commit('Second')
  await gitOk(dir, 'tag', '-a', 'v1.0', '-m', 'Version 1.0')
  await gitOk(dir, 'checkout', '-q', '-b', 'feature')
  await commit('Feature work', ['Bob Builder', 'bob@example.com'])
  await commit('Feature more')
  await gitOk(dir, 'checkout', '-q', 'master')
  await commit('Master moves')
  await gitOk(dir, 'checkout', '-q', '-b', 'side')
  await commit('Side change')
  await gitOk(dir, 'checkout', '-q', 'master')
  await run(['merge', '-q', '--no-ff', '-m', 'Merge feature', 'feature'])
  await gitOk(dir, 'checkout', '-q', '-b', 'long')
  for (let i = 1; i <= STEPS; i++) await commit(`Step ${i}`)
  await gitOk(dir, 'push', '-q', remoteUrl(s.url, `alice/${name}.git`, alice.name, alice.password), '--all')
  await gitOk(dir, 'push', '-q', remoteUrl(s.url, `alice/${name}.git`, alice.name, alice.password), '--tags')
  return async (rev: string) => await gitOk(dir, 'rev-parse', rev)
}

