import { sqliteTable, integer, text, index } from 'drizzle-orm/sqlite-core'
import { issues } from './issues'
import { repositories } from './repos'

/**
 * Reviews of pull requests (Gitea's review table), one row per review or review request. `type`
 * is Gitea's ReviewType: 0 pending (the reviewer's draft, one per reviewer and pull request),
 * 1 approve, 2 comment, 3 reject (changes requested), 4 request (someone is asked to review:
 * `reviewerId`, or a team: `reviewerTeamId`).
 */
export const reviews = sqliteTable(
  'reviews',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    type: integer('type').notNull(),
    issueId: integer('issue_id')
      .notNull()
      .references(() => issues.id, { onDelete: 'cascade' }),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    /** Not a foreign key: the review outlives its author (the Ghost then); 0 for a team's request. */
    reviewerId: integer('reviewer_id').notNull().default(0),
    /** The team asked to review (type 4 only); 0 otherwise. */
    reviewerTeamId: integer('reviewer_team_id').notNull().default(0),
    content: text('content').notNull().default(''),
    /** Counts toward approvals: the reviewer could write when submitting, and it is their latest approval or rejection. */
    official: integer('official', { mode: 'boolean' }).notNull().default(false),
    /** The head commit reviewed: the review is stale once the pull request's head differs. */
    commitId: text('commit_id').notNull().default(''),
    dismissed: integer('dismissed', { mode: 'boolean' }).notNull().default(false),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [index('reviews_issue_idx').on(t.issueId, t.type), index('reviews_reviewer_idx').on(t.reviewerId)],
)
export type ReviewRow = typeof reviews.$inferSelect

/**
 * Line comments of a review (Gitea's code comments). `line` is signed as Gitea's: > 0 a line of
 * the new file (the head), < 0 a line of the old one (the merge base). `lineSha` fingerprints
 * that line (its number and text) when the comment was made: once a push changes it, the comment
 * is `invalidated` (outdated).
 */
export const reviewComments = sqliteTable(
  'review_comments',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    reviewId: integer('review_id')
      .notNull()
      .references(() => reviews.id, { onDelete: 'cascade' }),
    issueId: integer('issue_id')
      .notNull()
      .references(() => issues.id, { onDelete: 'cascade' }),
    /** Not a foreign key, as reviews.reviewer_id. */
    posterId: integer('poster_id').notNull(),
    content: text('content').notNull().default(''),
    path: text('path').notNull(),
    line: integer('line').notNull(),
    /** The head commit the comment was made on. */
    commitId: text('commit_id').notNull(),
    lineSha: text('line_sha').notNull().default(''),
    /** The diff hunk around the line, as Gitea's `diff_hunk`. */
    patch: text('patch').notNull().default(''),
    invalidated: integer('invalidated', { mode: 'boolean' }).notNull().default(false),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [index('review_comments_review_idx').on(t.reviewId), index('review_comments_issue_idx').on(t.issueId)],
)
export type ReviewCommentRow = typeof reviewComments.$inferSelect
