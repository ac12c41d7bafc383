/**
 * The repositories the ref tests (tags, branches) work in, made through gitea-js: alice's `proj`
 * (makeWorkRepo's branches master, dev, feature/slash and tags v1.0, v2.0), `shelf` (the same,
 * archived), `mirrored` (the same, flagged a mirror as a migration flags it) and `void` (empty),
 * each with `writer` (write) and `reader` (read) as collaborators.
 */
import { eq } from 'drizzle-orm'
import { giteaApi, type Api } from 'gitea-js'
import type { TestServer } from './helpers'
import { gitOk, makeWorkRepo, remoteUrl } from './git-fixture'
import { empty, ok } from './gitea-calls'
import { repositories } from '../src/db/schema'

export async function refRepos(s: TestServer) {
  const alice = await s.user('alice')
  const writer = await s.user('writer')
  const reader = await s.user('reader')
  const client = (token?: string): Api<unknown> => giteaApi(s.url, token ? { token } : {})
  const asAlice = client(alice.token)
  let projId = 0
  for (const name of ['proj', 'shelf', 'mirrored', 'void']) {
    const repo = await ok(asAlice.user.createCurrentUserRepo({ name }), 201)
    if (name === 'proj') projId = repo.id!
    for (const [who, permission] of [[writer, 'write'], [reader, 'read']] as const)
      await empty(asAlice.repos.repoAddCollaborator('alice', name, who.name, { permission }))
  }
  const work = (await makeWorkRepo()).dir
  for (const repo of ['proj', 'shelf', 'mirrored'])
    await gitOk(work, 'push', '-q', remoteUrl(s.url, `alice/${repo}.git`, 'alice', alice.token), 'master', 'dev', 'feature/slash', '--tags')
  await ok(asAlice.repos.repoEdit('alice', 'shelf', { archived: true }))
  // A mirror's flag, as a migration sets it (the mirror's own updates are not what these tests check).
  await s.deps.db.update(repositories).set({ isMirror: true }).where(eq(repositories.lowerName, 'mirrored'))
  return {
    alice,
    writer,
    reader,
    asAlice,
    asWriter: client(writer.token),
    asReader: client(reader.token),
    anon: client(),
    /** The working repository the pushes came from (remove it when done). */
    work,
    projId,
    master: await gitOk(work, 'rev-parse', 'master'),
    dev: await gitOk(work, 'rev-parse', 'dev'),
    feature: await gitOk(work, 'rev-parse', 'feature/slash'),
    /** `git ls-remote` of one of alice's repositories: ref → what it holds (peeled entries left out), and where HEAD points. */
    async remote(repo: string): Promise<{ refs: Record<string, string>; head: string }> {
      const out = await gitOk(work, 'ls-remote', '--symref', remoteUrl(s.url, `alice/${repo}.git`, 'alice', alice.token))
      const refs: Record<string, string> = {}
      let head = ''
      for (const line of out.split('\n').filter((l) => l && !l.endsWith('^{}'))) {
        const [id, ref] = line.split('\t') as [string, string]
        if (id.startsWith('ref: ')) head = id.slice('ref: '.length)
        else if (ref !== 'HEAD') refs[ref] = id
      }
      return { refs, head }
    },
  }
}
