import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { PageQuery } from '../../lib/pagination'
import { isoTime } from '../../lib/time'
import type { TopicRow } from '../../db/schema'
import { RepoParams } from '../repos/model'
import { RepoTopicOptions, TopicListResponse, TopicNameSchema, TopicParams, TopicSearchQuery } from './model'
import { addTopic, deleteTopic, listRepoTopics, replaceTopics, searchTopics } from './service'

const NoContent = { 204: t.Void() }
/** Changing topics needs the repository's administrators, as in Gitea. */
const admin = { level: 'admin' } as const

const toApiTopic = (topic: TopicRow) => ({
  id: topic.id,
  topic_name: topic.name,
  repo_count: topic.repoCount,
  created: isoTime(topic.createdUnix),
  updated: isoTime(topic.updatedUnix),
})

/** Repository topics: a repository's list and its changes, and the search over all topics. */
export const topicsModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] })
    .get(
      '/repos/:owner/:repo/topics',
      async ({ repo, page, respond }) => ({ topics: await respond(await listRepoTopics(deps, repo.repo, page), (names) => names) }),
      {
        scope: 'repository',
        repo: { level: 'read' },
        paged: true,
        params: RepoParams,
        query: PageQuery,
        response: { 200: TopicNameSchema },
        detail: { operationId: 'repoListTopics', summary: "Get a repository's topics, by name" },
      },
    )
    .put(
      '/repos/:owner/:repo/topics',
      async ({ repo, body, status }) => {
        await replaceTopics(deps, repo.repo, body.topics ?? [])
        return status(204, undefined)
      },
      {
        scope: 'repository',
        repo: admin,
        params: RepoParams,
        body: RepoTopicOptions,
        response: NoContent,
        detail: { operationId: 'repoUpdateTopics', summary: "Replace a repository's topics (at most 25)" },
      },
    )
    .put(
      '/repos/:owner/:repo/topics/:topic',
      async ({ repo, params, status }) => {
        await addTopic(deps, repo.repo, params.topic)
        return status(204, undefined)
      },
      { scope: 'repository', repo: admin, params: TopicParams, response: NoContent, detail: { operationId: 'repoAddTopic', summary: 'Add a topic to a repository' } },
    )
    .delete(
      '/repos/:owner/:repo/topics/:topic',
      async ({ repo, params, status }) => {
        await deleteTopic(deps, repo.repo, params.topic)
        return status(204, undefined)
      },
      { scope: 'repository', repo: admin, params: TopicParams, response: NoContent, detail: { operationId: 'repoDeleteTopic', summary: 'Delete a topic from a repository' } },
    )
    .get(
      '/topics/search',
      async ({ query, page, respond }) => ({ topics: await respond(await searchTopics(deps, query.q ?? '', page), (rows) => rows.map(toApiTopic)) }),
      {
        scope: 'repository',
        caller: true,
        paged: true,
        query: TopicSearchQuery,
        response: { 200: TopicListResponse },
        detail: { operationId: 'topicSearch', summary: 'Search topics by part of their name, most used first' },
      },
    )
