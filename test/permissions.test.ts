/**
 * Who may do what, as the API tells it (Gitea 1.23): a repository's assignees, a person's
 * permission in a repository, a person's permissions in an organisation. Every answer agrees with
 * accessLevel (src/auth/access.ts), which decides what the same people may actually do.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { eq } from 'drizzle-orm'
import { giteaApi, type Api } from 'gitea-js'
import { startTrackerWorld, type TrackerWorld } from './issue-fixtures'
import { addTeam, makeOrg } from './access-fixtures'
import { missingGiteaFields } from './gitea-types'
import { accessLevel, AccessMode } from '../src/auth/access'
import { repositories } from '../src/db/schema'
import type { TestUser } from './helpers'

type Client = Api<unknown>
let w: TrackerWorld
let everyone: TestUser[]
let root: TestUser
const api = (u?: TestUser): Client => giteaApi(w.s.url, u ? { token: u.token } : {})
const statusOf = async (call: Promise<{ status: number }>) => (await call.catch((e: { status: number }) => e)).status

/** The people accessLevel lets write to a repository, by name (site administrators aside, as in Gitea's list). */
async function writers(repoId: number): Promise<string[]> {
  const repo = (await w.s.deps.db.select().from(repositories).where(eq(repositories.id, repoId)))[0]!
  const names: string[] = []
  for (const u of everyone) if (!u.user.isAdmin && (await accessLevel(w.s.deps.db, u.user, repo)) >= AccessMode.Write) names.push(u.name)
  return names.sort()
}

let tools: { id: number }
let forge: { id: number }

beforeAll(async () => {
  w = await startTrackerWorld()
  root = await w.s.user('root', { admin: true })
  everyone = [w.owner, w.admin, w.writer, w.reader, w.outsider, root]
  tools = await w.repo('tools')
  // An organisation: the owner in its Owners team, the reader in a read team, the outsider in a write team covering `forge`.
  const { org } = await makeOrg(w.s, 'guild', w.owner, [w.reader])
  forge = { id: (await api(w.owner).orgs.createOrgRepo('guild', { name: 'forge' })).data.id! }
  await addTeam(w.s, org.id, 'smiths', 2, [w.outsider], { repoIds: [forge.id] })
  await makeOrg(w.s, 'hidden', root, [], 'private')
})
afterAll(() => w.s.stop())

describe('permissions', () => {
  test("a repository's assignees are the people accessLevel lets write, and the ones an issue accepts", async () => {
    const list = await api(w.reader).repos.repoGetAssignees('owner', 'tools')
    expect(list.data.map((u) => u.login)).toEqual(['maintainer', 'owner', 'writer'])
    expect(list.data.map((u) => u.login)).toEqual(await writers(tools.id))
    const orgList = await api().repos.repoGetAssignees('guild', 'forge')
    expect(orgList.data.map((u) => u.login)).toEqual(['outsider', 'owner'])
    expect(orgList.data.map((u) => u.login)).toEqual(await writers(forge.id))
    // What the list says is what assigning accepts.
    const issue = await api(w.owner).repos.issueCreateIssue('owner', 'tools', { title: 't', assignees: ['writer', 'maintainer'] })
    expect(issue.data.assignees?.map((u) => u.login).sort()).toEqual(['maintainer', 'writer'])
    expect(await statusOf(api(w.owner).repos.issueCreateIssue('owner', 'tools', { title: 't', assignees: ['reader'] }))).toBe(422)
    // Paged when asked.
    const page = await w.s.get('/repos/owner/tools/assignees?page=2&limit=2')
    expect(page.body.map((u: { login: string }) => u.login)).toEqual(['writer'])
    expect(page.headers.get('X-Total-Count')).toBe('3')
  })

  test("a person's permission in a repository: for site and repository admins, or the person; Gitea's record", async () => {
    const asked = await api(w.owner).repos.repoGetRepoPermissions('owner', 'tools', 'writer')
    expect(asked.data).toMatchObject({ permission: 'write', role_name: 'write' })
    expect(asked.data.user?.login).toBe('writer')
    expect(missingGiteaFields('RepoCollaboratorPermission', asked.data)).toEqual([])
    expect((await api(w.admin).repos.repoGetRepoPermissions('owner', 'tools', 'reader')).data.permission).toBe('read')
    expect((await api(root).repos.repoGetRepoPermissions('owner', 'tools', 'owner')).data.permission).toBe('owner')
    expect((await api(w.outsider).repos.repoGetRepoPermissions('owner', 'tools', 'OUTSIDER')).data.permission).toBe('read')
    expect((await api(w.admin).repos.repoGetRepoPermissions('owner', 'tools', 'root')).data.permission).toBe('owner')
    expect((await api(w.owner).repos.repoGetRepoPermissions('guild', 'forge', 'outsider')).data.permission).toBe('write')
    expect((await api(w.owner).repos.repoGetRepoPermissions('guild', 'forge', 'reader')).data.permission).toBe('read')
    // Refusals: a writer asking about another (403), anonymous (401), an unknown person (404).
    expect(await statusOf(api(w.writer).repos.repoGetRepoPermissions('owner', 'tools', 'reader'))).toBe(403)
    expect(await statusOf(api().repos.repoGetRepoPermissions('owner', 'tools', 'reader'))).toBe(401)
    expect(await statusOf(api(w.owner).repos.repoGetRepoPermissions('owner', 'tools', 'nobody'))).toBe(404)
  })

  test("a person's permissions in an organisation", async () => {
    const of = async (user: string, org = 'guild', as: TestUser = w.admin) => (await api(as).users.orgGetUserPermissions(user, org)).data
    const owner = await of('owner')
    expect(owner).toEqual({ can_read: true, can_write: true, is_admin: true, is_owner: true, can_create_repository: true })
    expect(missingGiteaFields('OrganizationPermissions', owner)).toEqual([])
    expect(await of('reader')).toEqual({ can_read: true, can_write: false, is_admin: false, is_owner: false, can_create_repository: false })
    expect(await of('outsider')).toEqual({ can_read: true, can_write: true, is_admin: false, is_owner: false, can_create_repository: false })
    expect(await of('writer')).toEqual({ can_read: false, can_write: false, is_admin: false, is_owner: false, can_create_repository: false })
    // A private organisation: hidden from the caller (404), or from the person asked about (404).
    expect(await statusOf(api(w.writer).users.orgGetUserPermissions('root', 'hidden'))).toBe(404)
    expect(await statusOf(api(root).users.orgGetUserPermissions('writer', 'hidden'))).toBe(404)
    expect((await of('root', 'hidden', root)).is_owner).toBe(true)
    expect(await statusOf(api().users.orgGetUserPermissions('owner', 'guild'))).toBe(401)
    expect(await statusOf(api(w.owner).users.orgGetUserPermissions('owner', 'nowhere'))).toBe(404)
    expect(await statusOf(api(w.owner).users.orgGetUserPermissions('nobody', 'guild'))).toBe(404)
  })
})
