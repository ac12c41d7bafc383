/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import { and, eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { comments } from '../../db/schema'
import { toApiUser, ghostUser } from '../../convert/user'
import { usersByIds } from '../../convert/people'
import { findIssue } from '../../modules/issues/queries'
import { PLAIN_COMMENT } from '../../modules/comments/service'
import { contentHistory, contentVersion, deleteVersionText } from '../../modules/content-history/service'
import { lineDiff } from '../../lib/line-diff'
import { isoTime } from '../../lib/time'
import { forbidden, notFound } from '../../lib/errors'
import { AccessMode } from '../../auth/access'
import type { RepoContext } from '../../auth/repo-context'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { ButtonForm, CsrfText, FormText, formRoute, Notices, Pager, pagesOf, seeOther } from '../forms'
import { RepoHeader, pageRepo } from './repo-chrome'
import { issuePageUrl, TimeAt, UserLink } from './issue-parts'
import { indexOf, pageNumber } from './issues'

/*
 * Gitea's content history of an issue's description or of a comment
 * (`/{o}/{r}/issues/{index}/content-history`, `?comment_id=` for a comment; a pull request's too):
 * each version kept (modules/content-history), newest first, by whom and when, with what it
 * changed against the version before: its lines removed and added. For the issue's readers, as
 * the issue page.
 */

const VERSIONS_PER_PAGE = 20
const Params = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), index: t.String({ maxLength: 40 }) })
const Query = t.Object({ comment_id: FormText(20), page: FormText(10), done: FormText(40) })

/** The issue of the path and, with `comment_id`, its plain comment (404 for any other). */
async function textOf(deps: AppDeps, ctx: RepoContext, index: string, commentIdText: string | undefined) {
  const issue = await findIssue(deps, ctx.repo.id, indexOf(index))
  if (commentIdText === undefined || commentIdText === '') return { issue, comment: null }
  const id = /^\d{1,15}$/.test(commentIdText) ? Number(commentIdText) : 0
  const [comment] = await deps.db
    .select({ id: comments.id, posterId: comments.posterId })
    .from(comments)
    .where(and(eq(comments.id, id), eq(comments.issueId, issue.id), eq(comments.type, PLAIN_COMMENT)))
  if (!comment) throw notFound('no such comment')
  return { issue, comment }
}

/**
 * Who may take a version's text out of the history (Gitea's canSoftDeleteContentHistory): the
 * tracker's writers; the issue's or comment's poster; the version's own poster.
 */
const mayDeleteVersion = (ctx: RepoContext, text: Awaited<ReturnType<typeof textOf>>, versionPoster: number): boolean => {
  const user = ctx.caller.user
  if (!user || ctx.repo.isArchived) return false
  return ctx.mode >= AccessMode.Write || user.id === (text.comment ?? text.issue).posterId || user.id === versionPoster
}

