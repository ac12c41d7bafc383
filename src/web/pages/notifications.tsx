/** @jsxImportSource warren-jsx */
import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import { notificationsToApi } from '../../convert/notification'
import { listThreads, markThread, markThreads } from '../../modules/notifications/service'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext } from '../context'
import { repoUrl } from '../links'
import { signInRedirect } from '../errors'
import { formRoute } from '../forms'
import { CsrfField, Pager, StateBadge, TimeAt } from './issue-parts'
import { pageNumber } from './issues'

/** Threads one page lists (Gitea's notification page shows 20). */
const PER_PAGE = 20

const Text = (max: number) => t.Optional(t.String({ maxLength: max }))
const ListQuery = t.Object({ q: Text(16), page: Text(16) })
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
export const notificationPages = (deps: AppDeps) =>
  new Elysia({ name: 'web-notifications', detail: { hide: true } })
    .use(pipeline(deps, { session: true }))
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
