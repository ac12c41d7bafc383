import { collaborations, orgUsers, teamRepos, teams, teamUnits, teamUsers, users } from '../src/db/schema'
import { REPO_UNITS } from '../src/auth/access'
import type { TestServer, TestUser } from './helpers'

/*
 * Access fixtures: organisations, teams and collaborators written straight to the database, so
 * tests of other areas do not depend on the orgs, teams or collaborators API.
 */

/** An organisation with `owner` in its Owners team and `members` in a read team covering no repository. */
export async function makeOrg(s: TestServer, name: string, owner: TestUser, members: TestUser[] = [], visibility = 'public') {
  const now = Math.floor(Date.now() / 1000)
  const org = (await s.deps.db
    .insert(users)
    .values({ name, lowerName: name.toLowerCase(), type: 1, visibility, createdUnix: now, updatedUnix: now })
    .returning())[0]
  const ownersTeam = (await s.deps.db
    .insert(teams)
    .values({ orgId: org.id, name: 'Owners', lowerName: 'owners', authorize: 4, includesAllRepositories: true, createdUnix: now, updatedUnix: now })
    .returning())[0]
  const readers = (await s.deps.db
    .insert(teams)
    .values({ orgId: org.id, name: 'Readers', lowerName: 'readers', authorize: 1, createdUnix: now, updatedUnix: now })
    .returning())[0]
  await s.deps.db.insert(orgUsers).values({ uid: owner.user.id, orgId: org.id, createdUnix: now })
  await s.deps.db.insert(teamUsers).values({ orgId: org.id, teamId: ownersTeam.id, uid: owner.user.id })
  for (const m of members) {
    await s.deps.db.insert(orgUsers).values({ uid: m.user.id, orgId: org.id, createdUnix: now })
    await s.deps.db.insert(teamUsers).values({ orgId: org.id, teamId: readers.id, uid: m.user.id })
  }
  return { org, ownersTeam, readers }
}

/**
 * A team of organisation `orgId` with access `authorize` (1 read … 4 owner), its `members` made
 * organisation members, covering `repoIds` (or every repository with `all`).
 */
export async function addTeam(
  s: TestServer,
  orgId: number,
  name: string,
  authorize: number,
  members: TestUser[],
  opts: { repoIds?: number[]; all?: boolean } = {},
) {
  const now = Math.floor(Date.now() / 1000)
  const team = (await s.deps.db
    .insert(teams)
    .values({ orgId, name, lowerName: name.toLowerCase(), authorize, includesAllRepositories: opts.all ?? false, createdUnix: now, updatedUnix: now })
    .returning())[0]!
  // Every unit at the team's mode: a team without per-unit settings.
  await s.deps.db.insert(teamUnits).values(REPO_UNITS.map((type) => ({ orgId, teamId: team.id, type, accessMode: authorize })))
  for (const m of members) {
    await s.deps.db.insert(orgUsers).values({ uid: m.user.id, orgId, createdUnix: now }).onConflictDoNothing()
    await s.deps.db.insert(teamUsers).values({ orgId, teamId: team.id, uid: m.user.id })
  }
  for (const repoId of opts.repoIds ?? []) await s.deps.db.insert(teamRepos).values({ orgId, teamId: team.id, repoId })
  return team
}

/** Makes `user` a collaborator of repository `repoId` with access `mode` (1 read, 2 write, 3 admin). */
export async function addCollaborator(s: TestServer, repoId: number, user: TestUser, mode: number) {
  const now = Math.floor(Date.now() / 1000)
  await s.deps.db.insert(collaborations).values({ repoId, userId: user.user.id, mode, createdUnix: now, updatedUnix: now })
}
