/**
 * The tables every service queries, for the process's dialect (./dialect.ts): the SQLite tables
 * of ./tables.ts, or on PostgreSQL the tables derived from them (../pg-schema.ts), which have the
 * same names, keys and value types. Services import from here; the types are the SQLite ones in
 * both cases, so one set of queries serves both databases.
 */
import { DIALECT } from '../dialect'
import * as sqliteTables from './tables'

// Required on PostgreSQL only: the derivation and drizzle's PostgreSQL builders (pg-core) are
// never loaded into a SQLite process.
const tables: typeof sqliteTables =
  DIALECT === 'postgres' ? (require('../pg-schema') as typeof import('../pg-schema')).pgTables() : sqliteTables

export const {
  accessTokens,
  attachments,
  badges,
  branchProtections,
  collaborations,
  comments,
  commitStatuses,
  deployKeys,
  emailAddresses,
  eventConsumers,
  events,
  folderMoves,
  follows,
  gpgKeys,
  hookTasks,
  hookPayloads,
  hooks,
  issueAssignees,
  issueDependencies,
  issueIndexes,
  issueLabels,
  issueWatches,
  issues,
  labels,
  milestones,
  mirrors,
  notifications,
  oauth2Applications,
  oauth2AuthorizationCodes,
  oauth2Grants,
  oauth2Tokens,
  orgUsers,
  pendingPushes,
  publicKeys,
  pullAutoMerges,
  pullRequests,
  pushMirrors,
  reactions,
  reviewComments,
  reviews,
  releases,
  repoGitStates,
  repoRedirects,
  repoTransfers,
  repoTopics,
  repositories,
  stars,
  stopwatches,
  tagProtections,
  teamRepos,
  teamUsers,
  teams,
  topics,
  trackedTimes,
  userBadges,
  userBlocks,
  users,
  watches,
  webSessions,
} = tables

/** Every table, by name (the database client's schema). */
export const allTables = tables

/** The row types, declared beside their tables (the SQLite ones: the same on PostgreSQL). */
export type {
  AccessTokenRow,
  AttachmentRow,
  BadgeRow,
  BranchProtectionRow,
  CommentRow,
  DeployKeyRow,
  EmailRow,
  GpgKeyRow,
  HookRow,
  HookTaskRow,
  IssueDependencyRow,
  IssueRow,
  LabelRow,
  MilestoneRow,
  NotificationRow,
  OAuth2ApplicationRow,
  OAuth2GrantRow,
  PublicKeyRow,
  PullAutoMergeRow,
  PullRow,
  PushMirrorRow,
  ReactionRow,
  ReleaseRow,
  ReviewCommentRow,
  ReviewRow,
  RepoRow,
  RepoTransferRow,
  StatusRow,
  TagProtectionRow,
  TeamRow,
  TopicRow,
  StopwatchRow,
  TrackedTimeRow,
  WebSessionRow,
} from './tables'
