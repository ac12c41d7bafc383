import { t } from 'elysia'
import { Int } from '../users/model'
import { MAX_QUERY_TEXT } from '../../lib/validate'
import { pageQueryFields } from '../../lib/pagination'

/** TopicName: a repository's topics. */
export const TopicNameSchema = t.Object({ topics: t.Array(t.String()) }, { $id: '#/components/schemas/TopicName' })

/** RepoTopicOptions (names are checked by the service, which lists the invalid ones). */
export const RepoTopicOptions = t.Object(
  { topics: t.Optional(t.Array(t.String({ maxLength: 255 }), { maxItems: 100 })) },
  { $id: '#/components/schemas/RepoTopicOptions' },
)

/** TopicResponse. */
export const TopicResponseSchema = t.Object(
  { id: Int(), topic_name: t.String(), repo_count: Int(), created: t.String(), updated: t.String() },
  { $id: '#/components/schemas/TopicResponse' },
)

/** What GET /topics/search answers: `{ topics: TopicResponse[] }`. */
export const TopicListResponse = t.Object({ topics: t.Array(TopicResponseSchema) })

export const TopicParams = t.Object({ owner: t.String(), repo: t.String(), topic: t.String({ maxLength: 255 }) })

export const TopicSearchQuery = t.Object({
  q: t.Optional(t.String({ maxLength: MAX_QUERY_TEXT, description: 'part of the topic names to find' })),
  ...pageQueryFields,
})
