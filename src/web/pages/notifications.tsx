/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { notificationsToApi } from '../../convert/notification'
import { listThreads, markThread, markThreads } from '../../modules/notifications/service'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext } from '../context'
import { repoUrl } from '../links'
import { signInRedirect } from '../errors'
import { formRoute } from '../forms'
import { CsrfField, Pager, StateBadge, TimeAt } from './issue-parts'
import { pageNumber } from './issues'
import { reposOfIssues, searchIssues } from '../../modules/issues/search'
import { listMarkedRepos } from '../../modules/stars/service'
import { ownerNames, RepoList } from './people'
import type { WebContext } from '../context'
import type { Html } from 'warren-jsx/jsx-runtime'
import type { UserRow } from '../../auth/caller'

/** Threads one page lists (Gitea's notification page shows 20). */
const PER_PAGE = 20

const Text = (max: number) => t.Optional(t.String({ maxLength: max }))
const ListQuery = t.Object({ q: Text(16), page: Text(16) })
const SubscriptionsQuery = t.Object({ state: Text(16), issueType: Text(16), sort: Text(16), page: Text(16) })

/** The notification pages' tabs (Gitea 1.23's notification, subscriptions and watching pages). */
function NotificationTabs(props: { current: 'notifications' | 'subscriptions' | 'watching' }): Html {
  const tab = (id: typeof props.current, href: string, label: string) => (
    <a href={href} aria-current={props.current === id ? 'page' : undefined}>
      {label}
    </a>
  )
  return (
    <nav class="tabs" aria-label="Notification pages">
      {tab('notifications', '/notifications', 'Notifications')} {tab('subscriptions', '/notifications/subscriptions', 'Subscriptions')}{' '}
      {tab('watching', '/notifications/watching', 'Watching')}
    </nav>
  )
}

/** Gitea's subscription filters: `state` (all by default), `issueType` (all), `sort` (Gitea's issue orders; newest first otherwise). */
const STATES = ['all', 'open', 'closed'] as const
const ISSUE_TYPES = ['all', 'issues', 'pulls'] as const
const SORTS: [string, string][] = [['newest', 'Newest'], ['oldest', 'Oldest'], ['recentupdate', 'Recently updated'], ['leastupdate', 'Least recently updated'], ['mostcomment', 'Most commented'], ['leastcomment', 'Least commented']]

/**
 * `/notifications/subscriptions` (Gitea 1.23's NotificationSubscriptions): the issues and pull
 * requests the signed-in user follows (subscribed, or taking part without having unsubscribed),
 * in repositories they may still read, through the issue search the API's `/repos/issues/search` uses.
 */
