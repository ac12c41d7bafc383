import { and, eq, inArray } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { accessLevels, AccessMode } from '../../auth/access'
import type { RepoContext } from '../../auth/repo-context'
import { teams, users } from '../../db/schema'
import { unprocessable } from '../../lib/errors'

/** The ids of whitelisted user names: 422 for a name no user has (Gitea's GetUserIDsByNames). With `writers`: only those who may write (Gitea drops the others). */
export async function userIdsOf(deps: AppDeps, ctx: RepoContext, names: string[] | undefined, writers = true): Promise<number[] | undefined> {
  if (!names) return undefined
  const lower = [...new Set(names.map((n) => n.toLowerCase()))]
  if (!lower.length) return []
  const found = await deps.db.select().from(users).where(inArray(users.lowerName, lower))
  const missing = lower.filter((n) => !found.some((r) => r.lowerName === n))
  if (missing.length) throw unprocessable(`user does not exist [name: ${missing[0]}]`)
  // In the order the names were given (a database answers an IN list in an order of its own).
  const rows = lower.map((n) => found.find((r) => r.lowerName === n)!)
  if (!writers) return rows.map((r) => r.id)
  const kept: number[] = []
  for (const row of rows) {
    const mode = (await accessLevels(deps.db, row, [ctx.repo], [ctx.owner])).get(ctx.repo.id) ?? AccessMode.None
    if (mode >= AccessMode.Write) kept.push(row.id)
  }
  return kept
}

/** The ids of whitelisted teams of the owning organisation: 422 for an unknown one; none for a user's repository. */
export async function teamIdsOf(deps: AppDeps, ctx: RepoContext, names: string[] | undefined): Promise<number[] | undefined> {
  if (!names) return undefined
  if (ctx.owner.type !== 1) return []
  const lower = [...new Set(names.map((n) => n.toLowerCase()))]
  if (!lower.length) return []
  const rows = await deps.db.select({ id: teams.id, lowerName: teams.lowerName }).from(teams).where(and(eq(teams.orgId, ctx.owner.id), inArray(teams.lowerName, lower)))
  const missing = lower.filter((n) => !rows.some((r) => r.lowerName === n))
  if (missing.length) throw unprocessable(`team does not exist [name: ${missing[0]}]`)
  return lower.map((n) => rows.find((r) => r.lowerName === n)!.id)
}
