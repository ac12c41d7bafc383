/** @jsxImportSource warren-jsx */
import { Elysia, t } from 'elysia'
import type { Child, Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { AccessMode } from '../../auth/access'
import type { RepoContext } from '../../auth/repo-context'
import type { OrgContext, OrgRow } from '../../auth/org-context'
import { type ApiRepo } from '../../convert/repo'
import { toApiLabel, toApiMilestone, toApiOrgLabel, type ApiLabel, type ApiMilestone } from '../../convert/issue'
import { pathNumber } from '../../lib/path-number'
import { notFound } from '../../lib/errors'
import { createLabel, deleteLabel, editLabel, initializeLabels, listLabels, type LabelOwner } from '../../modules/labels/service'
import type { LabelRow } from '../../db/schema'
import { createMilestone, deleteMilestone, editMilestone, getMilestone, listMilestones } from '../../modules/milestones/service'
import { labelTemplateNames } from '../../modules/misc/service'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { repoUrl } from '../links'
import { ButtonForm, CsrfField, CsrfText, FormText, formRoute, type FormRequest, ListTable, type Notice, Notices, Pager, pageNumber, pagesOf, seeOther } from '../forms'
import { RepoHeader, pageRepo } from './repo-chrome'
import { orgSettingsPage } from './org-settings'
import { renderAll } from './conversation'
import { LabelChip, MarkdownBody, TimeAt } from './issue-parts'
import { TrackerTabs } from './issues'

/** Labels a page lists (Gitea's label page shows them all; a repository rarely has more). */
const MAX_LABELS = 200
/** Milestones a page lists. */
const MILESTONES_PER_PAGE = 20

const RepoParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }) })
const OrgParams = t.Object({ org: t.String({ maxLength: 255 }) })
const MilestoneParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), id: t.String({ maxLength: 40 }) })
const MilestoneActionParams = t.Object({ ...MilestoneParams.properties, action: t.String({ maxLength: 16 }) })
const MilestoneQuery = t.Object({ state: FormText(16), page: FormText(16), done: FormText(40) })
const DoneQuery = t.Object({ done: FormText(40) })
const LabelForm = t.Object({ _csrf: CsrfText, id: FormText(20), title: FormText(255), color: FormText(16), description: FormText(255) })
const IdForm = t.Object({ _csrf: CsrfText, id: FormText(20) })
const TemplateForm = t.Object({ _csrf: CsrfText, template_name: FormText(100) })
const MilestoneForm = t.Object({ _csrf: CsrfText, title: FormText(255), content: FormText(65_536), deadline: FormText(10) })

type MilestoneValues = typeof MilestoneForm.static

/**
 * Who may see and change a repository's labels and milestones: the API's needs (readers see,
 * writers change, on a repository with issues or pull requests on: the pipeline's `issuesOrPulls`
 * unit, Gitea's reqRepoIssuesOrPullsReader/Writer: both trackers use them).
 */
const ISSUE_READER = { level: 'read', unit: 'issuesOrPulls' } as const
const ISSUE_WRITER = { level: 'write', unit: 'issuesOrPulls' } as const
const page = (id: string) => ({ scope: 'repository' as const, detail: pageDetail(id) })

const labelsUrl = (ctx: RepoContext) => `${repoUrl(ctx.owner.name, ctx.repo.name)}/labels`
const orgLabelsUrl = (org: OrgRow) => `/org/${encodeURIComponent(org.name)}/settings/labels`
const milestonesUrl = (ctx: RepoContext) => `${repoUrl(ctx.owner.name, ctx.repo.name)}/milestones`
const writerOf = (ctx: RepoContext) => !!ctx.caller.user && ctx.mode >= AccessMode.Write && !ctx.repo.isArchived
/** The issue list filtered by a label or milestone (the list page's own filters). */
const issuesWith = (ctx: RepoContext, filter: 'labels' | 'milestone', id: number, state = 'open') =>
  `${repoUrl(ctx.owner.name, ctx.repo.name)}/issues?${new URLSearchParams({ [filter]: String(id), state })}`

