/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { AccessMode } from '../../auth/access'
import type { RepoContext } from '../../auth/repo-context'
import { repoToApi } from '../../convert/repo'
import { pullToApi, type ApiPull } from '../../convert/pull'
import { findIssue } from '../../modules/issues/queries'
import { findPull } from '../../modules/pulls/service'
import { mergeOutlook } from '../../modules/pulls/merge'
import { currentPullHead } from '../../modules/pulls/mergeability'
import { cancelScheduledMerge, mergeOrSchedule, scheduledMergeOf } from '../../modules/pulls/auto-merge'
import { usersByIds } from '../../convert/people'
import { formSwitch, MERGE_STYLES, type MergeStyle } from '../../modules/pulls/model'
import { pullDiff, pullDownloadOf } from '../../modules/pulls/compare'
import { commentsOfReview, createReview } from '../../modules/reviews/service'
import { ApiError } from '../../lib/errors'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { ownerUrl, repoUrl } from '../links'
import { RepoHeader } from './repo-chrome'
import { loadConversation, type ConversationAt } from './conversation'
import { ConversationView } from './timeline'
import { conversationControls } from './issue-edit'
import { IssueSide } from './issue-side'
import { isDraftTitle, toggledDraftTitle } from '../../convert/issue'
import { CommentForm, ConversationHead, indexOf, signInUrl, TrackerTabs } from './issues'
import { ButtonForm, CsrfText, formRoute, Notices, seeOther, type Notice } from '../forms'
import { cleanUp, headBranchAction, HeadBranchButton, restoreHead } from './pull-cleanup'
import { commitCountOf, PullTabs } from './compare'
import { updateOutlook, updatePull } from '../../modules/pulls/update'
import { requiredChecksPass, requiredContextsOf } from '../../modules/pulls/gates'
import type { CommitChecks } from '../../convert/status'
import { checksOf, ChecksList } from './commit-checks'
import { CsrfField, issuePageUrl, multiline, SideFacts, TimeAt, UserLink } from './issue-parts'

const Text = (max: number) => t.Optional(t.String({ maxLength: max }))
const IndexParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), index: t.String({ maxLength: 40 }) })
const CleanUpBody = t.Object({ _csrf: CsrfText }, { additionalProperties: true })
const PullPageQuery = t.Object({ page: Text(16), comment: Text(16), review: Text(16), binary: Text(16), done: Text(32) })
/** Gitea's `style` of an update, in the query (its form's address) or the form. */
const UpdateQuery = t.Object({ style: Text(16) })
const UpdateBody = t.Object({ _csrf: CsrfText, style: Text(16) }, { additionalProperties: true })
const MergeBody = t.Object(
  { _csrf: Text(128), do: Text(32), merge_title_field: Text(1024), merge_message_field: Text(65_536), force_merge: Text(8), head_commit_id: Text(64), merge_when_checks_succeed: Text(8), delete_branch_after_merge: Text(8) },
  { additionalProperties: true },
)
const ReviewBody = t.Object(
  { _csrf: Text(128), type: Text(32), content: Text(65_536), line_path: Text(4096), line_number: Text(16), line_side: Text(8), line_content: Text(65_536), return_to: Text(16) },
  { additionalProperties: true },
)

/** The words of each merge style, as Gitea's merge box names them. */
const STYLE_NAMES: Record<MergeStyle, string> = {
  merge: 'Create merge commit',
  rebase: 'Rebase then fast-forward',
  'rebase-merge': 'Rebase then create merge commit',
  squash: 'Create squash commit',
  'fast-forward-only': 'Fast-forward only',
}

/** The review form's choices and the API's review events they stand for. */
const REVIEW_EVENTS: Record<string, string> = { comment: 'COMMENT', approve: 'APPROVED', reject: 'REQUEST_CHANGES' }

const MERGE_STATUS: Record<string, string> = {
  checking: 'Checking whether the branches can be merged…',
  mergeable: 'The branches can be merged automatically.',
  conflict: 'The branches conflict: they cannot be merged automatically.',
  error: 'The branches could not be checked (a branch may be gone).',
}

