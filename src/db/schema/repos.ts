import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from './users'

export const repositories = sqliteTable(
  'repositories',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    ownerId: integer('owner_id')
      .notNull()
      .references(() => users.id),
    /** Copy of the owner's name, kept in step on rename, so lists need no join. */
    ownerName: text('owner_name').notNull(),
    name: text('name').notNull(),
    lowerName: text('lower_name').notNull(),
    description: text('description').notNull().default(''),
    website: text('website').notNull().default(''),
    defaultBranch: text('default_branch').notNull().default(''),
    isPrivate: integer('is_private', { mode: 'boolean' }).notNull().default(false),
    isEmpty: integer('is_empty', { mode: 'boolean' }).notNull().default(true),
    isFork: integer('is_fork', { mode: 'boolean' }).notNull().default(false),
    forkId: integer('fork_id').notNull().default(0),
    isMirror: integer('is_mirror', { mode: 'boolean' }).notNull().default(false),
    isArchived: integer('is_archived', { mode: 'boolean' }).notNull().default(false),
    /** Size on disk in bytes. */
    size: integer('size').notNull().default(0),
    numStars: integer('num_stars').notNull().default(0),
    numForks: integer('num_forks').notNull().default(0),
    numWatches: integer('num_watches').notNull().default(0),
    numIssues: integer('num_issues').notNull().default(0),
    numClosedIssues: integer('num_closed_issues').notNull().default(0),
    numPulls: integer('num_pulls').notNull().default(0),
    numClosedPulls: integer('num_closed_pulls').notNull().default(0),
    numMilestones: integer('num_milestones').notNull().default(0),
    numClosedMilestones: integer('num_closed_milestones').notNull().default(0),
    /** Published releases (drafts excluded, as Gitea counts them): the record's `release_counter`. */
    numReleases: integer('num_releases').notNull().default(0),
    hasIssues: integer('has_issues', { mode: 'boolean' }).notNull().default(true),
    hasWiki: integer('has_wiki', { mode: 'boolean' }).notNull().default(true),
    hasPullRequests: integer('has_pull_requests', { mode: 'boolean' }).notNull().default(true),
    enableTimeTracker: integer('enable_time_tracker', { mode: 'boolean' }).notNull().default(true),
    allowOnlyContributorsToTrackTime: integer('allow_only_contributors_to_track_time', { mode: 'boolean' })
      .notNull()
      .default(true),
    /** Whether its issues and pull requests may be blocked by others (Gitea's EnableDependencies, on by default). */
    enableIssueDependencies: integer('enable_issue_dependencies', { mode: 'boolean' }).notNull().default(true),
    ignoreWhitespaceConflicts: integer('ignore_whitespace_conflicts', { mode: 'boolean' }).notNull().default(false),
    allowMergeCommits: integer('allow_merge_commits', { mode: 'boolean' }).notNull().default(true),
    allowRebase: integer('allow_rebase', { mode: 'boolean' }).notNull().default(true),
    allowRebaseExplicit: integer('allow_rebase_explicit', { mode: 'boolean' }).notNull().default(true),
    allowSquashMerge: integer('allow_squash_merge', { mode: 'boolean' }).notNull().default(true),
    allowFastForwardOnlyMerge: integer('allow_fast_forward_only_merge', { mode: 'boolean' }).notNull().default(true),
    /** Marking a pull request merged by hand (Gitea's manually-merged style), and detecting it on push. */
    allowManualMerge: integer('allow_manual_merge', { mode: 'boolean' }).notNull().default(false),
    autodetectManualMerge: integer('autodetect_manual_merge', { mode: 'boolean' }).notNull().default(false),
    /** Updating a pull request's head by rebase (beside the merge of the base into it). */
    allowRebaseUpdate: integer('allow_rebase_update', { mode: 'boolean' }).notNull().default(true),
    /** The style a client offers first: one of the merge styles. */
    defaultMergeStyle: text('default_merge_style').notNull().default('merge'),
    defaultDeleteBranchAfterMerge: integer('default_delete_branch_after_merge', { mode: 'boolean' }).notNull().default(false),
    defaultAllowMaintainerEdit: integer('default_allow_maintainer_edit', { mode: 'boolean' }).notNull().default(false),
    hasReleases: integer('has_releases', { mode: 'boolean' }).notNull().default(true),
    /** The packages unit: its Packages tab and `/{o}/{r}/packages`, the packages linked to it (on by default, as Gitea's). */
    hasPackages: integer('has_packages', { mode: 'boolean' }).notNull().default(true),
    /** Gitea's `repo.projects` unit: the repository's project boards (modules/projects), on by default as in Gitea. */
    hasProjects: integer('has_projects', { mode: 'boolean' }).notNull().default(true),
    /** An external issue tracker (Gitea's external tracker unit): in use when the URL is set; the built-in issues are off then. */
    externalTrackerUrl: text('external_tracker_url').notNull().default(''),
    externalTrackerFormat: text('external_tracker_format').notNull().default(''),
    externalTrackerStyle: text('external_tracker_style').notNull().default(''),
    externalTrackerRegexpPattern: text('external_tracker_regexp_pattern').notNull().default(''),
    /** An external wiki (Gitea's external wiki unit): in use when set. */
    externalWikiUrl: text('external_wiki_url').notNull().default(''),
    isTemplate: integer('is_template', { mode: 'boolean' }).notNull().default(false),
    /** When it was last archived (0: not archived), as Gitea's archived_unix. */
    archivedUnix: integer('archived_unix').notNull().default(0),
    /** Where a migrated repository was cloned from, without credentials ('' otherwise). */
    originalUrl: text('original_url').notNull().default(''),
    /** The git object format (`extensions.objectformat` of the git config, read when the repository is made). */
    objectFormat: text('object_format').notNull().default('sha1'),
    /** The uploaded avatar's file name under {data}/repo-avatars (a content hash, modules/avatars); '' = none. */
    avatar: text('avatar').notNull().default(''),
    /** Its topics, sorted, as the record shows them (repo_topics holds the same, for search). */
    topics: text('topics').notNull().default('[]'),
    /** 'ready', 'creating' while the git folder is being made, or 'adopting' while an existing folder is being adopted (see the startup check). */
    status: text('status').notNull().default('ready'),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [
    uniqueIndex('repositories_owner_name_uq').on(t.ownerId, t.lowerName),
    index('repositories_lower_name_idx').on(t.lowerName),
    /** A repository's forks (the forks list, one fork per owner, the parent's deletion). */
    index('repositories_fork_idx').on(t.forkId, t.ownerId),
    /** Covers the filters of repository lists and search, so COUNT and paging never read the table. */
    index('repositories_list_idx').on(t.status, t.isPrivate, t.lowerName, t.ownerId, t.ownerName, t.isFork, t.isMirror),
    /**
     * The ready repositories in the lists' order (name, owner's name, id), for a page of a list that
     * tests every repository (the explore page, a search without a text the trigram index finds):
     * read in this order and stopping at the page's end, where repositories_list_idx (privacy before
     * the name) had every ready repository sorted for each page (20-27 ms at 100,000). The modes'
     * flags make the source/fork/mirror filters tests of its entries; without `owner_id`, so that an
     * owner's lists keep their owner's index.
     */
    index('repositories_name_order_idx').on(t.status, t.lowerName, t.ownerName, t.id, t.isPrivate, t.isFork, t.isMirror),
    /**
     * An owner's repositories (their lists and counts, a team's, an organisation's issues): SQLite,
     * without statistics, took repositories_list_idx's `status = ?` (every repository) over
     * `owner_id = ?` alone, and an index on `is_private` (gone) for a feed's public repositories.
     */
    index('repositories_owner_list_idx').on(t.ownerId, t.status, t.isPrivate, t.lowerName, t.ownerName),
    /** Whether a row still names an uploaded avatar's file (avatars/storage.ts isNamed). */
    index('repositories_avatar_idx').on(t.avatar),
  ],
)
export type RepoRow = typeof repositories.$inferSelect

