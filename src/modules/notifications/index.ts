import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { notificationsToApi } from '../../convert/notification'
import { RepoParams } from '../repos/model'
import {
  ListNotificationsQuery,
  NotificationCountSchema,
  NotificationThreadList,
  NotificationThreadSchema,
  ReadNotificationsQuery,
  ReadThreadQuery,
  ThreadParams,
} from './model'
import { countUnread, findThread, listThreads, markThread, markThreads } from './service'

/*
 * The marking routes: Gitea answers them 205 Reset Content with the threads as they now are in
 * the body, which clients read (the Go SDK decodes them, so tea's mark-as-read needs them). Bun's
 * server sends no body with a 205 whatever the response holds, so Warren answers 200 with the
 * same body: every client that accepts any 2xx (gitea-js, the Go SDK) reads the threads.
 */

/** Notification threads: the caller's lists, unread count, marking; one thread; a repository's lists. */
export const notificationsModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['notification'] })
    .get(
      '/notifications',
      async ({ query, user, page, respond }) => respond(await listThreads(deps, user, query, page), async (rows) => await notificationsToApi(deps, user, rows)),
      {
        scope: 'notification',
        signed: true,
        paged: true,
        query: ListNotificationsQuery,
        response: { 200: NotificationThreadList },
        detail: { operationId: 'notifyGetList', summary: "List users's notification threads" },
      },
    )
    .put(
      '/notifications',
      async ({ query, user }) => await notificationsToApi(deps, user, await markThreads(deps, user, query)),
      {
        scope: 'notification',
        signed: true,
        query: ReadNotificationsQuery,
        response: { 200: NotificationThreadList },
        detail: { operationId: 'notifyReadList', summary: 'Mark notification threads as read, pinned or unread' },
      },
    )
    .get('/notifications/new', async ({ user }) => ({ new: await countUnread(deps, user) }), {
      scope: 'notification',
      signed: true,
      response: { 200: NotificationCountSchema },
      detail: { operationId: 'notifyNewAvailable', summary: 'Check if unread notifications exist' },
    })
    .get(
      '/notifications/threads/:id',
      async ({ params, user }) => (await notificationsToApi(deps, user, [await findThread(deps, user, params.id)]))[0]!,
      {
        scope: 'notification',
        signed: true,
        params: ThreadParams,
        response: { 200: NotificationThreadSchema },
        detail: { operationId: 'notifyGetThread', summary: 'Get notification thread by ID' },
      },
    )
    .patch(
      '/notifications/threads/:id',
      async ({ params, query, user }) => (await notificationsToApi(deps, user, [await markThread(deps, user, params.id, query['to-status'])]))[0]!,
      {
        scope: 'notification',
        signed: true,
        params: ThreadParams,
        query: ReadThreadQuery,
        response: { 200: NotificationThreadSchema },
        detail: { operationId: 'notifyReadThread', summary: 'Mark notification thread as read by ID' },
      },
    )
    .get(
      '/repos/:owner/:repo/notifications',
      async ({ query, repo, user, page, respond }) =>
        respond(await listThreads(deps, user, query, page, repo.repo.id), async (rows) => await notificationsToApi(deps, user, rows)),
      {
        scope: 'notification',
        repo: { level: 'read' },
        signed: true,
        paged: true,
        params: RepoParams,
        query: ListNotificationsQuery,
        response: { 200: NotificationThreadList },
        detail: { operationId: 'notifyGetRepoList', summary: "List users's notification threads on a specific repo" },
      },
    )
    .put(
      '/repos/:owner/:repo/notifications',
      async ({ query, repo, user }) => await notificationsToApi(deps, user, await markThreads(deps, user, query, repo.repo.id)),
      {
        scope: 'notification',
        // Marking changes only the caller's threads: allowed on an archived repository too.
        repo: { level: 'read', writes: false },
        signed: true,
        params: RepoParams,
        query: ReadNotificationsQuery,
        response: { 200: NotificationThreadList },
        detail: { operationId: 'notifyReadRepoList', summary: 'Mark notification threads as read, pinned or unread on a specific repo' },
      },
    )
