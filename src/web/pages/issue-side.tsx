/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import { eq } from 'drizzle-orm'
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { AccessMode } from '../../auth/access'
import type { RepoContext } from '../../auth/repo-context'
import { issues, repositories, type IssueRow } from '../../db/schema'
import { badRequest, notFound, unprocessable } from '../../lib/errors'
import { isoTime, nowUnix } from '../../lib/time'
import { findIssue } from '../../modules/issues/queries'
import { setIssueDeadline } from '../../modules/issues/service'
import { reposOfIssues } from '../../modules/issues/search'
import { addDependency, listDependencies, removeDependency, type Direction, type IssueMeta } from '../../modules/issue-dependencies/service'
import { pinIssue, unpinIssue } from '../../modules/issue-pins/service'
import { addTime, issueTimeTotal, mayTrackTime, startStopwatch, stopStopwatch, stopwatchOn } from '../../modules/times/service'
import { pageDetail, type WebContext } from '../context'
import { ButtonForm, CsrfText, formRoute, FormText } from '../forms'
import type { Conversation } from './conversation'
import { FoldedForm, issueAt } from './issue-edit'
import { issuePageUrl, TimeAt } from './issue-parts'

/**
 * The sidebar's due date, time tracking, dependencies and pin of an issue or pull request, at
 * Gitea 1.23's web addresses (`/{o}/{r}/{issues|pulls}/{i}/deadline`, `/times/add`,
 * `/times/stopwatch/toggle`, `/times/stopwatch/cancel`, `/dependency/add`, `/dependency/delete`,
 * `/pin`), each through the service of the API route making the same change (`setIssueDeadline`,
 * the times service, the dependencies service, the pins service) under that route's needs, so its
 * rules, events and timeline hold. Each form is shown only to those the service lets through.
 */

/** Most dependencies each list of the sidebar shows. */
const MAX_LISTED = 50

/** Gitea's "1 hour 5 minutes" of a number of seconds (the seconds left out past a minute). */
export function spentWords(seconds: number): string {
  if (seconds < 60) return `${seconds} ${seconds === 1 ? 'second' : 'seconds'}`
  const hours = Math.floor(seconds / 3600)
  const minutes = Math.floor((seconds % 3600) / 60)
  const parts = [hours ? `${hours} ${hours === 1 ? 'hour' : 'hours'}` : '', minutes ? `${minutes} ${minutes === 1 ? 'minute' : 'minutes'}` : '']
  return parts.filter(Boolean).join(' ')
}

/** The sidebar's additions, for every reader of the conversation; the forms for those who may use them. */
export async function IssueSide(props: { deps: AppDeps; web: WebContext; repoCtx: RepoContext; conv: Conversation; url: string }): Promise<Html> {
  const { deps, web, repoCtx, conv, url } = props
  const user = web.caller.user
  const row = await findIssue(deps, repoCtx.repo.id, conv.issue.number)
  const open = !!user && !repoCtx.repo.isArchived
  const writer = open && repoCtx.mode >= AccessMode.Write
  const due = row.deadlineUnix > 0 ? isoTime(row.deadlineUnix).slice(0, 10) : null
  const overdue = row.deadlineUnix > 0 && !row.isClosed && row.deadlineUnix < nowUnix()
  return (
    <>
      <h2 class="side-title">Due date</h2>
      {due ? (
        <p>
          <time datetime={due}>{due}</time>
          {overdue ? <strong class="overdue"> (overdue)</strong> : null}
        </p>
      ) : (
        <p class="muted">No due date set.</p>
      )}
      {writer ? (
        <FoldedForm ctx={web} summary={due ? 'Change due date' : 'Set due date'} action={`${url}/deadline`} class="stack">
          <label>
            Due date
            <input type="date" name="deadline" value={due ?? ''} />
          </label>
          <div>
            <button type="submit">Save due date</button>
          </div>
        </FoldedForm>
      ) : null}
      {writer && due ? <ButtonForm ctx={web} action={`${url}/deadline`} label="Remove due date" fields={{ deadline: '' }} /> : null}
      {repoCtx.repo.enableTimeTracker ? await TimeSide({ deps, web, repoCtx, row, url, open }) : null}
      {repoCtx.repo.enableIssueDependencies ? await DependencySide({ deps, web, repoCtx, row, url, writer }) : null}
      {open && repoCtx.mode >= AccessMode.Admin ? (
        <>
          <h2 class="side-title">Pin</h2>
          <ButtonForm ctx={web} action={`${url}/pin`} label={row.pinOrder > 0 ? 'Unpin' : 'Pin'} />
        </>
      ) : null}
    </>
  )
}

