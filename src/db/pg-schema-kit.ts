/**
 * What drizzle-kit reads for PostgreSQL (drizzle.pg.config.ts): it collects the pgTable objects
 * among a schema file's named exports, so each derived table is exported here by name. The names
 * are checked by the compiler (each must be a key of the schema); test/pg-schema.test.ts checks
 * that none is missing, so a table added to ./schema and not here fails the tests.
 */
import { pgTables } from './pg-schema'

export const {
  accessTokens,
  attachments,
  collaborations,
  comments,
  commitStatuses,
  deployKeys,
  emailAddresses,
  eventConsumers,
  events,
  follows,
  gpgKeys,
  hookTasks,
  hooks,
  issueAssignees,
  issueIndexes,
  issueLabels,
  issues,
  labels,
  milestones,
  mirrors,
  orgUsers,
  pendingPushes,
  publicKeys,
  pullRequests,
  releases,
  repoGitStates,
  repoRedirects,
  repositories,
  stars,
  teamRepos,
  teamUsers,
  teams,
  trackedTimes,
  users,
  watches,
} = pgTables
