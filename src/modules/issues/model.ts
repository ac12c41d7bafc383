import { t } from 'elysia'
import { BoundedList, ListName, MAX_LABEL_NAME, MAX_TEXT, MAX_TITLE, QueryFilter, QueryText, numeric, integer } from '../../lib/validate'
import { Int, PlainUserSchema } from '../repos/model'
import { AttachmentSchema } from '../attachments/model'
import { pageQueryFields } from '../../lib/pagination'
import { literals, recordLiterals } from '../../lib/literals'

/** An issue's or a milestone's state. */
const STATES = ['open', 'closed'] as const
/** A list's state filter: empty or absent = open. */
const StateFilter = () => literals(['', ...STATES, 'all'], { description: 'open (default), closed or all' })

// Response schemas use plain JSON integers (Int, PlainUserSchema): Elysia's `t.Integer()` carries
// a transform, and one transform in a response schema makes Elysia encode every answer through
// TypeBox, a deep walk that costs more than building a page of issues.

/** Label record. */
export const LabelSchema = t.Object(
  { id: Int(), name: t.String(), color: t.String(), description: t.String(), url: t.String() },
  { $id: '#/components/schemas/Label' },
)

/** Milestone record. */
export const MilestoneSchema = t.Object(
  {
    id: Int(),
    title: t.String(),
    description: t.String(),
    state: recordLiterals(STATES),
    open_issues: Int(),
    closed_issues: Int(),
    closed_at: t.Nullable(t.String()),
    due_on: t.Nullable(t.String()),
    created_at: t.String(),
    updated_at: t.String(),
  },
  { $id: '#/components/schemas/Milestone' },
)

/** Issue record. */
export const IssueSchema = t.Object(
  {
    id: Int(),
    url: t.String(),
    html_url: t.String(),
    number: Int(),
    user: PlainUserSchema,
    original_author: t.String(),
    original_author_id: Int(),
    title: t.String(),
    body: t.String(),
    ref: t.String(),
    assets: t.Array(AttachmentSchema),
    labels: t.Array(LabelSchema),
    milestone: t.Nullable(MilestoneSchema),
    assignee: t.Nullable(PlainUserSchema),
    assignees: t.Array(PlainUserSchema),
    state: recordLiterals(STATES),
    is_locked: t.Boolean(),
    comments: Int(),
    created_at: t.String(),
    updated_at: t.String(),
    closed_at: t.Nullable(t.String()),
    due_date: t.Nullable(t.String()),
    pull_request: t.Nullable(t.Object({ merged: t.Boolean(), merged_at: t.Nullable(t.String()), draft: t.Boolean(), html_url: t.String() })),
    repository: t.Object({ id: Int(), name: t.String(), owner: t.String(), full_name: t.String() }),
    pin_order: Int(),
  },
  { $id: '#/components/schemas/Issue' },
)

/** Comment record. */
export const CommentSchema = t.Object(
  {
    id: Int(),
    html_url: t.String(),
    pull_request_url: t.String(),
    issue_url: t.String(),
    user: PlainUserSchema,
    original_author: t.String(),
    original_author_id: Int(),
    body: t.String(),
    assets: t.Array(AttachmentSchema),
    created_at: t.String(),
    updated_at: t.String(),
  },
  { $id: '#/components/schemas/Comment' },
)

/** TimelineComment record (Gitea's ToTimelineComment); the records it refers to as their own converters make them, or null. */
export const TimelineCommentSchema = t.Object(
  {
    id: Int(),
    type: t.String(),
    html_url: t.String(),
    pull_request_url: t.String(),
    issue_url: t.String(),
    user: PlainUserSchema,
    body: t.String(),
    created_at: t.String(),
    updated_at: t.String(),
    label: t.Unknown(),
    milestone: t.Unknown(),
    old_milestone: t.Unknown(),
    assignee: t.Unknown(),
    assignee_team: t.Unknown(),
    removed_assignee: t.Boolean(),
    resolve_doer: t.Unknown(),
    old_title: t.String(),
    new_title: t.String(),
    old_ref: t.String(),
    new_ref: t.String(),
    old_project_id: Int(),
    project_id: Int(),
    review_id: Int(),
    ref_action: t.String(),
    ref_commit_sha: t.String(),
    ref_issue: t.Unknown(),
    ref_comment: t.Unknown(),
    tracked_time: t.Unknown(),
    dependent_issue: t.Unknown(),
  },
  { $id: '#/components/schemas/TimelineComment' },
)

