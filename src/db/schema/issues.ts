import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from './users'
import { repositories } from './repos'

/** The last index handed out per repository: issues and pull requests share it; never reused. */
export const issueIndexes = sqliteTable('issue_indexes', {
  repoId: integer('repo_id')
    .primaryKey()
    .references(() => repositories.id, { onDelete: 'cascade' }),
  maxIndex: integer('max_index').notNull().default(0),
})

export const milestones = sqliteTable(
  'milestones',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    content: text('content').notNull().default(''),
    isClosed: integer('is_closed', { mode: 'boolean' }).notNull().default(false),
    numIssues: integer('num_issues').notNull().default(0),
    numClosedIssues: integer('num_closed_issues').notNull().default(0),
    /** 0 = no deadline. */
    deadlineUnix: integer('deadline_unix').notNull().default(0),
    closedUnix: integer('closed_unix').notNull().default(0),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  // milestones_name_idx: the issue search's milestones by name over every repository (issues/search.ts namedFilter).
  (t) => [index('milestones_repo_idx').on(t.repoId, t.isClosed), index('milestones_name_idx').on(t.name)],
)
export type MilestoneRow = typeof milestones.$inferSelect

export const issues = sqliteTable(
  'issues',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    index: integer('index').notNull(),
    /** Not a foreign key: the issue outlives its author, shown then as the Ghost user (as Gitea). */
    posterId: integer('poster_id').notNull(),
    title: text('title').notNull(),
    content: text('content').notNull().default(''),
    /** The branch or tag the issue is about (Gitea's issue ref; pull requests have none). */
    ref: text('ref').notNull().default(''),
    milestoneId: integer('milestone_id').notNull().default(0),
    isClosed: integer('is_closed', { mode: 'boolean' }).notNull().default(false),
    isPull: integer('is_pull', { mode: 'boolean' }).notNull().default(false),
    isLocked: integer('is_locked', { mode: 'boolean' }).notNull().default(false),
    numComments: integer('num_comments').notNull().default(0),
    /** 0 = no deadline. */
    deadlineUnix: integer('deadline_unix').notNull().default(0),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
    closedUnix: integer('closed_unix').notNull().default(0),
    /**
     * Its place among the repository's pinned issues (or pinned pull requests), from 1; 0 when not
     * pinned (Gitea's issue.pin_order). `modules/issue-pins` keeps the places of one kind 1..n.
     */
    pinOrder: integer('pin_order').notNull().default(0),
  },
  (t) => [
    uniqueIndex('issues_repo_index_uq').on(t.repoId, t.index),
    index('issues_repo_pin_idx').on(t.repoId, t.isPull, t.pinOrder),
    index('issues_repo_state_idx').on(t.repoId, t.isClosed, t.createdUnix),
    // A repository's issues or its pull requests in any state, newest (or oldest) first, and its
    // pull requests by their last update (Gitea's `state=all` lists, `sort=recentupdate`:
    // issues/queries.ts listIssues, pulls/service.ts listPulls): read in these orders, where every
    // one of them was sorted (150-270 ms at 100,000 pull requests).
    index('issues_repo_kind_idx').on(t.repoId, t.isPull, t.createdUnix, t.id),
    index('issues_repo_kind_updated_idx').on(t.repoId, t.isPull, t.updatedUnix, t.id),
    // A repository's open (or closed) issues, or its open (or closed) pull requests, newest first
    // (the web's issue and pull request lists, `type=issues`, listPulls): SQLite, without
    // statistics, read them through issues_repo_state_idx and skipped the other kind one by one (a
    // repository of 100,000 pull requests and no issue: 13-17 ms of the event loop for its empty
    // list of issues).
    index('issues_repo_kind_state_idx').on(t.repoId, t.isPull, t.isClosed, t.createdUnix, t.id),
    // Both kinds in any state, newest first (the API's issue list without a type, `state=all`).
    index('issues_repo_created_idx').on(t.repoId, t.createdUnix, t.id),
    index('issues_poster_idx').on(t.posterId),
    index('issues_milestone_idx').on(t.milestoneId),
    // The issue search across repositories, newest first (modules/issues/search.ts): its page read
    // in this order, stopping at the page's end, rather than every visible issue sorted.
    index('issues_created_idx').on(t.createdUnix, t.id),
  ],
)
export type IssueRow = typeof issues.$inferSelect

/**
 * An issue (or pull request) blocked by another one (Gitea's issue_dependency): `issueId` depends
 * on `dependencyId`, which may be in another repository. Either issue's deletion deletes the row.
 */
export const issueDependencies = sqliteTable(
  'issue_dependencies',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    /** Who added it; not a foreign key (the row outlives its author, as Gitea's). */
    userId: integer('user_id').notNull(),
    issueId: integer('issue_id')
      .notNull()
      .references(() => issues.id, { onDelete: 'cascade' }),
    dependencyId: integer('dependency_id')
      .notNull()
      .references(() => issues.id, { onDelete: 'cascade' }),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [uniqueIndex('issue_dependencies_pair_uq').on(t.issueId, t.dependencyId), index('issue_dependencies_dependency_idx').on(t.dependencyId)],
)
export type IssueDependencyRow = typeof issueDependencies.$inferSelect

export const issueAssignees = sqliteTable(
  'issue_assignees',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    issueId: integer('issue_id')
      .notNull()
      .references(() => issues.id, { onDelete: 'cascade' }),
    assigneeId: integer('assignee_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
  },
  (t) => [uniqueIndex('issue_assignees_pair_uq').on(t.issueId, t.assigneeId), index('issue_assignees_user_idx').on(t.assigneeId)],
)

