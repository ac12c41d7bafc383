/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { RepoContext } from '../../auth/repo-context'
import { type ApiRepo } from '../../convert/repo'
import { ACTIVITY_PERIODS, isActivityPeriod, periodStart, repoActivity, type ActivityItem, type ActivityList, type ActivityPeriod } from '../../modules/activities/repo-activity'
import type { CodeActivity } from '../../git/code-activity'
import { isoTime } from '../../lib/time'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext } from '../context'
import { errorPage } from '../errors'
import { refPath, repoUrl } from '../links'
import { RepoHeader, pageRepo } from './repo-chrome'
import { CodeNav, When } from './code-nav'
import { issuePageUrl, UserLink } from './issue-parts'
import { ActivityTabs } from './repo-insights'

const ActivityParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), period: t.Optional(t.String({ maxLength: 32 })) })

/** `n thing` or `n things`. */
const counted = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

/** The page's address for a period (the week's is the bare `/activity`, as Gitea's default). */
const activityUrl = (repo: ApiRepo, period: ActivityPeriod) => `${repoUrl(repo.owner.login, repo.name)}/activity${period === 'weekly' ? '' : `/${period}`}`

/**
 * Gitea 1.23's repository Activity page (`/{o}/{r}/activity`: the last week; `/activity/{period}`
 * for Gitea's other periods, any other a 404): what happened in the period, from the activities
 * area's `repoActivity`: the overview's counts, the code summary of the default branch and all
 * branches, and the lists of releases, pull requests, issues and unresolved conversations, those
 * of a unit that is off left out. For the repository's readers (the pipeline's read need: a
 * private repository is a 404 to others). Its tabs lead on to the contributors and commit charts
 * (repo-insights.tsx).
 */