/** StopWatch record. */
export const StopwatchSchema = t.Object(
  {
    created: t.String(),
    seconds: Int(),
    duration: t.String(),
    issue_index: Int(),
    issue_title: t.String(),
    repo_owner_name: t.String(),
    repo_name: t.String(),
  },
  { $id: '#/components/schemas/StopWatch' },
)

/** TrackedTime record. */
export const TrackedTimeSchema = t.Object(
  {
    id: Int(),
    created: t.String(),
    time: Int(),
    user_id: Int(),
    user_name: t.String(),
    issue_id: Int(),
  },
  { $id: '#/components/schemas/TrackedTime' },
)

/** Indexes and ids stay strings here: a non-numeric one is a 404 (nothing has that number), not a 422. */
export const IssueParams = t.Object({ owner: t.String(), repo: t.String(), index: t.String({ description: 'index of the issue' }) })
export const IdParams = t.Object({ owner: t.String(), repo: t.String(), id: t.String() })
export const IssueIdParams = t.Object({ owner: t.String(), repo: t.String(), index: t.String({ description: 'index of the issue' }), id: t.String() })


const Timestamp = t.String({ maxLength: 64, description: 'RFC 3339 time' })

export const ListIssuesQuery = t.Object({
  ...pageQueryFields,
  state: t.Optional(StateFilter()),
  labels: QueryFilter('comma-separated label ids or names (at most 50); issues having all of them'),
  q: QueryText('search string in title and body'),
  milestones: QueryFilter('comma-separated milestone ids or names (at most 50)'),
  type: t.Optional(literals(['', 'issues', 'pulls', 'all'], { description: 'issues, pulls or all (default)' })),
  created_by: QueryText('only issues filed by this user'),
  assigned_by: QueryText('only issues assigned to this user'),
})

const Flag = (description: string) => t.Optional(t.String({ maxLength: 8, description }))

/** Query of GET /repos/issues/search (Gitea's SearchIssues). */
export const SearchIssuesQuery = t.Object({
  ...pageQueryFields,
  state: t.Optional(StateFilter()),
  labels: QueryFilter('comma-separated label names (at most 50); issues having any of them; unknown names are discarded'),
  milestones: QueryFilter('comma-separated milestone names (at most 50); issues in any of them; unknown names are discarded'),
  q: QueryText('search string in title, body and comments'),
  priority_repo_id: t.Optional(numeric({ description: 'issues of this repository first' })),
  type: t.Optional(literals(['', 'issues', 'pulls'], { description: 'issues or pulls; absent: both' })),
  since: t.Optional(Timestamp),
  before: t.Optional(Timestamp),
  assigned: Flag('assigned to the caller'),
  created: Flag('filed by the caller'),
  mentioned: Flag('mentioning the caller'),
  review_requested: Flag("pull requests asking for the caller's review"),
  reviewed: Flag('pull requests the caller reviewed'),
  owner: QueryText('of repositories of this owner'),
  team: QueryText("with owner: of repositories of this organisation's team"),
})

/** The branch or tag an issue is about, as Gitea keeps it (a column of 255 characters; not checked against the refs). */
const IssueRef = t.String({ maxLength: 255, description: 'the branch or tag the issue is about' })

export const CreateIssueOption = t.Object({
  title: t.String({ maxLength: MAX_TITLE }),
  body: t.Optional(t.String({ maxLength: MAX_TEXT })),
  ref: t.Optional(IssueRef),
  assignee: t.Optional(ListName),
  assignees: t.Optional(BoundedList(ListName)),
  milestone: t.Optional(integer()),
  labels: t.Optional(BoundedList(integer())),
  closed: t.Optional(t.Boolean()),
  due_date: t.Optional(t.Nullable(Timestamp)),
}, { $id: '#/components/schemas/CreateIssueOption' })

