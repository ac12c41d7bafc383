import { and, asc, eq, inArray, or } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { collaborations, issueAssignees, issues, repoTransfers, repositories, userBlocks } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { isOrgMember } from '../../auth/org-context'
import { issueEvent } from '../../events/issue-events'
import { recordEvents } from '../../events/outbox'
import { batchesOf } from '../../lib/batches'
import { badRequest, unprocessable } from '../../lib/errors'
import type { Page, Paged } from '../../lib/pagination'
import { nowUnix } from '../../lib/time'
import { unmarkRepos } from '../stars/service'
import { MAX_BLOCK_NOTE } from './model'
import { findOwnerByName, getVisibleUserByName, unfollowUser, usersPage, type PeopleList } from '../users/service'

/*
 * Blocking (Gitea 1.23's services/user/block.go): a person, or an organisation through its
 * owners, blocks a person. Blocking undoes, both ways and in one transaction with the block's
 * row, what ties them: follows, stars and watches of each other's repositories, assignments to
 * each other's issues, collaborations on each other's repositories, pending transfers of a
 * repository from one to the other. What the block forbids afterwards is asked of the one rule,
 * auth/blocking.ts.
 */

const isOrg = (u: UserRow) => u.type === 1

/** Gitea's ErrCanNotBlock, ErrCanNotUnblock and ErrBlockOrganization: 400 on the API. */
const cannotBlock = () => badRequest('cannot block the user')
const cannotUnblock = () => badRequest('cannot unblock the user')
const blockOrganization = () => badRequest('cannot block an organization')

/**
 * The person or organisation a block path names (an organisation is refused later, 400), under
 * the visibility rule: one `viewer` may not see is 404 as an unknown name, unless `blocker`
 * already blocks them (a block of someone gone private can still be checked and lifted).
 */
export async function blockPathUser(deps: AppDeps, viewer: UserRow, blocker: UserRow, name: string): Promise<{ user: UserRow; blocked: boolean }> {
  const found = await findOwnerByName(deps, name)
  const blocked = !!found && (await hasBlocked(deps, blocker, found))
  return { user: blocked ? found! : await getVisibleUserByName(deps, name, viewer, 'owner'), blocked }
}

const BLOCKED: PeopleList = { name: 'blocked', link: userBlocks, via: userBlocks.blockeeId, where: (of) => eq(userBlocks.blockerId, of), order: asc(userBlocks.id) }

/** The people `blocker` blocked whom `viewer` may see, in the order they were blocked. */
export async function listBlocks(deps: AppDeps, viewer: UserRow, blocker: UserRow, page: Page): Promise<Paged<UserRow>> {
  return await usersPage(deps, viewer, BLOCKED, blocker.id, page)
}

/** The notes `blocker` wrote on its blocks of `blockeeIds` (a listed page's), by blockee. */
export async function blockNotes(deps: AppDeps, blocker: UserRow, blockeeIds: number[]): Promise<Map<number, string>> {
  if (blockeeIds.length === 0) return new Map()
  const rows = await deps.db
    .select({ id: userBlocks.blockeeId, note: userBlocks.note })
    .from(userBlocks)
    .where(and(eq(userBlocks.blockerId, blocker.id), inArray(userBlocks.blockeeId, blockeeIds)))
  return new Map(rows.map((r) => [r.id, r.note]))
}

/** Changes the note of `blocker`'s block of `blockee` (Gitea's web "note" action); 400 when there is no such block. */
export async function setBlockNote(deps: AppDeps, blocker: UserRow, blockee: UserRow, note: string): Promise<void> {
  if (note.length > MAX_BLOCK_NOTE) throw unprocessable(`a note is at most ${MAX_BLOCK_NOTE} characters`, 'Note')
  await writeTransaction(deps.db, async () => {
    const changed = await deps.db
      .update(userBlocks)
      .set({ note })
      .where(and(eq(userBlocks.blockerId, blocker.id), eq(userBlocks.blockeeId, blockee.id)))
      .returning({ id: userBlocks.id })
    if (changed.length === 0) throw badRequest(`${blockee.name} is not blocked`)
  })
}

