/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import { inArray } from 'drizzle-orm'
import { users } from '../../db/schema'
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { UserRow } from '../../auth/caller'
import type { RepoRow } from '../../auth/access'
import type { Caller } from '../../auth/caller'
import { listOwnedRepos } from '../../modules/repos/queries'
import { listMarkedRepos } from '../../modules/stars/service'
import { followedOrVisibleUser, followUser, getVisibleUserByName, isFollowing, listFollows, unfollowUser } from '../../modules/users/service'
import { listFeed, userFeedIncludesPrivate } from '../../modules/activities/service'
import { activitiesToApi } from '../../convert/activity'
import { ActivityEntries } from './activity-list'
import { feedAsked, ownerFeed } from './activity-feed'
import { ApiError } from '../../lib/errors'
import type { Page } from '../../lib/pagination'
import { Layout } from '../layout'
import { ButtonForm, CsrfText, FormText, formRoute, Notices, Pager, pageNumber, pagesOf } from '../forms'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { errorPage } from '../errors'
import { ownerUrl, projectsUrl, repoUrl } from '../links'
import { OwnerList } from './explore'
import { profileReadme } from './repo'
import { ownerContentVisible } from '../../auth/package-access'
import { trustedHtml } from 'warren-jsx/jsx-runtime'
import { orgRole } from '../../auth/org-context'

/** A profile README (repo.tsx `profileReadme`), sanitised by the markdown renderer. */
function ProfileReadme(props: { html: string | null }): Html {
  return props.html ? (
    <section class="box markdown profile-readme" aria-label="Profile README">
      {trustedHtml(props.html)}
    </section>
  ) : (
    <></>
  )
}

/** Repositories a page lists at most (the rest are counted). */
export const MAX_LISTED = 100

export function RepoList(props: { owners: Map<number, string>; rows: RepoRow[]; total: number; empty: string }): Html {
  return (
    <div class="box">
      <ul class="entries" aria-label="Repositories">
        {props.rows.map((r) => {
          const owner = props.owners.get(r.ownerId) ?? ''
          return (
            <li>
              <a href={repoUrl(owner, r.name)}>
                {owner}/{r.name}
              </a>
              {r.isPrivate ? <span class="muted"> (private)</span> : null}
              {r.description ? <div class="muted">{r.description}</div> : null}
            </li>
          )
        })}
        {props.rows.length === 0 ? <li class="muted">{props.empty}</li> : null}
      </ul>
      {props.total > props.rows.length ? <p class="notice muted">{props.total - props.rows.length} more not shown.</p> : null}
    </div>
  )
}

/** Owner names of repository rows, read in one query. */
export async function ownerNames(deps: AppDeps, rows: RepoRow[], known: UserRow[]): Promise<Map<number, string>> {
  const names = new Map(known.map((u) => [u.id, u.name]))
  const missing = [...new Set(rows.map((r) => r.ownerId).filter((id) => !names.has(id)))]
  if (missing.length) {
    for (const u of await deps.db.select({ id: users.id, name: users.name }).from(users).where(inArray(users.id, missing))) names.set(u.id, u.name)
  }
  return names
}

/** Repositories, stars and people a profile's tab lists at a time (Gitea's UI.User.RepoPagingNum). */
const LIST_SIZE = 15
/** Activities the profile's activity tab lists at a time (Gitea's UI.FeedPagingNum). */
export const FEED_SIZE = 20

/** The tabs of a person's profile (Gitea 1.23's `?tab=`), the first the default. */
const TABS = [
  ['repositories', 'Repositories'],
  ['stars', 'Stars'],
  ['followers', 'Followers'],
  ['following', 'Following'],
  ['activity', 'Activity'],
] as const
type Tab = (typeof TABS)[number][0]

const OwnerParams = t.Object({ owner: t.String({ maxLength: 255 }) })
const ProfileQuery = t.Object({ tab: FormText(32), page: FormText(10) })
const FollowQuery = t.Object({ action: FormText(16) })
const FollowBody = t.Object({ _csrf: CsrfText, action: FormText(16) })

/**
 * An owner's heading. `content`: whether the viewer may see the owner's content (package-access.ts
 * ownerContentVisible; a private person's profile shows to more people than its projects and
 * packages do): its Projects and Packages links are left out otherwise.
 */