async function subscriptionsPage(deps: AppDeps, web: WebContext, user: UserRow, query: typeof SubscriptionsQuery.static): Promise<Response> {
  const state = STATES.find((s) => s === query.state) ?? 'all'
  const issueType = ISSUE_TYPES.find((s) => s === query.issueType) ?? 'all'
  const sort = SORTS.find(([id]) => id === query.sort)?.[0] ?? 'newest'
  const page = pageNumber(query.page)
  const found = await searchIssues(deps, user, { state, type: issueType === 'all' ? undefined : issueType }, { page, limit: PER_PAGE, offset: (page - 1) * PER_PAGE }, { followed: true, sort })
  const repos = await reposOfIssues(deps, found.rows)
  const owners = await ownerNames(deps, [...repos.values()], [])
  const filter = (change: Record<string, string>) => `/notifications/subscriptions?${new URLSearchParams({ state, issueType, sort, ...change })}`
  return htmlResponse(
    <Layout ctx={web} title="Subscriptions">
      <h1>Subscriptions</h1>
      <NotificationTabs current="subscriptions" />
      <nav class="state-tabs" aria-label="State">
        {STATES.map((s) => (
          <a href={filter({ state: s })} aria-current={s === state ? 'page' : undefined}>
            {s === 'all' ? 'All' : s === 'open' ? 'Open' : 'Closed'}
          </a>
        ))}
      </nav>
      <nav class="state-tabs" aria-label="Kind">
        {ISSUE_TYPES.map((k) => (
          <a href={filter({ issueType: k })} aria-current={k === issueType ? 'page' : undefined}>
            {k === 'all' ? 'All' : k === 'issues' ? 'Issues' : 'Pull requests'}
          </a>
        ))}
      </nav>
      <form method="get" action="/notifications/subscriptions">
        <input type="hidden" name="state" value={state} />
        <input type="hidden" name="issueType" value={issueType} />
        <label>
          Sort{' '}
          <select name="sort">
            {SORTS.map(([id, label]) => (
              <option value={id} selected={id === sort}>
                {label}
              </option>
            ))}
          </select>
        </label>{' '}
        <button type="submit">Sort</button>
      </form>
      <div class="box">
        <ul class="entries" aria-label="Subscribed issues and pull requests">
          {found.rows.map((issue) => {
            const repo = repos.get(issue.repoId)!
            const base = repoUrl(owners.get(repo.ownerId) ?? '', repo.name)
            return (
              <li class="thread" id={`subscription-${issue.id}`}>
                <StateBadge state={issue.isClosed ? 'closed' : 'open'} /> <a href={`${base}/${issue.isPull ? 'pulls' : 'issues'}/${issue.index}`}>{issue.title}</a>
                <div class="muted meta">
                  {issue.isPull ? 'Pull request' : 'Issue'} #{String(issue.index)} in <a href={base}>{owners.get(repo.ownerId)}/{repo.name}</a>
                </div>
              </li>
            )
          })}
          {found.rows.length === 0 ? <li class="muted">No subscriptions.</li> : null}
        </ul>
      </div>
      <Pager path="/notifications/subscriptions" query={{ state, issueType, sort }} page={page} pages={Math.ceil(found.total / PER_PAGE)} label="Pages of subscriptions" />
    </Layout>,
  )
}

/** `/notifications/watching` (Gitea 1.23's NotificationWatching): the repositories the signed-in user watches and may still see, paged, through the API's watched-repositories service. */
async function watchingPage(deps: AppDeps, web: WebContext, user: UserRow, pageQuery: string | undefined): Promise<Response> {
  const page = pageNumber(pageQuery)
  const { rows, total } = await listMarkedRepos(deps, 'watch', user, user.id, { page, limit: PER_PAGE, offset: (page - 1) * PER_PAGE })
  return htmlResponse(
    <Layout ctx={web} title="Watching">
      <h1>Watching</h1>
      <NotificationTabs current="watching" />
      <RepoList owners={await ownerNames(deps, rows, [user])} rows={rows} total={rows.length} empty="You watch no repositories." />
      <Pager path="/notifications/watching" page={page} pages={Math.ceil(total / PER_PAGE)} label="Pages of watched repositories" />
    </Layout>,
  )
}
const StatusBody = t.Object({ _csrf: Text(128), notification_id: Text(20), status: Text(16), q: Text(16), page: Text(16) }, { additionalProperties: true })
const PurgeBody = t.Object({ _csrf: Text(128) }, { additionalProperties: true })

/** The path of one of our own absolute URLs (a subject's html_url), a link that stays on this site. */
const localPath = (url: string): string => {
  try {
    return url ? new URL(url).pathname : '/'
  } catch {
    return '/'
  }
}

/** Back to the list as it was shown. */
const listUrl = (q: string | undefined, page: string | undefined) => {
  const params = new URLSearchParams()
  if (q === 'read') params.set('q', 'read')
  if (page && pageNumber(page) > 1) params.set('page', String(pageNumber(page)))
  return `/notifications${params.size ? `?${params}` : ''}`
}

/**
 * `/notifications`: the signed-in user's unread threads (`?q=read`: the read ones), each linking
 * to its issue or pull request, with a button to mark it read (or unread) and one to mark all
 * read; the notifications service lists and marks them, as the API's routes do.
 */
