import { sql } from 'drizzle-orm'
import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { issues } from './issues'
import { repositories } from './repos'
import { users } from './users'

/**
 * Pull requests (Gitea's pull_request table). A pull request is an issue (`issues.is_pull`): its
 * title, body, state, labels, milestone, assignees and comments live there; this row holds what
 * is a pull request's own: the branches, what git last said about them, and the merge.
 */
export const pullRequests = sqliteTable(
  'pull_requests',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    issueId: integer('issue_id')
      .notNull()
      .references(() => issues.id, { onDelete: 'cascade' }),
    /** The issue's index, copied (pull requests are looked up by it). */
    index: integer('index').notNull(),
    baseRepoId: integer('base_repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    baseBranch: text('base_branch').notNull(),
    /** The head's repository: the base itself, or a fork of it. Not a foreign key: a deleted fork leaves its pull requests. */
    headRepoId: integer('head_repo_id').notNull(),
    headBranch: text('head_branch').notNull(),
    /** The head and base commits the last check (or the merge) saw. */
    headSha: text('head_sha').notNull().default(''),
    baseSha: text('base_sha').notNull().default(''),
    mergeBase: text('merge_base').notNull().default(''),
    /** 'checking' (queued for the mergeability job), 'mergeable', 'conflict', 'error' (a branch is gone, or git failed). */
    status: text('status').notNull().default('checking'),
    /** JSON array of the paths that conflict (status 'conflict'). */
    conflictedFiles: text('conflicted_files').notNull().default('[]'),
    /** Bumped each time the pull request is queued: a check whose queueing was overtaken leaves its result unwritten. */
    checkSeq: integer('check_seq').notNull().default(0),
    /** The check_seq the last finished check started from: queued while check_seq is past it. */
    checkedSeq: integer('checked_seq').notNull().default(0),
    /** Who moved a branch last queued it (the actor of `pull.synchronized`); 0 unknown. */
    checkActorId: integer('check_actor_id').notNull().default(0),
    /** The poster lets those who may merge into the base push to the head branch (Gitea's maintainer edits). */
    allowMaintainerEdit: integer('allow_maintainer_edit', { mode: 'boolean' }).notNull().default(false),
    hasMerged: integer('has_merged', { mode: 'boolean' }).notNull().default(false),
    mergedUnix: integer('merged_unix').notNull().default(0),
    /** Not a foreign key: the record outlives its merger (shown then as the Ghost user). */
    mergedById: integer('merged_by_id').notNull().default(0),
    mergeCommitSha: text('merge_commit_sha').notNull().default(''),
    /**
     * A merge under way: JSON {sha, old, by, style} written before the base branch moves, cleared
     * after. A crash in between is repaired at start: the pull request is marked merged when `sha`
     * is on the base branch, else the intent is dropped.
     */
    mergeIntent: text('merge_intent'),
  },
  (t) => [
    uniqueIndex('pull_requests_issue_uq').on(t.issueId),
    uniqueIndex('pull_requests_base_index_uq').on(t.baseRepoId, t.index),
    index('pull_requests_base_branch_idx').on(t.baseRepoId, t.baseBranch),
    index('pull_requests_head_branch_idx').on(t.headRepoId, t.headBranch),
    /** The pull request of a commit (GET commits/{sha}/pull: merged by it, else headed by it) and a status's scheduled merges. */
    index('pull_requests_merge_commit_idx').on(t.baseRepoId, t.mergeCommitSha),
    index('pull_requests_head_sha_idx').on(t.baseRepoId, t.headSha),
    /** Merges under way (merge.ts repairPullMerges, at start and by the leftover repair's rounds): only rows with an intent are in it. */
    index('pull_requests_merge_intent_idx').on(t.id).where(sql`merge_intent is not null`),
    /** The mergeability queue (queue.ts): only queued rows are in it. */
    index('pull_requests_queue_idx').on(t.id).where(sql`check_seq > checked_seq`),
  ],
)
export type PullRow = typeof pullRequests.$inferSelect

/**
 * Scheduled merges (Gitea's pull_auto_merge): a pull request to be merged by `doer_id` once its
 * required status checks succeed (POST …/merge with `merge_when_checks_succeed`). At most one per
 * pull request; removed when the pull request is merged (by anyone) or the schedule is cancelled
 * (DELETE …/merge). The merge itself is made by the auto-merge job, never by a request.
 */
export const pullAutoMerges = sqliteTable(
  'pull_auto_merges',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    pullId: integer('pull_id')
      .notNull()
      .references(() => pullRequests.id, { onDelete: 'cascade' }),
    doerId: integer('doer_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** A merge style (MERGE_STYLES). */
    mergeStyle: text('merge_style').notNull(),
    /** The merge commit's first line and body as asked; empty: Gitea's defaults at merge time. */
    title: text('title').notNull().default(''),
    message: text('message').notNull().default(''),
    deleteBranchAfterMerge: integer('delete_branch_after_merge', { mode: 'boolean' }).notNull().default(false),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [uniqueIndex('pull_auto_merges_pull_uq').on(t.pullId)],
)
export type PullAutoMergeRow = typeof pullAutoMerges.$inferSelect