export const EditIssueOption = t.Object({
  title: t.Optional(t.String({ maxLength: MAX_TITLE })),
  body: t.Optional(t.String({ maxLength: MAX_TEXT })),
  ref: t.Optional(IssueRef),
  assignee: t.Optional(t.Nullable(ListName)),
  assignees: t.Optional(BoundedList(ListName)),
  milestone: t.Optional(t.Nullable(integer())),
  state: t.Optional(literals(STATES)),
  due_date: t.Optional(t.Nullable(Timestamp)),
  unset_due_date: t.Optional(t.Boolean()),
}, { $id: '#/components/schemas/EditIssueOption' })

export const EditDeadlineOption = t.Object({ due_date: t.Nullable(Timestamp) }, { $id: '#/components/schemas/EditDeadlineOption' })
export const IssueDeadlineSchema = t.Object({ due_date: t.Nullable(t.String()) }, { $id: '#/components/schemas/IssueDeadline' })

/** CreateIssueCommentOption, also EditIssueCommentOption (the same shape). */
export const CommentOption = t.Object({ body: t.String({ maxLength: MAX_TEXT }) }, { $id: '#/components/schemas/CreateIssueCommentOption' })
/** `since` (Gitea) or `string` (the seed's name for it); `before` since Gitea 1.12. */
export const SinceQuery = t.Object({
  ...pageQueryFields,
  since: t.Optional(Timestamp),
  string: t.Optional(Timestamp),
  before: t.Optional(Timestamp),
})

export const CreateLabelOption = t.Object({
  name: t.String({ maxLength: MAX_LABEL_NAME }),
  color: t.String({ maxLength: 16 }),
  description: t.Optional(t.String({ maxLength: MAX_TITLE })),
}, { $id: '#/components/schemas/CreateLabelOption' })
export const EditLabelOption = t.Object({
  name: t.Optional(t.String({ maxLength: MAX_LABEL_NAME })),
  color: t.Optional(t.String({ maxLength: 16 })),
  description: t.Optional(t.String({ maxLength: MAX_TITLE })),
}, { $id: '#/components/schemas/EditLabelOption' })
export const IssueLabelsOption = t.Object({ labels: t.Optional(BoundedList(integer())) }, { $id: '#/components/schemas/IssueLabelsOption' })
export const LabelParams = t.Object({ owner: t.String(), repo: t.String(), id: t.String() })
export const ListLabelsQuery = t.Object({
  ...pageQueryFields,
  sort: t.Optional(literals(['', 'alphabetically', 'reversealphabetically', 'leastissues', 'mostissues'], { description: 'alphabetically (default)' })),
})

export const CreateMilestoneOption = t.Object({
  title: t.String({ maxLength: MAX_TITLE }),
  description: t.Optional(t.String({ maxLength: MAX_TEXT })),
  due_on: t.Optional(t.Nullable(Timestamp)),
  state: t.Optional(literals(['', ...STATES])),
}, { $id: '#/components/schemas/CreateMilestoneOption' })
export const EditMilestoneOption = t.Object({
  title: t.Optional(t.String({ maxLength: MAX_TITLE })),
  description: t.Optional(t.String({ maxLength: MAX_TEXT })),
  due_on: t.Optional(t.Nullable(Timestamp)),
  state: t.Optional(literals(['', ...STATES])),
}, { $id: '#/components/schemas/EditMilestoneOption' })
export const ListMilestonesQuery = t.Object({
  ...pageQueryFields,
  state: t.Optional(StateFilter()),
  name: QueryText('only milestones whose title contains this (case-insensitive)'),
})

export const AddTimeOption = t.Object({
  time: integer(),
  created: t.Optional(Timestamp),
  user_name: t.Optional(ListName),
}, { $id: '#/components/schemas/AddTimeOption' })
export const TimesQuery = t.Object({ ...pageQueryFields, since: t.Optional(Timestamp), before: t.Optional(Timestamp) })