/** A merge scheduled for when the checks succeed: who scheduled it, its style, and whether the viewer may cancel it. */
interface Scheduled {
  by: string | null
  style: string
  cancellable: boolean
}

/** A checkbox of a form (`true`, or the browser's `on`). */
const checked = (value: string | undefined) => value === 'true' || value === 'on'

/**
 * The merge box: the pull request's merge state, the head commit's checks (those the base's rule
 * requires marked, and whether they block), and for writers the merge form (with Gitea's
 * "merge when checks succeed" while the protection waits for checks or approvals), or the rule
 * that blocks it; a scheduled merge, with its Cancel auto merge button for its scheduler and
 * the repository's administrators.
 */
function MergeBox(props: {
  ctx: WebContext
  repoCtx: RepoContext
  pull: ApiPull
  status: string
  outlook: Awaited<ReturnType<typeof mergeOutlook>>
  update: Awaited<ReturnType<typeof updateOutlook>>
  scheduled: Scheduled | null
  url: string
  /** The head branch's commit now (currentPullHead), which a merge from this page is of. */
  headNow: string
  /** The head commit's checks, and the contexts the base branch's rule requires. */
  checks: CommitChecks | undefined
  required: string[]
}): Html {
  const { pull, outlook, ctx } = props
  if (pull.merged)
    return (
      <section class="box merge-box" aria-label="Merge">
        <p class="notice">
          <UserLink user={pull.merged_by} /> merged this pull request <TimeAt iso={pull.merged_at} /> as commit <code>{(pull.merge_commit_sha ?? '').slice(0, 10)}</code>.
        </p>
      </section>
    )
  if (pull.state === 'closed')
    return (
      <section class="box merge-box" aria-label="Merge">
        <p class="notice">This pull request is closed.</p>
      </section>
    )
  const writer = !!ctx.caller.user && props.repoCtx.mode >= AccessMode.Write
  const blocker = outlook.blocker
  const canWrite = writer && !props.repoCtx.repo.isArchived && outlook.styles.length > 0
  const mayMerge = canWrite && !props.scheduled && (!blocker || blocker.forcible || !!blocker.waitable)
  const scheduled = props.scheduled
  return (
    <section class="box merge-box" aria-label="Merge">
      <header>
        <strong>Merge</strong>
      </header>
      <div class="notice">
        <p>{MERGE_STATUS[props.status] ?? props.status}</p>
        <ChecksList checks={props.checks} required={props.required} />
        {props.required.length && !requiredChecksPass((props.checks?.statuses ?? []).map((c) => ({ context: c.context, state: c.status })), props.required) ? (
          <p class="error" role="status">
            Required checks must succeed before this pull request can be merged.
          </p>
        ) : null}
        {props.update ? <UpdateBranch ctx={ctx} update={props.update} url={props.url} /> : null}
        {pull.conflicted_files.length ? (
          <ul aria-label="Conflicting files">
            {pull.conflicted_files.slice(0, 50).map((f) => (
              <li>
                <code>{f}</code>
              </li>
            ))}
          </ul>
        ) : null}
        {blocker ? (
          <p class="error blocked" role="status">
            Merging is blocked: {blocker.message}
          </p>
        ) : null}
        {!ctx.caller.user ? (
          <p class="muted">
            <a href={signInUrl(ctx.path)}>Sign in</a> to merge.
          </p>
        ) : !writer ? (
          <p class="muted">Only people with write access may merge this pull request.</p>
        ) : props.repoCtx.repo.isArchived ? (
          <p class="muted">This repository is archived: nothing can be merged.</p>
        ) : null}
        {scheduled ? (
          <div class="scheduled-merge" role="status">
            <p>
              {scheduled.by ? <a href={ownerUrl(scheduled.by)}>{scheduled.by}</a> : 'Ghost'} scheduled this pull request to merge (
              {STYLE_NAMES[scheduled.style as MergeStyle] ?? scheduled.style}) when all checks succeed.
            </p>
            {scheduled.cancellable ? <ButtonForm ctx={ctx} action={`${props.url}/cancel_auto_merge`} label="Cancel auto merge" /> : null}
          </div>
        ) : null}
        {mayMerge ? (
          <form class="stack wide" method="post" action={`${props.url}/merge`}>
            <CsrfField ctx={ctx} />
            <input type="hidden" name="head_commit_id" value={props.headNow} />
            <label>
              Merge style
              <select name="do">
                {outlook.styles.map((s) => (
                  <option value={s}>{STYLE_NAMES[s]}</option>
                ))}
              </select>
            </label>
            <label>
              Commit title (optional)
              <input name="merge_title_field" maxlength="1024" />
            </label>
            <label>
              Commit message (optional)
              <textarea name="merge_message_field" rows="3" />
            </label>
            <label class="check">
              <input type="checkbox" name="merge_when_checks_succeed" value="true" checked={!!blocker?.waitable} /> Merge when checks succeed
            </label>
            <label class="check">
              <input type="checkbox" name="delete_branch_after_merge" value="true" checked={props.repoCtx.repo.defaultDeleteBranchAfterMerge} /> Delete the head
              branch after the merge
            </label>
            {blocker?.forcible ? (
              <label class="check">
                <input type="checkbox" name="force_merge" value="true" /> Merge anyway, past the branch protection (administrator)
              </label>
            ) : null}
            <div>
              <button class="primary" type="submit">
                Merge pull request
              </button>
            </div>
          </form>
        ) : null}
      </div>
    </section>
  )
}