/** Access modes used by collaborations and teams: 1 read, 2 write, 3 admin, 4 owner. */
export const collaborations = sqliteTable(
  'collaborations',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    mode: integer('mode').notNull().default(2),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [uniqueIndex('collaborations_pair_uq').on(t.repoId, t.userId), index('collaborations_user_idx').on(t.userId)],
)

export const stars = sqliteTable(
  'stars',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [uniqueIndex('stars_pair_uq').on(t.userId, t.repoId), index('stars_repo_idx').on(t.repoId)],
)

export const watches = sqliteTable(
  'watches',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: integer('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [uniqueIndex('watches_pair_uq').on(t.userId, t.repoId), index('watches_repo_idx').on(t.repoId)],
)

/**
 * Old names of renamed repositories (Gitea's repo_redirect): `{owner}/{old name}` keeps
 * answering with a redirect to the repository under its new name until the old name is
 * taken again. Goes with the repository (cascade).
 */
export const repoRedirects = sqliteTable(
  'repo_redirects',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    ownerId: integer('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    lowerName: text('lower_name').notNull(),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
  },
  (t) => [uniqueIndex('repo_redirects_name_uq').on(t.ownerId, t.lowerName), index('repo_redirects_repo_idx').on(t.repoId)],
)

/** Topics (Gitea's `topic`): a name and how many repositories carry it. */
export const topics = sqliteTable(
  'topics',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    name: text('name').notNull(),
    repoCount: integer('repo_count').notNull().default(0),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [uniqueIndex('topics_name_uq').on(t.name)],
)
export type TopicRow = typeof topics.$inferSelect

/** Which repository carries which topic (Gitea's `repo_topic`); goes with either side. */
export const repoTopics = sqliteTable(
  'repo_topics',
  {
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    topicId: integer('topic_id')
      .notNull()
      .references(() => topics.id, { onDelete: 'cascade' }),
  },
  (t) => [uniqueIndex('repo_topics_pair_uq').on(t.repoId, t.topicId), index('repo_topics_topic_idx').on(t.topicId)],
)

/**
 * A repository's pending transfer to another owner (Gitea's repo_transfer): made when the
 * recipient must accept it, removed on acceptance, rejection or the repository's deletion. One
 * per repository. `teamIds`: JSON array of the recipient organisation's teams to give it to.
 */
export const repoTransfers = sqliteTable(
  'repo_transfers',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
    doerId: integer('doer_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    recipientId: integer('recipient_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    teamIds: text('team_ids').notNull().default('[]'),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [uniqueIndex('repo_transfers_repo_uq').on(t.repoId), index('repo_transfers_recipient_idx').on(t.recipientId)],
)
export type RepoTransferRow = typeof repoTransfers.$inferSelect

/**
 * A folder move under way (a repository renamed or transferred, an owner renamed): written before
 * the folder moves, removed in the transaction that writes the rows naming the new place. One left
 * behind means those rows never changed: the start-up repair puts the folder back (the rows still
 * name `fromPath`). Paths are relative to {data}/repositories.
 */
export const folderMoves = sqliteTable(
  'folder_moves',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    fromPath: text('from_path').notNull(),
    toPath: text('to_path').notNull(),
    createdUnix: integer('created_unix').notNull(),
  },
  // One move of a folder at a time: a second intent for it is refused by the index (a 409).
  (t) => [uniqueIndex('folder_moves_from_path_uq').on(t.fromPath)],
)