/** The time spent, and for those who may track time the stopwatch (writers, as the service) and the form adding time. */
async function TimeSide(props: { deps: AppDeps; web: WebContext; repoCtx: RepoContext; row: IssueRow; url: string; open: boolean }): Promise<Html> {
  const { deps, web, repoCtx, row, url } = props
  const user = web.caller.user
  const total = await issueTimeTotal(deps, row.id)
  const tracker = props.open && (await mayTrackTime(deps, repoCtx, row, user!))
  const watch = tracker && repoCtx.mode >= AccessMode.Write ? ((await stopwatchOn(deps, user!.id, row.id)) ?? null) : undefined
  return (
    <>
      <h2 class="side-title">Time tracking</h2>
      <p class={total ? '' : 'muted'}>{total ? `Total time spent: ${spentWords(total)}` : 'No time spent yet.'}</p>
      {watch ? (
        <>
          <p>
            Your stopwatch is running since <TimeAt iso={isoTime(watch.createdUnix)} />.
          </p>
          <ButtonForm ctx={web} action={`${url}/times/stopwatch/toggle`} label="Stop timer" />{' '}
          <ButtonForm ctx={web} action={`${url}/times/stopwatch/cancel`} label="Discard timer" danger />
        </>
      ) : watch === null ? (
        <ButtonForm ctx={web} action={`${url}/times/stopwatch/toggle`} label="Start timer" />
      ) : null}
      {tracker ? (
        <FoldedForm ctx={web} summary="Add time spent" action={`${url}/times/add`} class="stack">
          <label>
            Hours
            <input type="number" name="hours" min="0" max="999999" value="0" />
          </label>
          <label>
            Minutes
            <input type="number" name="minutes" min="0" max="999999" value="0" />
          </label>
          <div>
            <button type="submit">Add time</button>
          </div>
        </FoldedForm>
      ) : null}
    </>
  )
}