/**
 * Gitea's "This branch is out-of-date with the base branch": how far behind the head is, and for
 * whoever may push to it (updateOutlook) the update by merge and, where allowed, by rebase.
 */
function UpdateBranch(props: { ctx: WebContext; update: NonNullable<Awaited<ReturnType<typeof updateOutlook>>>; url: string }): Html {
  const { behind, merge, rebase } = props.update
  return (
    <div class="update-branch">
      <p>
        This branch is out-of-date with the base branch: {behind} {behind === 1 ? 'commit' : 'commits'} behind.
      </p>
      {merge ? <ButtonForm ctx={props.ctx} action={`${props.url}/update?style=merge`} label="Update branch by merge" /> : null}
      {rebase ? <ButtonForm ctx={props.ctx} action={`${props.url}/update?style=rebase`} label="Update branch by rebase" /> : null}
    </div>
  )
}

/** The review form: a comment, an approval or a request for changes, with an optional comment on a line of the new file. */
function ReviewForm(props: { ctx: WebContext; pull: ApiPull; action: string }): Html {
  const user = props.ctx.caller.user
  if (!user || props.pull.merged || props.pull.state === 'closed') return <></>
  const own = props.pull.user.id === user.id
  return (
    <section class="box" aria-label="Review">
      <header>
        <strong>Review</strong>
      </header>
      <form class="stack wide notice" method="post" action={props.action}>
        <CsrfField ctx={props.ctx} />
        <label>
          Review comment
          <textarea name="content" rows="4" maxlength="65536" />
        </label>
        <fieldset>
          <legend>Verdict</legend>
          <label class="check">
            <input type="radio" name="type" value="comment" checked /> Comment
          </label>
          {own ? null : (
            <>
              <label class="check">
                <input type="radio" name="type" value="approve" /> Approve
              </label>
              <label class="check">
                <input type="radio" name="type" value="reject" /> Request changes
              </label>
            </>
          )}
        </fieldset>
        <details>
          <summary>Comment on a line</summary>
          <label>
            File path
            <input name="line_path" maxlength="4096" autocomplete="off" />
          </label>
          <label>
            Line (of the new file)
            <input name="line_number" inputmode="numeric" pattern="[0-9]*" maxlength="9" />
          </label>
          <label>
            Line comment
            <textarea name="line_content" rows="3" maxlength="65536" />
          </label>
        </details>
        <div>
          <button class="primary" type="submit">
            Submit review
          </button>
        </div>
      </form>
    </section>
  )
}

/**
 * The pull request's page; `refused`: a form of it refused (a merge, an update), said atop the page
 * with its status, where a bare error page left the visitor without the pull request.
 */