export const repoActivityPages = (deps: AppDeps, webApp: AreaApp) => {
  const handler = async ({ request, params, repo: ctx }: { request: Request; params: { period?: string }; repo: RepoContext }) => {
    const web = webContext(deps.config, request, ctx.caller)
    const period = params.period ?? 'weekly'
    if (!isActivityPeriod(period)) return errorPage(404, 'no such period', web)
    const now = new Date()
    // The period starts at a whole minute: what it holds is then the same for a minute's requests, and kept (repoActivity).
    const activity = await repoActivity(deps, ctx, Math.floor(periodStart(period, now).getTime() / 60_000) * 60, Math.floor(now.getTime() / 1000))
    const repo = await pageRepo(deps, ctx)
    const { mergedPulls, openedPulls, closedIssues, newIssues } = activity
    return htmlResponse(
      <Layout ctx={web} title={`Activity · ${repo.full_name}`}>
        <RepoHeader repo={repo} />
        <CodeNav repo={repo} current="activity" />
        <h2>Activity</h2>
        <ActivityTabs repo={repo} current="overview" />
        <nav class="tabs" aria-label="Period">
          {Object.entries(ACTIVITY_PERIODS).map(([id, label]) => (
            <a href={activityUrl(repo, id as ActivityPeriod)} aria-current={id === period ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <p class="muted">
          From <When iso={isoTime(activity.from)} /> to <When iso={isoTime(activity.until)} />
        </p>
        <section aria-labelledby="activity-overview">
          <h3 id="activity-overview">Overview</h3>
          <ul class="counts">
            {mergedPulls && openedPulls ? <OverviewCounts kind="pull request" lists={[[mergedPulls, 'merged', 'merged-pull-requests'], [openedPulls, 'proposed', 'proposed-pull-requests']]} /> : null}
            {closedIssues && newIssues ? <OverviewCounts kind="issue" lists={[[closedIssues, 'closed', 'closed-issues'], [newIssues, 'new', 'new-issues']]} /> : null}
          </ul>
          <CodeSummary branch={repo.default_branch} code={activity.code} error={activity.codeError} />
        </section>
        {SECTIONS.map((section) => {
          const list = activity[section.key]
          return list ? <ItemSection {...section} heading={section.heading(list)} list={list} repo={repo} /> : null
        })}
      </Layout>,
    )
  }
  return pageGroup(webApp)
    .get('/:owner/:repo/activity', ({ request, params, repo }) => handler({ request, params, repo }), {
      scope: 'repository',
      repo: { level: 'read' },
      params: ActivityParams,
      detail: pageDetail('webRepoActivity'),
    })
    .get('/:owner/:repo/activity/:period', ({ request, params, repo }) => handler({ request, params, repo }), {
      scope: 'repository',
      repo: { level: 'read' },
      params: ActivityParams,
      detail: pageDetail('webRepoActivityPeriod'),
    })
}

/** The page's lists in Gitea's order: the activity's key, the anchor, the heading, what an empty one says, the rows' badge (else their kind). */
const SECTIONS: { key: 'releases' | 'mergedPulls' | 'openedPulls' | 'closedIssues' | 'newIssues' | 'unresolved'; id: string; heading: (list: ActivityList) => string; empty: string; badge?: string }[] = [
  { key: 'releases', id: 'published-releases', heading: (l) => `${counted(l.total, 'release')} published by ${counted(l.authors, 'user')}`, empty: 'No release was published in this period.', badge: 'Release' },
  { key: 'mergedPulls', id: 'merged-pull-requests', heading: (l) => `${counted(l.total, 'pull request')} merged by ${counted(l.authors, 'user')}`, empty: 'No pull request was merged in this period.', badge: 'Merged' },
  { key: 'openedPulls', id: 'proposed-pull-requests', heading: (l) => `${counted(l.total, 'pull request')} proposed by ${counted(l.authors, 'user')}`, empty: 'No pull request was proposed in this period.', badge: 'Proposed' },
  { key: 'closedIssues', id: 'closed-issues', heading: (l) => `${counted(l.total, 'issue')} closed by ${counted(l.authors, 'user')}`, empty: 'No issue was closed in this period.', badge: 'Closed' },
  { key: 'newIssues', id: 'new-issues', heading: (l) => `${counted(l.total, 'issue')} created by ${counted(l.authors, 'user')}`, empty: 'No issue was created in this period.', badge: 'Opened' },
  { key: 'unresolved', id: 'unresolved-conversations', heading: (l) => counted(l.total, 'unresolved conversation'), empty: 'No older open conversation was updated in this period.' },
]

/** The overview's counts of one tracker: its active items (both lists), then each list's count, a link to it. */
function OverviewCounts(props: { kind: string; lists: [ActivityList, string, string][] }): Html {
  const active = props.lists.reduce((n, [list]) => n + list.total, 0)
  return (
    <>
      <li>
        <strong>{counted(active, `active ${props.kind}`)}</strong>
      </li>
      {props.lists.map(([list, what, id]) => (
        <li>
          <a href={`#${id}`}>{counted(list.total, `${what} ${props.kind}`)}</a>
        </li>
      ))}
    </>
  )
}

/** Gitea's sentence on the code: authors and commits on the default branch and on all, then files and lines on the default branch. */
function CodeSummary(props: { branch: string; code: CodeActivity | null; error?: string }): Html {
  const { code, branch } = props
  if (props.error) return <p class="notice muted">The code's activity could not be read: {props.error}</p>
  if (!code || code.commitsAllBranches === 0) return <p class="muted">No commits were pushed in this period.</p>
  const atLeast = code.partial ? 'at least ' : ''
  return (
    <p class="code-activity">
      {counted(code.authors, 'author')} {code.authors === 1 ? 'has' : 'have'} pushed {atLeast}
      {counted(code.commits, 'commit')} to <code>{branch}</code> and {counted(code.commitsAllBranches, 'commit')} to all branches. On <code>{branch}</code>, {atLeast}
      {counted(code.files, 'file')} {code.files === 1 ? 'has' : 'have'} changed and there have been <strong class="additions">{counted(code.additions, 'addition')}</strong> and{' '}
      <strong class="deletions">{counted(code.deletions, 'deletion')}</strong>.
    </p>
  )
}

/** One list of the page: its heading with its counts, its first rows, how many more there are. */
function ItemSection(props: { id: string; heading: string; list: ActivityList; empty: string; repo: ApiRepo; badge?: string }): Html {
  const { list } = props
  return (
    <section aria-labelledby={props.id}>
      <h3 id={props.id}>{props.heading}</h3>
      {list.items.length === 0 ? (
        <p class="muted">{props.empty}</p>
      ) : (
        <ul class="activity-items">
          {list.items.map((item) => (
            <ItemRow repo={props.repo} item={item} badge={props.badge} />
          ))}
        </ul>
      )}
      {list.total > list.items.length ? <p class="muted">and {list.total - list.items.length} more not listed</p> : null}
    </section>
  )
}

/** The badges coloured as the issue pages' states (green otherwise). */
const BADGE_CLASSES: Record<string, string> = { Merged: ' state-merged', Closed: ' state-closed', 'Pre-release': ' state-closed' }

/** A row: its badge (else its kind), its link, its author and time. */
function ItemRow(props: { repo: ApiRepo; item: ActivityItem; badge?: string | undefined }): Html {
  const { repo, item } = props
  const owner = repo.owner.login
  const release = item.tag !== undefined
  const badge = release && item.prerelease ? 'Pre-release' : props.badge ?? (item.isPull ? 'Pull request' : 'Issue')
  return (
    <li>
      <span class={`state${BADGE_CLASSES[badge] ?? ''}`}>{badge}</span>{' '}
      {release ? (
        <>
          <a href={`${repoUrl(owner, repo.name)}/releases/tag/${refPath(item.tag!)}`}>{item.title}</a> <code>{item.tag}</code>
        </>
      ) : (
        <a href={issuePageUrl(owner, repo.name, item.index, item.isPull)}>
          #{item.index} {item.title}
        </a>
      )}{' '}
      <span class="muted">
        by <UserLink user={item.author} /> · <When iso={isoTime(item.unix)} />
      </span>
    </li>
  )
}