/** `YYYY-MM-DD` of a form's date field as Gitea's API takes a due date (end of that day, UTC); '' clears it. */
function dueOn(value: string | undefined): string | null {
  const text = (value ?? '').trim()
  if (!text) return null
  // Malformed or impossible dates reach the service as they are: its check answers 422 with its message.
  return /^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T23:59:59Z` : text
}

function trackerPage(web: WebContext, repo: ApiRepo, title: string, body: Child, status = 200): Response {
  return htmlResponse(
    <Layout ctx={web} title={`${title} · ${repo.full_name}`}>
      <RepoHeader repo={repo} />
      <TrackerTabs repo={repo} current={title === 'Labels' ? 'labels' : 'milestones'} />
      {body}
    </Layout>,
    status,
  )
}

/** The fields of a label's form (new, or an existing label's edit). */
function LabelFields(props: { label?: ApiLabel; prefix: string }): Html {
  const l = props.label
  const id = (name: string) => `${props.prefix}-${name}`
  return (
    <>
      <label for={id('title')}>Name</label>
      <input id={id('title')} name="title" required maxlength={50} value={l?.name ?? ''} />
      <label for={id('color')}>Colour</label>
      <input id={id('color')} name="color" type="color" value={l ? `#${l.color}` : '#1d76db'} />
      <label for={id('description')}>Description</label>
      <input id={id('description')} name="description" maxlength={200} value={l?.description ?? ''} />
    </>
  )
}

/** A row of a labels page: the label, whether it is its organisation's (not edited from a repository's page), and its open issues' list when it has one. */
interface LabelEntry {
  id: number
  record: ApiLabel
  ofOrg: boolean
  issues?: { href: string; open: number }
}

/**
 * A labels page's body (a repository's, an organisation's settings): the labels, each edited and
 * deleted by `writer` at `{action}/edit` and `/delete` unless it is the organisation's on a
 * repository's page; a new label's form (`/new`); a label set's (`/initialize`) when `templates`.
 */
function LabelBoard(props: { web: WebContext; action: string; entries: LabelEntry[]; writer: boolean; templates: string[]; empty: string; more: boolean }): Html {
  const { web, action, writer } = props
  const counted = props.entries.some((e) => e.issues)
  return (
    <>
      {props.entries.length === 0 ? <p class="muted">{props.empty}</p> : null}
      {props.entries.length ? (
        <ListTable label="Labels" columns={['Label', 'Description', ...(counted ? ['Open issues'] : [])]} actions={writer}>
          {props.entries.map(({ id, record, ofOrg, issues }) => (
            <tr>
              <td>
                <LabelChip label={record} href={issues?.href} />
                {ofOrg ? <span class="muted"> (organisation label)</span> : null}
              </td>
              <td>{record.description}</td>
              {counted ? <td>{issues ? <a href={issues.href}>{issues.open} open issues</a> : null}</td> : null}
              {writer ? (
                <td>
                  {ofOrg ? null : (
                    <>
                      <details>
                        <summary>Edit {record.name}</summary>
                        <form method="post" action={`${action}/edit`} aria-label={`Edit label ${record.name}`}>
                          <CsrfField ctx={web} />
                          <input type="hidden" name="id" value={String(id)} />
                          <LabelFields label={record} prefix={`label-${id}`} />
                          <button type="submit">Save label</button>
                        </form>
                      </details>
                      <ButtonForm ctx={web} action={`${action}/delete`} label={`Delete ${record.name}`} fields={{ id: String(id) }} danger />
                    </>
                  )}
                </td>
              ) : null}
            </tr>
          ))}
        </ListTable>
      ) : null}
      {props.more ? <p class="muted">Only the first {MAX_LABELS} labels are shown.</p> : null}
      {writer ? (
        <section class="box" aria-labelledby="new-label">
          <h3 id="new-label">New label</h3>
          <form method="post" action={`${action}/new`}>
            <CsrfField ctx={web} />
            <LabelFields prefix="new-label" />
            <button type="submit" class="primary">
              Create label
            </button>
          </form>
        </section>
      ) : null}
      {props.templates.length ? (
        <section class="box" aria-labelledby="label-template">
          <h3 id="label-template">Start from a label set</h3>
          <form method="post" action={`${action}/initialize`}>
            <CsrfField ctx={web} />
            <label for="template-name">Label set</label>
            <select id="template-name" name="template_name">
              {props.templates.map((name) => (
                <option value={name}>{name}</option>
              ))}
            </select>
            <button type="submit">Use this label set</button>
          </form>
        </section>
      ) : null}
    </>
  )
}

