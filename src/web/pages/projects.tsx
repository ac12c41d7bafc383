/** @jsxImportSource warren-jsx */
import { Elysia, t } from 'elysia'
import type { Child, Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { AccessMode } from '../../auth/access'
import type { Caller, UserRow } from '../../auth/caller'
import type { RepoContext } from '../../auth/repo-context'
import { ownerContentVisible, ownerUnitMode } from '../../auth/package-access'
import { repositories, type IssueRow, type ProjectColumnRow, type ProjectRow } from '../../db/schema'
import { inJsonList } from '../../db/sql'
import { badRequest, forbidden, notFound } from '../../lib/errors'
import { pathNumber } from '../../lib/path-number'
import {
  addColumn,
  CARD_TYPES,
  CARDS_PER_COLUMN,
  createProject,
  deleteColumn,
  deleteProject,
  editColumn,
  editProject,
  getColumn,
  getProject,
  issueCounts,
  listProjects,
  MAX_MOVED,
  moveCards,
  projectBoard,
  projectCounts,
  setDefaultColumn,
  setProjectClosed,
  shiftColumn,
  sortColumns,
  TEMPLATES,
  type Holder,
  type ProjectInput,
} from '../../modules/projects/service'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { projectsUrl, repoUrl } from '../links'
import { issuePageUrl } from './issue-parts'
import { ButtonForm, CsrfField, CsrfText, formAction, FormText, formRoute, Notices, Pager, pageNumber, pagesOf, seeOther } from '../forms'
import { RepoHeader, pageRepo } from './repo-chrome'
import { CodeNav } from './code-nav'
import { OwnerHeading } from './people'
import { integer } from '../../lib/validate'

/*
 * Gitea 1.23's project boards on the web: a repository's (`/{o}/{r}/projects`, its `repo.projects`
 * unit: readers see, writers of the repository change; Gitea's reqRepoProjectsReader/Writer) and
 * an owner's (`/{owner}/-/projects`: whoever may see the owner sees; the user themself, or an
 * organisation's members whose teams write, change; Gitea's reqUnitAccess(TypeProjects)), each with
 * the same pages: the open and closed lists, the new and edit forms, the board. Everything works
 * without JavaScript: each card has a small form choosing its column; Gitea's JSON endpoints
 * (`/{id}/{columnID}/move` with `issues`, `/{id}/move` with `columns`, PUT and DELETE of a column)
 * answer too, with the CSRF token in `X-Csrf-Token` as Gitea's script sends it.
 */

/** Projects a list page shows (Gitea's UI.IssuePagingNum). */
const PER_PAGE = 20

const Name = t.String({ maxLength: 255 })
const RepoParams = t.Object({ owner: Name, repo: Name })
const OwnerParams = t.Object({ owner: Name })
const Id = t.String({ maxLength: 20 })
const ListQuery = t.Object({ state: FormText(16), q: FormText(255), page: FormText(16), done: FormText(40) })
const DoneQuery = t.Object({ done: FormText(40) })
const ProjectForm = t.Object({ _csrf: CsrfText, title: FormText(400), content: FormText(65_536), template_type: FormText(4), card_type: FormText(4), redirect: FormText(16) })
const ColumnForm = t.Object({ _csrf: CsrfText, title: FormText(400), color: FormText(16), sorting: FormText(8) })
const CsrfForm = t.Object({ _csrf: CsrfText })
const CardForm = t.Object({ _csrf: CsrfText, issue_id: FormText(20), column_id: FormText(20) })
/** Gitea's MoveColumns body, or the page's form: a column one place left or right. */
const ColumnsMove = t.Object({
  _csrf: CsrfText,
  columns: t.Optional(t.Array(t.Object({ columnID: integer(), sorting: integer({ minimum: 0, maximum: 127 }) }), { maxItems: 20 })),
  column_id: FormText(20),
  direction: FormText(8),
})
/** Gitea's MoveIssues body. */
const IssuesMove = t.Object({
  _csrf: CsrfText,
  issues: t.Array(t.Object({ issueID: integer(), sorting: integer({ minimum: -2_147_483_648, maximum: 2_147_483_647 }) }), { maxItems: MAX_MOVED }),
})

/** Where a page acts: the holder, its addresses, who is looking and whether they may change it, the page's frame. */
interface Scope {
  holder: Holder
  base: string
  web: WebContext
  caller: Caller
  writer: boolean
  /** The repository a repository's project is of (its issues' links), null for an owner's. */
  repo: RepoContext | null
  frame: (title: string, body: Child, status?: number) => Promise<Response>
}

function repoScope(deps: AppDeps, request: Request, ctx: RepoContext): Scope {
  const web = webContext(deps.config, request, ctx.caller)
  return {
    holder: { repoId: ctx.repo.id },
    base: projectsUrl(ctx.owner.name, ctx.repo.name),
    web,
    caller: ctx.caller,
    writer: !!ctx.caller.user && ctx.mode >= AccessMode.Write && !ctx.repo.isArchived,
    repo: ctx,
    frame: async (title, body, status = 200) => {
      const repo = await pageRepo(deps, ctx)
      return htmlResponse(
        <Layout ctx={web} title={`${title} · ${repo.full_name}`}>
          <RepoHeader repo={repo} />
          <CodeNav repo={repo} current="projects" />
          {body}
        </Layout>,
        status,
      )
    },
  }
}

/**
 * Whether `viewer` changes `owner`'s projects: the user themself; an organisation's members whose
 * teams write its projects (Gitea's CanWriteUnit(projects): an admin team, or one whose projects
 * unit writes; a write team that gives the projects nothing does not); site administrators.
 */
async function ownerWriter(deps: AppDeps, owner: UserRow, viewer: UserRow | null): Promise<boolean> {
  return (await ownerUnitMode(deps, owner, viewer, 'repo.projects')) >= AccessMode.Write
}

/**
 * An owner's project pages, read or written: 404 (as for an unknown name) unless the caller may see
 * the owner's content (ownerContentVisible: a private person's projects are theirs and the site
 * administrators', not those of the people they follow or share an organisation with; Gitea's
 * individualPermsChecker).
 */
async function ownerScope(deps: AppDeps, request: Request, owner: UserRow, caller: Caller): Promise<Scope> {
  if (!(await ownerContentVisible(deps, owner, caller.user))) throw notFound(`user does not exist [name: ${owner.name}]`)
  const web = webContext(deps.config, request, caller)
  return {
    holder: { owner },
    base: projectsUrl(owner.name, null),
    web,
    caller,
    writer: await ownerWriter(deps, owner, caller.user),
    repo: null,
    frame: async (title, body, status = 200) =>
      htmlResponse(
        <Layout ctx={web} title={`${title} · ${owner.name}`}>
          <OwnerHeading owner={owner} kind={owner.type === 1 ? 'Organisation' : 'User'} />
          {body}
        </Layout>,
        status,
      ),
  }
}

/** An owner's write pages (Gitea: a person's projects are their own, 404 to others; an organisation's members below write, 403). */
async function ownerWriteScope(deps: AppDeps, request: Request, owner: UserRow, caller: Caller): Promise<Scope> {
  const scope = await ownerScope(deps, request, owner, caller)
  if (!scope.writer) {
    if (owner.type !== 1) throw notFound()
    throw forbidden('Only the organisation\'s members who may write change its projects.')
  }
  return scope
}

const idOf = (value: string | undefined): number => {
  const n = pathNumber(value ?? '')
  return Number.isSafeInteger(n) ? n : -1
}

function ProjectTabs(props: { scope: Scope; counts: { open: number; closed: number }; state: 'open' | 'closed'; q: string }): Html {
  const href = (state: string) => `${props.scope.base}?${new URLSearchParams(Object.entries({ state, q: props.q }).filter((e) => e[1] !== ''))}`
  return (
    <nav class="state-tabs" aria-label="Project state">
      <a href={href('open')} aria-current={props.state === 'open' ? 'page' : undefined}>
        {props.counts.open} Open
      </a>
      <a href={href('closed')} aria-current={props.state === 'closed' ? 'page' : undefined}>
        {props.counts.closed} Closed
      </a>
    </nav>
  )
}

/** `/projects`: the holder's open or closed projects (`?state=`, `?q=`, `?page=`), each with its open and closed issues. */
async function listPage(deps: AppDeps, scope: Scope, query: typeof ListQuery.static): Promise<Response> {
  const state = query.state === 'closed' ? 'closed' : 'open'
  const q = (query.q ?? '').trim()
  const n = pageNumber(query.page)
  const [counts, found] = await Promise.all([
    projectCounts(deps, scope.holder),
    listProjects(deps, scope.holder, { closed: state === 'closed', q: q || undefined }, { page: n, limit: PER_PAGE, offset: (n - 1) * PER_PAGE }),
  ])
  const issues = await issueCounts(deps, found.rows, scope.caller.user)
  return scope.frame(
    'Projects',
    <>
      <div class="list-head">
        <h2>Projects</h2>
        {scope.writer ? (
          <a class="button primary" href={`${scope.base}/new`}>
            New project
          </a>
        ) : null}
      </div>
      <Notices ctx={scope.web} />
      <form class="filters" method="get" action={scope.base} role="search" aria-label="Search projects">
        <input type="hidden" name="state" value={state} />
        <label>
          Search
          <input type="search" name="q" value={q} maxlength={255} />
        </label>
        <button type="submit">Search</button>
      </form>
      <ProjectTabs scope={scope} counts={counts} state={state} q={q} />
      <div class="box">
        <ul class="entries" aria-label={`${state === 'open' ? 'Open' : 'Closed'} projects`}>
          {found.rows.map((p) => {
            const c = issues.get(p.id) ?? { open: 0, closed: 0 }
            return (
              <li>
                <a href={`${scope.base}/${p.id}`}>
                  <strong>{p.title}</strong>
                </a>{' '}
                <span class="muted">
                  · {c.open} open · {c.closed} closed
                </span>
                {p.description ? <p class="project-description">{p.description}</p> : null}
                {scope.writer ? (
                  <p class="actions">
                    <a href={`${scope.base}/${p.id}/edit`}>Edit {p.title}</a>{' '}
                    <ButtonForm ctx={scope.web} action={`${scope.base}/${p.id}/${p.isClosed ? 'open' : 'close'}`} label={`${p.isClosed ? 'Reopen' : 'Close'} ${p.title}`} />{' '}
                    <ButtonForm ctx={scope.web} action={`${scope.base}/${p.id}/delete`} label={`Delete ${p.title}`} danger />
                  </p>
                ) : null}
              </li>
            )
          })}
          {found.rows.length === 0 ? <li class="muted">{q ? 'No projects match.' : `No ${state} projects.`}</li> : null}
        </ul>
      </div>
      <Pager path={scope.base} query={{ state, q: q || undefined }} page={n} pages={pagesOf(found.total, PER_PAGE)} label="Project pages" />
    </>,
  )
}

type ProjectValues = typeof ProjectForm.static

/** The new or edit form of a project, with what was typed and the refusal when it comes back. */
function formPage(scope: Scope, opts: { project?: ProjectRow; values?: ProjectValues; error?: string; status?: number }): Promise<Response> {
  const p = opts.project
  const values = opts.values ?? { title: p?.title ?? '', content: p?.description ?? '', card_type: String(p?.cardType ?? 0), template_type: '0' }
  const action = p ? `${scope.base}/${p.id}/edit` : `${scope.base}/new`
  return scope.frame(
    p ? 'Edit project' : 'New project',
    <>
      <h2>{p ? `Edit project ${p.title}` : 'New project'}</h2>
      <Notices ctx={scope.web} error={opts.error} />
      <form method="post" action={action} class="box stack">
        <CsrfField ctx={scope.web} />
        {opts.values?.redirect === 'project' || (p && !opts.values) ? <input type="hidden" name="redirect" value="project" /> : null}
        <label for="project-title">Title</label>
        <input id="project-title" name="title" required maxlength={100} value={values.title ?? ''} />
        <label for="project-content">Description</label>
        <textarea id="project-content" name="content" rows={6} maxlength={65536}>
          {'\n' + (values.content ?? '')}
        </textarea>
        {p ? null : (
          <>
            <label for="project-template">Template</label>
            <select id="project-template" name="template_type">
              {TEMPLATES.map((tpl) => (
                <option value={String(tpl.type)} selected={values.template_type === String(tpl.type)}>
                  {tpl.name}
                  {tpl.columns.length ? ` (Backlog, ${tpl.columns.join(', ')})` : ''}
                </option>
              ))}
            </select>
          </>
        )}
        <label for="project-card-type">Card previews</label>
        <select id="project-card-type" name="card_type">
          {CARD_TYPES.map((c) => (
            <option value={String(c.type)} selected={values.card_type === String(c.type)}>
              {c.name}
            </option>
          ))}
        </select>
        <div>
          <button type="submit" class="primary">
            {p ? 'Save project' : 'Create project'}
          </button>{' '}
          <a href={p ? `${scope.base}/${p.id}` : scope.base}>Cancel</a>
        </div>
      </form>
    </>,
    opts.status,
  )
}

const projectInput = (body: ProjectValues): ProjectInput => ({
  title: body.title ?? '',
  description: (body.content ?? '').replace(/\r\n?/g, '\n').replace(/^\n/, ''),
  templateType: Number(body.template_type ?? 0),
  cardType: Number(body.card_type ?? 0),
})

/** The repositories of cards on an owner's board, by id, for the cards' links. */
async function repoNames(deps: AppDeps, scope: Scope, cards: IssueRow[]): Promise<Map<number, string>> {
  if (scope.repo) return new Map([[scope.repo.repo.id, scope.repo.repo.name]])
  const ids = [...new Set(cards.map((c) => c.repoId))]
  const rows = ids.length ? await deps.db.select({ id: repositories.id, name: repositories.name }).from(repositories).where(inJsonList(repositories.id, ids)) : []
  return new Map(rows.map((r) => [r.id, r.name]))
}

function ColumnControls(props: { scope: Scope; project: ProjectRow; column: ProjectColumnRow; first: boolean; last: boolean }): Html {
  const { scope, project, column } = props
  const at = `${scope.base}/${project.id}/${column.id}`
  return (
    <div class="column-actions">
      <details class="edit-box">
        <summary>Edit column {column.title}</summary>
        <form method="post" action={`${at}/edit`} class="stack" aria-label={`Edit column ${column.title}`}>
          <CsrfField ctx={scope.web} />
          <label>
            Title
            <input name="title" required maxlength={100} value={column.title} />
          </label>
          <label>
            Colour
            <input name="color" type="color" value={column.color || '#e1e4e8'} />
          </label>
          <div>
            <button type="submit">Save column</button>
          </div>
        </form>
      </details>
      {props.first ? null : <ButtonForm ctx={scope.web} action={`${scope.base}/${project.id}/move`} label={`Move ${column.title} left`} fields={{ column_id: String(column.id), direction: 'left' }} />}
      {props.last ? null : <ButtonForm ctx={scope.web} action={`${scope.base}/${project.id}/move`} label={`Move ${column.title} right`} fields={{ column_id: String(column.id), direction: 'right' }} />}
      {column.isDefault ? null : (
        <>
          <ButtonForm ctx={scope.web} action={`${at}/default`} label={`Make ${column.title} the default`} />
          <ButtonForm ctx={scope.web} action={`${at}/delete`} label={`Delete column ${column.title}`} danger />
        </>
      )}
    </div>
  )
}

/** `/projects/{id}`: the board, its columns with their cards (each linking to its issue or pull request); writers' forms beside them. */
async function boardPage(deps: AppDeps, scope: Scope, project: ProjectRow, opts: { error?: string; status?: number } = {}): Promise<Response> {
  const board = await projectBoard(deps, project, scope.caller.user)
  const cards = board.columns.flatMap((c) => c.cards)
  const names = await repoNames(deps, scope, cards)
  const ownerName = scope.repo ? scope.repo.owner.name : scope.base.split('/')[1]!
  const here = `${scope.base}/${project.id}`
  const issuesLink = scope.repo ? `${repoUrl(ownerName, scope.repo.repo.name)}/issues?project=${project.id}&state=all` : null
  return scope.frame(
    project.title,
    <>
      <div class="list-head">
        <h2>
          {project.title} {project.isClosed ? <span class="muted">(closed)</span> : null}
        </h2>
        {scope.writer ? (
          <p class="actions">
            <a href={`${here}/edit`}>Edit project</a>{' '}
            <ButtonForm ctx={scope.web} action={`${here}/${project.isClosed ? 'open' : 'close'}`} label={project.isClosed ? 'Reopen project' : 'Close project'} />{' '}
            <ButtonForm ctx={scope.web} action={`${here}/delete`} label="Delete project" danger />
          </p>
        ) : null}
      </div>
      <Notices ctx={scope.web} error={opts.error} />
      {project.description ? <p class="project-description">{project.description}</p> : null}
      <p class="muted">
        {board.open} open · {board.closed} closed · <a href={scope.base}>All projects</a>
        {issuesLink ? (
          <>
            {' '}
            · <a href={issuesLink}>Its issues as a list</a>
          </>
        ) : null}
      </p>
      {board.columns.length === 0 ? <p class="muted">This project has no columns yet.</p> : null}
      <div class="board" role="list" aria-label="Columns">
        {board.columns.map(({ column, cards: shown, total }, i) => (
          <section class="board-column box" role="listitem" aria-labelledby={`column-${column.id}`}>
            <header style={column.color ? `border-top: 4px solid ${column.color}` : undefined}>
              <h3 id={`column-${column.id}`}>{column.title}</h3>
              <span class="muted">
                {total}
                {column.isDefault ? ' · default' : ''}
              </span>
            </header>
            <ul class="entries cards" aria-label={`Cards in ${column.title}`}>
              {shown.map((issue) => {
                const repoName = names.get(issue.repoId) ?? ''
                const ref = scope.repo ? `#${issue.index}` : `${repoName}#${issue.index}`
                return (
                  <li class="card">
                    <a href={issuePageUrl(ownerName, repoName, issue.index, issue.isPull)}>
                      {issue.title} <span class="muted">{ref}</span>
                    </a>{' '}
                    <span class="muted">
                      {issue.isPull ? 'pull request' : 'issue'}, {issue.isClosed ? 'closed' : 'open'}
                    </span>
                    {scope.writer && board.columns.length > 1 ? (
                      <form method="post" action={`${here}/card`} class="card-move" aria-label={`Move ${ref}`}>
                        <CsrfField ctx={scope.web} />
                        <input type="hidden" name="issue_id" value={String(issue.id)} />
                        <label>
                          <span class="sr-only">Column of {ref}</span>
                          <select name="column_id">
                            {board.columns.map(({ column: c }) => (
                              <option value={String(c.id)} selected={c.id === column.id}>
                                {c.title}
                              </option>
                            ))}
                          </select>
                        </label>{' '}
                        <button type="submit">Move</button>
                      </form>
                    ) : null}
                  </li>
                )
              })}
              {total === 0 ? <li class="muted">No cards</li> : null}
              {total > CARDS_PER_COLUMN ? (
                <li class="muted">
                  {total - CARDS_PER_COLUMN} more {issuesLink ? <a href={issuesLink}>in the list</a> : null}
                </li>
              ) : null}
            </ul>
            {scope.writer ? <ColumnControls scope={scope} project={project} column={column} first={i === 0} last={i === board.columns.length - 1} /> : null}
          </section>
        ))}
      </div>
      {scope.writer ? (
        <section class="box" aria-labelledby="new-column">
          <h3 id="new-column">New column</h3>
          <form method="post" action={here} class="stack">
            <CsrfField ctx={scope.web} />
            <label for="new-column-title">Title</label>
            <input id="new-column-title" name="title" required maxlength={100} />
            <label for="new-column-color">Colour</label>
            <input id="new-column-color" name="color" type="color" value="#e1e4e8" />
            <div>
              <button type="submit">Add column</button>
            </div>
          </form>
        </section>
      ) : null}
    </>,
    opts.status,
  )
}

/** A JSON endpoint of Gitea's board script: the CSRF token from its header (or body), then the change, `{"ok":true}`. */
function jsonAction(scope: Scope, request: Request, body: { _csrf?: string }, act: () => Promise<unknown>): Promise<Response> {
  return formAction(request, scope.caller, scope.web, body._csrf ?? request.headers.get('x-csrf-token'), async () => {
    await act()
    return Response.json({ ok: true })
  })
}

/** A board form's POST: the change, then back to the board; a refusal shows the board again with it. */
function boardForm(deps: AppDeps, scope: Scope, project: ProjectRow, request: Request, body: { _csrf?: string }, act: () => Promise<unknown>): Promise<Response> {
  return formRoute(
    deps.config,
    { request, caller: scope.caller, body },
    async () => {
      await act()
      return `${scope.base}/${project.id}`
    },
    (_web, error, status) => boardPage(deps, scope, project, { error, status }),
  )
}

type Ctx = {
  request: Request
  params: Record<string, string>
  query: Record<string, string | undefined>
  body: Record<string, unknown> & { _csrf?: string }
  repo?: RepoContext
  owner?: UserRow
  caller: Caller
}

/** The pages and forms, given how a route finds its scope to read and to write in. */
function projectRoutes(
  deps: AppDeps,
  app: Elysia,
  prefix: string,
  id: string,
  read: (c: Ctx) => Promise<Scope>,
  write: (c: Ctx) => Promise<Scope>,
  needs: { read: Record<string, unknown>; write: Record<string, unknown>; params: typeof RepoParams | typeof OwnerParams },
) {
  const P = (extra: Record<string, typeof Id>) => t.Object({ ...needs.params.properties, ...extra })
  const ProjectParams = P({ id: Id })
  const ColumnParams = P({ id: Id, columnID: Id })
  const project = async (scope: Scope, value: string) => await getProject(deps, scope.holder, idOf(value))
  const column = async (scope: Scope, c: Ctx) => {
    const p = await project(scope, c.params.id!)
    return { p, col: await getColumn(deps, p, idOf(c.params.columnID)) }
  }
  // The registered handler destructures the context (one handed on whole has Elysia parse each
  // request's cookies and headers: test/route-context.test.ts).
  const r =
    (handler: (c: Ctx) => Promise<Response>) =>
    ({ request, params, query, body, repo, owner, caller }: any) =>
      handler({ request, params, query, body, repo, owner, caller })
  const detail = (name: string) => ({ detail: pageDetail(`web${id}${name}`) })
  return app
    .get(`${prefix}`, r(async (c) => listPage(deps, await read(c), c.query)), { ...needs.read, params: needs.params, query: ListQuery, ...detail('Projects') })
    .get(`${prefix}/new`, r(async (c) => formPage(await write(c), {})), { ...needs.write, params: needs.params, query: DoneQuery, ...detail('ProjectNew') })
    .post(
      `${prefix}/new`,
      r(async (c) => {
        const scope = await write(c)
        const body = c.body as ProjectValues
        return formRoute(
          deps.config,
          { request: c.request, caller: scope.caller, body },
          async () => {
            const made = await createProject(deps, scope.holder, scope.caller.user!, projectInput(body))
            return `${scope.base}/${made.id}`
          },
          (_web, error, status) => formPage(scope, { values: body, error, status }),
        )
      }),
      { ...needs.write, params: needs.params, body: ProjectForm, ...detail('ProjectCreate') },
    )
    .get(
      `${prefix}/:id`,
      r(async (c) => {
        const scope = await read(c)
        return boardPage(deps, scope, await project(scope, c.params.id!))
      }),
      { ...needs.read, params: ProjectParams, query: DoneQuery, ...detail('Project') },
    )
    .post(
      `${prefix}/:id`,
      r(async (c) => {
        const scope = await write(c)
        const p = await project(scope, c.params.id!)
        const body = c.body as typeof ColumnForm.static
        return boardForm(deps, scope, p, c.request, body, () => addColumn(deps, p, scope.caller.user!, { title: body.title ?? '', color: body.color ?? '' }))
      }),
      { ...needs.write, params: ProjectParams, body: ColumnForm, ...detail('ProjectColumnAdd') },
    )
    .get(
      `${prefix}/:id/edit`,
      r(async (c) => {
        const scope = await write(c)
        return formPage(scope, { project: await project(scope, c.params.id!) })
      }),
      { ...needs.write, params: ProjectParams, ...detail('ProjectEditForm') },
    )
    .post(
      `${prefix}/:id/edit`,
      r(async (c) => {
        const scope = await write(c)
        const p = await project(scope, c.params.id!)
        const body = c.body as ProjectValues
        return formRoute(
          deps.config,
          { request: c.request, caller: scope.caller, body },
          async () => {
            await editProject(deps, p, projectInput(body))
            return seeOther(body.redirect === 'project' ? `${scope.base}/${p.id}` : scope.base, 'saved')
          },
          (_web, error, status) => formPage(scope, { project: p, values: body, error, status }),
        )
      }),
      { ...needs.write, params: ProjectParams, body: ProjectForm, ...detail('ProjectEdit') },
    )
    .post(
      `${prefix}/:id/delete`,
      r(async (c) => {
        const scope = await write(c)
        const p = await project(scope, c.params.id!)
        return formRoute(deps.config, { request: c.request, caller: scope.caller, body: c.body }, async () => {
          await deleteProject(deps, p)
          return seeOther(scope.base, 'project-deleted')
        })
      }),
      { ...needs.write, params: ProjectParams, body: CsrfForm, ...detail('ProjectDelete') },
    )
    .post(
      `${prefix}/:id/move`,
      r(async (c) => {
        const scope = await write(c)
        const p = await project(scope, c.params.id!)
        const body = c.body as typeof ColumnsMove.static
        if (body.columns) return jsonAction(scope, c.request, body, () => sortColumns(deps, p, body.columns!))
        return boardForm(deps, scope, p, c.request, body, async () => {
          if (body.direction !== 'left' && body.direction !== 'right') throw badRequest('direction must be left or right')
          await shiftColumn(deps, p, await getColumn(deps, p, idOf(body.column_id)), body.direction)
        })
      }),
      { ...needs.write, params: ProjectParams, body: ColumnsMove, ...detail('ProjectColumnsMove') },
    )
    .post(
      `${prefix}/:id/card`,
      r(async (c) => {
        const scope = await write(c)
        const p = await project(scope, c.params.id!)
        const body = c.body as typeof CardForm.static
        return boardForm(deps, scope, p, c.request, body, async () => {
          const target = await getColumn(deps, p, idOf(body.column_id))
          await moveCards(deps, p, target, scope.caller.user!, [{ issueID: idOf(body.issue_id) }])
        })
      }),
      { ...needs.write, params: ProjectParams, body: CardForm, ...detail('ProjectCardMove') },
    )
    .post(
      // Gitea's `/{id}/{action:open|close}`; the router knows one name for a segment, the column's.
      `${prefix}/:id/:columnID`,
      r(async (c) => {
        const action = c.params.columnID
        if (action !== 'open' && action !== 'close') throw notFound()
        const scope = await write(c)
        const p = await project(scope, c.params.id!)
        return formRoute(deps.config, { request: c.request, caller: scope.caller, body: c.body }, async () => {
          await setProjectClosed(deps, p, action === 'close')
          return `${scope.base}?state=${action === 'close' ? 'closed' : 'open'}`
        })
      }),
      { ...needs.write, params: ColumnParams, body: CsrfForm, ...detail('ProjectState') },
    )
    .put(
      `${prefix}/:id/:columnID`,
      r(async (c) => {
        const scope = await write(c)
        const { col } = await column(scope, c)
        const body = c.body as typeof ColumnForm.static
        return jsonAction(scope, c.request, body, () => editColumn(deps, col, { title: body.title ?? '', color: body.color ?? '' }))
      }),
      { ...needs.write, params: ColumnParams, body: ColumnForm, ...detail('ProjectColumnEditJson') },
    )
    .delete(
      `${prefix}/:id/:columnID`,
      r(async (c) => {
        const scope = await write(c)
        const { p, col } = await column(scope, c)
        return jsonAction(scope, c.request, c.body ?? {}, () => deleteColumn(deps, p, col, scope.caller.user!))
      }),
      { ...needs.write, params: ColumnParams, ...detail('ProjectColumnDeleteJson') },
    )
    .post(
      `${prefix}/:id/:columnID/edit`,
      r(async (c) => {
        const scope = await write(c)
        const { p, col } = await column(scope, c)
        const body = c.body as typeof ColumnForm.static
        return boardForm(deps, scope, p, c.request, body, () => editColumn(deps, col, { title: body.title ?? '', color: body.color ?? '' }))
      }),
      { ...needs.write, params: ColumnParams, body: ColumnForm, ...detail('ProjectColumnEdit') },
    )
    .post(
      `${prefix}/:id/:columnID/delete`,
      r(async (c) => {
        const scope = await write(c)
        const { p, col } = await column(scope, c)
        return boardForm(deps, scope, p, c.request, c.body, () => deleteColumn(deps, p, col, scope.caller.user!))
      }),
      { ...needs.write, params: ColumnParams, body: CsrfForm, ...detail('ProjectColumnDelete') },
    )
    .post(
      `${prefix}/:id/:columnID/default`,
      r(async (c) => {
        const scope = await write(c)
        const { p, col } = await column(scope, c)
        return boardForm(deps, scope, p, c.request, c.body, () => setDefaultColumn(deps, col))
      }),
      { ...needs.write, params: ColumnParams, body: CsrfForm, ...detail('ProjectColumnDefault') },
    )
    .post(
      `${prefix}/:id/:columnID/move`,
      r(async (c) => {
        const scope = await write(c)
        const { p, col } = await column(scope, c)
        const body = c.body as typeof IssuesMove.static
        return jsonAction(scope, c.request, body, () => moveCards(deps, p, col, scope.caller.user!, body.issues))
      }),
      { ...needs.write, params: ColumnParams, body: IssuesMove, ...detail('ProjectIssuesMove') },
    )
}

/**
 * Gitea 1.23's project pages: a repository's at `/{o}/{r}/projects` (`/new`, `/{id}`, `/{id}/edit`,
 * `/{id}/{open|close}`, `/{id}/delete`, columns at `/{id}` (add), `/{id}/{columnID}/edit|delete|default`,
 * `/{id}/move`, cards at `/{id}/card` and Gitea's `/{id}/{columnID}/move`) and an owner's at
 * `/{owner}/-/projects` with the same sub-pages.
 */
export const projectPages = (deps: AppDeps, webApp: AreaApp) => {
  const app = pageGroup(webApp)
  const repoRead = { scope: 'repository', repo: { level: 'read', unit: 'projects' } } as const
  const repoWrite = { scope: 'repository', repo: { level: 'write', unit: 'projects' }, signed: true } as const
  projectRoutes(
    deps,
    app as unknown as Elysia,
    '/:owner/:repo/projects',
    'Repo',
    async (c) => repoScope(deps, c.request, c.repo!),
    async (c) => repoScope(deps, c.request, c.repo!),
    { read: repoRead, write: repoWrite, params: RepoParams },
  )
  const ownerRead = { scope: 'user', owner: true } as const
  const ownerWrite = { scope: 'user', owner: true, signed: true } as const
  projectRoutes(
    deps,
    app as unknown as Elysia,
    '/:owner/-/projects',
    'Owner',
    async (c) => await ownerScope(deps, c.request, c.owner!, c.caller),
    async (c) => await ownerWriteScope(deps, c.request, c.owner!, c.caller),
    { read: ownerRead, write: ownerWrite, params: OwnerParams },
  )
  return app
}
