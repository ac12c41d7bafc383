/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { RepoContext } from '../../auth/repo-context'
import type { ApiRepo } from '../../convert/repo'
import { keptAnswer, repoContributors, weeksRecord, type Contributor } from '../../modules/activities/contributors'
import { MAX_COMMITS, weekOf, type Weeks } from '../../git/contributor-stats'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { errorPage } from '../errors'
import { ownerUrl, repoUrl } from '../links'
import { RepoHeader, pageRepo } from './repo-chrome'
import { CodeNav } from './code-nav'

/**
 * Gitea 1.23's repository insights beside the Activity page, for the readers of the code: the
 * Contributors (`/{o}/{r}/activity/contributors`, `?type=commits|additions|deletions` as Gitea's
 * choice of contribution type), Code frequency (`/activity/code-frequency`) and Recent commits
 * (`/activity/recent-commits`) pages, drawn on the server as SVG charts (Gitea's need JavaScript),
 * and their `/data` answers as Gitea's (the contributors by key with `total`; the total's weeks),
 * 202 with no body while the stats are being made. Of the default branch, merges left out
 * (modules/activities/contributors.ts); a repository without commits is a 404 (MustBeNotEmpty).
 */

const Params = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }) })
const ContributorsQuery = t.Object({ type: t.Optional(t.Union([t.Literal('commits'), t.Literal('additions'), t.Literal('deletions')])) })

type Measure = 'commits' | 'additions' | 'deletions'
/** The index of a measure in a week's four numbers. */
const COLUMN: Record<Measure, number> = { additions: 1, deletions: 2, commits: 3 }
/** Bars a chart draws at most: a longer history puts several weeks in a bar. */
const MAX_BARS = 156
/** Contributors listed at most, the most contributing first. */
const CONTRIBUTORS_SHOWN = 100
const DAY_MS = 86_400_000

/** The Activity pages' tabs (Gitea's activity navbar). */
export function ActivityTabs(props: { repo: ApiRepo; current: 'overview' | 'contributors' | 'code-frequency' | 'recent-commits' }): Html {
  const base = `${repoUrl(props.repo.owner.login, props.repo.name)}/activity`
  const tabs: [typeof props.current, string, string][] = [
    ['overview', base, 'Overview'],
    ['contributors', `${base}/contributors`, 'Contributors'],
    ['code-frequency', `${base}/code-frequency`, 'Code frequency'],
    ['recent-commits', `${base}/recent-commits`, 'Recent commits'],
  ]
  return (
    <nav class="tabs" aria-label="Insights">
      {tabs.map(([id, href, label]) => (
        <a href={href} aria-current={id === props.current ? 'page' : undefined}>
          {label}
        </a>
      ))}
    </nav>
  )
}

const dateOf = (day: number) => new Date(day * DAY_MS).toISOString().slice(0, 10)

/** Bars of some weeks between two Sundays (day numbers): each bar `per` weeks, its value the sum of `column` over them. */
function barsOf(weeks: Weeks, column: number, from: number, to: number, per: number): number[] {
  const bars = new Array<number>(Math.floor((to - from) / 7 / per) + 1).fill(0)
  for (let i = 0; i < weeks.length; i += 4) {
    const day = weeks[i]!
    if (day < from || day > to) continue
    bars[Math.floor((day - from) / 7 / per)]! += weeks[i + column]!
  }
  return bars
}

/** Weeks a bar holds so that the span from `from` to `to` fits MAX_BARS bars. */
const weeksPerBar = (from: number, to: number) => Math.max(1, Math.ceil(((to - from) / 7 + 1) / MAX_BARS))

/** One bar as a path: bottom-left, up, across, down. */
const barPath = (x: number, base: number, height: number) => `M${x} ${base}v${-height}h8v${height}z`

/**
 * A bar chart of some bars (`values`, the first starting at day `from`, each `per` weeks): one SVG
 * path, the values' scale its own; `titled`: each bar drawn apart with its week and value as its
 * title (the main charts, at most MAX_BARS bars).
 */
