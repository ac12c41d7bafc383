import { and, eq, inArray, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { greatestOf } from '../../db/sql'
import { collaborations, issues, orgUsers, packages, projectIssues, projects, repoRedirects, repoTransfers, repositories, teamRepos, teams, users, type RepoRow, type RepoTransferRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode, accessLevel } from '../../auth/access'
import { orgRole } from '../../auth/org-context'
import { refuseBlocked } from '../../auth/blocking'
import { ApiError, conflict, forbidden, notFound, unprocessable } from '../../lib/errors'
import { nowUnix } from '../../lib/time'
import { recordEvent } from '../../events/outbox'
import { wikiPathOf } from '../../git/run'
import { getVisibleUserByName } from '../users/service'
import { canCreateOrgRepo } from '../orgs/service'
import { checkUnmoved, dropRedirect, pathOfRepo } from './service'
import { moveFolderWithRows } from './folder-move'

/*
 * Moving a repository to another owner (Gitea's services/repository/transfer.go). A site
 * administrator, the caller moving it to themselves, or one who may create repositories in the
 * receiving organisation moves it at once; any other recipient must accept (a row of
 * repo_transfers until then, the recipient given read access meanwhile, as Gitea does).
 */

const isOrg = (u: UserRow) => u.type === 1

export interface TransferOutcome {
  repo: RepoRow
  owner: UserRow
  /** True when the recipient must accept first (Gitea answers 201 then, 202 when moved). */
  pending: boolean
}

/** The pending transfer of a repository, if any. */
export async function pendingTransfer(deps: AppDeps, repoId: number): Promise<RepoTransferRow | undefined> {
  return (await deps.db.select().from(repoTransfers).where(eq(repoTransfers.repoId, repoId)))[0]
}

/**
 * POST /repos/{o}/{r}/transfer by `doer` with `mode` on the repository (owner needed: Gitea's
 * reqOwner). The recipient is found under the visibility rule (one the doer may not see is 404,
 * as an unknown name); team ids only for an organisation, each one of its teams.
 */
export async function startTransfer(
  deps: AppDeps,
  repo: RepoRow,
  owner: UserRow,
  doer: UserRow,
  mode: AccessMode,
  newOwnerName: string,
  teamIds: number[] | undefined,
): Promise<TransferOutcome> {
  if (mode < AccessMode.Owner) throw forbidden('Only the repository owner may transfer it')
  let recipient: UserRow
  try {
    recipient = await getVisibleUserByName(deps, newOwnerName, doer, 'owner')
  } catch (e) {
    if (e instanceof ApiError && e.status === 404) throw notFound('The new owner does not exist or cannot be found')
    throw e
  }
  const teamList = teamIds ? [...new Set(teamIds)] : []
  if (teamIds && teamIds.length) {
    if (!isOrg(recipient)) throw unprocessable('Teams can only be added to organization-owned repositories', 'TeamIDs')
    const found = await deps.db.select({ id: teams.id, orgId: teams.orgId }).from(teams).where(inArray(teams.id, teamList))
    for (const id of teamList) {
      const team = found.find((t) => t.id === id)
      if (!team) throw unprocessable(`team ${id} not found`, 'TeamIDs')
      if (team.orgId !== recipient.id) throw forbidden(`team ${id} belongs not to org ${recipient.id}`)
    }
  }
  if (recipient.id === owner.id) throw unprocessable(`The repository already belongs to ${recipient.name}`, 'NewOwner')
  if (await pendingTransfer(deps, repo.id)) throw conflict(`repository is already being transferred [repo: ${owner.name}/${repo.name}]`)
  await checkNameFree(deps, recipient, repo)

  // Gitea's StartRepositoryTransfer: one the recipient blocked may not offer them a repository (403).
  const refuseIfBlocked = async () => (doer.isAdmin || doer.id === recipient.id ? undefined : await refuseBlocked(deps.db, doer.id, [recipient.id]))
  await refuseIfBlocked()
  const immediate =
    doer.isAdmin ||
    doer.id === recipient.id ||
    (isOrg(recipient) && (await canCreateOrgRepo(deps, { org: recipient, viewer: doer, ...(await orgRole(deps, recipient, doer)) })))
  if (immediate) return { ...(await transferOwnership(deps, repo, owner, recipient, doer, teamList)), pending: false }

  const now = nowUnix()
  const hasAccess = (await accessLevel(deps.db, recipient, repo, owner)) >= AccessMode.Read
  await writeTransaction(deps.db, async () => {
    if (await pendingTransfer(deps, repo.id)) throw conflict(`repository is already being transferred [repo: ${owner.name}/${repo.name}]`)
    await refuseIfBlocked()
    await deps.db.insert(repoTransfers).values({ repoId: repo.id, doerId: doer.id, recipientId: recipient.id, teamIds: JSON.stringify(teamList), createdUnix: now })
    // The recipient may look at what they are offered (Gitea adds them as a reader).
    if (!hasAccess)
      await deps.db.insert(collaborations).values({ repoId: repo.id, userId: recipient.id, mode: AccessMode.Read, createdUnix: now, updatedUnix: now }).onConflictDoNothing()
  })
  return { repo, owner, pending: true }
}

/**
 * POST .../transfer/accept or .../transfer/reject by `caller`: the recipient user, an owner of the
 * recipient organisation, or a site administrator (Gitea's CanUserAcceptTransfer); 404 when
 * nothing is pending. Accepting moves the repository on the transfer's doer's behalf.
 */
export async function answerTransfer(deps: AppDeps, repo: RepoRow, owner: UserRow, caller: UserRow, accept: boolean): Promise<TransferOutcome> {
  const pending = await pendingTransfer(deps, repo.id)
  if (!pending) throw notFound('repository is not being transferred')
  const recipient = (await deps.db.select().from(users).where(eq(users.id, pending.recipientId)))[0] as UserRow | undefined
  if (!recipient) throw notFound('repository is not being transferred')
  if (!(await mayAnswerTransfer(deps, recipient, caller))) throw forbidden('You may not accept or reject this transfer')
  if (!accept) {
    await writeTransaction(deps.db, async () => {
      await deps.db.delete(repoTransfers).where(eq(repoTransfers.id, pending.id))
    })
    return { repo, owner, pending: false }
  }
  const doer = ((await deps.db.select().from(users).where(eq(users.id, pending.doerId)))[0] as UserRow | undefined) ?? caller
  await checkNameFree(deps, recipient, repo)
  return { ...(await transferOwnership(deps, repo, owner, recipient, doer, JSON.parse(pending.teamIds) as number[], pending.id)), pending: false }
}

/** Whether `caller` may accept or reject a transfer to `recipient`: the recipient user, an owner of the recipient organisation, a site administrator (Gitea's CanUserAcceptTransfer). */
async function mayAnswerTransfer(deps: AppDeps, recipient: UserRow, caller: UserRow): Promise<boolean> {
  return caller.isAdmin || (isOrg(recipient) ? (await orgRole(deps, recipient, caller)).owner : caller.id === recipient.id)
}

/** The repository's pending transfer as a page shows it: its recipient, and whether `viewer` may answer it; null when none is pending. */
export async function transferOffer(deps: AppDeps, repoId: number, viewer: UserRow | null): Promise<{ recipient: UserRow; mayAnswer: boolean } | null> {
  const pending = await pendingTransfer(deps, repoId)
  if (!pending) return null
  const recipient = (await deps.db.select().from(users).where(eq(users.id, pending.recipientId)))[0] as UserRow | undefined
  if (!recipient) return null
  return { recipient, mayAnswer: viewer ? await mayAnswerTransfer(deps, recipient, viewer) : false }
}

/**
 * Withdraws the repository's pending transfer (Gitea's CancelRepositoryTransfer, the settings'
 * `cancel_transfer`): its owner's (403 otherwise); 404 when none is pending. The recipient keeps
 * the read access the offer gave them, as in Gitea.
 */
export async function cancelTransfer(deps: AppDeps, repo: RepoRow, mode: AccessMode): Promise<UserRow> {
  if (mode < AccessMode.Owner) throw forbidden('Only the repository owner may cancel its transfer')
  const offer = await transferOffer(deps, repo.id, null)
  if (!offer) throw notFound('repository is not being transferred')
  const removed = await writeTransaction(deps.db, async () => await deps.db.delete(repoTransfers).where(eq(repoTransfers.repoId, repo.id)).returning({ id: repoTransfers.id }))
  if (!removed.length) throw notFound('repository is not being transferred')
  return offer.recipient
}

async function checkNameFree(deps: AppDeps, recipient: UserRow, repo: RepoRow): Promise<void> {
  const taken = (await deps.db
    .select({ id: repositories.id })
    .from(repositories)
    .where(and(eq(repositories.ownerId, recipient.id), eq(repositories.lowerName, repo.lowerName))))[0]
  if (taken) throw unprocessable(`The repository with the same name already exists. [name: ${repo.name}]`, 'NewOwner')
}

/**
 * Moves the repository: the git folder first (moveFolderWithRows, as a rename moves it), then in
 * one transaction the row's owner, both owners' counters, the old name's
 * redirect, the teams (the old organisation's lose it, the named ones of the new gain it), the
 * collaborations made redundant (the new owner, members of the new organisation), the old
 * owner's packages unlinked from it, its issues taken off the old owner's project boards, the pending
 * transfer and the `repo.transferred` event.
 */
async function transferOwnership(
  deps: AppDeps,
  repo: RepoRow,
  oldOwner: UserRow,
  newOwner: UserRow,
  doer: UserRow,
  teamIds: number[],
  pendingId?: number,
): Promise<{ repo: RepoRow; owner: UserRow }> {
  const from = pathOfRepo(deps, oldOwner.name, repo)
  const to = pathOfRepo(deps, newOwner.name, repo)
  const updated = await moveFolderWithRows(deps, from, to, async () => {
    await checkUnmoved(deps, repo)
    await checkNameFree(deps, newOwner, repo)
    if (pendingId !== undefined) {
      const still = await deps.db.delete(repoTransfers).where(eq(repoTransfers.id, pendingId)).returning({ id: repoTransfers.id })
      if (still.length === 0) throw notFound('repository is not being transferred')
    } else await deps.db.delete(repoTransfers).where(eq(repoTransfers.repoId, repo.id))
    // The old full name keeps leading here (Gitea's repo_redirect); the new one stops leading elsewhere.
    await dropRedirect(deps, newOwner.id, repo.lowerName)
    await dropRedirect(deps, oldOwner.id, repo.lowerName)
    await deps.db.insert(repoRedirects).values({ ownerId: oldOwner.id, lowerName: repo.lowerName, repoId: repo.id })
    // The old organisation's teams lose it.
    const givenTo = deps.db.select({ id: teamRepos.teamId }).from(teamRepos).where(eq(teamRepos.repoId, repo.id))
    await deps.db.update(teams).set({ numRepos: greatestOf(sql`${teams.numRepos} - 1`, 0) }).where(inArray(teams.id, givenTo))
    await deps.db.delete(teamRepos).where(eq(teamRepos.repoId, repo.id))
    if (isOrg(newOwner) && teamIds.length) {
      const named = (await deps.db.select({ id: teams.id }).from(teams).where(and(eq(teams.orgId, newOwner.id), inArray(teams.id, teamIds)))).map((t) => t.id)
      if (named.length) {
        await deps.db.insert(teamRepos).values(named.map((teamId) => ({ orgId: newOwner.id, teamId, repoId: repo.id })))
        await deps.db.update(teams).set({ numRepos: sql`${teams.numRepos} + 1` }).where(inArray(teams.id, named))
      }
    }
    // Collaborations the new owner makes redundant: its own, and its members' when an organisation.
    await deps.db.delete(collaborations).where(and(eq(collaborations.repoId, repo.id), eq(collaborations.userId, newOwner.id)))
    if (isOrg(newOwner)) {
      const members = deps.db.select({ id: orgUsers.uid }).from(orgUsers).where(eq(orgUsers.orgId, newOwner.id))
      await deps.db.delete(collaborations).where(and(eq(collaborations.repoId, repo.id), inArray(collaborations.userId, members)))
    }
    // An owner's project holds only its own repositories' issues (Gitea's transferOwnership): the
    // old owner's boards let this one's cards go.
    await deps.db
      .delete(projectIssues)
      .where(
        and(
          inArray(projectIssues.issueId, deps.db.select({ id: issues.id }).from(issues).where(eq(issues.repoId, repo.id))),
          inArray(projectIssues.projectId, deps.db.select({ id: projects.id }).from(projects).where(eq(projects.ownerId, oldOwner.id))),
        ),
      )
    // A package links only to a repository of its owner: the old owner's packages let it go.
    await deps.db.update(packages).set({ repoId: null }).where(eq(packages.repoId, repo.id))
    await deps.db.update(users).set({ numRepos: greatestOf(sql`${users.numRepos} - 1`, 0) }).where(eq(users.id, oldOwner.id))
    await deps.db.update(users).set({ numRepos: sql`${users.numRepos} + 1` }).where(eq(users.id, newOwner.id))
    await recordEvent(deps.db, {
      kind: 'repo.transferred',
      repoId: repo.id,
      actorId: doer.id,
      payload: { from: oldOwner.name, to: newOwner.name, name: repo.name },
    })
    const row = (await deps.db
      .update(repositories)
      .set({ ownerId: newOwner.id, ownerName: newOwner.name, updatedUnix: nowUnix() })
      .where(eq(repositories.id, repo.id))
      .returning())[0]
    if (!row) throw notFound()
    return row
  }, { taken: `a repository folder already exists for [name: ${newOwner.name}/${repo.name}]`, beside: [[wikiPathOf(from), wikiPathOf(to)]] })
  return { repo: updated, owner: newOwner }
}