/**
 * `/{o}/{r}/labels`: the repository's labels and its organisation's (marked), each with its open
 * issues linking to the filtered list; writers create, edit and delete them, or start from a label
 * template while there is none.
 */
async function labelsPage(deps: AppDeps, ctx: RepoContext, web: WebContext, opts: { error?: string; status?: number } = {}): Promise<Response> {
  const first = { page: 1, limit: MAX_LABELS, offset: 0 }
  const [repo, own, org] = await Promise.all([
    pageRepo(deps, ctx),
    listLabels(deps, { repoId: ctx.repo.id }, undefined, first),
    ctx.owner.type === 1 ? listLabels(deps, { orgId: ctx.owner.id }, undefined, first) : Promise.resolve(null),
  ])
  const writer = writerOf(ctx)
  const entry = (row: LabelRow, record: ApiLabel, ofOrg: boolean): LabelEntry => ({
    id: row.id,
    record,
    ofOrg,
    issues: { href: issuesWith(ctx, 'labels', row.id), open: row.numIssues - row.numClosedIssues },
  })
  const entries = [
    ...own.rows.map((row) => entry(row, toApiLabel(deps.config, ctx.repo, row), false)),
    ...(org?.rows ?? []).map((row) => entry(row, toApiOrgLabel(deps.config, ctx.owner.name, row), true)),
  ]
  const templates = writer && own.total === 0 ? await labelTemplateNames() : []
  return trackerPage(
    web,
    repo,
    'Labels',
    <>
      <h2>
        Labels <span class="muted">({own.total + (org?.total ?? 0)})</span>
      </h2>
      <Notices ctx={web} error={opts.error} />
      <LabelBoard web={web} action={labelsUrl(ctx)} entries={entries} writer={writer} templates={templates} empty="This repository has no labels yet." more={own.total > MAX_LABELS} />
    </>,
    opts.status,
  )
}

/**
 * `/org/{org}/settings/labels` (its owners'): the labels every repository of the organisation may
 * use, created, edited and deleted through the service of the API's `/orgs/{org}/labels`, or
 * started from a label set while there is none.
 */
async function orgLabelsPage(deps: AppDeps, org: OrgRow, web: WebContext, opts: { error?: string; status?: number } = {}): Promise<Response> {
  const found = await listLabels(deps, { orgId: org.id }, undefined, { page: 1, limit: MAX_LABELS, offset: 0 })
  const entries = found.rows.map((row) => ({ id: row.id, record: toApiOrgLabel(deps.config, org.name, row), ofOrg: false }))
  const templates = found.total === 0 ? await labelTemplateNames() : []
  return orgSettingsPage(
    web,
    org,
    orgLabelsUrl(org),
    'Labels',
    <>
      <p>Labels every repository of {org.name} may put on its issues and pull requests.</p>
      <LabelBoard web={web} action={orgLabelsUrl(org)} entries={entries} writer templates={templates} empty="This organisation has no labels yet." more={found.total > MAX_LABELS} />
    </>,
    opts,
  )
}

