import { t } from 'elysia'
import { UserSchema } from '../users/model'
import { Int, RepositorySchema } from '../repos/model'
import { CommentSchema } from '../issues/model'
import { pageQueryFields } from '../../lib/pagination'

const DateField = t.Optional(t.String({ maxLength: 40, description: 'the date of the activities to be found (YYYY-MM-DD)' }))

/** `?date` and the page: the organisation's, team's and repository's feeds. */
export const FeedQuery = t.Object({ date: DateField, ...pageQueryFields })

/** A user's feed also takes `only-performed-by` (Gitea's FormBool: only `true` counts). */
export const UserFeedQuery = t.Object({
  'only-performed-by': t.Optional(t.String({ maxLength: 10, description: 'if true, only show actions performed by the requested user' })),
  date: DateField,
  ...pageQueryFields,
})

/** Gitea's Activity record. */
export const ActivitySchema = t.Object(
  {
    id: Int(),
    user_id: Int(),
    op_type: t.String(),
    act_user_id: Int(),
    act_user: UserSchema,
    repo_id: Int(),
    repo: RepositorySchema,
    comment_id: Int(),
    comment: t.Union([CommentSchema, t.Null()]),
    ref_name: t.String(),
    is_private: t.Boolean(),
    content: t.String(),
    created: t.String(),
  },
  { $id: '#/components/schemas/Activity' },
)
export const ActivityList = t.Array(ActivitySchema)
