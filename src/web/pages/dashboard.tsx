/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { UserRow } from '../../auth/caller'
import type { RepoRow } from '../../auth/access'
import type { OrgRow } from '../../auth/org-context'
import { listCallerRepos, listOwnedRepos } from '../../modules/repos/queries'
import { listOrgsOfUser } from '../../modules/orgs/service'
import { listTeamRepos } from '../../modules/teams/service'
import { listFeed, orgFeedIncludesPrivate, userFeedIncludesPrivate, type FeedOf } from '../../modules/activities/service'
import { activitiesToApi } from '../../convert/activity'
import { rootInfo } from '../../modules/docs'
import type { Page } from '../../lib/pagination'
import { Layout } from '../layout'
import { FormText, Notices, Pager, pageNumber, pagesOf } from '../forms'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { ActivityEntries } from './activity-list'
import { FEED_SIZE, MAX_LISTED, ownerNames, RepoList } from './people'

/*
 * Gitea's dashboard (routers/web/user/home.go Dashboard): the signed-in user's at `/`, and, from
 * its context switcher, an organisation's (`/org/{org}/dashboard`, for its members) and one of its
 * teams' (`/org/{org}/dashboard/-/{team}`, for the team's members): the feed of what happened in
 * the repositories of that context, paged, beside its repositories, each through the feeds and
 * repositories services the API's `…/activities/feeds` and repository lists use.
 */

/** Organisations the switcher offers (the first of them by name). */
const SWITCHER_ORGS = 50

const HomeQuery = t.Object({ page: FormText(10) })
const OrgParams = t.Object({ org: t.String({ maxLength: 255 }) })
const TeamParams = t.Object({ org: t.String({ maxLength: 255 }), team: t.String({ maxLength: 255 }) })

/** The contexts a dashboard may show: the user's own, and each organisation they are a member of. */
function ContextSwitcher(props: { user: UserRow; orgs: OrgRow[]; current: string }): Html {
  const item = (name: string, href: string) => (
    <li>
      <a href={href} aria-current={props.current === name ? 'page' : undefined}>
        {name}
      </a>
    </li>
  )
  return (
    <nav class="tabs" aria-label="Dashboard of">
      <ul>
        {item(props.user.name, '/')}
        {props.orgs.map((org) => item(org.name, `/org/${encodeURIComponent(org.name)}/dashboard`))}
      </ul>
    </nav>
  )
}

/** A dashboard: the switcher, the context's feed (a page of it) and its repositories. */
async function dashboardPage(
  deps: AppDeps,
  web: WebContext,
  user: UserRow,
  view: { current: string; heading: string; path: string; of: FeedOf; includePrivate: boolean; repos: { rows: RepoRow[]; total: number }; owners: UserRow[]; reposTitle: string; reposEmpty: string; empty: string },
  pageAsked: string | undefined,
): Promise<Response> {
  const n = pageNumber(pageAsked)
  const page: Page = { page: n, limit: FEED_SIZE, offset: (n - 1) * FEED_SIZE }
  const [feed, orgs] = await Promise.all([
    listFeed(deps, user, view.of, { includePrivate: view.includePrivate }, page),
    listOrgsOfUser(deps, user, user, { page: 1, limit: SWITCHER_ORGS, offset: 0 }),
  ])
  const records = await activitiesToApi(deps, user, feed.rows, () => ('team' in view.of ? view.of.org.id : 'user' in view.of ? view.of.user.id : user.id))
  return htmlResponse(
    <Layout ctx={web} title={view.heading}>
      <h1>{view.heading}</h1>
      {orgs.rows.length ? <ContextSwitcher user={user} orgs={orgs.rows} current={view.current} /> : null}
      <Notices ctx={web} />
      <h2>Activity</h2>
      <div class="box">
        <ActivityEntries records={records} empty={view.empty} />
      </div>
      <Pager path={view.path} page={n} pages={pagesOf(feed.total, FEED_SIZE)} labels={['Newer', 'Older']} />
      <h2>{view.reposTitle}</h2>
      <RepoList owners={await ownerNames(deps, view.repos.rows, view.owners)} rows={view.repos.rows} total={view.repos.total} empty={view.reposEmpty} />
    </Layout>,
  )
}

