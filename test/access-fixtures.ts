import { collaborations, orgUsers, teamRepos, teams, teamUsers, users } from '../src/db/schema'
import type { TestServer, TestUser } from './helpers'

/*
 * Access fixtures: organisations, teams and collaborators written straight to the database, so
 * tests of other areas do not depend on the orgs, teams or collaborators API.
 */

/** An organisation with `owner` in its Owners team and `members` in a read team covering no repository. */
export function makeOrg(s: TestServer, name: string, owner: TestUser, members: TestUser[] = [], visibility = 'public') {
  const now = Math.floor(Date.now() / 1000)
  const org = s.deps.db
    .insert(users)
    .values({ name, lowerName: name.toLowerCase(), type: 1, visibility, createdUnix: now, updatedUnix: now })
    .returning()
    .get()
  const ownersTeam = s.deps.db
    .insert(teams)
    .values({ orgId: org.id, name: 'Owners', lowerName: 'owners', authorize: 4, includesAllRepositories: true, createdUnix: now, updatedUnix: now })
    .returning()
    .get()
  const readers = s.deps.db
    .insert(teams)
    .values({ orgId: org.id, name: 'Readers', lowerName: 'readers', authorize: 1, createdUnix: now, updatedUnix: now })
    .returning()
    .get()
  s.deps.db.insert(orgUsers).values({ uid: owner.user.id, orgId: org.id, createdUnix: now }).run()
  s.deps.db.insert(teamUsers).values({ orgId: org.id, teamId: ownersTeam.id, uid: owner.user.id }).run()
  for (const m of members) {
    s.deps.db.insert(orgUsers).values({ uid: m.user.id, orgId: org.id, createdUnix: now }).run()
    s.deps.db.insert(teamUsers).values({ orgId: org.id, teamId: readers.id, uid: m.user.id }).run()
  }
  return { org, ownersTeam, readers }
}

/**
 * A team of organisation `orgId` with access `authorize` (1 read … 4 owner), its `members` made
 * organisation members, covering `repoIds` (or every repository with `all`).
 */
export function addTeam(
  s: TestServer,
  orgId: number,
  name: string,
  authorize: number,
  members: TestUser[],
  opts: { repoIds?: number[]; all?: boolean } = {},
) {
  const now = Math.floor(Date.now() / 1000)
  const team = s.deps.db
    .insert(teams)
    .values({ orgId, name, lowerName: name.toLowerCase(), authorize, includesAllRepositories: opts.all ?? false, createdUnix: now, updatedUnix: now })
    .returning()
    .get()
  for (const m of members) {
    s.deps.db.insert(orgUsers).values({ uid: m.user.id, orgId, createdUnix: now }).onConflictDoNothing().run()
    s.deps.db.insert(teamUsers).values({ orgId, teamId: team.id, uid: m.user.id }).run()
  }
  for (const repoId of opts.repoIds ?? []) s.deps.db.insert(teamRepos).values({ orgId, teamId: team.id, repoId }).run()
  return team
}

/** Makes `user` a collaborator of repository `repoId` with access `mode` (1 read, 2 write, 3 admin). */
export function addCollaborator(s: TestServer, repoId: number, user: TestUser, mode: number) {
  const now = Math.floor(Date.now() / 1000)
  s.deps.db.insert(collaborations).values({ repoId, userId: user.user.id, mode, createdUnix: now, updatedUnix: now }).run()
}
