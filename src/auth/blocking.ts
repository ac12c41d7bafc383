import { and, eq, inArray, or, type SQL } from 'drizzle-orm'
import type { Db } from '../db/client'
import { userBlocks, users } from '../db/schema'
import { forbidden } from '../lib/errors'

/*
 * The one blocking rule (Gitea 1.23's IsUserBlockedBy): whether a user is blocked by any of some
 * others, a person or an organisation (an organisation blocks through its owners). Every place
 * that must refuse the blocked asks here, inside its write transaction so that a block and the
 * act it forbids never both land:
 * - following: either way (modules/users `followUser`);
 * - starring and watching the blocker's repositories (modules/stars `setMark`);
 * - opening an issue or pull request in them (modules/issues `createIssue`), commenting on an
 *   issue there or on one the blocker opened (modules/comments `createComment`, repository
 *   administrators excepted), reacting there, to the blocker's issue or comment
 *   (modules/reactions `addReaction`);
 * - being made a collaborator of the blocker's repositories, or making the blocker one
 *   (modules/collaborators `addCollaborator`);
 * - mentions: a mention by someone blocked notifies nobody who blocked them (notify/recipients.ts).
 * What blocking undoes when it is made is modules/blocks' `blockUser`.
 */

/** Gitea's ErrBlockedUser, as its API answers it. */
export const BLOCKED_MESSAGE = 'user is blocked'

/** Which of `blockerIds` block `userId` (none when `userId` is a site administrator). */
export async function blockersOf(db: Db, userId: number, blockerIds: number[]): Promise<number[]> {
  return [...((await blocksAmong(db, [userId], blockerIds)).get(userId) ?? [])]
}

/**
 * blockersOf for many people at once, in one query: which of `blockerIds` block each of `userIds`
 * (blockee → its blockers; nobody blocks themselves, and a site administrator is held back by none).
 */
export async function blocksAmong(db: Db, userIds: number[], blockerIds: number[]): Promise<Map<number, Set<number>>> {
  const blockees = [...new Set(userIds)].filter((id) => id > 0)
  // Nobody blocks themselves (modules/blocks refuses it): a blocker who is the only blockee asks nothing.
  const blockers = [...new Set(blockerIds)].filter((id) => id > 0 && blockees.some((blockee) => blockee !== id))
  const found = new Map<number, Set<number>>()
  if (blockers.length === 0) return found
  for (const { blockerId, blockeeId } of await holdingBlocks(db, and(inArray(userBlocks.blockeeId, blockees), inArray(userBlocks.blockerId, blockers))!)) {
    const of = found.get(blockeeId)
    if (of) of.add(blockerId)
    else found.set(blockeeId, new Set([blockerId]))
  }
  return found
}

/** Whether `userId` is blocked by any of `blockerIds`. */
export async function isBlockedBy(db: Db, userId: number, blockerIds: number[]): Promise<boolean> {
  return (await blockersOf(db, userId, blockerIds)).length > 0
}

/** 403 (Gitea's answer to ErrBlockedUser) when `userId` is blocked by any of `blockerIds`. */
export async function refuseBlocked(db: Db, userId: number, blockerIds: number[]): Promise<void> {
  if (await isBlockedBy(db, userId, blockerIds)) throw forbidden(BLOCKED_MESSAGE)
}

/** 403 when either of two people blocks the other (following, collaboration): one query for both ways. */
export async function refuseBlockedEitherWay(db: Db, a: number, b: number): Promise<void> {
  if (a === b || a <= 0 || b <= 0) return
  const oneWay = (blocker: number, blockee: number) => and(eq(userBlocks.blockerId, blocker), eq(userBlocks.blockeeId, blockee))
  if ((await holdingBlocks(db, or(oneWay(a, b), oneWay(b, a))!)).length) throw forbidden(BLOCKED_MESSAGE)
}

/**
 * The block rows `pairs` selects that hold back their blockee: a site administrator is never held
 * back by a block (Gitea's IsUserBlockedBy answers false for an administrator blockee).
 */
function holdingBlocks(db: Db, pairs: SQL) {
  return db
    .select({ blockerId: userBlocks.blockerId, blockeeId: userBlocks.blockeeId })
    .from(userBlocks)
    .innerJoin(users, eq(users.id, userBlocks.blockeeId))
    .where(and(pairs, eq(users.isAdmin, false)))
}

/**
 * 403 when `userId` may not take part in the conversation of an issue or pull request (Gitea's
 * CreateIssueComment): blocked by its poster or by the repository's owner, unless an
 * administrator of the repository. A review asks the same (modules/reviews `writeReview`): it is
 * comments, its text and its line comments.
 */
export async function refuseBlockedInConversation(db: Db, userId: number, on: { posterId: number; ownerId: number; repoAdmin: boolean }): Promise<void> {
  if (!on.repoAdmin) await refuseBlocked(db, userId, [on.posterId, on.ownerId])
}

/**
 * 403 when `doerId` may not ask `reviewerId` to review a pull request (modules/reviews
 * `changeReviewRequests`): when either blocks the other (a request notifies the one asked, as an
 * assignment does), or when the one asked could not review it (`refuseBlockedInConversation`).
 * Withdrawing a request is never refused. Warren's rule: Gitea 1.23 refuses blocked assignees
 * (ErrBlockedUser) but its review requests consult no block.
 */
export async function refuseBlockedReviewRequest(db: Db, doerId: number, reviewerId: number, on: { posterId: number; ownerId: number; reviewerRepoAdmin: boolean }): Promise<void> {
  await refuseBlockedEitherWay(db, doerId, reviewerId)
  await refuseBlockedInConversation(db, reviewerId, { posterId: on.posterId, ownerId: on.ownerId, repoAdmin: on.reviewerRepoAdmin })
}
