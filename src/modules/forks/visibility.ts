import { eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { RepoRow } from '../../auth/access'
import { repositories, users } from '../../db/schema'
import { unprocessable } from '../../lib/errors'

/**
 * A fork of a private repository stays private: it holds the private repository's history, so
 * making it public would show that history to everyone, whoever made the fork (a reader of the
 * private repository may fork it). Gitea keeps a fork's visibility to its base's; Warren refuses
 * the change instead of ignoring it. Forks of forks are covered by walking the chain of sources:
 * a source is private when its row is, or when its owner is a private user or organisation (the
 * rule that made the fork private: forkRepository).
 */

/** Sources walked at most; a chain of forks longer than this is treated as private. */
const MAX_FORK_CHAIN = 100

/** Whether `repo` is a fork (of a fork…) of a repository that is private now. One query per source. */
export async function hasPrivateSource(deps: AppDeps, repo: Pick<RepoRow, 'isFork' | 'forkId'>): Promise<boolean> {
  let next = repo.isFork ? repo.forkId : 0
  for (let hops = 0; next; hops++) {
    if (hops >= MAX_FORK_CHAIN) return true
    const source = (await deps.db
      .select({ isPrivate: repositories.isPrivate, isFork: repositories.isFork, forkId: repositories.forkId, ownerVisibility: users.visibility })
      .from(repositories)
      .innerJoin(users, eq(users.id, repositories.ownerId))
      .where(eq(repositories.id, next)))[0]
    if (!source) return false
    if (source.isPrivate || source.ownerVisibility === 'private') return true
    next = source.isFork ? source.forkId : 0
  }
  return false
}

/** 422 when an edit would make a private fork of a private repository public. */
export async function checkForkVisibility(deps: AppDeps, repo: RepoRow, makePrivate: boolean | undefined): Promise<void> {
  if (makePrivate !== false || !repo.isPrivate) return
  if (await hasPrivateSource(deps, repo)) throw unprocessable('a fork of a private repository must stay private', 'Private')
}