/** `/` (the signed-in user's dashboard, or a sign-in link), `/org/{org}/dashboard` and `/org/{org}/dashboard/-/{team}`. */
export const dashboardPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/',
      async ({ request, caller, query }) => {
        // Scripts and clients asking for anything but HTML get the service's description as before.
        if (!/^\s*text\/html/i.test(request.headers.get('accept') ?? '')) return rootInfo(deps.config)
        const web = webContext(deps.config, request, caller)
        const user = caller.user
        if (!user)
          return htmlResponse(
            <Layout ctx={web} title="Home">
              <h1>Warren</h1>
              <p>A self-hosted git service.</p>
              <p>
                <a href="/user/login">Sign in</a> to see your repositories.
              </p>
            </Layout>,
          )
        // The feed of what the user did and of the repositories they watch (private ones too), beside their repositories.
        const repos = await listCallerRepos(deps, user, { page: 1, limit: MAX_LISTED, offset: 0 })
        return await dashboardPage(
          deps,
          web,
          user,
          {
            current: user.name,
            heading: 'Dashboard',
            path: '/',
            of: { user, onlyPerformedBy: false },
            includePrivate: userFeedIncludesPrivate(user, user),
            repos,
            owners: [user],
            reposTitle: 'Your repositories',
            reposEmpty: 'You have no repositories yet.',
            empty: 'Nothing happened yet in your repositories or those you watch.',
          },
          query.page,
        )
      },
      // A token needs the user scope for the dashboard (one's private repositories and feed), as for `/{owner}`.
      { scope: 'user', caller: true, query: HomeQuery, detail: pageDetail('webHome') },
    )
    .get(
      '/org/:org/dashboard',
      async ({ request, caller, user, org, query }) =>
        await dashboardPage(
          deps,
          webContext(deps.config, request, caller),
          user,
          {
            current: org.org.name,
            heading: `Dashboard of ${org.org.name}`,
            path: `/org/${encodeURIComponent(org.org.name)}/dashboard`,
            // What happened in the organisation's repositories, as its API feed tells its members.
            of: { user: org.org, onlyPerformedBy: false },
            includePrivate: orgFeedIncludesPrivate(user, org.member),
            repos: await listOwnedRepos(deps, user, org.org, { page: 1, limit: MAX_LISTED, offset: 0 }),
            owners: [org.org],
            reposTitle: 'Repositories',
            reposEmpty: 'No repositories to show.',
            empty: "Nothing happened yet in the organisation's repositories.",
          },
          query.page,
        ),
      { scope: 'organization', signed: true, org: 'member', params: OrgParams, query: HomeQuery, detail: pageDetail('webOrgDashboard') },
    )
    .get(
      '/org/:org/dashboard/-/:team',
      async ({ request, caller, user, team, query }) =>
        await dashboardPage(
          deps,
          webContext(deps.config, request, caller),
          user,
          {
            current: team.org.name,
            heading: `Dashboard of ${team.org.name}: ${team.team.name}`,
            path: `/org/${encodeURIComponent(team.org.name)}/dashboard/-/${encodeURIComponent(team.team.name)}`,
            // The team's repositories' activity, as the API's team feed tells the team's members.
            of: { team: team.team, org: team.org },
            includePrivate: true,
            repos: await listTeamRepos(deps, team, { page: 1, limit: MAX_LISTED, offset: 0 }),
            owners: [team.org],
            reposTitle: 'Repositories',
            reposEmpty: 'No repositories to show.',
            empty: "Nothing happened yet in the team's repositories.",
          },
          query.page,
        ),
      { scope: 'organization', team: 'member', signed: true, params: TeamParams, query: HomeQuery, detail: pageDetail('webTeamDashboard') },
    )