export const notificationPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/notifications',
      async ({ request, query, caller }) => {
        const web = webContext(deps.config, request, caller)
        const user = caller.user
        if (!user) return signInRedirect(web.path)
        const read = query.q === 'read'
        const page = pageNumber(query.page)
        const found = await listThreads(deps, user, read ? { 'status-types': ['read'] } : {}, { page, limit: PER_PAGE, offset: (page - 1) * PER_PAGE })
        const threads = await notificationsToApi(deps, user, found.rows)
        return htmlResponse(
          <Layout ctx={web} title="Notifications">
            <h1>Notifications</h1>
            <NotificationTabs current="notifications" />
            <nav class="state-tabs" aria-label="Notifications">
              <a href="/notifications" aria-current={read ? undefined : 'page'}>
                Unread
              </a>
              <a href="/notifications?q=read" aria-current={read ? 'page' : undefined}>
                Read
              </a>
            </nav>
            {!read && threads.length ? (
              <form method="post" action="/notifications/purge">
                <CsrfField ctx={web} />
                <button type="submit">Mark all as read</button>
              </form>
            ) : null}
            <div class="box">
              <ul class="entries" aria-label={read ? 'Read notifications' : 'Unread notifications'}>
                {threads.map((n) => {
                  const repo = n.repository
                  const href = localPath(n.subject.html_url)
                  return (
                    <li class="thread" id={`notification-${n.id}`}>
                      <StateBadge state={n.subject.state === 'merged' ? 'closed' : n.subject.state} merged={n.subject.state === 'merged'} />{' '}
                      <a href={href}>{n.subject.title}</a>
                      <div class="muted meta">
                        {n.subject.type === 'Pull' ? 'Pull request' : n.subject.type} in <a href={repoUrl(repo.owner.login, repo.name)}>{repo.full_name}</a> · updated{' '}
                        <TimeAt iso={n.updated_at} />
                      </div>
                      <form method="post" action="/notifications/status">
                        <CsrfField ctx={web} />
                        <input type="hidden" name="notification_id" value={String(n.id)} />
                        <input type="hidden" name="status" value={read ? 'unread' : 'read'} />
                        <input type="hidden" name="q" value={read ? 'read' : ''} />
                        <input type="hidden" name="page" value={String(page)} />
                        <button type="submit" aria-label={`${read ? 'Mark unread' : 'Mark read'}: ${n.subject.title}`}>
                          {read ? 'Mark unread' : 'Mark read'}
                        </button>
                      </form>
                    </li>
                  )
                })}
                {threads.length === 0 ? <li class="muted">{read ? 'No read notifications.' : 'You have no unread notifications.'}</li> : null}
              </ul>
            </div>
            <Pager path="/notifications" query={{ q: read ? 'read' : undefined }} page={page} pages={Math.ceil(found.total / PER_PAGE)} label="Pages of notifications" />
          </Layout>,
        )
      },
      { scope: 'notification', caller: true, query: ListQuery, detail: pageDetail('webNotifications') },
    )
    .get(
      '/notifications/subscriptions',
      async ({ request, query, caller }) => {
        const web = webContext(deps.config, request, caller)
        return caller.user ? await subscriptionsPage(deps, web, caller.user, query) : signInRedirect(web.path)
      },
      { scope: 'notification', caller: true, query: SubscriptionsQuery, detail: pageDetail('webNotificationSubscriptions') },
    )
    .get(
      '/notifications/watching',
      async ({ request, query, caller }) => {
        const web = webContext(deps.config, request, caller)
        return caller.user ? await watchingPage(deps, web, caller.user, query.page) : signInRedirect(web.path)
      },
      { scope: 'notification', caller: true, query: ListQuery, detail: pageDetail('webNotificationWatching') },
    )
    .post(
      '/notifications/status',
      ({ request, body, caller, user }) =>
        formRoute(deps.config, { request, caller, body }, async () => {
          await markThread(deps, user, body.notification_id ?? '', body.status === 'unread' ? 'unread' : body.status === 'pinned' ? 'pinned' : 'read')
          return listUrl(body.q, body.page)
        }),
      { scope: 'notification', signed: true, body: StatusBody, detail: pageDetail('webNotificationStatus') },
    )
    .post(
      '/notifications/purge',
      ({ request, body, caller, user }) =>
        formRoute(deps.config, { request, caller, body }, async () => {
          await markThreads(deps, user, {})
          return '/notifications'
        }),
      { scope: 'notification', signed: true, body: PurgeBody, detail: pageDetail('webNotificationsPurge') },
    )
