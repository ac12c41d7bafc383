import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { pathNumber } from '../../lib/path-number'
import { PageQuery } from '../../lib/pagination'
import { toApiUser } from '../../convert/user'
import { toApiIssueWatchInfo } from '../../convert/issue'
import { findIssue } from '../issues/queries'
import { IssueParams } from '../issues/model'
import { UserSchema } from '../users/model'
import { WatchInfoSchema } from '../stars/model'
import { getUserByName } from '../users/service'
import { isFollowing, listSubscribers, setFollowing } from './service'
import type { UserRow } from '../../auth/caller'

/** Subscribing changes only the subscriber's own row: it works on archived repositories too (as Gitea). */
const readIssues = { unit: 'issues', writes: false } as const
const SubscriberParams = t.Object({ ...IssueParams.properties, user: t.String({ description: 'the user to subscribe or unsubscribe' }) })
const Changed = { 200: t.String({ description: 'empty: it already was so' }), 201: t.String({ description: 'empty: changed' }) }

/** Issue subscriptions: who follows an issue or pull request (and is notified of it), Gitea's `/issues/{index}/subscriptions`. */
export const subscriptionsModule = (deps: AppDeps, api: AreaApp) => {
  const app = area(api, { tags: ['issue'] })
    .get(
      '/repos/:owner/:repo/issues/:index/subscriptions',
      async ({ params, repo, page, respond }) => {
        const issue = await findIssue(deps, repo.repo.id, pathNumber(params.index))
        const viewer = repo.caller.user
        return respond(await listSubscribers(deps, viewer, issue, page), (rows) => rows.map((u) => toApiUser(deps.config, u, viewer)))
      },
      {
        scope: 'issue',
        repo: readIssues,
        paged: true,
        params: IssueParams,
        query: PageQuery,
        response: { 200: t.Array(UserSchema) },
        detail: { operationId: 'issueSubscriptions', summary: 'The people subscribed to an issue' },
      },
    )
    .get(
      '/repos/:owner/:repo/issues/:index/subscriptions/check',
      async ({ params, repo, user }) => {
        const issue = await findIssue(deps, repo.repo.id, pathNumber(params.index))
        return toApiIssueWatchInfo(deps.config, repo.repo, issue, await isFollowing(deps, user, issue))
      },
      {
        scope: 'issue',
        repo: readIssues,
        signed: true,
        params: IssueParams,
        response: { 200: WatchInfoSchema },
        detail: { operationId: 'issueCheckSubscription', summary: 'Whether the authenticated user follows an issue (subscribed, or watching the repository or taking part without unsubscribing)' },
      },
    )
  const change = (on: boolean) => async ({ params, repo, user, set }: { params: { index: string; user: string }; repo: { repo: { id: number } }; user: UserRow; set: { status?: number | string } }) => {
    const issue = await findIssue(deps, repo.repo.id, pathNumber(params.index))
    const who = await getUserByName(deps, params.user)
    set.status = (await setFollowing(deps, user, who, issue, on)) ? 201 : 200
    return ''
  }
  const changeNeeds = { scope: 'issue', repo: readIssues, signed: true, params: SubscriberParams, response: Changed } as const
  return app
    .put('/repos/:owner/:repo/issues/:index/subscriptions/:user', change(true), {
      ...changeNeeds,
      detail: { operationId: 'issueAddSubscription', summary: 'Subscribe a user to an issue (themselves, or anyone by a site administrator): 201, or 200 when already subscribed' },
    })
    .delete('/repos/:owner/:repo/issues/:index/subscriptions/:user', change(false), {
      ...changeNeeds,
      detail: { operationId: 'issueDeleteSubscription', summary: 'Unsubscribe a user from an issue (themselves, or anyone by a site administrator): 201, or 200 when not subscribed' },
    })
}