/** The issues this one depends on and those it blocks (those the reader may see), with a writer's forms. */
async function DependencySide(props: { deps: AppDeps; web: WebContext; repoCtx: RepoContext; row: IssueRow; url: string; writer: boolean }): Promise<Html> {
  const { deps, web, repoCtx, row, url, writer } = props
  const page = { page: 1, limit: MAX_LISTED, offset: 0 }
  const lists = await Promise.all((['dependencies', 'blocks'] as const).map((d) => listDependencies(deps, repoCtx, row.index, d, page)))
  const repos = await reposOfIssues(deps, lists.flatMap((l) => l.rows))
  const section = (title: string, found: (typeof lists)[number], type: 'blockedBy' | 'blocking') => (
    <>
      <h2 class="side-title">{title}</h2>
      {found.rows.length ? (
        <ul class="side-choices" aria-label={title}>
          {found.rows.map((dep) => {
            const repo = repos.get(dep.repoId)!
            const here = repo.id === repoCtx.repo.id
            return (
              <li>
                <a href={issuePageUrl(repo.ownerName, repo.name, dep.index, dep.isPull)}>
                  {here ? '' : `${repo.ownerName}/${repo.name}`}#{dep.index} {dep.title}
                </a>
                {dep.isClosed ? <span class="muted"> (closed)</span> : null}
                {writer ? (
                  <>
                    {' '}
                    <ButtonForm ctx={web} action={`${url}/dependency/delete`} label={`Remove #${dep.index}`} fields={{ removeDependencyID: String(dep.id), dependencyType: type }} />
                  </>
                ) : null}
              </li>
            )
          })}
        </ul>
      ) : (
        <p class="muted">None</p>
      )}
      {found.total > found.rows.length ? <p class="muted">and {found.total - found.rows.length} more</p> : null}
    </>
  )
  return (
    <>
      {section('Depends on', lists[0]!, 'blockedBy')}
      {section('Blocks', lists[1]!, 'blocking')}
      {writer ? (
        <FoldedForm ctx={web} summary="Add dependency" action={`${url}/dependency/add`} class="stack">
          <label>
            Issue this depends on (#number, owner/repo#number or issue id)
            <input name="newDependency" required maxlength="300" />
          </label>
          <div>
            <button type="submit">Add dependency</button>
          </div>
        </FoldedForm>
      ) : null}
    </>
  )
}

const Name = t.String({ maxLength: 255 })
const IndexParams = t.Object({ owner: Name, repo: Name, index: t.String({ maxLength: 40 }) })
const CsrfBody = t.Object({ _csrf: CsrfText }, { additionalProperties: true })
const DeadlineBody = t.Object({ _csrf: CsrfText, deadline: FormText(32) }, { additionalProperties: true })
const TimeBody = t.Object({ _csrf: CsrfText, hours: FormText(16), minutes: FormText(16) }, { additionalProperties: true })
const AddDependencyBody = t.Object({ _csrf: CsrfText, newDependency: FormText(300) }, { additionalProperties: true })
const RemoveDependencyBody = t.Object({ _csrf: CsrfText, removeDependencyID: FormText(20), dependencyType: FormText(16) }, { additionalProperties: true })

/** A `YYYY-MM-DD` day as the API's deadline (the day's last second, UTC); `''` none; 422 for anything else. */
function deadlineOf(value: string | undefined): string | null {
  const day = (value ?? '').trim()
  if (day === '') return null
  const at = `${day}T23:59:59Z`
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day) || Number.isNaN(Date.parse(at)) || new Date(at).toISOString().slice(0, 10) !== day)
    throw unprocessable('The due date must be a day, YYYY-MM-DD.', 'deadline')
  return at
}

/** A whole number of a form's field (empty: 0), at most 999999; 422 otherwise. */
function countOf(value: string | undefined, field: string): number {
  const text = (value ?? '').trim()
  if (text === '') return 0
  if (!/^\d{1,6}$/.test(text)) throw unprocessable(`${field} must be a whole number of at most 999999.`, field)
  return Number(text)
}

/** The issue (any repository's) an issue id names, as the dependencies service's IssueMeta; 404 when there is none. */
async function metaOfId(deps: AppDeps, id: number): Promise<IssueMeta> {
  const [found] = await deps.db
    .select({ index: issues.index, owner: repositories.ownerName, repo: repositories.name })
    .from(issues)
    .innerJoin(repositories, eq(repositories.id, issues.repoId))
    .where(eq(issues.id, id))
  if (!found) throw notFound('no such issue')
  return found
}

/**
 * The issue the add form names: Gitea's issue id (digits), or a number `#12` here or
 * `owner/repo#12` elsewhere; the service decides whether the reader may see it (404 otherwise).
 */
async function newDependencyOf(deps: AppDeps, value: string | undefined): Promise<IssueMeta> {
  const text = (value ?? '').trim()
  if (/^\d{1,15}$/.test(text)) return await metaOfId(deps, Number(text))
  const ref = /^(?:([\w.-]{1,255})\/([\w.-]{1,255}))?#(\d{1,15})$/.exec(text)
  if (!ref) throw badRequest('Name the issue by its id, #number or owner/repo#number.')
  return { owner: ref[1], repo: ref[2], index: Number(ref[3]) }
}

const KINDS = [
  ['issues', 'Issue'],
  ['pulls', 'Pull'],
] as const

