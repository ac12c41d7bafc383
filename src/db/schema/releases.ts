import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { repositories } from './repos'
import { comments, issues } from './issues'

/**
 * Releases (Gitea's `release` rows, without its tag-only entries: a tag without a release is
 * simply a tag in git). One release per tag of a repository (`lower_tag_name`, as Gitea). A
 * draft's tag may not exist yet: it is created at `target` when the release is published.
 */
export const releases = sqliteTable(
  'releases',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    /** Who published it; no foreign key: a deleted account's releases stay, shown as the Ghost. */
    publisherId: integer('publisher_id').notNull(),
    tagName: text('tag_name').notNull(),
    lowerTagName: text('lower_tag_name').notNull(),
    /** Branch or commit the tag was (or will be) created from: the API's `target_commitish`. */
    target: text('target').notNull().default(''),
    title: text('title').notNull().default(''),
    note: text('note').notNull().default(''),
    isDraft: integer('is_draft', { mode: 'boolean' }).notNull().default(false),
    isPrerelease: integer('is_prerelease', { mode: 'boolean' }).notNull().default(false),
    /** Creation time, moved to the publication time when a draft is published (as Gitea). */
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [
    uniqueIndex('releases_repo_tag_uq').on(t.repoId, t.lowerTagName),
    /** The list order (newest first) and its draft / pre-release filters. */
    index('releases_repo_created_idx').on(t.repoId, t.createdUnix, t.id),
  ],
)
export type ReleaseRow = typeof releases.$inferSelect

/**
 * Files attached to a release ("assets"), an issue or a comment (Gitea's one `attachment` table):
 * exactly one of `release_id` and `issue_id` is set; a comment's file also names its comment
 * (and its issue). The bytes live in {data}/attachments/{repo_id}/{uuid}
 * (src/modules/attachments/storage.ts), written under a temporary name and renamed before the row
 * is inserted; rows go with their release, issue or comment (cascade) and the files after them
 * (or by the sweep, which removes files no row accounts for).
 */
export const attachments = sqliteTable(
  'attachments',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    uuid: text('uuid').notNull(),
    repoId: integer('repo_id').notNull(),
    releaseId: integer('release_id').references(() => releases.id, { onDelete: 'cascade' }),
    issueId: integer('issue_id').references(() => issues.id, { onDelete: 'cascade' }),
    commentId: integer('comment_id').references(() => comments.id, { onDelete: 'cascade' }),
    /** Who uploaded it; no foreign key (a deleted account's uploads stay). */
    uploaderId: integer('uploader_id').notNull(),
    name: text('name').notNull(),
    size: integer('size').notNull(),
    downloadCount: integer('download_count').notNull().default(0),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [
    uniqueIndex('attachments_uuid_uq').on(t.uuid),
    /** A release's asset names are unique (its download URL names it); NULLs (issues' files) never clash. */
    uniqueIndex('attachments_release_name_uq').on(t.releaseId, t.name),
    index('attachments_repo_idx').on(t.repoId),
    index('attachments_issue_idx').on(t.issueId, t.commentId),
    index('attachments_comment_idx').on(t.commentId),
  ],
)
export type AttachmentRow = typeof attachments.$inferSelect
