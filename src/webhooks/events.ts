import type { EventKind, EventRecord } from '../events/outbox'
import { isBranchDeletion } from '../events/push-events'

// The hook vocabulary (types, content types, event types and names) is shared with the Hook
// records of src/convert, below this layer.
export * from '../lib/hook-events'
import type { EventMode, HookEventType } from '../lib/hook-events'

/** Whether a hook with this mode and chosen types takes events of `type`. */
export function hookWants(mode: EventMode, chosen: readonly string[], type: HookEventType): boolean {
  if (mode === 'send_everything') return true
  if (mode === 'push_only') return type === 'push'
  return chosen.includes(type)
}

const issueOrPull = (issueType: HookEventType, pullType: HookEventType) => (e: EventRecord) => (e.payload.isPull ? pullType : issueType)

/**
 * The event type each outbox kind is announced as (null: no webhook announces it, the kind or
 * that event of it). Every kind is listed, so a new kind fails to compile until it is placed here.
 */
export const EVENT_TYPE_OF: Record<EventKind, ((e: EventRecord) => HookEventType | null) | null> = {
  // A branch's deletion is announced by its `delete` alone (Gitea's pushUpdates sends no push for
  // it: a CI would start a pipeline for the zero id); a tag's gets its push, then its delete.
  push: (e) => (isBranchDeletion(e.payload) ? null : 'push'),
  'ref.created': () => 'create',
  'ref.deleted': () => 'delete',
  'repo.created': () => 'repository',
  'repo.deleted': () => 'repository',
  // Gitea has no webhook for a rename.
  'repo.renamed': null,
  // Nor for a transfer (its notifier records it in the activity feed only).
  'repo.transferred': null,
  'repo.forked': () => 'fork',
  'issue.opened': issueOrPull('issues', 'pull_request'),
  'issue.edited': issueOrPull('issues', 'pull_request'),
  'issue.closed': issueOrPull('issues', 'pull_request'),
  'issue.reopened': issueOrPull('issues', 'pull_request'),
  'issue.label_updated': issueOrPull('issue_label', 'pull_request_label'),
  'issue.label_cleared': issueOrPull('issue_label', 'pull_request_label'),
  'issue.assigned': issueOrPull('issue_assign', 'pull_request_assign'),
  'issue.unassigned': issueOrPull('issue_assign', 'pull_request_assign'),
  'issue.milestoned': issueOrPull('issue_milestone', 'pull_request_milestone'),
  'issue.demilestoned': issueOrPull('issue_milestone', 'pull_request_milestone'),
  // Gitea's webhook notifier announces no ref change.
  'issue.ref_changed': null,
  // Nor dependencies or pins (no hook event of Gitea's has them).
  'issue.dependency_added': null,
  'issue.dependency_removed': null,
  'issue.pinned': null,
  'issue.unpinned': null,
  // Nor locks (Gitea's notifier has no lock event).
  'issue.locked': null,
  'issue.unlocked': null,
  // Nor projects (Gitea 1.23's notifier announces no project change).
  'issue.project_changed': null,
  'issue.project_column_changed': null,
  'issue.deleted': issueOrPull('issues', 'pull_request'),
  'comment.created': issueOrPull('issue_comment', 'pull_request_comment'),
  'comment.edited': issueOrPull('issue_comment', 'pull_request_comment'),
  'comment.deleted': issueOrPull('issue_comment', 'pull_request_comment'),
  status: () => 'status',
  'pull.opened': () => 'pull_request',
  'pull.merged': () => 'pull_request',
  'pull.synchronized': () => 'pull_request_sync',
  // Gitea has no webhook for a scheduled merge (its timeline shows it).
  'pull.merge_scheduled': null,
  'review.submitted': (e) =>
    e.payload.type === 'approved' ? 'pull_request_review_approved' : e.payload.type === 'rejected' ? 'pull_request_review_rejected' : 'pull_request_review_comment',
  'review.requested': () => 'pull_request_review_request',
  'review.request_removed': () => 'pull_request_review_request',
  'release.published': () => 'release',
  'release.updated': () => 'release',
  'release.deleted': () => 'release',
  'wiki.created': () => 'wiki',
  'wiki.edited': () => 'wiki',
  'wiki.deleted': () => 'wiki',
  'package.created': () => 'package',
  'package.deleted': () => 'package',
}

/**
 * Whose access a payload's repository record shows in its `permissions`, event by event as Gitea
 * 1.23's notifier (services/webhook/notifier.go) gives it: the owner's (all true: pushes, deleted
 * refs, repositories, wikis, statuses, synchronised pull requests, a pull request's labels), none
 * (a created ref), the issue's or pull request's poster's (opened, edited, closed or reopened,
 * labels of an issue, reviews), or the actor's (assignees, milestones, comments, merges, review
 * requests, releases, a fork, a deletion). Kinds no webhook announces have none.
 */
export type PayloadAccess = 'owner' | 'none' | 'poster' | 'actor'
export const PAYLOAD_ACCESS: Record<EventKind, PayloadAccess | ((e: EventRecord) => PayloadAccess)> = {
  push: 'owner',
  'ref.created': 'none',
  'ref.deleted': 'owner',
  'repo.created': 'owner',
  'repo.deleted': 'owner',
  'repo.renamed': 'none',
  'repo.transferred': 'none',
  'repo.forked': 'actor',
  'issue.opened': 'poster',
  'issue.edited': 'poster',
  'issue.closed': 'poster',
  'issue.reopened': 'poster',
  'issue.label_updated': (e) => (e.payload.isPull ? 'owner' : 'poster'),
  'issue.label_cleared': 'poster',
  'issue.assigned': 'actor',
  'issue.unassigned': 'actor',
  'issue.milestoned': 'actor',
  'issue.demilestoned': 'actor',
  'issue.ref_changed': 'none',
  'issue.dependency_added': 'none',
  'issue.dependency_removed': 'none',
  'issue.pinned': 'none',
  'issue.unpinned': 'none',
  'issue.locked': 'none',
  'issue.unlocked': 'none',
  'issue.project_changed': 'none',
  'issue.project_column_changed': 'none',
  'issue.deleted': 'actor',
  'comment.created': 'actor',
  'comment.edited': 'actor',
  'comment.deleted': 'actor',
  status: 'owner',
  'pull.opened': 'poster',
  'pull.merged': 'actor',
  'pull.synchronized': 'owner',
  'pull.merge_scheduled': 'none',
  'review.submitted': 'poster',
  'review.requested': 'actor',
  'review.request_removed': 'actor',
  'release.published': 'actor',
  'release.updated': 'actor',
  'release.deleted': 'actor',
  'wiki.created': 'owner',
  'wiki.edited': 'owner',
  'wiki.deleted': 'owner',
  'package.created': 'none',
  'package.deleted': 'none',
}

/**
 * Only these types are sent to an owner's hooks (a user's as an organisation's) and the system
 * hooks, not the repository's own: a repository's creation and deletion. Gitea's PrepareWebhooks
 * also tries the repository's own hooks, which for a deletion are gone with it, and for a creation
 * are the copies of the site's default hooks made with it; here they cannot be told from hooks
 * made just after it in the same second (a hook takes the events not older than it, to the second).
 */
export const OWNER_ONLY_TYPES: ReadonlySet<HookEventType> = new Set(['repository'])
