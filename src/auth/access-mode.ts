/*
 * Access modes and their names: the vocabulary that access.ts (what a caller may do in a
 * repository) and visibility.ts (who may see it) both speak. On its own so that neither of
 * those two imports the other for it.
 */

/** Access modes, ordered: each includes the ones below it (Gitea's AccessMode). */
export const AccessMode = { None: 0, Read: 1, Write: 2, Admin: 3, Owner: 4 } as const
export type AccessMode = (typeof AccessMode)[keyof typeof AccessMode]

export const accessModeName = (mode: number): 'none' | 'read' | 'write' | 'admin' | 'owner' =>
  (['none', 'read', 'write', 'admin', 'owner'] as const)[Math.max(0, Math.min(4, mode))]!

export const accessModeFromName = (name: string): AccessMode | undefined =>
  ({ read: AccessMode.Read, write: AccessMode.Write, admin: AccessMode.Admin, owner: AccessMode.Owner })[name] as
    | AccessMode
    | undefined

/** Gitea's Permission record for a mode. */
export const permissionOf = (mode: number) => ({
  admin: mode >= AccessMode.Admin,
  push: mode >= AccessMode.Write,
  pull: mode >= AccessMode.Read,
})

/**
 * The repository units a team's modes are kept for (Gitea's unit keys), in Gitea's order. Routes
 * belong to one of them (the pipeline's `repo: { unit }`; none declared: the code).
 */
export const REPO_UNITS = ['repo.code', 'repo.issues', 'repo.ext_issues', 'repo.wiki', 'repo.pulls', 'repo.releases', 'repo.ext_wiki', 'repo.projects', 'repo.packages'] as const
export type RepoUnitKey = (typeof REPO_UNITS)[number]

/** The unit an issue belongs to: the pull requests' for a pull request, else the issues' (Gitea's CanReadIssuesOrPulls(issue.IsPull)). */
export const issueUnitOf = (issue: { isPull: boolean }): 'repo.issues' | 'repo.pulls' => (issue.isPull ? 'repo.pulls' : 'repo.issues')

/**
 * A team's mode in one unit (Gitea's Team.UnitAccessMode beside its permission): an admin or owner
 * team's permission in every unit; another team's mode for the unit, as its row sets it (none
 * without one), at most write; nothing from a team that grants nothing. The one rule of
 * repoAccesses, the owner-wide units (package-access.ts `orgUnitMode`) and a team's review
 * requests; access.ts `teamUnitGrant` is its SQL form.
 */
export const teamUnitMode = (authorize: number, unitMode: number | null | undefined): number =>
  authorize >= AccessMode.Admin ? authorize : authorize <= AccessMode.None ? AccessMode.None : Math.min(unitMode ?? AccessMode.None, AccessMode.Write)

/** Whether a team covers every repository of its organisation, present and future: an owner team, or one including all. */
export const teamCoversAll = (team: { authorize: number; includesAllRepositories: boolean }): boolean =>
  team.authorize >= AccessMode.Owner || team.includesAllRepositories