function BarChart(props: { values: number[]; from: number; per: number; label: string; unit: string; titled?: boolean; className?: string }): Html {
  const { values } = props
  const max = Math.max(1, ...values)
  const height = 100
  const scaled = (v: number) => (v > 0 ? Math.max(1, Math.round((v / max) * height)) : 0)
  const title = (i: number) => `${barSpan(props.from, props.per, i)}: ${values[i]} ${values[i] === 1 ? props.unit.replace(/s$/, '') : props.unit}`
  return (
    <svg class={`chart ${props.className ?? ''}`} viewBox={`0 0 ${values.length * 10} ${height}`} preserveAspectRatio="none" role="img" aria-label={props.label}>
      {props.titled ? (
        values.map((v, i) =>
          v > 0 ? (
            <path d={barPath(i * 10 + 1, height, scaled(v))}>
              <title>{title(i)}</title>
            </path>
          ) : null,
        )
      ) : (
        <path d={values.map((v, i) => (v > 0 ? barPath(i * 10 + 1, height, scaled(v)) : '')).join('')} />
      )}
    </svg>
  )
}

/** When a bar of `per` weeks starting `per` × `i` weeks after day `from` is: its week, or its first and last day. */
function barSpan(from: number, per: number, i: number): string {
  const first = from + i * 7 * per
  return per === 1 ? `week of ${dateOf(first)}` : `${dateOf(first)} to ${dateOf(first + 7 * per - 1)}`
}

/** Additions above the line and deletions below it, on one scale (the code frequency), each bar titled. */
function SplitChart(props: { up: number[]; down: number[]; from: number; per: number }): Html {
  const max = Math.max(1, ...props.up, ...props.down)
  const half = 100
  const scaled = (v: number) => (v > 0 ? Math.max(1, Math.round((v / max) * half)) : 0)
  const bar = (v: number, i: number, unit: string, up: boolean) =>
    v > 0 ? (
      <path class={up ? 'up' : 'down'} d={up ? barPath(i * 10 + 1, half, scaled(v)) : `M${i * 10 + 1} ${half}v${scaled(v)}h8v${-scaled(v)}z`}>
        <title>{`${barSpan(props.from, props.per, i)}: ${v} ${v === 1 ? unit.replace(/s$/, '') : unit}`}</title>
      </path>
    ) : null
  return (
    <svg class="chart split" viewBox={`0 0 ${props.up.length * 10} ${2 * half}`} preserveAspectRatio="none" role="img" aria-label="Additions and deletions a week">
      <path class="axis" d={`M0 ${half}h${props.up.length * 10}`} />
      {props.up.map((v, i) => bar(v, i, 'additions', true))}
      {props.down.map((v, i) => bar(v, i, 'deletions', false))}
    </svg>
  )
}

/** The span of a chart's axis: its first and last week. */
function Span(props: { from: number; to: number }): Html {
  return (
    <p class="chart-axis muted">
      <time datetime={dateOf(props.from)}>{dateOf(props.from)}</time>
      <time datetime={dateOf(props.to)}>{dateOf(props.to)}</time>
    </p>
  )
}

/** What a page says while the stats are being made: it asks again by itself (no script: a refresh). */
function Pending(): Html {
  return <p class="notice">The statistics of this repository are being computed. This page reloads itself in a few seconds.</p>
}