export async function hasBlocked(deps: AppDeps, blocker: UserRow, blockee: UserRow): Promise<boolean> {
  const row = (await deps.db
    .select({ id: userBlocks.id })
    .from(userBlocks)
    .where(and(eq(userBlocks.blockerId, blocker.id), eq(userBlocks.blockeeId, blockee.id))))[0]
  return !!row
}

/**
 * `doer` blocks `blockee` for `blocker` (the doer, or an organisation the route found them an
 * owner of). Refused with 400 as Gitea's CanBlockUser: an organisation, oneself, one already
 * blocked, a member of the blocking organisation.
 */
export async function blockUser(deps: AppDeps, doer: UserRow, blocker: UserRow, blockee: UserRow, note: string): Promise<void> {
  if (isOrg(blockee)) throw blockOrganization()
  if (blocker.id === blockee.id || doer.id === blockee.id) throw cannotBlock()
  await writeTransaction(deps.db, async () => {
    if (isOrg(blocker) && await isOrgMember(deps, blocker.id, blockee.id)) throw cannotBlock()
    const added = (await deps.db
      .insert(userBlocks)
      .values({ blockerId: blocker.id, blockeeId: blockee.id, note, createdUnix: nowUnix() })
      .onConflictDoNothing()
      .returning({ id: userBlocks.id }))[0]
    if (!added) throw cannotBlock()
    for (const [a, b] of [[blocker, blockee], [blockee, blocker]] as const) {
      await unfollowUser(deps, a, b)
      for (const mark of ['star', 'watch'] as const) await unmarkRepos(deps, mark, a.id, reposOf(deps, b.id))
      await unassignIssuesOf(deps, a, b.id)
      await deps.db.delete(collaborations).where(and(eq(collaborations.userId, a.id), inArray(collaborations.repoId, reposOf(deps, b.id))))
      await deps.db
        .delete(repoTransfers)
        .where(and(eq(repoTransfers.recipientId, a.id), or(eq(repoTransfers.doerId, b.id), inArray(repoTransfers.repoId, reposOf(deps, b.id)))))
    }
  })
}

/** `doer` lifts `blocker`'s block of `blockee`; 400 when there is none (Gitea's CanUnblockUser). */
export async function unblockUser(deps: AppDeps, doer: UserRow, blocker: UserRow, blockee: UserRow): Promise<void> {
  if (isOrg(blockee)) throw blockOrganization()
  if (doer.id === blockee.id) throw cannotUnblock()
  await writeTransaction(deps.db, async () => {
    const gone = await deps.db
      .delete(userBlocks)
      .where(and(eq(userBlocks.blockerId, blocker.id), eq(userBlocks.blockeeId, blockee.id)))
      .returning({ id: userBlocks.id })
    if (gone.length === 0) throw cannotUnblock()
  })
}

const reposOf = (deps: AppDeps, ownerId: number) => deps.db.select({ id: repositories.id }).from(repositories).where(eq(repositories.ownerId, ownerId))

/**
 * Unassigns `user` from the issues of `ownerId`'s repositories in one statement; each issue it
 * really left is announced as Gitea's toggle by the assignee, a batch of issues an insert.
 */
async function unassignIssuesOf(deps: AppDeps, user: UserRow, ownerId: number): Promise<void> {
  const issuesOfOwner = deps.db.select({ id: issues.id }).from(issues).where(inArray(issues.repoId, reposOf(deps, ownerId)))
  const gone = await deps.db
    .delete(issueAssignees)
    .where(and(eq(issueAssignees.assigneeId, user.id), inArray(issueAssignees.issueId, issuesOfOwner)))
    .returning({ issueId: issueAssignees.issueId })
  const assignee = { id: user.id, login: user.name }
  for (const ids of batchesOf(gone.map((g) => g.issueId).sort((x, y) => x - y))) {
    const left = await deps.db
      .select({ id: issues.id, repoId: issues.repoId, index: issues.index, isPull: issues.isPull })
      .from(issues)
      .where(inArray(issues.id, ids))
      .orderBy(asc(issues.id))
    await recordEvents(deps.db, left.map((issue) => issueEvent(issue, user.id, 'issue.unassigned', { assignee })))
  }
}