/**
 * A label belongs to one repository (repoId) or, Gitea 1.15+, to an organisation (orgId), whose
 * repositories' issues may carry it; exactly one of the two is set.
 */
export const labels = sqliteTable(
  'labels',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    repoId: integer('repo_id').references(() => repositories.id, { onDelete: 'cascade' }),
    orgId: integer('org_id').references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    /** '#rrggbb', lower case. */
    color: text('color').notNull(),
    description: text('description').notNull().default(''),
    numIssues: integer('num_issues').notNull().default(0),
    numClosedIssues: integer('num_closed_issues').notNull().default(0),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  // labels_name_idx: the issue search's labels by name over every repository (issues/search.ts namedFilter).
  (t) => [index('labels_repo_idx').on(t.repoId, t.name), index('labels_org_idx').on(t.orgId, t.name), index('labels_name_idx').on(t.name)],
)
export type LabelRow = typeof labels.$inferSelect

export const issueLabels = sqliteTable(
  'issue_labels',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    issueId: integer('issue_id')
      .notNull()
      .references(() => issues.id, { onDelete: 'cascade' }),
    labelId: integer('label_id')
      .notNull()
      .references(() => labels.id, { onDelete: 'cascade' }),
  },
  (t) => [uniqueIndex('issue_labels_pair_uq').on(t.issueId, t.labelId), index('issue_labels_label_idx').on(t.labelId)],
)

/**
 * A reaction (Gitea's `reaction`): one person's one emoji on an issue (commentId 0) or on one of
 * its comments. Deleting the issue or the person deletes it (foreign keys); deleting a comment
 * deletes its reactions in the same transaction (comments/service.ts).
 */
export const reactions = sqliteTable(
  'reactions',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    type: text('type').notNull(),
    issueId: integer('issue_id')
      .notNull()
      .references(() => issues.id, { onDelete: 'cascade' }),
    /** 0: a reaction on the issue itself. */
    commentId: integer('comment_id').notNull().default(0),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [
    uniqueIndex('reactions_one_uq').on(t.issueId, t.commentId, t.userId, t.type),
    index('reactions_comment_idx').on(t.commentId),
    index('reactions_user_idx').on(t.userId),
  ],
)
export type ReactionRow = typeof reactions.$inferSelect

/** Type 0 is a plain comment (the only kind the API lists); other types are timeline events. */
export const comments = sqliteTable(
  'comments',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    type: integer('type').notNull().default(0),
    /** Not a foreign key: the comment outlives its author, shown then as the Ghost user (as Gitea). */
    posterId: integer('poster_id').notNull(),
    issueId: integer('issue_id')
      .notNull()
      .references(() => issues.id, { onDelete: 'cascade' }),
    /** Denormalised for repository-wide comment lists. */
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    content: text('content').notNull().default(''),
    /** Event details (label id, old/new milestone, tracked time id ...), JSON. */
    meta: text('meta').notNull().default('{}'),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [
    index('comments_issue_idx').on(t.issueId, t.type, t.createdUnix),
    index('comments_repo_idx').on(t.repoId, t.type, t.updatedUnix),
  ],
)
export type CommentRow = typeof comments.$inferSelect

/**
 * The texts an issue's description or a comment had (Gitea's issue_content_history): written in
 * the transaction of each edit, the text as it was first (`isFirstCreated`, by its poster at its
 * creation) at the first edit, then each edit's new text by its editor; read by the content
 * history page. Goes with its issue or comment.
 */
export const issueContentHistory = sqliteTable(
  'issue_content_history',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    issueId: integer('issue_id')
      .notNull()
      .references(() => issues.id, { onDelete: 'cascade' }),
    /** The comment whose text this was; null for the issue's description. */
    commentId: integer('comment_id').references(() => comments.id, { onDelete: 'cascade' }),
    /** Who wrote this text (not a foreign key: shown as the Ghost user once deleted, as comments). */
    posterId: integer('poster_id').notNull(),
    contentText: text('content_text').notNull(),
    isFirstCreated: integer('is_first_created', { mode: 'boolean' }).notNull().default(false),
    /** Its text taken out of the history (Gitea's soft deletion): `contentText` emptied, the version still counted. */
    isDeleted: integer('is_deleted', { mode: 'boolean' }).notNull().default(false),
    editedUnix: integer('edited_unix').notNull(),
  },
  (t) => [index('issue_content_history_item_idx').on(t.issueId, t.commentId, t.editedUnix), index('issue_content_history_comment_idx').on(t.commentId)],
)
export type IssueContentHistoryRow = typeof issueContentHistory.$inferSelect

export const trackedTimes = sqliteTable(
  'tracked_times',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    issueId: integer('issue_id')
      .notNull()
      .references(() => issues.id, { onDelete: 'cascade' }),
    /** Denormalised for repository-wide lists. */
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    time: integer('time').notNull(),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [
    index('tracked_times_issue_idx').on(t.issueId),
    index('tracked_times_repo_user_idx').on(t.repoId, t.userId),
    index('tracked_times_user_idx').on(t.userId),
  ],
)
export type TrackedTimeRow = typeof trackedTimes.$inferSelect

/** A running stopwatch: a user timing an issue (Gitea's stopwatch); stopping it records tracked time. */
export const stopwatches = sqliteTable(
  'stopwatches',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    issueId: integer('issue_id')
      .notNull()
      .references(() => issues.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [uniqueIndex('stopwatches_user_issue_uq').on(t.userId, t.issueId), index('stopwatches_issue_idx').on(t.issueId)],
)
export type StopwatchRow = typeof stopwatches.$inferSelect