/** A milestone's progress: closed of all its issues, as a percentage. */
function Progress(props: { milestone: ApiMilestone }): Html {
  const { open_issues: open, closed_issues: closed } = props.milestone
  const total = open + closed
  const percent = total ? Math.floor((closed * 100) / total) : 0
  return (
    <span class="progress">
      <progress max={100} value={percent} aria-label={`${props.milestone.title}: ${percent}% complete`} /> {percent}% · {open} open · {closed} closed
    </span>
  )
}

/**
 * `/{o}/{r}/milestones`: open and closed milestones with their counts, each with its due date,
 * progress and description; writers open, close, edit and delete them.
 */
async function milestonesPage(deps: AppDeps, ctx: RepoContext, web: WebContext, query: typeof MilestoneQuery.static, client: string): Promise<Response> {
  const state = query.state === 'closed' ? 'closed' : 'open'
  const number = pageNumber(query.page)
  const [repo, found] = await Promise.all([
    pageRepo(deps, ctx),
    listMilestones(deps, ctx.repo.id, { page: number, limit: MILESTONES_PER_PAGE, offset: (number - 1) * MILESTONES_PER_PAGE }, state),
  ])
  const records = found.rows.map(toApiMilestone)
  const html = await renderAll(deps, ctx, records.map((m) => m.description), client)
  const writer = writerOf(ctx)
  const closedCount = ctx.repo.numClosedMilestones
  const openCount = Math.max(0, ctx.repo.numMilestones - closedCount)
  const base = milestonesUrl(ctx)
  return trackerPage(
    web,
    repo,
    'Milestones',
    <>
      <div class="list-head">
        <h2>Milestones</h2>
        {writer ? (
          <a class="button primary" href={`${base}/new`}>
            New milestone
          </a>
        ) : null}
      </div>
      <Notices ctx={web} />
      <nav class="tabs" aria-label="Milestone state">
        <a href={`${base}?state=open`} aria-current={state === 'open' ? 'page' : undefined}>
          {openCount} open
        </a>
        <a href={`${base}?state=closed`} aria-current={state === 'closed' ? 'page' : undefined}>
          {closedCount} closed
        </a>
      </nav>
      {records.length === 0 ? <p class="muted">No {state} milestones.</p> : null}
      <ul class="entries milestones">
        {records.map((m, i) => (
          <li>
            <article aria-label={m.title}>
              <h3>
                <a href={`${repoUrl(ctx.owner.name, ctx.repo.name)}/milestone/${m.id}`}>{m.title}</a>
              </h3>
              <p class="muted">
                {m.due_on ? (
                  <>
                    Due <TimeAt iso={m.due_on} />
                  </>
                ) : (
                  'No due date'
                )}
                {m.closed_at ? (
                  <>
                    {' '}
                    · closed <TimeAt iso={m.closed_at} />
                  </>
                ) : null}
              </p>
              <Progress milestone={m} />
              <MarkdownBody html={html[i] ?? null} text={m.description} />
              {writer ? (
                <p class="actions">
                  <a href={`${base}/${m.id}/edit`}>Edit {m.title}</a>{' '}
                  <ButtonForm ctx={web} action={`${base}/${m.id}/${m.state === 'open' ? 'close' : 'open'}`} label={`${m.state === 'open' ? 'Close' : 'Reopen'} ${m.title}`} />{' '}
                  <ButtonForm ctx={web} action={`${base}/delete`} label={`Delete ${m.title}`} fields={{ id: String(m.id) }} danger />
                </p>
              ) : null}
            </article>
          </li>
        ))}
      </ul>
      <Pager path={base} query={{ state }} page={number} pages={pagesOf(found.total, MILESTONES_PER_PAGE)} label="Milestone pages" />
    </>,
  )
}

