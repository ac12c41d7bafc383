/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { AccessMode } from '../../auth/access'
import { projectsReadable, type RepoContext } from '../../auth/repo-context'
import { repoToApi, type ApiRepo } from '../../convert/repo'
import { issuesToApi, type ApiIssue } from '../../convert/issue'
import type { LabelRow, MilestoneRow } from '../../db/schema'
import { ApiError, forbidden } from '../../lib/errors'
import { pathNumber } from '../../lib/path-number'
import { findIssue, listIssues, type IssueFilter } from '../../modules/issues/queries'
import { createIssue, editIssue, mayEditIssue } from '../../modules/issues/service'
import { createComment } from '../../modules/comments/service'
import { editPull } from '../../modules/pulls/service'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { repoUrl, signInUrl } from '../links'
import { signInRedirect } from '../errors'
import { RepoHeader, pageRepo } from './repo-chrome'
import { CodeNav } from './code-nav'
import { choicesOf, COMMENTS_PER_PAGE, loadConversation, MAX_CHOICES, projectsFor, type Conversation } from './conversation'
import { ConversationView } from './timeline'
import { conversationControls } from './issue-edit'
import { IssueSide } from './issue-side'
import { pinnedRows } from '../../modules/issue-pins/service'
import { formRoute, Notices } from '../forms'
import { issueConfig, issueTemplates, newIssueTemplate } from '../../modules/issue-templates/service'
import type { IssueTemplate } from '../../modules/issue-templates/parse'
import { answersBody, attr, isKnownField, isRequired, onForm, optionsOf, type FormValues } from '../../modules/issue-templates/form'
import { CsrfField, fieldList, multiline, IssueRow, issuePageUrl, Pager, SideFacts, StateBadge, TimeAt, UserLink } from './issue-parts'

/** Rows a list page shows (Gitea's web lists show 20). */
const PER_PAGE = 20
/** Highest page number a list or a conversation accepts (past it there is nothing to show). */
const MAX_PAGE = 100_000

const Text = (max: number) => t.Optional(t.String({ maxLength: max }))
const RepoParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }) })
const IndexParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), index: t.String({ maxLength: 40 }) })
const ListQuery = t.Object({ state: Text(16), labels: Text(1000), milestone: Text(255), project: Text(20), assignee: Text(255), poster: Text(255), q: Text(255), page: Text(16) })
const PageQuery = t.Object({ page: Text(16), comment: Text(16) })
/** Form bodies: every field bounded; unknown fields ignored. */
const CommentBody = t.Object({ _csrf: Text(128), content: Text(65_536), status: Text(16) }, { additionalProperties: true })
const NewIssueBody = t.Object(
  {
    _csrf: Text(128),
    title: Text(1024),
    content: Text(65_536),
    label_ids: t.Optional(t.Union([t.String({ maxLength: 20 }), t.Array(t.String({ maxLength: 20 }), { maxItems: MAX_CHOICES })])),
    milestone_id: Text(20),
    assignees: Text(2048),
    ref: Text(255),
    'template-file': Text(255),
  },
  { additionalProperties: true },
)
/** `/issues/new`'s query: a chooser's template, and Gitea's title and body prefills. */
const NewIssueQuery = t.Object({ template: Text(255), title: Text(1024), body: Text(65_536) })
/** An issue form's answer (one value, or a multiple dropdown's several), bounded as a description is. */
const answerValues = (body: Record<string, unknown>): FormValues => (name) => fieldList(body[name]).slice(0, MAX_CHOICES).map((v) => v.slice(0, 65_536))

/** A page number from a query (1 when absent or not a number; bounded). */
export const pageNumber = (value: string | undefined): number => {
  const n = /^\d{1,9}$/.test(value ?? '') ? Number(value) : 1
  return Math.min(Math.max(1, n), MAX_PAGE)
}

