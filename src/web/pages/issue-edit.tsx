/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import { and, eq, inArray } from 'drizzle-orm'
import type { Child, Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { AccessMode, issueUnitOf } from '../../auth/access'
import { modeIn, projectsReadable, type RepoContext } from '../../auth/repo-context'
import type { ApiComment } from '../../convert/issue'
import { issueAssignees, issues, type CommentRow, type IssueRow } from '../../db/schema'
import { badRequest, forbidden, notFound, unprocessable } from '../../lib/errors'
import { pathNumber } from '../../lib/path-number'
import { findIssue } from '../../modules/issues/queries'
import { changeIssueLabels, editIssue, type IssueEdit } from '../../modules/issues/service'
import { listAssignees } from '../../modules/collaborators/service'
import { usersByIds } from '../../convert/people'
import { LOCK_REASONS, setIssueLock } from '../../modules/issues/lock'
import { commentOfRepo, deleteComment, editComment, mayChangeComment } from '../../modules/comments/service'
import { editPull } from '../../modules/pulls/service'
import { isFollowing, setFollowing } from '../../modules/subscriptions/service'
import { reactionCounts, ReactionBar } from './reactions'
import { pageDetail, type WebContext } from '../context'
import { projectUrl, repoUrl } from '../links'
import { ButtonForm, CsrfText, formRoute, FormText } from '../forms'
import { choicesOf, MAX_CHOICES, projectsFor, type Conversation } from './conversation'
import { projectsOfIssues, setIssueProject } from '../../modules/projects/service'
import { CsrfField, issuePageUrl, multiline, trackerOn } from './issue-parts'

/**
 * Changing a conversation from its page, at Gitea 1.23's addresses: the title
 * (`/{o}/{r}/{issues|pulls}/{i}/title`) and text (`/content`) by the poster or a writer, a comment
 * (`/{o}/{r}/comments/{id}`, `/comments/{id}/delete`) by its author or a repository administrator
 * (the API's rule), locking (`/lock` with a reason, `/unlock`) by writers; each through the service
 * the API calls (`editIssue` / `editPull`, `editComment`, `deleteComment`; `setIssueLock`), so the
 * events, webhooks and notifications are the API's. Without JavaScript: each form sits in a
 * `<details>` the reader opens; a refusal is an error page saying why.
 */

/** The controls a reader may use on a conversation, each null when they may not. */
export interface ConversationControls {
  title: Html | null
  body: Html | null
  comment: (c: ApiComment) => Html | null
  side: Html | null
}

/** What the signed-in reader may change of this conversation (nothing on an archived repository). */
export async function conversationControls(deps: AppDeps, web: WebContext, repoCtx: RepoContext, conv: Conversation, url: string): Promise<ConversationControls> {
  const user = web.caller.user
  const issue = conv.issue
  const open = !!user && !repoCtx.repo.isArchived
  const mayEdit = open && (repoCtx.mode >= AccessMode.Write || issue.user.id === user!.id)
  const mayLock = open && repoCtx.mode >= AccessMode.Write
  const commentsBase = `${repoUrl(repoCtx.owner.name, repoCtx.repo.name)}/comments`
  const sideForms = mayLock ? await SideForms({ deps, web, repoCtx, conv }) : null
  // Subscribing changes only the reader's own row: offered to every signed-in reader, archived or not (as the API's).
  const following = user ? await isFollowing(deps, user, await findIssue(deps, repoCtx.repo.id, issue.number)) : null
  const watch =
    following === null ? null : (
      <form method="post" action={`${url}/watch`}>
        <CsrfField ctx={web} />
        <h2 class="side-title">Notifications</h2>
        <input type="hidden" name="watch" value={following ? 'false' : 'true'} />
        <p class="muted">{following ? 'You are notified of this conversation.' : 'You are not notified of this conversation.'}</p>
        <button type="submit">{following ? 'Unsubscribe' : 'Subscribe'}</button>
      </form>
    )
  const shownComments = conv.items.flatMap((item) => (item.kind === 'comment' ? [item.comment.id] : []))
  const reacted = await reactionCounts(deps, issue.id, shownComments, user?.id ?? 0)
  // Gitea: a locked conversation takes reactions from writers only (the service checks it again).
  const mayReact = open && (!issue.is_locked || repoCtx.mode >= AccessMode.Write)
  const commentActions = (c: ApiComment): Html | null =>
    open && mayChangeComment(repoCtx, user!, c.user.id) ? (
      <div class="comment-actions">
        <TextEdit ctx={web} action={`${commentsBase}/${c.id}`} text={c.body} summary="Edit" />
        <FoldedForm ctx={web} summary="Delete" action={`${commentsBase}/${c.id}/delete`}>
          <p>Delete this comment? This cannot be undone.</p>
          <button class="danger" type="submit">
            Delete comment
          </button>
        </FoldedForm>
      </div>
    ) : null
  return {
    title: mayEdit ? (
      <FoldedForm ctx={web} summary="Edit title" action={`${url}/title`} class="stack">
        <label>
          Title
          <input name="title" value={issue.title} required maxlength="255" />
        </label>
        <div>
          <button class="primary" type="submit">
            Save title
          </button>
        </div>
      </FoldedForm>
    ) : null,
    body: (
      <>
        <ReactionBar web={web} counts={reacted.get(0) ?? []} allowed={deps.config.reactions} action={mayReact ? `${url}/reactions` : null} />
        {mayEdit ? <TextEdit ctx={web} action={`${url}/content`} text={issue.body} summary="Edit description" /> : null}
      </>
    ),
    comment: (c) => (
      <>
        <ReactionBar web={web} counts={reacted.get(c.id) ?? []} allowed={deps.config.reactions} action={mayReact ? `${commentsBase}/${c.id}/reactions` : null} />
        {commentActions(c)}
      </>
    ),
    side: (
      <>
        {projectsReadable(repoCtx) ? await ProjectSide({ deps, web, repoCtx, conv, writer: mayLock }) : null}
        {watch}
        {mayLock ? <ConversationLock web={web} url={url} locked={issue.is_locked} sideForms={sideForms} /> : null}
      </>
    ),
  }
}

/** A writer's sidebar forms and the lock's (or unlock's) form. */
function ConversationLock(props: { web: WebContext; url: string; locked: boolean; sideForms: Html | null }): Html {
  const { web, url, sideForms } = props
  return (
    <>
      {sideForms}
      <h2 class="side-title">Conversation</h2>
      {props.locked ? (
        <form method="post" action={`${url}/unlock`}>
          <CsrfField ctx={web} />
          <p class="muted">Locked: only collaborators may comment.</p>
          <button type="submit">Unlock conversation</button>
        </form>
      ) : (
        <FoldedForm ctx={web} summary="Lock conversation" action={`${url}/lock`} class="stack">
          <label>
            Reason
            <select name="reason">
              <option value="">No reason</option>
              {LOCK_REASONS.map((r) => (
                <option value={r}>{r}</option>
              ))}
            </select>
          </label>
          <div>
            <button type="submit">Lock conversation</button>
          </div>
        </FoldedForm>
      )}
    </>
  )
}

/**
 * A writer's sidebar forms (Gitea's `/issues/labels`, `/issues/assignee`, `/issues/milestone`,
 * posted with `issue_ids`): a button per label and per person who may be assigned, adding or
 * removing one, and the milestone's choice.
 */
async function SideForms(props: { deps: AppDeps; web: WebContext; repoCtx: RepoContext; conv: Conversation }): Promise<Html> {
  const { deps, web, repoCtx, conv } = props
  const issue = conv.issue
  const choices = await choicesOf(deps, repoCtx)
  const people = (await listAssignees(deps, web.caller.user, repoCtx.repo, { page: 1, limit: MAX_CHOICES, offset: 0 })).rows
  const base = `${repoUrl(repoCtx.owner.name, repoCtx.repo.name)}/${issue.pull_request ? 'pulls' : 'issues'}`
  const ids = String(issue.id)
  const hasLabel = new Set(issue.labels.map((l) => l.id))
  const hasPerson = new Set(issue.assignees.map((a) => a.id))
  return (
    <>
      {choices.labels.length ? (
        <details class="edit-box">
          <summary>Edit labels</summary>
          <ul class="side-choices" aria-label="Labels to add or remove">
            {choices.labels.map((l) => (
              <li>
                <ButtonForm ctx={web} action={`${base}/labels`} label={`${hasLabel.has(l.id) ? 'Remove' : 'Add'} ${l.name}`} fields={{ issue_ids: ids, action: hasLabel.has(l.id) ? 'detach' : 'attach', id: String(l.id) }} />
              </li>
            ))}
          </ul>
        </details>
      ) : null}
      {choices.milestones.length ? (
        <FoldedForm ctx={web} summary="Set milestone" action={`${base}/milestone`} class="stack">
          <input type="hidden" name="issue_ids" value={ids} />
          <label>
            Milestone
            <select name="id">
              <option value="0">No milestone</option>
              {choices.milestones.map((m) => (
                <option value={String(m.id)} selected={issue.milestone?.id === m.id}>
                  {m.name}
                </option>
              ))}
            </select>
          </label>
          <div>
            <button type="submit">Set milestone</button>
          </div>
        </FoldedForm>
      ) : null}
      <details class="edit-box">
        <summary>Edit assignees</summary>
        <ul class="side-choices" aria-label="People to assign or unassign">
          {people.map((u) => (
            <li>
              <ButtonForm ctx={web} action={`${base}/assignee`} label={`${hasPerson.has(u.id) ? 'Unassign' : 'Assign'} ${u.name}`} fields={{ issue_ids: ids, action: hasPerson.has(u.id) ? 'detach' : 'attach', id: String(u.id) }} />
            </li>
          ))}
        </ul>
      </details>
    </>
  )
}

/**
 * The sidebar's project (its column too) for every reader, while the repository has projects on;
 * a writer's choice of it (Gitea's `/{issues|pulls}/projects` with `issue_ids` and `id`, 0 for none).
 */
async function ProjectSide(props: { deps: AppDeps; web: WebContext; repoCtx: RepoContext; conv: Conversation; writer: boolean }): Promise<Html> {
  const { deps, web, repoCtx, conv } = props
  const issue = conv.issue
  const on = (await projectsOfIssues(deps, [issue.id])).get(issue.id)
  const choices = props.writer ? await projectsFor(deps, repoCtx) : []
  const base = `${repoUrl(repoCtx.owner.name, repoCtx.repo.name)}/${issue.pull_request ? 'pulls' : 'issues'}`
  return (
    <>
      <h2 class="side-title">Projects</h2>
      {on ? (
        <p>
          <a href={projectUrl(repoCtx.owner.name, repoCtx.repo.name, on.project)}>{on.project.title}</a> <span class="muted">({on.column.title})</span>
        </p>
      ) : (
        <p class="muted">No project</p>
      )}
      {props.writer && (choices.length || on) ? (
        <FoldedForm ctx={web} summary="Set project" action={`${base}/projects`} class="stack">
          <input type="hidden" name="issue_ids" value={String(issue.id)} />
          <label>
            Project
            <select name="id">
              <option value="0">No project</option>
              {choices.map((p) => (
                <option value={String(p.id)} selected={on?.project.id === p.id}>
                  {p.title}
                  {p.isClosed ? ' (closed)' : ''}
                </option>
              ))}
            </select>
          </label>
          <div>
            <button type="submit">Set project</button>
          </div>
        </FoldedForm>
      ) : null}
    </>
  )
}

/** A form folded in a `<details>` its summary opens (no script needed), with the CSRF field. */
export function FoldedForm(props: { ctx: WebContext; summary: string; action: string; class?: string; children?: Child }): Html {
  return (
    <details class="edit-box">
      <summary>{props.summary}</summary>
      <form class={props.class} method="post" action={props.action}>
        <CsrfField ctx={props.ctx} />
        {props.children}
      </form>
    </details>
  )
}

/** A text's edit form, folded. */
function TextEdit(props: { ctx: WebContext; action: string; text: string; summary: string }): Html {
  return (
    <FoldedForm ctx={props.ctx} summary={props.summary} action={props.action} class="stack wide">
      <label>
        Text
        {/* HTML drops a newline right after <textarea>: one goes first, so a text's own leading newline is kept. */}
        <textarea name="content" rows="8" maxlength="65536">
          {'\n' + props.text}
        </textarea>
      </label>
      <div>
        <button class="primary" type="submit">
          Save
        </button>
      </div>
    </FoldedForm>
  )
}

const Name = t.String({ maxLength: 255 })
const IndexParams = t.Object({ owner: Name, repo: Name, index: t.String({ maxLength: 40 }) })
const IdParams = t.Object({ owner: Name, repo: Name, id: t.String({ maxLength: 40 }) })
const TitleBody = t.Object({ _csrf: CsrfText, title: FormText(1024) }, { additionalProperties: true })
const ContentBody = t.Object({ _csrf: CsrfText, content: FormText(65_536) }, { additionalProperties: true })
const LockBody = t.Object({ _csrf: CsrfText, reason: FormText(64) }, { additionalProperties: true })
const RepoParams = t.Object({ owner: Name, repo: Name })
const SideBody = t.Object({ _csrf: CsrfText, issue_ids: FormText(2048), action: FormText(16), id: FormText(20) }, { additionalProperties: true })
const CsrfBody = t.Object({ _csrf: CsrfText }, { additionalProperties: true })
const WatchBody = t.Object({ _csrf: CsrfText, watch: FormText(8) }, { additionalProperties: true })

const KINDS = [
  ['issues', 'Issue'],
  ['pulls', 'Pull'],
] as const

/** The issue or pull request a path names: 404 unless its kind is the path's (as the unit checked is the path's). */
export async function issueAt(deps: AppDeps, ctx: RepoContext, kind: 'issues' | 'pulls', value: string) {
  const index = pathNumber(value)
  if (!Number.isSafeInteger(index)) throw notFound('no such issue')
  const issue = await findIssue(deps, ctx.repo.id, index)
  if (issue.isPull !== (kind === 'pulls')) throw notFound('no such issue')
  return issue
}

/**
 * The issue or pull request an `/{issues|pulls}/{index}/…` address names, either kind at either
 * (issues and pull requests share one sequence of numbers: Gitea's GetActionIssue), while its
 * tracker is on; 404 otherwise.
 */
async function actionIssue(deps: AppDeps, ctx: RepoContext, value: string) {
  const issue = await findIssue(deps, ctx.repo.id, pathNumber(value))
  if (!trackerOn(ctx.repo, issue.isPull)) throw notFound('no such issue')
  return issue
}

/** An edit of an issue's or pull request's own fields, through the service the API's PATCH calls. */
async function editOf(deps: AppDeps, ctx: RepoContext, kind: 'issues' | 'pulls', value: string, edit: IssueEdit): Promise<string> {
  return await editRow(deps, ctx, await issueAt(deps, ctx, kind, value), edit)
}

async function editRow(deps: AppDeps, ctx: RepoContext, issue: IssueRow, edit: IssueEdit): Promise<string> {
  const user = ctx.caller.user!
  if (issue.isPull) await editPull(deps, ctx, issue.index, user, edit)
  else await editIssue(deps, ctx, issue.index, user, edit)
  return issuePageUrl(ctx.owner.name, ctx.repo.name, issue.index, issue.isPull)
}

/** A comment the path names, of a conversation whose unit is on (Gitea's checkIssueRights); 404 otherwise. */
async function commentAt(deps: AppDeps, ctx: RepoContext, value: string) {
  const row = await commentOfRepo(deps, ctx.repo.id, pathNumber(value))
  const issue = row && (await deps.db.select({ index: issues.index, isPull: issues.isPull }).from(issues).where(eq(issues.id, row.issueId)))[0]
  if (!row || !issue || !trackerOn(ctx.repo, issue.isPull)) throw notFound('no such comment')
  return { row, url: issuePageUrl(ctx.owner.name, ctx.repo.name, issue.index, issue.isPull) }
}

/** A lock or unlock form's POST: the issue the path names, then the lock service. */
function lockForm(deps: AppDeps, request: Request, ctx: RepoContext, kind: 'issues' | 'pulls', index: string, body: { _csrf?: string; reason?: string }, lock: boolean) {
  return formRoute(deps.config, { request, caller: ctx.caller, body }, async () => {
    const issue = await issueAt(deps, ctx, kind, index)
    await setIssueLock(deps, ctx, issue.index, ctx.caller.user!, lock, (body.reason ?? '').trim())
    return issuePageUrl(ctx.owner.name, ctx.repo.name, issue.index, issue.isPull)
  })
}

/**
 * A sidebar form's POST (writers): each issue `issue_ids` names (Gitea's issue ids, comma-separated,
 * at most MAX_CHOICES; each of this repository and of a kind whose unit is on, else 404; the caller
 * a writer of each one's own unit, as the API asks per issue: 404 to who may not read it, 403 to a
 * reader), `change`d with the form's `id` (a label, person or milestone; actions attach, detach,
 * clear); then the first one's page.
 */
function sideForm(deps: AppDeps, request: Request, ctx: RepoContext, body: typeof SideBody.static, change: (issue: IssueRow, id: number) => Promise<void>) {
  return formRoute(deps.config, { request, caller: ctx.caller, body }, async () => {
    const action = body.action ?? 'attach'
    if (!['attach', 'detach', 'clear'].includes(action)) throw badRequest(`Unknown action: ${action}`)
    const ids = (body.issue_ids ?? '').split(',').filter(Boolean)
    if (ids.length === 0 || ids.length > MAX_CHOICES || ids.some((v) => !/^\d{1,15}$/.test(v))) throw badRequest('issue_ids must name the issues, by id, separated by commas')
    const id = /^\d{1,15}$/.test(body.id ?? '') ? Number(body.id) : 0
    const rows = await deps.db.select().from(issues).where(and(eq(issues.repoId, ctx.repo.id), inArray(issues.id, ids.map(Number))))
    if (rows.length !== new Set(ids).size || rows.some((r) => !trackerOn(ctx.repo, r.isPull))) throw notFound('no such issue')
    const modes = rows.map((r) => modeIn(ctx, issueUnitOf(r)))
    if (modes.some((mode) => mode < AccessMode.Read)) throw notFound('no such issue')
    if (modes.some((mode) => mode < AccessMode.Write)) throw forbidden('You do not have the permission needed for this repository')
    for (const issue of rows) await change(issue, id)
    const first = rows.find((r) => r.id === Number(ids[0]))!
    return issuePageUrl(ctx.owner.name, ctx.repo.name, first.index, first.isPull)
  })
}

/** A comment form's POST: the comment the path names, then `change` (answering where to go). */
function commentForm(deps: AppDeps, request: Request, ctx: RepoContext, id: string, body: { _csrf?: string }, change: (row: CommentRow, url: string) => Promise<string>) {
  return formRoute(deps.config, { request, caller: ctx.caller, body }, async () => {
    const { row, url } = await commentAt(deps, ctx, id)
    return await change(row, url)
  })
}

export const issueEditPages = (deps: AppDeps, webApp: AreaApp) => {
  const app = pageGroup(webApp)
  const sideNeeds = { scope: 'repository', repo: { level: 'write', unit: 'issuesOrPulls' }, signed: true, params: RepoParams, body: SideBody } as const
  for (const [kind, noun] of KINDS) {
    const base = `/:owner/:repo/${kind}/:index`
    const unit = kind
    app
      .post(
        `${base}/title`,
        ({ request, params, body, repo: ctx }) =>
          formRoute(deps.config, { request, caller: ctx.caller, body }, () => {
            const title = (body.title ?? '').trim()
            if (!title) throw unprocessable('The title must not be empty.', 'title')
            return editOf(deps, ctx, kind, params.index, { title })
          }),
        { scope: 'repository', repo: { unit }, signed: true, params: IndexParams, body: TitleBody, detail: pageDetail(`web${noun}EditTitle`) },
      )
      .post(
        `${base}/content`,
        ({ request, params, body, repo: ctx }) =>
          formRoute(deps.config, { request, caller: ctx.caller, body }, () => editOf(deps, ctx, kind, params.index, { body: multiline(body.content) })),
        { scope: 'repository', repo: { unit }, signed: true, params: IndexParams, body: ContentBody, detail: pageDetail(`web${noun}EditContent`) },
      )
      .post(`${base}/lock`, ({ request, params, body, repo: ctx }) => lockForm(deps, request, ctx, kind, params.index, body, true), {
        scope: 'repository',
        repo: { unit },
        signed: true,
        params: IndexParams,
        body: LockBody,
        detail: pageDetail(`web${noun}Lock`),
      })
      .post(
        `${base}/watch`,
        ({ request, params, body, repo: ctx }) =>
          formRoute(deps.config, { request, caller: ctx.caller, body }, async () => {
            if (body.watch !== 'true' && body.watch !== 'false') throw badRequest('watch must be true or false')
            const issue = await actionIssue(deps, ctx, params.index)
            await setFollowing(deps, ctx.caller.user!, ctx.caller.user!, issue, body.watch === 'true')
            return issuePageUrl(ctx.owner.name, ctx.repo.name, issue.index, issue.isPull)
          }),
        // Gitea's IssueWatch, for either kind; the API's needs (a reader's own row: archived repositories too).
        { scope: 'repository', repo: { unit: 'issuesOrPulls', writes: false }, signed: true, params: IndexParams, body: WatchBody, detail: pageDetail(`web${noun}Watch`) },
      )
      .post(`${base}/unlock`, ({ request, params, body, repo: ctx }) => lockForm(deps, request, ctx, kind, params.index, body, false), {
        scope: 'repository',
        repo: { unit },
        signed: true,
        params: IndexParams,
        body: CsrfBody,
        detail: pageDetail(`web${noun}Unlock`),
      })
    app
      .post(
        `/:owner/:repo/${kind}/labels`,
        ({ request, body, repo: ctx }) =>
          sideForm(deps, request, ctx, body, async (issue, id) => {
            if (body.action === 'clear') return await changeIssueLabels(deps, ctx, issue.index, 'clear', [])
            await changeIssueLabels(deps, ctx, issue.index, body.action === 'detach' ? 'remove' : 'add', [id])
          }),
        { ...sideNeeds, detail: pageDetail(`web${noun}Labels`) },
      )
      .post(
        `/:owner/:repo/${kind}/assignee`,
        ({ request, body, repo: ctx }) =>
          sideForm(deps, request, ctx, body, async (issue, id) => {
            const current = (await deps.db.select({ id: issueAssignees.assigneeId }).from(issueAssignees).where(eq(issueAssignees.issueId, issue.id))).map((a) => a.id)
            const wanted = body.action === 'clear' ? [] : body.action === 'detach' ? current.filter((a) => a !== id) : [...new Set([...current, id])]
            const names = await usersByIds(deps, wanted)
            if (wanted.some((a) => !names.has(a))) throw notFound('no such user')
            await editRow(deps, ctx, issue, { assignees: wanted.map((a) => names.get(a)!.name) })
          }),
        { ...sideNeeds, detail: pageDetail(`web${noun}Assignee`) },
      )
      .post(
        `/:owner/:repo/${kind}/projects`,
        ({ request, body, repo: ctx }) =>
          sideForm(deps, request, ctx, body, async (issue, id) => {
            // Gitea's reqRepoProjectsReader beside the writer's need: the projects unit on, and the caller its reader.
            if (!projectsReadable(ctx)) throw notFound()
            await setIssueProject(deps, ctx.repo, issue, ctx.caller.user!, id)
          }),
        { ...sideNeeds, detail: pageDetail(`web${noun}Projects`) },
      )
      .post(
        `/:owner/:repo/${kind}/milestone`,
        ({ request, body, repo: ctx }) => sideForm(deps, request, ctx, body, (issue, id) => editRow(deps, ctx, issue, { milestone: id || null }).then(() => undefined)),
        { ...sideNeeds, detail: pageDetail(`web${noun}Milestone`) },
      )
  }
  const commentNeeds = { scope: 'repository', repo: { unit: 'issuesOrPulls' }, signed: true, params: IdParams } as const
  return app
    .post(
      '/:owner/:repo/comments/:id',
      ({ request, params, body, repo: ctx, user }) =>
        commentForm(deps, request, ctx, params.id, body, async (row, url) => {
          await editComment(deps, ctx, row.id, undefined, user, multiline(body.content))
          return `${url}?comment=${row.id}#issuecomment-${row.id}`
        }),
      { ...commentNeeds, body: ContentBody, detail: pageDetail('webCommentEdit') },
    )
    .post(
      '/:owner/:repo/comments/:id/delete',
      ({ request, params, body, repo: ctx, user }) => commentForm(deps, request, ctx, params.id, body, (row, url) => deleteComment(deps, ctx, row.id, undefined, user).then(() => url)),
      { ...commentNeeds, body: CsrfBody, detail: pageDetail('webCommentDelete') },
    )
}
