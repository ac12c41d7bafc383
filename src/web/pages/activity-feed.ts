import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import type { RepoContext } from '../../auth/repo-context'
import { listFeed, userFeedIncludesPrivate, type FeedOf } from '../../modules/activities/service'
import { activitiesToApi } from '../../convert/activity'
import { webUrl } from '../../lib/urls'
import { feedResponse, type FeedFormat, type FeedItem } from '../feed-xml'
import { ownerUrl, repoUrl } from '../links'
import { activityFeedItem } from './activity-list'

/*
 * The activity feeds of an owner and of a repository, for their feed addresses (feeds.ts) and for
 * their pages asked for a feed by the Accept header (people.tsx, repo.tsx), as Gitea's
 * GetFeedType serves `/{user}` and `/{o}/{r}` to a feed reader.
 */

/** Items in a feed (Gitea's UI.FeedPagingNum). */
export const FEED_ITEMS = 20

/** The base of absolute links (the configured root URL, without its last slash). */
export const feedBase = (deps: AppDeps) => webUrl(deps.config, '').replace(/\/$/, '')

/** The items of an activity feed of `of` as `viewer` may see it. */
async function activityItems(deps: AppDeps, viewer: UserRow | null, of: FeedOf, includePrivate: boolean, date: string | undefined, whoseId: number): Promise<FeedItem[]> {
  const found = await listFeed(deps, viewer, of, { includePrivate, date }, { page: 1, limit: FEED_ITEMS, offset: 0 })
  const records = await activitiesToApi(deps, viewer, found.rows, () => whoseId)
  return records.map((a) => activityFeedItem(a, feedBase(deps)))
}

/** A person's feed is what they did; an organisation's, what happened in its repositories (Gitea's OnlyPerformedBy). */
export async function ownerFeed(deps: AppDeps, viewer: UserRow | null, owner: UserRow, date: string | undefined, format: FeedFormat): Promise<Response> {
  const items = await activityItems(deps, viewer, { user: owner, onlyPerformedBy: owner.type !== 1 }, userFeedIncludesPrivate(viewer, owner), date, owner.id)
  const name = owner.fullName || owner.name
  return feedResponse({ title: `Feed of "${name}"`, link: feedBase(deps) + ownerUrl(owner.name), description: owner.description, items }, format)
}

/** What happened in a repository, as its reader may see it. */
export async function repoFeed(deps: AppDeps, ctx: RepoContext, date: string | undefined, format: FeedFormat): Promise<Response> {
  const items = await activityItems(deps, ctx.caller.user, { repo: ctx.repo }, true, date, ctx.caller.user?.id ?? 0)
  const full = `${ctx.owner.name}/${ctx.repo.name}`
  return feedResponse({ title: `Feed of "${full}"`, link: feedBase(deps) + repoUrl(ctx.owner.name, ctx.repo.name), description: ctx.repo.description, items }, format)
}

/** The feed a page's request asks for by its Accept header, as Gitea's GetFeedType: RSS before Atom; null for the page. */
export function feedAsked(request: Request): FeedFormat | null {
  const accept = request.headers.get('accept')
  if (!accept) return null
  if (accept.includes('application/rss+xml')) return 'rss'
  if (accept.includes('application/atom+xml')) return 'atom'
  return null
}