/** The new or edit form of a milestone, with what was typed and the refusal when it comes back. */
async function milestoneFormPage(
  deps: AppDeps,
  ctx: RepoContext,
  web: WebContext,
  opts: { milestone?: ApiMilestone; values?: MilestoneValues; error?: string; status?: number },
): Promise<Response> {
  const repo = await pageRepo(deps, ctx)
  const m = opts.milestone
  const values = opts.values ?? { title: m?.title ?? '', content: m?.description ?? '', deadline: m?.due_on?.slice(0, 10) ?? '' }
  const action = m ? `${milestonesUrl(ctx)}/${m.id}/edit` : `${milestonesUrl(ctx)}/new`
  return trackerPage(
    web,
    repo,
    'Milestones',
    <>
      <h2>{m ? `Edit milestone ${m.title}` : 'New milestone'}</h2>
      <Notices ctx={web} error={opts.error} />
      <form method="post" action={action} class="box">
        <CsrfField ctx={web} />
        <label for="milestone-title">Title</label>
        <input id="milestone-title" name="title" required maxlength={255} value={values.title ?? ''} />
        <label for="milestone-deadline">Due date (optional)</label>
        <input id="milestone-deadline" name="deadline" type="date" value={values.deadline ?? ''} />
        <label for="milestone-content">Description</label>
        <textarea id="milestone-content" name="content" rows={8}>
          {values.content ?? ''}
        </textarea>
        <button type="submit" class="primary">
          {m ? 'Save milestone' : 'Create milestone'}
        </button>{' '}
        <a href={milestonesUrl(ctx)}>Cancel</a>
      </form>
    </>,
    opts.status,
  )
}

/** A label's id from a form (digits), or 404. */
function labelIdOf(value: string | undefined): string {
  if (!/^\d{1,15}$/.test(value ?? '')) throw notFound('no such label')
  return value!
}

const labelValues = (body: typeof LabelForm.static) => ({ name: (body.title ?? '').trim(), color: body.color ?? '', description: body.description ?? '' })

/** Where a labels page's forms act: the labels' owner, the page's address, and the page again (with a refusal). */
interface LabelPlace {
  owner: LabelOwner
  url: string
  again: (web: WebContext, error: string, status: number) => Promise<Response>
}

/** The forms of a labels page, at `{page}/{name}`: what each does, and the notice after it. */
const LABEL_FORMS = [
  { name: 'new', id: 'Create', done: 'label-added', body: LabelForm, act: (deps: AppDeps, owner: LabelOwner, body: typeof LabelForm.static) => createLabel(deps, owner, labelValues(body)) },
  { name: 'edit', id: 'Edit', done: 'saved', body: LabelForm, act: (deps: AppDeps, owner: LabelOwner, body: typeof LabelForm.static) => editLabel(deps, owner, labelIdOf(body.id), labelValues(body)) },
  { name: 'delete', id: 'Delete', done: 'label-deleted', body: IdForm, act: (deps: AppDeps, owner: LabelOwner, body: typeof IdForm.static) => deleteLabel(deps, owner, Number(labelIdOf(body.id))) },
  {
    name: 'initialize',
    id: 'sInitialize',
    done: 'labels-initialized',
    body: TemplateForm,
    act: (deps: AppDeps, owner: LabelOwner, body: typeof TemplateForm.static) => initializeLabels(deps, owner, body.template_name ?? ''),
  },
] as const

/**
 * A labels page's form routes (`{path}/new`, `/edit`, `/delete`, `/initialize`) on `app`, each
 * under `needs`: the form's action, then back to the page with its notice; a refusal shows the
 * page again with it. `placeOf` finds the labels' owner from what the needs resolved.
 */