export const issueSidePages = (deps: AppDeps, webApp: AreaApp) => {
  const app = pageGroup(webApp)
  for (const [kind, noun] of KINDS) {
    const base = `/:owner/:repo/${kind}/:index`
    /** A form's POST on the issue the path names: `change`, then back to its page. */
    const form = (request: Request, ctx: RepoContext, index: string, body: { _csrf?: string }, change: (issue: IssueRow) => Promise<unknown>) =>
      formRoute(deps.config, { request, caller: ctx.caller, body }, async () => {
        const issue = await issueAt(deps, ctx, kind, index)
        await change(issue)
        return issuePageUrl(ctx.owner.name, ctx.repo.name, issue.index, issue.isPull)
      })
    // The levels of the API's routes making the same changes (the token scope a page's, by its path): writers for the deadline and the dependencies, admins for the pin, signed-in readers for time (the service's rule).
    const writers = { scope: 'repository', repo: { level: 'write', unit: kind }, signed: true, params: IndexParams } as const
    const trackers = { scope: 'repository', repo: { unit: kind }, signed: true, params: IndexParams } as const
    app
      .post(
        `${base}/deadline`,
        ({ request, params, body, repo: ctx }) => {
          return form(request, ctx, params.index, body, (issue) => setIssueDeadline(deps, ctx, issue.index, deadlineOf(body.deadline)))
        },
        { ...writers, body: DeadlineBody, detail: pageDetail(`web${noun}Deadline`) },
      )
      .post(
        `${base}/times/add`,
        ({ request, params, body, repo: ctx, user }) =>
          form(request, ctx, params.index, body, (issue) => {
            const seconds = countOf(body.hours, 'hours') * 3600 + countOf(body.minutes, 'minutes') * 60
            if (seconds <= 0) throw unprocessable('Add some time: hours or minutes.', 'hours')
            return addTime(deps, ctx, issue.index, user, { time: seconds })
          }),
        { ...trackers, body: TimeBody, detail: pageDetail(`web${noun}AddTime`) },
      )
      .post(
        `${base}/times/stopwatch/toggle`,
        ({ request, params, body, repo: ctx, user }) =>
          form(request, ctx, params.index, body, async (issue) =>
            (await stopwatchOn(deps, user.id, issue.id)) ? await stopStopwatch(deps, ctx, issue.index, user, true) : await startStopwatch(deps, ctx, issue.index, user),
          ),
        { ...trackers, body: CsrfBody, detail: pageDetail(`web${noun}StopwatchToggle`) },
      )
      .post(
        `${base}/times/stopwatch/cancel`,
        ({ request, params, body, repo: ctx, user }) => form(request, ctx, params.index, body, (issue) => stopStopwatch(deps, ctx, issue.index, user, false)),
        { ...trackers, body: CsrfBody, detail: pageDetail(`web${noun}StopwatchCancel`) },
      )
      .post(
        `${base}/dependency/add`,
        ({ request, params, body, repo: ctx, user }) =>
          form(request, ctx, params.index, body, async (issue) => addDependency(deps, ctx, user, issue.index, await newDependencyOf(deps, body.newDependency), 'dependencies')),
        { ...writers, body: AddDependencyBody, detail: pageDetail(`web${noun}DependencyAdd`) },
      )
      .post(
        `${base}/dependency/delete`,
        ({ request, params, body, repo: ctx, user }) =>
          form(request, ctx, params.index, body, async (issue) => {
            const direction: Direction | undefined = body.dependencyType === 'blockedBy' ? 'dependencies' : body.dependencyType === 'blocking' ? 'blocks' : undefined
            if (!direction) throw badRequest('dependencyType must be blockedBy or blocking')
            if (!/^\d{1,15}$/.test(body.removeDependencyID ?? '')) throw badRequest('removeDependencyID must be an issue id')
            return removeDependency(deps, ctx, user, issue.index, await metaOfId(deps, Number(body.removeDependencyID)), direction)
          }),
        { ...writers, body: RemoveDependencyBody, detail: pageDetail(`web${noun}DependencyDelete`) },
      )
      .post(
        `${base}/pin`,
        // Gitea's IssuePinOrUnpin: pinned ones are unpinned, others pinned; repository admins, as the API's reqAdmin.
        ({ request, params, body, repo: ctx, user }) =>
          form(request, ctx, params.index, body, (issue) => (issue.pinOrder > 0 ? unpinIssue(deps, ctx, issue.index, user) : pinIssue(deps, ctx, issue.index, user))),
        { scope: 'repository', repo: { level: 'admin', unit: kind }, signed: true, params: IndexParams, body: CsrfBody, detail: pageDetail(`web${noun}Pin`) },
      )
  }
  return app
}