async function pullPage(deps: AppDeps, request: Request, ctx: RepoContext, index: number, at: ConversationAt, refused?: { error: string; status: number }): Promise<Response> {
  const web = webContext(deps.config, request, ctx.caller)
  const row = await findIssue(deps, ctx.repo.id, index)
  // Gitea: an issue's number under /pulls goes to the issue.
  if (!row.isPull) return new Response(null, { status: 303, headers: { location: issuePageUrl(ctx.owner.name, ctx.repo.name, index, false) } })
  const item = await findPull(deps, ctx.repo.id, index)
  const viewer = ctx.caller.user
  const repo = await repoToApi(deps, ctx.repo, ctx.owner, viewer, ctx.mode)
  const pull = await pullToApi(deps, ctx, item, viewer)
  const conv = await loadConversation(deps, ctx, row, at, deps.auth.clientAddress(request) ?? '', item)
  const [outlook, update, commits, checks, required] = await Promise.all([
    mergeOutlook(deps, ctx, item, viewer && ctx.mode >= AccessMode.Write ? viewer : null),
    updateOutlook(deps, ctx, item, viewer),
    commitCountOf(deps, ctx, index),
    checksOf(deps, ctx, [pull.head.sha]),
    requiredContextsOf(deps, ctx.repo.id, pull.base.ref),
  ])
  const url = issuePageUrl(repo.owner.login, repo.name, index, true)
  const scheduled = await scheduledOf(deps, ctx, item.pull.id)
  const headNow = pull.merged || pull.state !== 'open' ? pull.head.sha : ((await currentPullHead(deps, item.pull, ctx.repo)) ?? pull.head.sha)
  const controls = await conversationControls(deps, web, ctx, conv, url)
  const headName = pull.head.repo && pull.head.repo.id !== repo.id ? `${pull.head.repo.full_name}:${pull.head.ref}` : pull.head.ref
  const branchAction = await headBranchAction(deps, request, pull)
  return htmlResponse(
    <Layout ctx={web} title={`${row.title} · Pull request #${index} · ${repo.full_name}`} enhanced={conv.pages > 1}>
      <RepoHeader repo={repo} />
      <TrackerTabs repo={repo} current="pulls" />
      <ConversationHead conv={conv} noun="Pull request" merged={pull.merged} edit={controls.title}>
        <p>
          Wants to merge <code>{headName}</code> into <code>{pull.base.ref}</code> ·{' '}
          <span class="muted">
            +{pull.additions} −{pull.deletions}
          </span>
        </p>
      </ConversationHead>
      <PullTabs url={url} tab="conversation" commits={commits?.total ?? null} files={pull.changed_files} />
      <Notices ctx={web} error={refused?.error} />
      <div class="conversation">
        <div class="main-column">
          <ConversationView conv={conv} url={url} controls={controls} />
          <MergeBox ctx={web} repoCtx={ctx} pull={pull} status={item.pull.status} outlook={outlook} update={update} scheduled={scheduled} url={url} headNow={headNow} checks={checks.get(pull.head.sha)} required={required} />
          {branchAction ? <HeadBranchButton ctx={web} url={url} branch={headName} action={branchAction} /> : null}
          <ReviewForm ctx={web} pull={pull} action={`${url}/reviews`} />
          <CommentForm ctx={web} repoCtx={ctx} conv={conv} action={`${url}/comments`} closable={!pull.merged} />
        </div>
        <SideFacts issue={conv.issue}>
          <h2 class="side-title">Reviewers</h2>
          {pull.requested_reviewers.length ? (
            <ul class="chips">
              {pull.requested_reviewers.map((u) => (
                <li>
                  <UserLink user={u} /> <span class="muted">(asked)</span>
                </li>
              ))}
            </ul>
          ) : (
            <p class="muted">No one asked</p>
          )}
          {await IssueSide({ deps, web, repoCtx: ctx, conv, url })}
          {controls.title && pull.state === 'open' ? (
            <>
              <h2 class="side-title">Work in progress</h2>
              <ButtonForm ctx={web} action={`${url}/title`} label={isDraftTitle(row.title) ? 'Remove the WIP prefix' : 'Mark as work in progress'} fields={{ title: toggledDraftTitle(row.title) }} />
            </>
          ) : null}
          {controls.side}
        </SideFacts>
      </div>
    </Layout>,
    refused?.status,
  )
}