function labelFormRoutes<A extends Elysia<any, any, any, any, any, any, any>>(
  deps: AppDeps,
  app: A,
  path: string,
  idPrefix: string,
  needs: Record<string, unknown>,
  placeOf: (c: Record<string, unknown>) => LabelPlace,
): A {
  for (const form of LABEL_FORMS) {
    // Destructured: a context handed on whole has Elysia parse each request's cookies and headers.
    const handler = ({ request, caller, body, repo, org }: FormRequest & { body: Record<string, string | undefined>; repo?: unknown; org?: unknown }) => {
      const place = placeOf({ repo, org })
      return formRoute(
        deps.config,
        { request, caller, body },
        async () => {
          await form.act(deps, place.owner, body as never)
          return seeOther(place.url, form.done)
        },
        (web, error, status) => place.again(web, error, status),
      )
    }
    ;(app as any).post(`${path}/${form.name}`, handler, { ...needs, body: form.body, detail: pageDetail(`web${idPrefix}Label${form.id}`) })
  }
  return app
}

/** A milestone of the repository named by the path (its id), or 404. */
async function milestoneOf(deps: AppDeps, ctx: RepoContext, id: string): Promise<ApiMilestone> {
  if (!Number.isSafeInteger(pathNumber(id))) throw notFound('no such milestone')
  return toApiMilestone(await getMilestone(deps, ctx.repo.id, id))
}

/**
 * Gitea's label and milestone pages: `/{o}/{r}/labels` (+ `/new`, `/edit`, `/delete`,
 * `/initialize`), `/{o}/{r}/milestones` (+ `/new`, `/{id}/edit`, `/{id}/open|close`, `/delete`)
 * and `/{o}/{r}/milestone/{id}` (its issues: the issue list filtered by it). Through the labels
 * and milestones services, under the API's levels: readers see them, writers change them, while
 * the repository has issues or pull requests on.
 */
