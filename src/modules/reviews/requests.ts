import { and, asc, desc, eq, inArray, ne } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { reviews, teamRepos, teams, teamUnits, teamUsers, users, type ReviewRow, type TeamRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode, repoAccess, repoGranteesCondition, teamCoversAll, teamUnitMode, unitMode } from '../../auth/access'
import { visibleOwnerCondition } from '../../auth/visibility'
import { refuseBlocked, refuseBlockedReviewRequest } from '../../auth/blocking'
import type { RepoContext } from '../../auth/repo-context'
import { recordEvent } from '../../events/outbox'
import { forbidden, notFound, unprocessable } from '../../lib/errors'
import { selectPage, type Page, type Paged } from '../../lib/pagination'
import { nowUnix } from '../../lib/time'
import { ReviewType } from '../../convert/review'
import { usersByEmails } from '../../convert/people'
import type { PullItem } from '../../convert/pull'
import { findPull } from '../pulls/service'
import { getVisibleUserByName } from '../users/service'

/**
 * Review requests (Gitea's ReviewRequest / TeamReviewRequest): people and teams of the owning
 * organisation asked to review, kept as reviews of type "request". A person is asked while their
 * latest approval, rejection or request is a request. Whoever may write to the pull requests, or
 * the poster, chooses reviewers; a reviewer must be able to read the repository and cannot be
 * the poster; a person asked may withdraw their own request. Nobody is asked by or of one who
 * blocks them, nor asked to review what they could not (auth/blocking.ts).
 */

/** A person named by user name or, with an `@`, by a verified e-mail address. */
async function reviewerByName(deps: AppDeps, name: string, viewer: UserRow): Promise<UserRow> {
  if (!name.includes('@')) return await getVisibleUserByName(deps, name, viewer).catch(() => { throw notFound(`User '${name}' not exist`) })
  const found = (await usersByEmails(deps, [name])).get(name.toLowerCase())
  if (!found || found.type !== 0) throw notFound(`User '${name}' not exist`)
  return found
}

async function teamByName(deps: AppDeps, ctx: RepoContext, name: string): Promise<TeamRow> {
  const team = (await deps.db.select().from(teams).where(and(eq(teams.orgId, ctx.owner.id), eq(teams.lowerName, name.toLowerCase()))))[0]
  if (!team) throw notFound(`Team '${name}' not exist`)
  return team
}

/** Whether a team's members read the repository's pull requests through it: it covers the repository and gives the unit. */
async function teamReads(deps: AppDeps, team: TeamRow, repoId: number): Promise<boolean> {
  if (team.authorize < AccessMode.Admin) {
    const unit = (await deps.db.select({ mode: teamUnits.accessMode }).from(teamUnits).where(and(eq(teamUnits.teamId, team.id), eq(teamUnits.type, 'repo.pulls'))))[0]
    if (teamUnitMode(team.authorize, unit?.mode) < AccessMode.Read) return false
  }
  if (teamCoversAll(team)) return true
  return (await deps.db.select({ id: teamRepos.id }).from(teamRepos).where(and(eq(teamRepos.teamId, team.id), eq(teamRepos.repoId, repoId))))[0] !== undefined
}

/** The latest approval, rejection or request of a person (or a team's request) on the pull request. */
async function latestOf(deps: AppDeps, issueId: number, who: { userId?: number; teamId?: number }) {
  const whose = who.teamId ? eq(reviews.reviewerTeamId, who.teamId) : and(eq(reviews.reviewerId, who.userId!), eq(reviews.reviewerTeamId, 0))
  return (await deps.db
    .select()
    .from(reviews)
    .where(and(eq(reviews.issueId, issueId), whose, inArray(reviews.type, [ReviewType.Approve, ReviewType.Reject, ReviewType.Request])))
    .orderBy(desc(reviews.id))
    .limit(1))[0]
}

export interface ReviewRequestOptions {
  reviewers?: string[]
  team_reviewers?: string[]
}

/**
 * POST (add) / DELETE (remove) …/requested_reviewers. Every name is checked before anything is
 * written; the answer of an addition is the new requests (one already standing is not repeated).
 * Each person asked or no longer asked is announced (a team's request: each member but the
 * poster and the caller).
 */