/** An issue's index from the path; 404 when it is not one. */
export function indexOf(value: string): number {
  const index = pathNumber(value)
  if (!Number.isSafeInteger(index)) throw new ApiError(404, 'no such issue')
  return index
}


/**
 * The menu of a repository's issue tracker pages: the repository's one menu (CodeNav), and on the
 * issues' pages their labels and milestones beside them.
 */
export function TrackerTabs(props: { repo: ApiRepo; current: 'issues' | 'pulls' | 'labels' | 'milestones' }): Html {
  const base = repoUrl(props.repo.owner.login, props.repo.name)
  const tab = (name: typeof props.current, text: string) => (
    <a href={`${base}/${name}`} aria-current={props.current === name ? 'page' : undefined}>
      {text}
    </a>
  )
  return (
    <>
      <CodeNav repo={props.repo} current={props.current === 'pulls' ? 'pulls' : 'issues'} />
      {props.current !== 'pulls' && props.repo.has_issues ? (
        <nav class="tabs" aria-label="Issues">
          {tab('issues', 'Issues')}
          {tab('labels', 'Labels')}
          {tab('milestones', 'Milestones')}
        </nav>
      ) : null}
    </>
  )
}

type ListQueryValue = typeof ListQuery.static

/**
 * `/{owner}/{repo}/issues` and `/pulls`: one page of the list (the issues service's filters:
 * labels, milestone, assignee, poster, keyword), open and closed tabs with their counts.
 */
