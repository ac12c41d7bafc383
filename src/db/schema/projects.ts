import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from './users'
import { repositories } from './repos'
import { issues } from './issues'

/**
 * A project board (Gitea's `project`): a repository's (repoId, type 2) or an owner's (ownerId:
 * a user's, type 1, or an organisation's, type 3), exactly one of the two set. Deleting its
 * repository or owner deletes it, its columns and its cards (foreign keys).
 */
export const projects = sqliteTable(
  'projects',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    repoId: integer('repo_id').references(() => repositories.id, { onDelete: 'cascade' }),
    ownerId: integer('owner_id').references(() => users.id, { onDelete: 'cascade' }),
    /** Gitea's project.Type: 1 individual, 2 repository, 3 organisation. */
    type: integer('type').notNull(),
    title: text('title').notNull(),
    description: text('description').notNull().default(''),
    /** Gitea's TemplateType it was made from: 0 none, 1 basic kanban, 2 bug triage. */
    templateType: integer('template_type').notNull().default(0),
    /** Gitea's CardType: 0 text only, 1 images and text. */
    cardType: integer('card_type').notNull().default(0),
    /** Not a foreign key: the project outlives its creator (as Gitea's). */
    creatorId: integer('creator_id').notNull(),
    isClosed: integer('is_closed', { mode: 'boolean' }).notNull().default(false),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
    closedUnix: integer('closed_unix').notNull().default(0),
  },
  (t) => [index('projects_repo_idx').on(t.repoId, t.isClosed, t.id), index('projects_owner_idx').on(t.ownerId, t.isClosed, t.id)],
)
export type ProjectRow = typeof projects.$inferSelect

/** A column of a project (Gitea's `project_board`); one of them is the default, where cards without one go. */
export const projectColumns = sqliteTable(
  'project_columns',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    projectId: integer('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    title: text('title').notNull(),
    /** '#rrggbb' or ''. */
    color: text('color').notNull().default(''),
    sorting: integer('sorting').notNull().default(0),
    isDefault: integer('is_default', { mode: 'boolean' }).notNull().default(false),
    creatorId: integer('creator_id').notNull(),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [index('project_columns_project_idx').on(t.projectId, t.sorting, t.id)],
)
export type ProjectColumnRow = typeof projectColumns.$inferSelect

/**
 * An issue's or pull request's card (Gitea's `project_issue`): at most one project an issue, in
 * one of its columns. Deleting the issue, the project or the column deletes the card (a column's
 * cards are moved to the default column before it goes: modules/projects).
 */
export const projectIssues = sqliteTable(
  'project_issues',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    issueId: integer('issue_id')
      .notNull()
      .references(() => issues.id, { onDelete: 'cascade' }),
    projectId: integer('project_id')
      .notNull()
      .references(() => projects.id, { onDelete: 'cascade' }),
    columnId: integer('column_id')
      .notNull()
      .references(() => projectColumns.id, { onDelete: 'cascade' }),
    sorting: integer('sorting').notNull().default(0),
  },
  (t) => [uniqueIndex('project_issues_issue_uq').on(t.issueId), index('project_issues_column_idx').on(t.columnId, t.sorting, t.id), index('project_issues_project_idx').on(t.projectId)],
)
export type ProjectIssueRow = typeof projectIssues.$inferSelect
