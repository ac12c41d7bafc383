import { and, eq } from 'drizzle-orm'
import { conflict } from '../../lib/errors'
import type { AppDeps } from '../../deps'
import { repoRedirects, repositories, type RepoRow } from '../../db/schema'
import { gitLimitsOf } from '../../auth/repo-context'
import { repoPath, type GitRepo } from '../../git/run'

/*
 * What the repository area's jobs share: where a repository's git folder is, how events keep a
 * row, the redirects of renamed names. The jobs themselves: ./create.ts (create, templates),
 * ./edit.ts (edit, delete), ./queries.ts (lookups and lists), ./repair.ts (start-up repair).
 */

/** Where a repository row's git folder lives. */
export const pathOfRepo = (deps: AppDeps, ownerName: string, repo: Pick<RepoRow, 'name'>) =>
  repoPath(deps.config.dataDir, ownerName, repo.name)

/** A git folder with the configured limits and no request signal: writes here run to the end. */
export const gitRepoAt = (deps: AppDeps, gitDir: string): GitRepo => ({ gitDir, limits: gitLimitsOf(deps) })

/** A repository row as events keep it (every column; the owner's name is among them). */
export const repoSnapshot = (row: RepoRow): Record<string, unknown> => ({ ...row })

/** A name taken by a repository of its own no longer redirects to a renamed one (inside a write transaction). */
export async function dropRedirect(deps: AppDeps, ownerId: number, lowerName: string): Promise<void> {
  await deps.db.delete(repoRedirects).where(and(eq(repoRedirects.ownerId, ownerId), eq(repoRedirects.lowerName, lowerName)))
}

/**
 * 409 when the repository's owner or name is no longer what `repo` says (inside a write
 * transaction): a rename or transfer that ran meanwhile would leave this one's redirect and
 * folder move wrong.
 */
export async function checkUnmoved(deps: AppDeps, repo: Pick<RepoRow, 'id' | 'ownerId' | 'lowerName'>): Promise<void> {
  const now = (await deps.db.select({ ownerId: repositories.ownerId, lowerName: repositories.lowerName }).from(repositories).where(eq(repositories.id, repo.id)))[0]
  if (!now || now.ownerId !== repo.ownerId || now.lowerName !== repo.lowerName)
    throw conflict('the repository was renamed or transferred meanwhile; try again')
}