/** A refused pull request form's answer: the pull request's page saying why (its status kept). */
const pullPageRefusing = (deps: AppDeps, request: Request, ctx: RepoContext, rawIndex: string) => (_web: unknown, error: string, status: number) =>
  pullPage(deps, request, ctx, indexOf(rawIndex), {}, { error, status })

/** The pull request's scheduled merge as its merge box says it (the cancel rule is cancelScheduledMerge's). */
async function scheduledOf(deps: AppDeps, ctx: RepoContext, pullId: number): Promise<Scheduled | null> {
  const row = await scheduledMergeOf(deps, pullId)
  if (!row) return null
  const by = (await usersByIds(deps, [row.doerId])).get(row.doerId)
  const viewer = ctx.caller.user
  return { by: by?.name ?? null, style: row.mergeStyle, cancellable: !!viewer && (viewer.id === row.doerId || ctx.mode >= AccessMode.Admin) }
}

/** The head branch's buttons' POST (Delete branch, Restore branch): `act` on the pull request's record, then back to its page with `done`. */
function headBranchForm(
  deps: AppDeps,
  request: Request,
  ctx: RepoContext,
  rawIndex: string,
  body: { _csrf?: string },
  act: (deps: AppDeps, request: Request, pull: ApiPull) => Promise<void>,
  done: Notice,
): Promise<Response> {
  return formRoute(deps.config, { request, caller: ctx.caller, body }, async () => {
    const index = indexOf(rawIndex)
    await act(deps, request, await pullToApi(deps, ctx, await findPull(deps, ctx.repo.id, index), ctx.caller.user))
    return seeOther(issuePageUrl(ctx.owner.name, ctx.repo.name, index, true), done)
  })
}

const styleOf = (value: string | undefined): MergeStyle => {
  const style = (value || 'merge') as MergeStyle
  if (!MERGE_STYLES.includes(style)) throw new ApiError(422, `unknown merge style: ${value}`)
  return style
}

/**
 * A pull request's page (`/{owner}/{repo}/pulls/{index}`: its conversation, reviews, merge box;
 * `{index}.diff` and `.patch` there are its diff_url and patch_url), and its merge, update
 * (`/update?style=`, the API's updatePull), review, Delete branch and Restore branch forms, each
 * calling the service the API calls. The downloads answer readers of the repository
 * as the API's repoDownloadPullDiffOrPatch does.
 */