async function listPage(deps: AppDeps, request: Request, ctx: RepoContext, query: ListQueryValue, kind: 'issues' | 'pulls'): Promise<Response> {
  const web = webContext(deps.config, request, ctx.caller)
  const viewer = ctx.caller.user
  const repo = await repoToApi(deps, ctx.repo, ctx.owner, viewer, ctx.mode)
  const state = query.state === 'closed' || query.state === 'all' ? query.state : 'open'
  const page = pageNumber(query.page)
  const filter: IssueFilter = {
    type: kind,
    labels: query.labels || undefined,
    milestones: query.milestone || undefined,
    project: /^-?\d{1,15}$/.test(query.project ?? '') ? Number(query.project) : undefined,
    created_by: query.poster?.trim() || undefined,
    assigned_by: query.assignee?.trim() || undefined,
    q: query.q?.trim() || undefined,
  }
  let issues: ApiIssue[] = []
  let total = 0
  let counts = { open: 0, closed: 0 }
  let problem: string | null = null
  try {
    const found = await listIssues(deps, ctx.repo, viewer, { ...filter, state }, { page, limit: PER_PAGE, offset: (page - 1) * PER_PAGE })
    total = found.total
    const countOf = async (s: 'open' | 'closed') => (state === s ? found.total : (await listIssues(deps, ctx.repo, viewer, { ...filter, state: s }, { page: 1, limit: 1, offset: 0 })).total)
    counts = { open: await countOf('open'), closed: await countOf('closed') }
    issues = await issuesToApi(deps, ctx.repo, found.rows, viewer)
  } catch (e) {
    // A filter naming no one (or no one visible) says so on the page.
    if (!(e instanceof ApiError) || e.status >= 500) throw e
    problem = e.status === 404 ? 'No such user: the poster or assignee filter names no one you can see.' : e.message
  }
  // Gitea's pinned issues atop the list's first page.
  const pinned = page === 1 ? await issuesToApi(deps, ctx.repo, await pinnedRows(deps, ctx.repo.id, kind === 'pulls'), viewer) : []
  const choices = await choicesOf(deps, ctx)
  const projects = projectsReadable(ctx) ? await projectsFor(deps, ctx) : []
  const path = `${repoUrl(repo.owner.login, repo.name)}/${kind}`
  const params = { labels: query.labels, milestone: query.milestone, project: query.project, assignee: query.assignee, poster: query.poster, q: query.q }
  const tabHref = (s: string) => `${path}?${new URLSearchParams(Object.entries({ ...params, state: s }).filter((e): e is [string, string] => !!e[1]))}`
  const noun = kind === 'pulls' ? 'Pull requests' : 'Issues'
  return htmlResponse(
    <Layout ctx={web} title={`${noun} · ${repo.full_name}`}>
      <RepoHeader repo={repo} />
      <TrackerTabs repo={repo} current={kind} />
      <div class="list-head">
        <h2>{noun}</h2>
        {kind === 'issues' && viewer ? (
          <a class="button primary" href={`${repoUrl(repo.owner.login, repo.name)}/issues/new/choose`}>
            New issue
          </a>
        ) : null}
      </div>
      <form class="filters" method="get" action={path} role="search" aria-label={`Filter ${noun.toLowerCase()}`}>
        <input type="hidden" name="state" value={state} />
        <label>
          Search
          <input type="search" name="q" value={query.q ?? ''} />
        </label>
        <label>
          Label
          <select name="labels">
            <option value="">Any</option>
            {choices.labels.map((l) => (
              <option value={String(l.id)} selected={query.labels === String(l.id)}>
                {l.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Milestone
          <select name="milestone">
            <option value="">Any</option>
            {choices.milestones.map((m) => (
              <option value={String(m.id)} selected={query.milestone === String(m.id)}>
                {m.name}
              </option>
            ))}
          </select>
        </label>
        {projects.length ? (
          <label>
            Project
            <select name="project">
              <option value="">Any</option>
              <option value="-1" selected={query.project === '-1'}>
                No project
              </option>
              {projects.map((p) => (
                <option value={String(p.id)} selected={query.project === String(p.id)}>
                  {p.title}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        <label>
          Poster
          <input name="poster" value={query.poster ?? ''} autocomplete="off" />
        </label>
        <label>
          Assignee
          <input name="assignee" value={query.assignee ?? ''} autocomplete="off" />
        </label>
        <button type="submit">Filter</button>
      </form>
      <nav class="state-tabs" aria-label="State">
        <a href={tabHref('open')} aria-current={state === 'open' ? 'page' : undefined}>
          {counts.open} Open
        </a>
        <a href={tabHref('closed')} aria-current={state === 'closed' ? 'page' : undefined}>
          {counts.closed} Closed
        </a>
        <a href={tabHref('all')} aria-current={state === 'all' ? 'page' : undefined}>
          All
        </a>
      </nav>
      {problem ? (
        <p class="error" role="alert">
          {problem}
        </p>
      ) : null}
      {pinned.length ? (
        <div class="box">
          <ul class="entries" aria-label={`Pinned ${noun.toLowerCase()}`}>
            {pinned.map((issue) => (
              <IssueRow owner={repo.owner.login} repo={repo.name} issue={issue} listPath={path} />
            ))}
          </ul>
        </div>
      ) : null}
      <div class="box">
        <ul class="entries" aria-label={noun}>
          {issues.map((issue) => (
            <IssueRow owner={repo.owner.login} repo={repo.name} issue={issue} listPath={path} />
          ))}
          {issues.length === 0 ? <li class="muted">{problem ? 'Nothing to show.' : `No ${noun.toLowerCase()} match.`}</li> : null}
        </ul>
      </div>
      <Pager path={path} query={{ ...params, state }} page={page} pages={Math.ceil(total / PER_PAGE)} label={`Pages of ${noun.toLowerCase()}`} />
    </Layout>,
  )
}

/** The comment form under a conversation: comment, and close or reopen (with the comment, if any) for the poster and writers. */
export function CommentForm(props: { ctx: WebContext; repoCtx: RepoContext; conv: Conversation; action: string; closable: boolean }): Html {
  const { ctx, repoCtx, conv } = props
  const user = ctx.caller.user
  if (!user)
    return (
      <p class="notice">
        <a href={signInUrl(ctx.path)}>Sign in</a> to join this conversation.
      </p>
    )
  if (repoCtx.repo.isArchived) return <p class="notice muted">This repository is archived: it takes no comments.</p>
  if (conv.issue.is_locked && repoCtx.mode < AccessMode.Write) return <p class="notice muted">This conversation is locked: only collaborators may comment.</p>
  const mayClose = props.closable && (repoCtx.mode >= AccessMode.Write || conv.issue.user.id === user.id)
  const open = conv.issue.state === 'open'
  return (
    <form class="stack wide comment-form" method="post" action={props.action}>
      <CsrfField ctx={ctx} />
      <label>
        Comment
        <textarea name="content" rows="6" maxlength="65536" />
      </label>
      <div class="buttons">
        <button class="primary" type="submit" name="status" value="">
          Comment
        </button>
        {mayClose ? (
          <button type="submit" name="status" value={open ? 'close' : 'reopen'}>
            {open ? 'Close with comment' : 'Reopen'}
          </button>
        ) : null}
      </div>
    </form>
  )
}

/** The heading of a conversation: title, number, state, who opened it and when. */
export function ConversationHead(props: { conv: Conversation; noun: string; merged?: boolean; edit?: Html | null; children?: Html }): Html {
  const { issue } = props.conv
  return (
    <section class="conversation-head" aria-label={props.noun}>
      <h1>
        {issue.title} <span class="muted">#{issue.number}</span>
      </h1>
      <p>
        <StateBadge state={issue.state} merged={props.merged} /> <UserLink user={issue.user} /> opened this {props.noun.toLowerCase()} <TimeAt iso={issue.created_at} /> ·{' '}
        {issue.comments} {issue.comments === 1 ? 'comment' : 'comments'}
        {issue.is_locked ? <> · <span class="tag">locked</span></> : null}
      </p>
      {props.edit ?? null}
      {props.children}
    </section>
  )
}

/**
 * After a comment form: comments (when there is text), then closes or reopens (`status`), each
 * through the service the API calls (`createComment`; `editIssue`, or `editPull` for a pull
 * request). Answers where to go: the new comment on its page, else the conversation. One who may
 * not change the state is refused before anything is written; a state change the issue itself
 * refuses leaves the comment posted and the page says so (Gitea's NewComment).
 */
async function commentAndState(deps: AppDeps, ctx: RepoContext, index: number, body: typeof CommentBody.static): Promise<string> {
  const user = ctx.caller.user!
  const issue = await findIssue(deps, ctx.repo.id, index)
  const url = issuePageUrl(ctx.owner.name, ctx.repo.name, index, issue.isPull)
  const content = multiline(body.content)
  const state = body.status === 'close' ? 'closed' : body.status === 'reopen' ? 'open' : undefined
  // Refused before the comment is written: a refused form changes nothing.
  if (state && !mayEditIssue(ctx, issue, user)) throw forbidden(`Only the poster or a writer may close or reopen this ${issue.isPull ? 'pull request' : 'issue'}`)
  let page = ''
  let anchor = ''
  if (content.trim() || !state) {
    const { row: comment } = await createComment(deps, ctx, index, user, content)
    const total = (await findIssue(deps, ctx.repo.id, index)).numComments
    page = `page=${Math.max(1, Math.ceil(total / COMMENTS_PER_PAGE))}`
    anchor = `#issuecomment-${comment.id}`
  }
  if (state) {
    try {
      if (issue.isPull) await editPull(deps, ctx, index, user, { state })
      else await editIssue(deps, ctx, index, user, { state })
    } catch (e) {
      // The comment stands, as Gitea's NewComment keeps it and flashes why the state did not
      // change (open dependencies, a merged pull request, another open one for the same
      // branches): said by the page it goes back to. Without a comment, the refusal is the form's.
      if (!(e instanceof ApiError) || e.status >= 500 || !anchor) throw e
      return `${url}?${page}&done=state-unchanged${anchor}`
    }
  }
  return url + (page ? `?${page}` : '') + anchor
}

/** What the new issue form shows: a template's prefills, or what was posted when it is shown again. */
interface NewIssueValues {
  template: IssueTemplate | null
  title: string
  content: string
  labelIds: Set<number>
  assignees: string
  milestone?: string
  answers?: FormValues
  error?: string
}

/** One field of an issue form (Gitea's templates/repo/issue/fields): its label, description, placeholder, default or posted value. */
function FormField(props: { field: IssueTemplate['body'] extends (infer F)[] | null ? F : never; answers?: FormValues }): Html {
  const { field, answers } = props
  if (!isKnownField(field) || !onForm(field)) return <></>
  const name = `form-field-${field.id}`
  const id = `field-${field.id}`
  const required = isRequired(field)
  const label = attr(field, 'label')
  const description = attr(field, 'description') ? <span class="muted">{attr(field, 'description')}</span> : null
  const posted = answers?.(name)
  const value = posted ? (posted[0] ?? '') : attr(field, 'value')
  if (field.type === 'markdown') return <div class="notice">{multiline(attr(field, 'value'))}</div>
  if (field.type === 'checkboxes')
    return (
      <fieldset>
        <legend>{label}</legend>
        {description}
        {optionsOf(field).map((o, n) => (
          <label class="check">
            <input type="checkbox" name={`${name}-${n}`} checked={answers?.(`${name}-${n}`)[0] === 'on'} required={o.required} /> {o.label}
          </label>
        ))}
      </fieldset>
    )
  const labelText = (
    <>
      {label}
      {required ? <span aria-hidden="true"> *</span> : null}
    </>
  )
  if (field.type === 'dropdown') {
    const picked = new Set((posted ?? []).flatMap((v) => v.split(',')))
    const multiple = field.attributes.multiple === true
    return (
      <label for={id}>
        {labelText} {description}
        <select id={id} name={name} required={required} multiple={multiple}>
          {multiple ? null : <option value="">Select an option</option>}
          {optionsOf(field).map((o, n) => (
            <option value={String(n)} selected={picked.has(String(n))}>
              {o.label}
            </option>
          ))}
        </select>
      </label>
    )
  }
  const placeholder = attr(field, 'placeholder') || undefined
  return (
    <label for={id}>
      {labelText} {description}
      {field.type === 'textarea' ? (
        <textarea id={id} name={name} rows="6" maxlength="65536" required={required} placeholder={placeholder}>
          {value}
        </textarea>
      ) : (
        <input id={id} name={name} value={value} maxlength="65536" required={required} placeholder={placeholder} inputmode={field.validations.is_number === true ? 'decimal' : undefined} />
      )}
    </label>
  )
}

/** `/issues/new`: the new issue form (labels, milestone and assignees for writers, as the service applies them); an issue form's fields when its template is one. */
function NewIssueForm(props: { ctx: WebContext; repoCtx: RepoContext; labels: LabelRow[]; milestones: MilestoneRow[]; action: string; values: NewIssueValues }): Html {
  const writer = props.repoCtx.mode >= AccessMode.Write
  const { values } = props
  const template = values.template
  const fields = template?.body ?? null
  const ref = template && template.ref !== 'refs/heads/' ? template.ref : ''
  return (
    <form class="stack wide" method="post" action={props.action}>
      <CsrfField ctx={props.ctx} />
      {values.error ? (
        <p class="error" role="alert">
          {values.error}
        </p>
      ) : null}
      {template ? <input type="hidden" name="template-file" value={template.file_name} /> : null}
      {ref ? (
        <>
          <input type="hidden" name="ref" value={ref} />
          <p class="muted">
            Reference: <code>{ref.replace(/^refs\/(heads|tags)\//, '')}</code>
          </p>
        </>
      ) : null}
      <label>
        Title
        <input name="title" required maxlength="255" value={values.title} />
      </label>
      {fields ? (
        fields.map((field) => <FormField field={field} answers={values.answers} />)
      ) : (
        <label>
          Description
          <textarea name="content" rows="10" maxlength="65536">
            {values.content}
          </textarea>
        </label>
      )}
      {writer ? (
        <>
          {props.labels.length ? (
            <fieldset>
              <legend>Labels</legend>
              {props.labels.map((l) => (
                <label class="check">
                  <input type="checkbox" name="label_ids" value={String(l.id)} checked={values.labelIds.has(l.id)} /> {l.name}
                </label>
              ))}
            </fieldset>
          ) : null}
          {props.milestones.length ? (
            <label>
              Milestone
              <select name="milestone_id">
                <option value="">No milestone</option>
                {props.milestones
                  .filter((m) => !m.isClosed)
                  .map((m) => (
                    <option value={String(m.id)} selected={values.milestone === String(m.id)}>
                      {m.name}
                    </option>
                  ))}
              </select>
            </label>
          ) : null}
          <label>
            Assignees (user names, separated by commas)
            <input name="assignees" autocomplete="off" value={values.assignees} />
          </label>
        </>
      ) : null}
      <div>
        <button class="primary" type="submit">
          Create issue
        </button>
      </div>
    </form>
  )
}

/** The new issue page: the form with `values`, or the archived repository's refusal. */
async function newIssuePage(deps: AppDeps, web: WebContext, ctx: RepoContext, values: (labels: LabelRow[]) => NewIssueValues, status = 200): Promise<Response> {
  const repo = await pageRepo(deps, ctx)
  const choices = ctx.mode >= AccessMode.Write ? await choicesOf(deps, ctx) : { labels: [], milestones: [] }
  const base = repoUrl(repo.owner.login, repo.name)
  const form = values(choices.labels)
  return htmlResponse(
    <Layout ctx={web} title={`New issue · ${repo.full_name}`}>
      <RepoHeader repo={repo} />
      <TrackerTabs repo={repo} current="issues" />
      <h2>New issue</h2>
      {form.template ? (
        <p>
          {form.template.name} <span class="muted">{form.template.about}</span> · <a href={`${base}/issues/new/choose`}>Choose another template</a>
        </p>
      ) : null}
      {ctx.repo.isArchived ? (
        <p class="error" role="alert">
          This repository is archived: it takes no new issues.
        </p>
      ) : (
        <NewIssueForm ctx={web} repoCtx={ctx} labels={choices.labels} milestones={choices.milestones} action={`${base}/issues/new`} values={form} />
      )}
    </Layout>,
    status,
  )
}

/**
 * `/issues/new/choose` (Gitea's NewIssueChooseTemplate): the default branch's templates, each with
 * a link starting an issue from it, the config's contact links, and a blank issue unless the
 * config turns those off; with neither templates nor contact links, the blank form.
 */
async function chooserPage(deps: AppDeps, web: WebContext, ctx: RepoContext): Promise<Response> {
  const [{ templates, invalid }, { config, error }] = await Promise.all([issueTemplates(deps, ctx), issueConfig(deps, ctx)])
  const base = repoUrl(ctx.owner.name, ctx.repo.name)
  if (templates.length === 0 && config.contact_links.length === 0) return new Response(null, { status: 303, headers: { location: `${base}/issues/new` } })
  const repo = await pageRepo(deps, ctx)
  return htmlResponse(
    <Layout ctx={web} title={`New issue · ${repo.full_name}`}>
      <RepoHeader repo={repo} />
      <TrackerTabs repo={repo} current="issues" />
      <h2>New issue</h2>
      {invalid ? <p class="notice muted">{invalid === 1 ? 'One template file is invalid and is not listed.' : `${invalid} template files are invalid and are not listed.`}</p> : null}
      {error ? (
        <p class="error" role="alert">
          The template chooser's config is invalid: {error}
        </p>
      ) : null}
      <div class="box">
        <ul class="entries" aria-label="Issue templates">
          {templates.map((tpl) => (
            <li>
              <strong>{tpl.name}</strong> <span class="muted">{tpl.about}</span>{' '}
              <a class="button primary" href={`${base}/issues/new?${new URLSearchParams({ template: tpl.file_name })}`} aria-label={`Get started: ${tpl.name}`}>
                Get started
              </a>
            </li>
          ))}
          {config.contact_links.map((link) => (
            <li>
              <strong>{link.name}</strong> <span class="muted">{link.about}</span>{' '}
              {/^https?:\/\//i.test(link.url) ? (
                <a class="button" href={link.url} rel="nofollow noopener noreferrer" aria-label={`Open: ${link.name}`}>
                  Open
                </a>
              ) : (
                <code>{link.url}</code>
              )}
            </li>
          ))}
        </ul>
      </div>
      {config.blank_issues_enabled ? (
        <p>
          Don't see your issue here? <a href={`${base}/issues/new`}>Open a blank issue.</a>
        </p>
      ) : null}
    </Layout>,
  )
}

const ids = (values: string[]) => values.filter((v) => /^\d{1,15}$/.test(v)).map(Number)

/**
 * The issue tracker's pages: `/{owner}/{repo}/issues` and `/pulls` (lists), `/issues/{index}` (an
 * issue's conversation; a pull request's number goes to its page), `/issues/new` and their forms.
 */
export const issuePages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get('/:owner/:repo/issues', ({ request, query, repo: ctx }) => listPage(deps, request, ctx, query, 'issues'), {
      scope: 'repository',
      repo: { unit: 'issues' },
      params: RepoParams,
      query: ListQuery,
      detail: pageDetail('webIssueList'),
    })
    .get('/:owner/:repo/pulls', ({ request, query, repo: ctx }) => listPage(deps, request, ctx, query, 'pulls'), {
      scope: 'repository',
      repo: { unit: 'pulls' },
      params: RepoParams,
      query: ListQuery,
      detail: pageDetail('webPullList'),
    })
    .get(
      '/:owner/:repo/issues/new/choose',
      async ({ request, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        if (!ctx.caller.user) return signInRedirect(web.path)
        return await chooserPage(deps, web, ctx)
      },
      { scope: 'repository', repo: { unit: 'issues' }, params: RepoParams, detail: pageDetail('webIssueChooseTemplate') },
    )
    .get(
      '/:owner/:repo/issues/new',
      async ({ request, query, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        if (!ctx.caller.user) return signInRedirect(web.path)
        const template = await newIssueTemplate(deps, ctx, query.template)
        if (!template) {
          // Gitea's NewIssue: with blank issues turned off, a repository with templates or contact links starts at its chooser.
          const { config } = await issueConfig(deps, ctx)
          if (!config.blank_issues_enabled && (config.contact_links.length > 0 || (await issueTemplates(deps, ctx)).templates.length > 0))
            return new Response(null, { status: 303, headers: { location: `${repoUrl(ctx.owner.name, ctx.repo.name)}/issues/new/choose` } })
        }
        return await newIssuePage(deps, web, ctx, (labels) => ({
          template,
          title: query.title ?? template?.title ?? '',
          content: query.body ?? template?.content ?? '',
          // The template's labels, by name, preselected for those who may set labels.
          labelIds: new Set(labels.filter((l) => template?.labels.includes(l.name)).map((l) => l.id)),
          assignees: (template?.assignees ?? []).join(', '),
        }))
      },
      { scope: 'repository', repo: { unit: 'issues' }, params: RepoParams, query: NewIssueQuery, detail: pageDetail('webIssueNewForm') },
    )
    .post(
      '/:owner/:repo/issues/new',
      ({ request, body, repo: ctx, user }) => {
        const assignees = (body.assignees ?? '').split(',').map((n) => n.trim()).filter(Boolean)
        const milestone = /^\d{1,15}$/.test(body.milestone_id ?? '') ? Number(body.milestone_id) : undefined
        const labels = ids(fieldList(body.label_ids))
        const title = (body.title ?? '').trim()
        const answers = answerValues(body as Record<string, unknown>)
        let template: IssueTemplate | null = null
        return formRoute(
          deps.config,
          { request, caller: ctx.caller, body },
          async () => {
            // An issue form's answers become the body (Gitea's NewIssuePost: the template read again from the default branch).
            template = body['template-file'] ? await newIssueTemplate(deps, ctx, body['template-file']) : null
            const content = template?.body ? answersBody(template.body, answers) : multiline(body.content)
            const ref = /^refs\/(heads|tags)\/./.test(body.ref ?? '') ? body.ref : undefined
            const { row } = await createIssue(deps, ctx, user, { title, body: content, labels, milestone, assignees, ref })
            return issuePageUrl(ctx.owner.name, ctx.repo.name, row.index, false)
          },
          (web, error, status) =>
            newIssuePage(
              deps,
              web,
              ctx,
              () => ({ template, title, content: multiline(body.content), labelIds: new Set(labels), assignees: assignees.join(', '), milestone: body.milestone_id, answers, error }),
              status,
            ),
        )
      },
      { scope: 'repository', repo: { unit: 'issues' }, signed: true, params: RepoParams, body: NewIssueBody, detail: pageDetail('webIssueCreate') },
    )
    .get(
      '/:owner/:repo/issues/:index',
      async ({ request, params, query, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const row = await findIssue(deps, ctx.repo.id, indexOf(params.index))
        // Gitea's ViewIssue: a pull request's number under /issues goes to its page.
        if (row.isPull) return new Response(null, { status: 303, headers: { location: issuePageUrl(ctx.owner.name, ctx.repo.name, row.index, true) } })
        const repo = await pageRepo(deps, ctx)
        const conv = await loadConversation(deps, ctx, row, query, deps.auth.clientAddress(request) ?? '')
        const url = issuePageUrl(repo.owner.login, repo.name, row.index, false)
        const controls = await conversationControls(deps, web, ctx, conv, url)
        return htmlResponse(
          <Layout ctx={web} title={`${row.title} · Issue #${row.index} · ${repo.full_name}`} enhanced={conv.pages > 1}>
            <RepoHeader repo={repo} />
            <TrackerTabs repo={repo} current="issues" />
            <ConversationHead conv={conv} noun="Issue" edit={controls.title} />
            <Notices ctx={web} />
            <div class="conversation">
              <div class="main-column">
                <ConversationView conv={conv} url={url} controls={controls} />
                <CommentForm ctx={web} repoCtx={ctx} conv={conv} action={`${url}/comments`} closable={true} />
              </div>
              <SideFacts issue={conv.issue}>
                {await IssueSide({ deps, web, repoCtx: ctx, conv, url })}
                {controls.side}
              </SideFacts>
            </div>
          </Layout>,
        )
      },
      { scope: 'repository', repo: { unit: 'issues' }, params: IndexParams, query: PageQuery, detail: pageDetail('webIssue') },
    )
    .post(
      '/:owner/:repo/issues/:index/comments',
      ({ request, params, body, repo: ctx }) =>
        formRoute(deps.config, { request, caller: ctx.caller, body }, () => commentAndState(deps, ctx, indexOf(params.index), body)),
      { scope: 'repository', repo: { unit: 'issues' }, signed: true, params: IndexParams, body: CommentBody, detail: pageDetail('webIssueComment') },
    )
    .post(
      '/:owner/:repo/pulls/:index/comments',
      ({ request, params, body, repo: ctx }) =>
        formRoute(deps.config, { request, caller: ctx.caller, body }, () => commentAndState(deps, ctx, indexOf(params.index), body)),
      { scope: 'repository', repo: { unit: 'pulls' }, signed: true, params: IndexParams, body: CommentBody, detail: pageDetail('webPullComment') },
    )

/** Helpers the pull request page shares. */
export { signInUrl }
