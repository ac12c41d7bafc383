/** @jsxImportSource warren-jsx */
import { Elysia, t } from 'elysia'
import { and, eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import { comments } from '../../db/schema'
import { toApiUser, ghostUser } from '../../convert/user'
import { usersByIds } from '../../convert/people'
import { findIssue } from '../../modules/issues/queries'
import { PLAIN_COMMENT } from '../../modules/comments/service'
import { contentHistory } from '../../modules/content-history/service'
import { lineDiff } from '../../lib/line-diff'
import { isoTime } from '../../lib/time'
import { notFound } from '../../lib/errors'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext } from '../context'
import { FormText, Pager, pagesOf } from '../forms'
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
const Query = t.Object({ comment_id: FormText(20), page: FormText(10) })

export const contentHistoryPages = (deps: AppDeps) =>
  new Elysia({ name: 'web-content-history', detail: { hide: true } }).use(pipeline(deps, { session: true })).get(
    '/:owner/:repo/issues/:index/content-history',
    async ({ request, params, query, repo: ctx }) => {
      const web = webContext(deps.config, request, ctx.caller)
      const issue = await findIssue(deps, ctx.repo.id, indexOf(params.index))
      let commentId: number | null = null
      if (query.comment_id !== undefined && query.comment_id !== '') {
        const id = /^\d{1,15}$/.test(query.comment_id) ? Number(query.comment_id) : 0
        const [comment] = await deps.db
          .select({ id: comments.id })
          .from(comments)
          .where(and(eq(comments.id, id), eq(comments.issueId, issue.id), eq(comments.type, PLAIN_COMMENT)))
        if (!comment) throw notFound('no such comment')
        commentId = comment.id
      }
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
          <p class="muted">
            {found.total === 0 ? 'Never edited.' : `${found.total} versions, newest first.`}
          </p>
          <ol class="entries" aria-label="Versions">
            {found.rows.map((row, i) => {
              const poster = people.get(row.posterId)
              const user = poster ? toApiUser(deps.config, poster, ctx.caller.user) : ghostUser(deps.config)
              const older = found.rows[i + 1] ?? (i === found.rows.length - 1 ? found.older : null)
              const diff = older ? lineDiff(older.contentText, row.contentText) : null
              return (
                <li>
                  <article class="comment" aria-label={`Version of ${isoTime(row.editedUnix)}`}>
                    <header>
                      <UserLink user={user} /> {row.isFirstCreated ? 'wrote' : 'edited'} <TimeAt iso={isoTime(row.editedUnix)} />
                    </header>
                    {diff ? (
                      <pre class="diff" aria-label="Changes">
                        {diff.map((line) => (
                          <span class={line.op === '+' ? 'add' : line.op === '-' ? 'del' : undefined}>{`${line.op} ${line.text}`}</span>
                        ))}
                      </pre>
                    ) : (
                      <pre class="markdown">{row.contentText}</pre>
                    )}
                  </article>
                </li>
              )
            })}
          </ol>
          <Pager path={here} query={{ comment_id: commentId === null ? undefined : String(commentId) }} page={pageAt} pages={pagesOf(found.total, VERSIONS_PER_PAGE)} />
        </Layout>,
      )
    },
    { scope: 'repository', repo: { unit: 'issues' }, params: Params, query: Query, detail: pageDetail('webIssueContentHistory') },
  )