/** What a page says of a history read only in part. */
function PartialNote(): Html {
  return <p class="notice muted">The history is long: only its newest {MAX_COMMITS.toLocaleString('en')} commits are counted.</p>
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`

export const repoInsightsPages = (deps: AppDeps, webApp: AreaApp) => {
  /** The page's frame around `body`, or the pending page (refreshing) while the stats are made. */
  const page = async (ctx: RepoContext, web: WebContext, current: 'contributors' | 'code-frequency' | 'recent-commits', title: string, body: (found: Extract<Awaited<ReturnType<typeof repoContributors>>, { ready: true }>, repo: ApiRepo) => Html) => {
    const [found, repo] = await Promise.all([repoContributors(deps, ctx), pageRepo(deps, ctx)])
    const response = htmlResponse(
      <Layout ctx={web} title={`${title} · ${repo.full_name}`}>
        <RepoHeader repo={repo} />
        <CodeNav repo={repo} current="activity" />
        <h2>{title}</h2>
        <ActivityTabs repo={repo} current={current} />
        {found.ready ? (
          <>
            {found.partial ? <PartialNote /> : null}
            {body(found, repo)}
          </>
        ) : (
          <Pending />
        )}
      </Layout>,
    )
    if (!found.ready) response.headers.set('refresh', '5')
    return response
  }
  /** A `/data` answer (its JSON made once while the contributors are kept: `name` says which). */
  const data = async (ctx: RepoContext, name: string, answer: (found: Extract<Awaited<ReturnType<typeof repoContributors>>, { ready: true }>) => unknown) => {
    const found = await repoContributors(deps, ctx)
    // Gitea's ErrAwaitGeneration: 202 and nothing else, the client asks again.
    if (!found.ready) return new Response(null, { status: 202 })
    return new Response(keptAnswer(found, `json:${name}`, () => JSON.stringify(answer(found))), { headers: { 'content-type': 'application/json;charset=utf-8' } })
  }
  const totalWeeks = (found: { total: { weeks: Weeks } }) => weeksRecord(found.total.weeks)
  const need = { scope: 'repository', repo: { level: 'read' }, params: Params } as const

  return pageGroup(webApp)
    .get(
      '/:owner/:repo/activity/contributors',
      ({ request, repo: ctx, query }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const measure: Measure = query.type ?? 'commits'
        return page(ctx, web, 'contributors', 'Contributors', (found, repo) => <ContributorsBody found={found} repo={repo} measure={measure} />)
      },
      { ...need, query: ContributorsQuery, detail: pageDetail('webRepoContributors') },
    )
    .get(
      '/:owner/:repo/activity/contributors/data',
      ({ repo: ctx }) =>
        data(ctx, 'contributors', (found) => {
          const out: Record<string, unknown> = {
            total: { name: 'Total', login: '', avatar_link: '', home_link: '', total_commits: found.total.commits, weeks: totalWeeks(found) },
          }
          for (const c of found.contributors)
            out[c.key] = { name: c.name, login: c.user?.lowerName ?? '', avatar_link: c.avatarLink, home_link: c.user ? ownerUrl(c.user.name) : '', total_commits: c.commits, weeks: weeksRecord(c.weeks) }
          return out
        }),
      { ...need, detail: pageDetail('webRepoContributorsData') },
    )
    .get(
      '/:owner/:repo/activity/code-frequency',
      ({ request, repo: ctx }) => page(ctx, webContext(deps.config, request, ctx.caller), 'code-frequency', 'Code frequency', (found) => <CodeFrequencyBody found={found} />),
      { ...need, detail: pageDetail('webRepoCodeFrequency') },
    )
    .get('/:owner/:repo/activity/code-frequency/data', ({ repo: ctx }) => data(ctx, 'weeks', totalWeeks), { ...need, detail: pageDetail('webRepoCodeFrequencyData') })
    .get(
      '/:owner/:repo/activity/recent-commits',
      ({ request, repo: ctx }) => page(ctx, webContext(deps.config, request, ctx.caller), 'recent-commits', 'Recent commits', (found) => <RecentCommitsBody found={found} />),
      { ...need, detail: pageDetail('webRepoRecentCommits') },
    )
    // Gitea 1.23's recent commits read the code frequency's data.
    .get('/:owner/:repo/activity/recent-commits/data', ({ repo: ctx }) => data(ctx, 'weeks', totalWeeks), { ...need, detail: pageDetail('webRepoRecentCommitsData') })
}

type Found = Extract<Awaited<ReturnType<typeof repoContributors>>, { ready: true }>

/** The first and last week of the whole history (its total's). */
const spanOf = (weeks: Weeks): { from: number; to: number } | null => (weeks.length ? { from: weeks[0]!, to: weeks[weeks.length - 4]! } : null)

function ContributorsBody(props: { found: Found; repo: ApiRepo; measure: Measure }): Html {
  const { found, measure, repo } = props
  const span = spanOf(found.total.weeks)
  const column = COLUMN[measure]
  const valueOf = (c: { commits: number; additions: number; deletions: number }) => c[measure]
  const ranked = keptAnswer(found, `ranked:${measure}`, () => [...found.contributors].sort((a, b) => valueOf(b) - valueOf(a) || b.commits - a.commits || a.name.localeCompare(b.name)))
  const shown = ranked.slice(0, CONTRIBUTORS_SHOWN)
  const here = `${repoUrl(repo.owner.login, repo.name)}/activity/contributors`
  const unit = measure === 'commits' ? 'commits' : measure
  return (
    <>
      <nav class="tabs" aria-label="Contribution type">
        {(['commits', 'additions', 'deletions'] as const).map((m) => (
          <a href={m === 'commits' ? here : `${here}?type=${m}`} aria-current={m === measure ? 'page' : undefined}>
            {m === 'commits' ? 'Commits' : m === 'additions' ? 'Additions' : 'Deletions'}
          </a>
        ))}
      </nav>
      <p>
        {plural(found.total.commits, 'commit')} by {plural(found.contributors.length, 'contributor')} to <code>{repo.default_branch}</code>, merges excluded:{' '}
        <strong class="additions">{plural(found.total.additions, 'addition')}</strong> and <strong class="deletions">{plural(found.total.deletions, 'deletion')}</strong>.
      </p>
      {span ? (
        <figure class="chart-box">
          <BarChart values={barsOf(found.total.weeks, column, span.from, span.to, weeksPerBar(span.from, span.to))} from={span.from} per={weeksPerBar(span.from, span.to)} label={`${unit} a week, all contributors`} unit={unit} titled className={measure} />
          <Span from={span.from} to={span.to} />
        </figure>
      ) : null}
      <ol class="contributors">
        {shown.map((c, i) => (
          <ContributorRow contributor={c} rank={i + 1} span={span} column={column} unit={unit} measure={measure} />
        ))}
      </ol>
      {ranked.length > shown.length ? <p class="muted">and {plural(ranked.length - shown.length, 'more contributor')} not listed</p> : null}
    </>
  )
}

function ContributorRow(props: { contributor: Contributor; rank: number; span: { from: number; to: number } | null; column: number; unit: string; measure: Measure }): Html {
  const { contributor: c, span } = props
  return (
    <li class="box">
      <header>
        <span class="muted">#{props.rank}</span>
        {c.user ? (
          <a class="user" href={ownerUrl(c.user.name)}>
            {c.name}
          </a>
        ) : (
          <span class="user">{c.name}</span>
        )}
        <span class="muted">
          {plural(c.commits, 'commit')} · <span class="additions">{c.additions.toLocaleString('en')}++</span> · <span class="deletions">{c.deletions.toLocaleString('en')}--</span>
        </span>
      </header>
      {span ? (
        <BarChart values={barsOf(c.weeks, props.column, span.from, span.to, weeksPerBar(span.from, span.to))} from={span.from} per={weeksPerBar(span.from, span.to)} label={`${props.unit} a week by ${c.name}`} unit={props.unit} className={`small ${props.measure}`} />
      ) : null}
    </li>
  )
}

function CodeFrequencyBody(props: { found: Found }): Html {
  const { total } = props.found
  const span = spanOf(total.weeks)
  if (!span) return <p class="muted">No changes to count.</p>
  const per = weeksPerBar(span.from, span.to)
  return (
    <>
      <p>
        Lines added and deleted each {per === 1 ? 'week' : `${per} weeks`} on the default branch, merges excluded: <strong class="additions">{plural(total.additions, 'addition')}</strong> and{' '}
        <strong class="deletions">{plural(total.deletions, 'deletion')}</strong> in all.
      </p>
      <figure class="chart-box">
        <SplitChart up={barsOf(total.weeks, COLUMN.additions, span.from, span.to, per)} down={barsOf(total.weeks, COLUMN.deletions, span.from, span.to, per)} from={span.from} per={per} />
        <Span from={span.from} to={span.to} />
      </figure>
    </>
  )
}

function RecentCommitsBody(props: { found: Found }): Html {
  const { total } = props.found
  // The last 52 weeks, this one included.
  const to = weekOf(new Date().toISOString().slice(0, 10))!
  const from = to - 51 * 7
  const bars = barsOf(total.weeks, COLUMN.commits, from, to, 1)
  const sum = bars.reduce((n, v) => n + v, 0)
  return (
    <>
      <p>{plural(sum, 'commit')} to the default branch in the last 52 weeks, merges excluded.</p>
      <figure class="chart-box">
        <BarChart values={bars} from={from} per={1} label="Commits a week, the last 52 weeks" unit="commits" titled className="commits" />
        <Span from={from} to={to} />
      </figure>
    </>
  )
}