export async function changeReviewRequests(deps: AppDeps, ctx: RepoContext, user: UserRow, index: number, opts: ReviewRequestOptions, add: boolean): Promise<{ item: PullItem; created: ReviewRow[] }> {
  const item = await findPull(deps, ctx.repo.id, index)
  const people: UserRow[] = []
  for (const name of new Set(opts.reviewers ?? [])) people.push(await reviewerByName(deps, name, user))
  const teamRows: TeamRow[] = []
  if (ctx.owner.type === 1) for (const name of new Set(opts.team_reviewers ?? [])) teamRows.push(await teamByName(deps, ctx, name))
  if (item.issue.isClosed || item.pull.hasMerged) throw forbidden('cannot change review requests of a closed or merged pull request')
  const mayChoose = item.issue.posterId === user.id || ctx.mode >= AccessMode.Write
  const levels = new Map<number, number>()
  for (const person of people) {
    if (add) {
      const access = await repoAccess(deps.db, person, ctx.repo, ctx.owner)
      // A reviewer must read the pull requests (Gitea's IsValidReviewRequest: a team may give the
      // code and not them); the code's mode decides whether the review is official, as Gitea's.
      if (unitMode(access, 'repo.pulls') < AccessMode.Read) throw unprocessable(`${person.name} can't read the repository`)
      levels.set(person.id, unitMode(access, 'repo.code'))
      if (person.id === item.issue.posterId) throw unprocessable("poster of pr can't be reviewer")
      if (!mayChoose) throw unprocessable("Doer can't choose reviewer")
    } else if (!mayChoose && person.id !== user.id) throw unprocessable("Doer can't remove reviewer")
  }
  for (const team of teamRows) {
    if (add && !(await teamReads(deps, team, ctx.repo.id))) throw unprocessable(`Reviewing team ${team.name} can't read repo`)
    if (!mayChoose) throw unprocessable(add ? "Doer can't choose reviewer" : "Doer can't remove reviewer")
  }
  // A team is asked in its organisation's name: one the organisation blocks may not ask it (withdrawing stays allowed).
  if (add && teamRows.length) await refuseBlocked(deps.db, user.id, [ctx.owner.id])
  const now = nowUnix()
  const created = await writeTransaction(deps.db, async () => {
    const made: ReviewRow[] = []
    const announce = (reviewerId: number) =>
      recordEvent(deps.db, {
        kind: add ? 'review.requested' : 'review.request_removed',
        repoId: ctx.repo.id,
        actorId: user.id,
        issueId: item.issue.id,
        payload: { index: item.issue.index, isPull: true, reviewerId },
      })
    const request = async (who: { userId?: number; teamId?: number }, official: boolean): Promise<boolean> => {
      const last = await latestOf(deps, item.issue.id, who)
      const asked = last?.type === ReviewType.Request
      if (add && !asked)
        made.push((await deps.db.insert(reviews).values({ type: ReviewType.Request, issueId: item.issue.id, repoId: ctx.repo.id, reviewerId: who.userId ?? 0, reviewerTeamId: who.teamId ?? 0, official, createdUnix: now, updatedUnix: now }).returning())[0]!)
      else if (!add && asked) await deps.db.delete(reviews).where(eq(reviews.id, last.id))
      else return false
      return true
    }
    for (const person of people) {
      const level = levels.get(person.id) ?? AccessMode.None
      if (add) await refuseBlockedReviewRequest(deps.db, user.id, person.id, { posterId: item.issue.posterId, ownerId: ctx.repo.ownerId, reviewerRepoAdmin: level >= AccessMode.Admin })
      if (await request({ userId: person.id }, add && level >= AccessMode.Write)) await announce(person.id)
    }
    for (const team of teamRows)
      if (await request({ teamId: team.id }, team.authorize >= AccessMode.Write)) {
        const members = await deps.db.select({ uid: teamUsers.uid }).from(teamUsers).where(eq(teamUsers.teamId, team.id)).orderBy(asc(teamUsers.uid))
        for (const m of members) if (m.uid !== item.issue.posterId && m.uid !== user.id) await announce(m.uid)
      }
    return made
  })
  return { item, created }
}

/** GET /repos/{o}/{r}/reviewers: the people who may be asked (readers by a grant of their own), the caller aside. */
export async function listReviewers(deps: AppDeps, ctx: RepoContext, page: Page | null): Promise<Paged<UserRow>> {
  const viewer = ctx.caller.user
  const where = and(eq(users.type, 0), eq(users.isActive, true), repoGranteesCondition(ctx.repo, AccessMode.Read, 'repo.pulls'), visibleOwnerCondition(viewer), viewer ? ne(users.id, viewer.id) : undefined)
  return await selectPage(deps.db, users, where, asc(users.lowerName), page)
}
