import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { toApiUser } from '../../convert/user'
import { notFound } from '../../lib/errors'
import { PageQuery } from '../../lib/pagination'
import { RepoParams, RepositoryList } from '../repos/model'
import { reposToApi, toApiWatchInfo } from '../../convert/repo'
import { UserSchema, UsernameParams } from '../users/model'
import { getVisibleUserByName } from '../users/service'
import { StarredRepoParams, WatchInfoSchema } from './model'
import { hasMarked, listMarkedRepos, listMarkers, setMark, type Mark } from './service'

const UserList = t.Array(UserSchema)
const NoContent = { 204: t.Void() }
/** Starring and watching read the repository and change only the caller's own rows: they work on archived repositories too. */
const readOnly = { level: 'read', writes: false } as const
// Routes on a repository that need a signed-in caller name `repo` before `signed` (the pipeline's
// rule): a hidden repository answers 404 even to an anonymous caller, a readable one 401.

/** The three lists of a mark: its users on a repository, the caller's repositories, a user's repositories. */
interface MarkLists {
  mark: Mark
  /** `/repos/:owner/:repo/<users>` */
  users: string
  /** `/user/<repos>` and `/users/:username/<repos>` */
  repos: string
  /** operationIds: the repository's users, the caller's list, a user's list. */
  ids: [string, string, string]
  noun: string
}

const LISTS: MarkLists[] = [
  { mark: 'star', users: 'stargazers', repos: 'starred', ids: ['repoListStargazers', 'userCurrentListStarred', 'userListStarred'], noun: 'starred' },
  { mark: 'watch', users: 'subscribers', repos: 'subscriptions', ids: ['repoListSubscribers', 'userCurrentListSubscriptions', 'userListSubscriptions'], noun: 'watched' },
]

/** Stars and watches: stargazers, subscribers, the caller's and a user's starred and watched repositories. */
export const starsModule = (deps: AppDeps, api: AreaApp) => {
  const app = area(api, { tags: ['repository'] })

  for (const { mark, users, repos, ids, noun } of LISTS)
    app
      .get(
        `/repos/:owner/:repo/${users}`,
        async ({ repo, caller, page, respond }) =>
          respond(await listMarkers(deps, mark, caller.user, repo.repo.id, page), (rows) => rows.map((u) => toApiUser(deps.config, u, caller.user))),
        {
          scope: 'repository',
          repo: { level: 'read' },
          paged: true,
          params: RepoParams,
          query: PageQuery,
          response: { 200: UserList },
          detail: { operationId: ids[0], summary: `The users who ${noun} a repository` },
        },
      )
      .get(
        `/user/${repos}`,
        async ({ user, page, respond }) => respond(await listMarkedRepos(deps, mark, user, user.id, page), async (rows) => await reposToApi(deps, user, rows)),
        {
          // Gitea puts the caller's stars under both the user and the repository categories.
          scope: repos === 'starred' ? (['user', 'repository'] as const) : 'user',
          signed: true,
          paged: true,
          query: PageQuery,
          response: { 200: RepositoryList },
          detail: { operationId: ids[1], summary: `The repositories the authenticated user ${noun}` },
        },
      )
      .get(
        `/users/:username/${repos}`,
        async ({ params, user, page, respond }) => {
          // Only the repositories the caller may read; a hidden user answers like an unknown one.
          const marker = await getVisibleUserByName(deps, params.username, user)
          return respond(await listMarkedRepos(deps, mark, user, marker.id, page), async (rows) => await reposToApi(deps, user, rows))
        },
        {
          scope: 'user',
          signed: true,
          paged: true,
          params: UsernameParams,
          query: PageQuery,
          response: { 200: RepositoryList },
          detail: { operationId: ids[2], summary: `The repositories a user ${noun}` },
        },
      )

  return app
    .get(
      '/user/starred/:owner/:repo',
      async ({ user, repo, status }) => {
        if (!await hasMarked(deps, 'star', user.id, repo.repo.id)) throw notFound('not starred')
        return status(204, undefined)
      },
      {
        scope: ['user', 'repository'],
        repo: readOnly,
        signed: true,
        params: StarredRepoParams,
        response: NoContent,
        detail: { operationId: 'userCurrentCheckStarring', summary: 'Whether the authenticated user is starring the repository' },
      },
    )
    .put(
      '/user/starred/:owner/:repo',
      async ({ user, repo, status }) => {
        await setMark(deps, 'star', user, repo.repo, true)
        return status(204, undefined)
      },
      { scope: ['user', 'repository'], repo: readOnly, signed: true, params: StarredRepoParams, response: NoContent, detail: { operationId: 'userCurrentPutStar', summary: 'Star the given repository' } },
    )
    .delete(
      '/user/starred/:owner/:repo',
      async ({ user, repo, status }) => {
        await setMark(deps, 'star', user, repo.repo, false)
        return status(204, undefined)
      },
      { scope: ['user', 'repository'], repo: readOnly, signed: true, params: StarredRepoParams, response: NoContent, detail: { operationId: 'userCurrentDeleteStar', summary: 'Unstar the given repository' } },
    )
    .get(
      '/repos/:owner/:repo/subscription',
      async ({ repo, user }) => {
        if (!await hasMarked(deps, 'watch', user.id, repo.repo.id)) throw notFound('not watching')
        return toApiWatchInfo(deps.config, repo.owner.name, repo.repo)
      },
      {
        scope: 'repository',
        repo: readOnly,
        signed: true,
        params: RepoParams,
        response: { 200: WatchInfoSchema },
        detail: { operationId: 'userCurrentCheckSubscription', summary: 'Whether the authenticated user is watching the repository' },
      },
    )
    .put(
      '/repos/:owner/:repo/subscription',
      async ({ repo, user }) => {
        await setMark(deps, 'watch', user, repo.repo, true)
        return toApiWatchInfo(deps.config, repo.owner.name, repo.repo)
      },
      { scope: 'repository', repo: readOnly, signed: true, params: RepoParams, response: { 200: WatchInfoSchema }, detail: { operationId: 'userCurrentPutSubscription', summary: 'Watch the repository' } },
    )
    .delete(
      '/repos/:owner/:repo/subscription',
      async ({ repo, user, status }) => {
        await setMark(deps, 'watch', user, repo.repo, false)
        return status(204, undefined)
      },
      { scope: 'repository', repo: readOnly, signed: true, params: RepoParams, response: NoContent, detail: { operationId: 'userCurrentDeleteSubscription', summary: 'Unwatch the repository' } },
    )
}