export const labelPages = (deps: AppDeps, webApp: AreaApp) =>
  labelFormRoutes(
    deps,
    pageGroup(webApp)
      .get('/:owner/:repo/labels', ({ request, repo: ctx }) => labelsPage(deps, ctx, webContext(deps.config, request, ctx.caller)), {
        ...page('webLabels'),
        repo: ISSUE_READER,
        params: RepoParams,
        query: DoneQuery,
      }),
    '/:owner/:repo/labels',
    '',
    { scope: 'repository', repo: ISSUE_WRITER, params: RepoParams },
    (c) => {
      const ctx = c.repo as RepoContext
      return { owner: { repoId: ctx.repo.id }, url: labelsUrl(ctx), again: (web, error, status) => labelsPage(deps, ctx, web, { error, status }) }
    },
  )
    .get('/:owner/:repo/milestones', ({ request, query, repo: ctx }) => milestonesPage(deps, ctx, webContext(deps.config, request, ctx.caller), query, deps.auth.clientAddress(request) ?? ''), {
      ...page('webMilestones'),
      repo: ISSUE_READER,
      params: RepoParams,
      query: MilestoneQuery,
    })
    .get('/:owner/:repo/milestones/new', ({ request, repo: ctx }) => milestoneFormPage(deps, ctx, webContext(deps.config, request, ctx.caller), {}), {
      ...page('webMilestoneNew'),
      repo: ISSUE_WRITER,
      params: RepoParams,
    })
    .post(
      '/:owner/:repo/milestones/new',
      ({ request, caller, body, repo: ctx }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            await createMilestone(deps, ctx.repo.id, { title: (body.title ?? '').trim(), description: body.content ?? '', due_on: dueOn(body.deadline) })
            return seeOther(milestonesUrl(ctx), 'milestone-added')
          },
          (web, error, status) => milestoneFormPage(deps, ctx, web, { values: body, error, status }),
        ),
      { ...page('webMilestoneCreate'), repo: ISSUE_WRITER, params: RepoParams, body: MilestoneForm },
    )
    .get(
      '/:owner/:repo/milestones/:id/edit',
      async ({ request, params, repo: ctx }) => milestoneFormPage(deps, ctx, webContext(deps.config, request, ctx.caller), { milestone: await milestoneOf(deps, ctx, params.id) }),
      { ...page('webMilestoneEditForm'), repo: ISSUE_WRITER, params: MilestoneParams },
    )
    .post(
      '/:owner/:repo/milestones/:id/edit',
      async ({ request, caller, body, params, repo: ctx }) => {
        const milestone = await milestoneOf(deps, ctx, params.id)
        return formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            await editMilestone(deps, ctx.repo.id, String(milestone.id), { title: (body.title ?? '').trim(), description: body.content ?? '', due_on: dueOn(body.deadline) })
            return seeOther(milestonesUrl(ctx), 'saved')
          },
          (web, error, status) => milestoneFormPage(deps, ctx, web, { milestone, values: body, error, status }),
        )
      },
      { ...page('webMilestoneEdit'), repo: ISSUE_WRITER, params: MilestoneParams, body: MilestoneForm },
    )
    .post(
      '/:owner/:repo/milestones/:id/:action',
      async ({ request, caller, body, params, repo: ctx }) => {
        if (params.action !== 'open' && params.action !== 'close') throw notFound()
        const milestone = await milestoneOf(deps, ctx, params.id)
        return formRoute(deps.config, { request, caller, body }, async () => {
          await editMilestone(deps, ctx.repo.id, String(milestone.id), { state: params.action === 'close' ? 'closed' : 'open' })
          return seeOther(`${milestonesUrl(ctx)}?state=${params.action === 'close' ? 'closed' : 'open'}`, params.action === 'close' ? 'milestone-closed' : 'milestone-opened')
        })
      },
      { ...page('webMilestoneState'), repo: ISSUE_WRITER, params: MilestoneActionParams, body: t.Object({ _csrf: CsrfText }) },
    )
    .post(
      '/:owner/:repo/milestones/delete',
      ({ request, caller, body, repo: ctx }) =>
        formRoute(deps.config, { request, caller, body }, async () => {
          if (!/^\d{1,15}$/.test(body.id ?? '')) throw notFound('no such milestone')
          await deleteMilestone(deps, ctx.repo.id, body.id!)
          return seeOther(milestonesUrl(ctx), 'milestone-deleted')
        }),
      { ...page('webMilestoneDelete'), repo: ISSUE_WRITER, params: RepoParams, body: IdForm },
    )
    .get(
      '/:owner/:repo/milestone/:id',
      async ({ params, repo: ctx }) => {
        // Gitea's milestone page lists its issues: here the issue list, filtered by it (open and closed tabs there).
        const milestone = await milestoneOf(deps, ctx, params.id)
        return seeOther(issuesWith(ctx, 'milestone', milestone.id, milestone.state === 'closed' ? 'all' : 'open'))
      },
      { ...page('webMilestoneIssues'), repo: ISSUE_READER, params: MilestoneParams },
    )

/**
 * Gitea's organisation labels page: `/org/{org}/settings/labels` (+ `/new`, `/edit`, `/delete`,
 * `/initialize`), its owners' (the API's `/orgs/{org}/labels` rule), through the labels service.
 */
export const orgLabelPages = (deps: AppDeps, webApp: AreaApp) => {
  const needs = { scope: 'organization', signed: true, org: 'owner', params: OrgParams } as const
  return labelFormRoutes(
    deps,
    pageGroup(webApp)
      .get('/org/:org/settings/labels', ({ request, caller, org }) => orgLabelsPage(deps, org.org, webContext(deps.config, request, caller)), {
        ...needs,
        query: DoneQuery,
        detail: pageDetail('webOrgLabels'),
      }),
    '/org/:org/settings/labels',
    'Org',
    needs,
    (c) => {
      const org = (c.org as OrgContext).org
      return { owner: { orgId: org.id }, url: orgLabelsUrl(org), again: (web, error, status) => orgLabelsPage(deps, org, web, { error, status }) }
    },
  )
}
