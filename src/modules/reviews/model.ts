import { t } from 'elysia'
import { BoundedList, ListName, MAX_TEXT, integer } from '../../lib/validate'
import { Int, PlainUserSchema } from '../repos/model'
import { TeamSchema } from '../teams/model'

/** PullReview (Gitea 1.23's fields and order). */
export const PullReviewSchema = t.Object(
  {
    id: Int(),
    user: t.Nullable(PlainUserSchema),
    team: t.Nullable(TeamSchema),
    state: t.String({ description: 'APPROVED, PENDING, COMMENT, REQUEST_CHANGES or REQUEST_REVIEW' }),
    body: t.String(),
    commit_id: t.String(),
    stale: t.Boolean({ description: 'the pull request head moved since this review' }),
    official: t.Boolean({ description: 'the reviewer could write to the repository, and this is their latest approval or rejection' }),
    dismissed: t.Boolean(),
    comments_count: Int(),
    submitted_at: t.String(),
    updated_at: t.String(),
    html_url: t.String(),
    pull_request_url: t.String(),
  },
  { $id: '#/components/schemas/PullReview' },
)

/** PullReviewComment: a line comment of a review. */
export const PullReviewCommentSchema = t.Object(
  {
    id: Int(),
    body: t.String(),
    user: t.Nullable(PlainUserSchema),
    resolver: t.Nullable(PlainUserSchema),
    pull_request_review_id: Int(),
    created_at: t.String(),
    updated_at: t.String(),
    path: t.String(),
    commit_id: t.String(),
    original_commit_id: t.String(),
    diff_hunk: t.String(),
    position: Int({ description: 'the line of the new file; 0 for a comment on the old file, or one a later push made outdated' }),
    original_position: Int({ description: 'the line of the old file; for an outdated comment on the new file, the line it was made on' }),
    html_url: t.String(),
    pull_request_url: t.String(),
  },
  { $id: '#/components/schemas/PullReviewComment' },
)

const MAX_PATH = 4096
const LineNumber = t.Optional(integer({ minimum: 0, maximum: 2 ** 31 - 1 }))
const ReviewEvent = t.Optional(t.String({ maxLength: 32, description: 'APPROVED, REQUEST_CHANGES, COMMENT; anything else (or nothing) keeps the review PENDING' }))

export const CreatePullReviewComment = t.Object({
  body: t.Optional(t.String({ maxLength: MAX_TEXT })),
  new_position: LineNumber,
  old_position: LineNumber,
  path: t.Optional(t.String({ maxLength: MAX_PATH })),
})

export const CreatePullReviewOptions = t.Object({
  body: t.Optional(t.String({ maxLength: MAX_TEXT })),
  comments: t.Optional(BoundedList(CreatePullReviewComment)),
  commit_id: t.Optional(t.String({ maxLength: 64 })),
  event: ReviewEvent,
})

export const SubmitPullReviewOptions = t.Object({
  body: t.Optional(t.String({ maxLength: MAX_TEXT })),
  event: ReviewEvent,
})

export const DismissPullReviewOptions = t.Object({
  message: t.Optional(t.String({ maxLength: MAX_TEXT })),
  priors: t.Optional(t.Boolean({ description: 'also dismiss the earlier approvals and rejections of the same reviewer' })),
})

export const PullReviewRequestOptions = t.Object({
  reviewers: t.Optional(BoundedList(ListName)),
  team_reviewers: t.Optional(BoundedList(ListName)),
})

export const ReviewParams = t.Object({
  owner: t.String(),
  repo: t.String(),
  index: t.String({ description: 'index of the pull request' }),
  id: t.String({ description: 'id of the review' }),
})