async function historyPage(deps: AppDeps, ctx: RepoContext, web: WebContext, index: string, query: typeof Query.static, opts: { error?: string; status?: number } = {}) {
  const text = await textOf(deps, ctx, index, query.comment_id)
  const { issue } = text
  const commentId = text.comment?.id ?? null
  const pageAt = pageNumber(query.page)
  const found = await contentHistory(deps, { issueId: issue.id, commentId }, { page: pageAt, limit: VERSIONS_PER_PAGE, offset: (pageAt - 1) * VERSIONS_PER_PAGE })
  const people = await usersByIds(deps, found.rows.map((r) => r.posterId))
  const repo = await pageRepo(deps, ctx)
  const back = issuePageUrl(repo.owner.login, repo.name, issue.index, issue.isPull) + (commentId === null ? '' : `#issuecomment-${commentId}`)
  const what = commentId === null ? 'the description' : 'a comment'
  const here = `${issuePageUrl(repo.owner.login, repo.name, issue.index, false)}/content-history`
  return htmlResponse(
    <Layout ctx={web} title={`History of ${what} · #${issue.index} · ${repo.full_name}`}>
      <RepoHeader repo={repo} />
      <h2>
        History of {what} of <a href={back}>#{issue.index}</a>
      </h2>
      <Notices ctx={web} error={opts.error} />
      <p class="muted">{found.total === 0 ? 'Never edited.' : `${found.total} versions, newest first.`}</p>
      <ol class="entries" aria-label="Versions">
        {found.rows.map((row, i) => {
          const poster = people.get(row.posterId)
          const user = poster ? toApiUser(deps.config, poster, ctx.caller.user) : ghostUser(deps.config)
          const older = found.rows[i + 1] ?? (i === found.rows.length - 1 ? found.older : null)
          // A version's changes against the one before, unless either's text was taken out.
          const diff = older && !older.isDeleted && !row.isDeleted ? lineDiff(older.contentText, row.contentText) : null
          const newest = pageAt === 1 && i === 0
          return (
            <li>
              <article class="comment" aria-label={`Version of ${isoTime(row.editedUnix)}`}>
                <header>
                  <UserLink user={user} /> {row.isFirstCreated ? 'wrote' : 'edited'} <TimeAt iso={isoTime(row.editedUnix)} />
                </header>
                {row.isDeleted ? (
                  <p class="muted">This version's text was deleted from the history.</p>
                ) : diff ? (
                  <pre class="diff" aria-label="Changes">
                    {diff.map((line) => (
                      <span class={line.op === '+' ? 'add' : line.op === '-' ? 'del' : undefined}>{`${line.op} ${line.text}`}</span>
                    ))}
                  </pre>
                ) : (
                  <pre class="markdown">{row.contentText}</pre>
                )}
                {!newest && !row.isDeleted && mayDeleteVersion(ctx, text, row.posterId) ? (
                  <ButtonForm
                    ctx={web}
                    action={`${here}/soft-delete`}
                    label={`Delete the text of the version of ${isoTime(row.editedUnix)}`}
                    fields={{ history_id: String(row.id), ...(commentId === null ? {} : { comment_id: String(commentId) }) }}
                    danger
                  />
                ) : null}
              </article>
            </li>
          )
        })}
      </ol>
      <Pager path={here} query={{ comment_id: commentId === null ? undefined : String(commentId) }} page={pageAt} pages={pagesOf(found.total, VERSIONS_PER_PAGE)} />
    </Layout>,
    opts.status,
  )
}

const DeleteForm = t.Object({ _csrf: CsrfText, comment_id: FormText(20), history_id: FormText(20) })

export const contentHistoryPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/:owner/:repo/issues/:index/content-history',
      ({ request, params, query, repo: ctx }) => historyPage(deps, ctx, webContext(deps.config, request, ctx.caller), params.index, query),
      { scope: 'repository', repo: { unit: 'issues' }, params: Params, query: Query, detail: pageDetail('webIssueContentHistory') },
    )
    // Gitea's soft deletion of a version: its text taken out of the history, by those mayDeleteVersion names.
    .post(
      '/:owner/:repo/issues/:index/content-history/soft-delete',
      ({ request, params, body, repo: ctx }) =>
        formRoute(
          deps.config,
          { request, caller: ctx.caller, body },
          async () => {
            const text = await textOf(deps, ctx, params.index, body.comment_id)
            const of = { issueId: text.issue.id, commentId: text.comment?.id ?? null }
            const id = /^\d{1,15}$/.test(body.history_id ?? '') ? Number(body.history_id) : 0
            const version = await contentVersion(deps, of, id)
            if (!version) throw notFound('no such version')
            if (!mayDeleteVersion(ctx, text, version.posterId)) throw forbidden('Only the tracker\'s writers and the text\'s posters may delete a version from its history.')
            await deleteVersionText(deps, of, id)
            const back = `${issuePageUrl(ctx.owner.name, ctx.repo.name, text.issue.index, false)}/content-history${text.comment ? `?comment_id=${text.comment.id}` : ''}`
            return seeOther(back, 'version-deleted')
          },
          (web, error, status) => historyPage(deps, ctx, web, params.index, { comment_id: body.comment_id }, { error, status }),
        ),
      { scope: 'repository', repo: { unit: 'issues' }, signed: true, params: Params, body: DeleteForm, detail: pageDetail('webIssueContentHistoryDelete') },
    )
