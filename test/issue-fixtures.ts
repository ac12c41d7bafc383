import { addCollaborator } from './access-fixtures'
import { startTestServer, type TestServer, type TestUser } from './helpers'

/** The people of the issue-tracker tests and what they may do in the owner's repositories. */
export interface TrackerWorld {
  s: TestServer
  owner: TestUser
  admin: TestUser
  writer: TestUser
  reader: TestUser
  outsider: TestUser
  /** Creates a repository of the owner (public unless told) with admin/writer/reader collaborators. */
  repo(name: string, opts?: { private?: boolean }): Promise<{ id: number; path: string }>
}

export async function startTrackerWorld(overrides: Parameters<typeof startTestServer>[0] = {}): Promise<TrackerWorld> {
  const s = await startTestServer(overrides)
  const [owner, admin, writer, reader, outsider] = [
    await s.user('owner'),
    await s.user('maintainer'),
    await s.user('writer'),
    await s.user('reader'),
    await s.user('outsider'),
  ]
  async function repo(name: string, opts: { private?: boolean } = {}) {
    const r = await s.post('/user/repos', { name, private: opts.private ?? false }, { token: owner.token })
    if (r.status !== 201) throw new Error(`repo create failed: ${r.status} ${r.text}`)
    await addCollaborator(s, r.body.id, admin, 3)
    await addCollaborator(s, r.body.id, writer, 2)
    await addCollaborator(s, r.body.id, reader, 1)
    return { id: r.body.id as number, path: `/repos/owner/${name}` }
  }
  return { s, owner, admin, writer, reader, outsider, repo }
}