export const pullPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/:owner/:repo/pulls/:index',
      ({ request, params, query, repo: ctx }) => {
        const { index, kind } = pullDownloadOf(params.index)
        if (kind) return pullDiff(deps, ctx, indexOf(index), kind, formSwitch(query.binary, false))
        return pullPage(deps, request, ctx, indexOf(index), query)
      },
      { scope: 'repository', repo: { unit: 'pulls' }, params: IndexParams, query: PullPageQuery, detail: pageDetail('webPull') },
    )
    .post(
      '/:owner/:repo/pulls/:index/merge',
      ({ request, params, body, repo: ctx, user }) =>
        formRoute(deps.config, { request, caller: ctx.caller, body }, async () => {
          const index = indexOf(params.index)
          // The API's rules: merged now when ready, else scheduled when asked; 409 when already scheduled.
          const outcome = await mergeOrSchedule(deps, ctx, index, user, {
            style: styleOf(body.do),
            title: body.merge_title_field,
            message: body.merge_message_field === undefined ? undefined : multiline(body.merge_message_field),
            headCommitId: body.head_commit_id || undefined,
            force: checked(body.force_merge),
            whenChecksSucceed: checked(body.merge_when_checks_succeed),
            deleteBranchAfterMerge: checked(body.delete_branch_after_merge),
          })
          // A merge shows itself (the merged box); a schedule says so.
          return seeOther(issuePageUrl(ctx.owner.name, ctx.repo.name, index, true), outcome === 'scheduled' ? 'merge-scheduled' : undefined)
        }, pullPageRefusing(deps, request, ctx, params.index)),
      { scope: 'repository', repo: { level: 'write', unit: 'pulls' }, signed: true, params: IndexParams, body: MergeBody, detail: pageDetail('webPullMerge') },
    )
    .post(
      '/:owner/:repo/pulls/:index/cancel_auto_merge',
      ({ request, params, body, repo: ctx, user }) =>
        formRoute(deps.config, { request, caller: ctx.caller, body }, async () => {
          const index = indexOf(params.index)
          // Gitea's CancelAutoMergePullRequest: its scheduler or a repository admin (the service decides).
          await cancelScheduledMerge(deps, ctx, index, user)
          return seeOther(issuePageUrl(ctx.owner.name, ctx.repo.name, index, true), 'merge-unscheduled')
        }),
      { scope: 'repository', repo: { unit: 'pulls' }, signed: true, params: IndexParams, body: CleanUpBody, detail: pageDetail('webPullCancelAutoMerge') },
    )
    .post(
      '/:owner/:repo/pulls/:index/cleanup',
      ({ request, params, body, repo: ctx }) => headBranchForm(deps, request, ctx, params.index, body, cleanUp, 'branch-deleted'),
      // Gitea's CleanUpPullRequest: the head repository's write access is checked there (cleanUp), not this one's.
      { scope: 'repository', repo: { unit: 'pulls', writes: false }, signed: true, params: IndexParams, body: CleanUpBody, detail: pageDetail('webPullCleanUp') },
    )
    .post(
      '/:owner/:repo/pulls/:index/restore',
      ({ request, params, body, repo: ctx }) => headBranchForm(deps, request, ctx, params.index, body, restoreHead, 'branch-restored'),
      // As the cleanup: the head repository's write access is checked there (restoreHead).
      { scope: 'repository', repo: { unit: 'pulls', writes: false }, signed: true, params: IndexParams, body: CleanUpBody, detail: pageDetail('webPullRestoreBranch') },
    )
    .post(
      '/:owner/:repo/pulls/:index/update',
      ({ request, params, query, body, repo: ctx, user }) =>
        formRoute(deps.config, { request, caller: ctx.caller, body }, async () => {
          const index = indexOf(params.index)
          const style = query.style ?? body.style ?? 'merge'
          if (style !== 'merge' && style !== 'rebase') throw new ApiError(422, `unknown update style: ${style}`)
          // The API's service: its access rule (push access to the head branch), and the one push path.
          await updatePull(deps, ctx, index, user, style)
          return seeOther(issuePageUrl(ctx.owner.name, ctx.repo.name, index, true), 'branch-updated')
        }, pullPageRefusing(deps, request, ctx, params.index)),
      // As the API's POST …/pulls/{index}/update: the service decides who may push to the head branch.
      { scope: 'repository', repo: { unit: 'pulls' }, signed: true, params: IndexParams, query: UpdateQuery, body: UpdateBody, detail: pageDetail('webPullUpdate') },
    )
    .post(
      '/:owner/:repo/pulls/:index/reviews',
      ({ request, params, body, repo: ctx, user }) =>
        formRoute(deps.config, { request, caller: ctx.caller, body }, async () => {
          const index = indexOf(params.index)
          const event = REVIEW_EVENTS[body.type ?? 'comment']
          if (!event) throw new ApiError(422, `unknown review type: ${body.type}`)
          const path = body.line_path?.trim()
          const line = /^\d{1,9}$/.test(body.line_number?.trim() ?? '') ? Number(body.line_number!.trim()) : 0
          if (path && !line) throw new ApiError(422, 'A line comment needs the number of a line of the new file.')
          const text = multiline(body.line_content)
          if (path && !text.trim()) throw new ApiError(422, 'A line comment needs a text.')
          const position = body.line_side === 'old' ? { old_position: line } : { new_position: line }
          const comments = path ? [{ path, ...position, body: text }] : []
          const { review } = await createReview(deps, ctx, user, index, { body: multiline(body.content), event, comments })
          const url = issuePageUrl(ctx.owner.name, ctx.repo.name, index, true)
          // From the files page's line form: back to the comment, under its line.
          if (body.return_to === 'files' && path) return `${url}/files#issuecomment-${(await commentsOfReview(deps, review.id)).at(-1)?.id ?? ''}`
          return `${url}#pullrequestreview-${review.id}`
        }),
      { scope: 'repository', repo: { unit: 'pulls' }, signed: true, params: IndexParams, body: ReviewBody, detail: pageDetail('webPullReview') },
    )
