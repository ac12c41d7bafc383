import { sqliteTable, integer, text, index, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { users } from './users'
import { repositories } from './repos'

/** Membership of a user in an organisation (the organisation is a `users` row of type 1). */
export const orgUsers = sqliteTable(
  'org_users',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    uid: integer('uid')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    orgId: integer('org_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    isPublic: integer('is_public', { mode: 'boolean' }).notNull().default(false),
    createdUnix: integer('created_unix').notNull(),
  },
  (t) => [uniqueIndex('org_users_pair_uq').on(t.uid, t.orgId), index('org_users_org_idx').on(t.orgId)],
)

export const teams = sqliteTable(
  'teams',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    orgId: integer('org_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    lowerName: text('lower_name').notNull(),
    description: text('description').notNull().default(''),
    /**
     * 1 read, 2 write, 3 admin, 4 owner (the Owners team); 0 for a team whose units are all none.
     * Below admin, what the team may do is each unit's own mode (`team_units`); this is the
     * least of those above none (Gitea's MinUnitAccessMode), the team's reported `permission`.
     */
    authorize: integer('authorize').notNull().default(1),
    includesAllRepositories: integer('includes_all_repositories', { mode: 'boolean' }).notNull().default(false),
    canCreateOrgRepo: integer('can_create_org_repo', { mode: 'boolean' }).notNull().default(false),
    numRepos: integer('num_repos').notNull().default(0),
    numMembers: integer('num_members').notNull().default(0),
    createdUnix: integer('created_unix').notNull(),
    updatedUnix: integer('updated_unix').notNull(),
  },
  (t) => [uniqueIndex('teams_org_name_uq').on(t.orgId, t.lowerName)],
)
export type TeamRow = typeof teams.$inferSelect

export const teamUsers = sqliteTable(
  'team_users',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    orgId: integer('org_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    uid: integer('uid')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
  },
  (t) => [uniqueIndex('team_users_pair_uq').on(t.teamId, t.uid), index('team_users_uid_idx').on(t.uid, t.orgId)],
)

export const teamRepos = sqliteTable(
  'team_repos',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    orgId: integer('org_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    repoId: integer('repo_id')
      .notNull()
      .references(() => repositories.id, { onDelete: 'cascade' }),
  },
  (t) => [uniqueIndex('team_repos_pair_uq').on(t.teamId, t.repoId), index('team_repos_repo_idx').on(t.repoId)],
)

/**
 * A team's mode in one repository unit (Gitea's team_unit): `type` a unit key (repo.code,
 * repo.issues, ...), `accessMode` 0 none, 1 read, 2 write. A unit without a row is none. Admin and
 * owner teams have a row for every unit at their own mode, and their units restrict nothing.
 */
export const teamUnits = sqliteTable(
  'team_units',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    orgId: integer('org_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    teamId: integer('team_id')
      .notNull()
      .references(() => teams.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    accessMode: integer('access_mode').notNull().default(0),
  },
  (t) => [uniqueIndex('team_units_team_type_uq').on(t.teamId, t.type)],
)
export type TeamUnitRow = typeof teamUnits.$inferSelect