export function OwnerHeading(props: { owner: UserRow; kind: string; content?: boolean }): Html {
  const { owner } = props
  return (
    <>
      <h1>
        <a href={ownerUrl(owner.name)}>{owner.name}</a>
        {owner.fullName ? <span class="muted"> · {owner.fullName}</span> : null}
      </h1>
      <p class="muted">
        {props.kind} · <a href={ownerUrl(owner.name)}>Repositories</a>
        {props.content === false ? null : <> · <a href={projectsUrl(owner.name, null)}>Projects</a></>}
      </p>
    </>
  )
}

/**
 * The tabs under an owner's heading: a person's profile tabs (`?tab=`), an organisation's
 * repositories; then Packages (`/{owner}/-/packages`, Gitea 1.23's tab of both, seen by whoever
 * sees the owner, as its packages are).
 */
export function OwnerTabs(props: { owner: UserRow; current: Tab | 'packages'; content?: boolean }): Html {
  const base = ownerUrl(props.owner.name)
  const tabs: (readonly [string, string, string])[] =
    props.owner.type === 0 ? TABS.map(([id, label]) => [id, label, id === 'repositories' ? base : `${base}?tab=${id}`] as const) : [['repositories', 'Repositories', base]]
  return (
    <nav class="tabs" aria-label={props.owner.type === 0 ? 'Profile' : 'Organisation'}>
      {[...tabs, ...(props.content === false ? [] : [['packages', 'Packages', `${base}/-/packages`] as const])].map(([id, label, href]) => (
        <a href={href} aria-current={id === props.current ? 'page' : undefined}>
          {label}
        </a>
      ))}
    </nav>
  )
}

/** The page of the tab a person's profile shows, through the API's services and their visibility rule. */
async function tabContent(deps: AppDeps, viewer: UserRow | null, user: UserRow, tab: Tab, n: number, path: string): Promise<Html> {
  const size = tab === 'activity' ? FEED_SIZE : LIST_SIZE
  const page: Page = { page: n, limit: size, offset: (n - 1) * size }
  const pager = (total: number) => <Pager path={path} query={{ tab }} page={n} pages={pagesOf(total, size)} />
  if (tab === 'repositories' || tab === 'stars') {
    const found = tab === 'stars' ? await listMarkedRepos(deps, 'star', viewer, user.id, page) : await listOwnedRepos(deps, viewer, user, page)
    return (
      <>
        <RepoList owners={await ownerNames(deps, found.rows, [user])} rows={found.rows} total={found.rows.length} empty={tab === 'stars' ? 'No starred repositories to show.' : 'No repositories to show.'} />
        {pager(found.total)}
      </>
    )
  }
  if (tab === 'followers' || tab === 'following') {
    const found = await listFollows(deps, viewer, user.id, tab, page)
    return (
      <>
        <OwnerList rows={found.rows} label={tab === 'followers' ? 'Followers' : 'Following'} empty={tab === 'followers' ? 'No followers to show.' : 'Nobody followed to show.'} />
        {pager(found.total)}
      </>
    )
  }
  // Gitea's profile feed: what the person did themself (OnlyPerformedBy), private repositories' for themself and administrators.
  const found = await listFeed(deps, viewer, { user, onlyPerformedBy: true }, { includePrivate: userFeedIncludesPrivate(viewer, user) }, page)
  const records = await activitiesToApi(deps, viewer, found.rows, () => user.id)
  return (
    <>
      <div class="box">
        <ActivityEntries records={records} empty="No activity to show." />
      </div>
      {pager(found.total)}
    </>
  )
}

/**
 * `/{user}`: a person's profile (Gitea 1.23's routers/web/user/profile.go): the heading, the
 * follower counts, Follow or Unfollow for another signed-in person, and the tab of `?tab=`
 * (unknown ones are the repositories), paged with `?page=`.
 */
