import { t } from 'elysia'
import { pageQueryFields } from '../../lib/pagination'
import { RepositorySchema } from '../repos/model'
import { Int } from '../users/model'

const Timestamp = t.String({ maxLength: 64, description: 'RFC 3339 time' })
/** A flag as Gitea's FormBool reads it (`true`, `1`, `t`). */
const Flag = (description: string) => t.Optional(t.String({ maxLength: 8, description }))
/** A repeated query parameter (`status-types=unread&status-types=pinned`), a few short words. */
const Words = (field: string, description: string) =>
  t.Optional(t.Array(t.String({ maxLength: 16 }), { maxItems: 8, description, error: `[${field}]: at most 8 values (${description})` }))

/** GET /notifications and /repos/{owner}/{repo}/notifications. */
export const ListNotificationsQuery = t.Object({
  ...pageQueryFields,
  all: Flag('If true, show notifications marked as read'),
  'status-types': Words('status-types', 'unread, read and/or pinned; unread and pinned by default'),
  'subject-type': Words('subject-type', 'issue, pull, commit and/or repository'),
  since: t.Optional(Timestamp),
  before: t.Optional(Timestamp),
})

/** PUT /notifications and /repos/{owner}/{repo}/notifications. */
export const ReadNotificationsQuery = t.Object({
  last_read_at: t.Optional(Timestamp),
  all: Flag('If true, mark every thread whatever its status'),
  'status-types': Words('status-types', 'the statuses of the threads to mark; unread by default'),
  'to-status': t.Optional(t.String({ maxLength: 16, description: 'read (default), unread or pinned' })),
})

/** PATCH /notifications/threads/{id}. */
export const ReadThreadQuery = t.Object({ 'to-status': t.Optional(t.String({ maxLength: 16, description: 'read (default), unread or pinned' })) })

export const ThreadParams = t.Object({ id: t.String({ maxLength: 20 }) })

export const NotificationSubjectSchema = t.Object(
  {
    title: t.String(),
    url: t.String(),
    html_url: t.String(),
    latest_comment_url: t.String(),
    latest_comment_html_url: t.String(),
    type: t.String(),
    state: t.String(),
  },
  { $id: '#/components/schemas/NotificationSubject' },
)

export const NotificationThreadSchema = t.Object(
  {
    id: Int(),
    repository: RepositorySchema,
    subject: NotificationSubjectSchema,
    unread: t.Boolean(),
    pinned: t.Boolean(),
    updated_at: t.String(),
    url: t.String(),
  },
  { $id: '#/components/schemas/NotificationThread' },
)
export const NotificationThreadList = t.Array(NotificationThreadSchema)

export const NotificationCountSchema = t.Object({ new: Int() }, { $id: '#/components/schemas/NotificationCount' })