async function profileResponse(
  deps: AppDeps,
  web: WebContext,
  caller: Caller,
  user: UserRow,
  query: { tab?: string; page?: string },
  client: string,
  refused: { error?: string; status?: number } = {},
): Promise<Response> {
  const viewer = caller.user
  const tab: Tab = TABS.find(([id]) => id === query.tab)?.[0] ?? 'repositories'
  const base = ownerUrl(user.name)
  const [content, following, readme, ownContent] = await Promise.all([
    tabContent(deps, viewer, user, tab, pageNumber(query.page), base),
    viewer && viewer.id !== user.id ? isFollowing(deps, viewer.id, user.id) : Promise.resolve(null),
    profileReadme(deps, caller, user, client),
    ownerContentVisible(deps, user, viewer),
  ])
  return htmlResponse(
    <Layout ctx={web} title={user.name} feed={{ title: `Feed of "${user.name}"`, rss: `${base}.rss` }}>
      <OwnerHeading owner={user} kind="User" content={ownContent} />
      <Notices ctx={web} error={refused.error} />
      {user.description ? <p>{user.description}</p> : null}
      <p>
        <a href={`${base}?tab=followers`}>{user.numFollowers === 1 ? '1 follower' : `${user.numFollowers} followers`}</a> · <a href={`${base}?tab=following`}>{user.numFollowing} following</a> ·{' '}
        <a href={`${base}.rss`}>RSS feed</a>
      </p>
      {following === null ? null : <ButtonForm ctx={web} action={`${base}?action=${following ? 'unfollow' : 'follow'}`} label={following ? 'Unfollow' : 'Follow'} />}
      <ProfileReadme html={readme} />
      <OwnerTabs owner={user} current={tab} content={ownContent} />
      {content}
    </Layout>,
    refused.status ?? 200,
  )
}

/** `/{owner}` (a person's profile with its tabs, an organisation's repositories) and its follow form (the home `/` is dashboard.tsx's). */
export const peoplePages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/:owner',
      async ({ request, owner, caller, query }) => {
        // A feed reader asking for the page's feed by its Accept header gets it (Gitea's GetFeedType).
        const feed = feedAsked(request)
        if (feed) return await ownerFeed(deps, caller.user, owner, undefined, feed)
        const web = webContext(deps.config, request, caller)
        if (owner.type === 0) return await profileResponse(deps, web, caller, owner, query, deps.auth.clientAddress(request) ?? '')
        const [{ rows, total }, readme, role] = await Promise.all([
          listOwnedRepos(deps, caller.user, owner, { page: 1, limit: MAX_LISTED, offset: 0 }),
          profileReadme(deps, caller, owner, deps.auth.clientAddress(request) ?? ''),
          orgRole(deps, owner, caller.user),
        ])
        const org = `/org/${encodeURIComponent(owner.name)}`
        return htmlResponse(
          <Layout ctx={web} title={owner.name} feed={{ title: `Feed of "${owner.name}"`, rss: `${ownerUrl(owner.name)}.rss` }}>
            <OwnerHeading owner={owner} kind="Organisation" />
            <Notices ctx={web} />
            {owner.description ? <p>{owner.description}</p> : null}
            <ProfileReadme html={readme} />
            <OwnerTabs owner={owner} current="repositories" />
            {/* Gitea's organisation header: its people and teams, for its owners the settings and a new repository. */}
            <nav class="counts" aria-label="Organisation">
              <a href={`${org}/members`}>Members</a>
              {role.member ? <a href={`${org}/teams`}>Teams</a> : null}
              {role.member ? <a href={`/repo/create?org=${encodeURIComponent(owner.name)}`}>New repository</a> : null}
              {role.owner ? <a href={`${org}/settings`}>Settings</a> : null}
            </nav>
            <h2>Repositories</h2>
            <RepoList owners={await ownerNames(deps, rows, [owner])} rows={rows} total={total} empty="No repositories to show." />
          </Layout>,
        )
      },
      { scope: 'user', owner: true, params: OwnerParams, query: ProfileQuery, detail: pageDetail('webOwner') },
    )
    .post(
      '/:owner',
      ({ request, caller, params, query, body, user }) => {
        return formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            // Gitea reads `action` from the query or the form (ctx.FormString); the API's follow and unfollow rules.
            const action = body.action ?? query.action
            if (action === 'follow') {
              const target = await getVisibleUserByName(deps, params.owner, user)
              await followUser(deps, user, target)
              return ownerUrl(target.name)
            }
            if (action === 'unfollow') {
              const target = await followedOrVisibleUser(deps, user, params.owner)
              await unfollowUser(deps, user, target)
              return ownerUrl(target.name)
            }
            throw new ApiError(400, 'unknown action: follow or unfollow')
          },
          async (web, error, status) => {
            // The profile again with the refusal (a block), when the visitor may see it.
            const owner = await getVisibleUserByName(deps, params.owner, user).catch(() => null)
            return owner ? await profileResponse(deps, web, caller, owner, {}, deps.auth.clientAddress(request) ?? '', { error, status }) : errorPage(status, error, web)
          },
        )
      },
      { scope: 'user', signed: true, params: OwnerParams, query: FollowQuery, body: FollowBody, detail: pageDetail('webFollow') },
    )
