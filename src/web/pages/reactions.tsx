/** @jsxImportSource warren-jsx */
import { Elysia, t } from 'elysia'
import { eq, sql } from 'drizzle-orm'
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import type { RepoContext } from '../../auth/repo-context'
import { reactions } from '../../db/schema'
import { badRequest, notFound } from '../../lib/errors'
import { pathNumber } from '../../lib/path-number'
import { addReaction, commentTarget, issueTarget, removeReaction, type ReactionTarget } from '../../modules/reactions/service'
import { pageDetail, type WebContext } from '../context'
import { CsrfText, formRoute, FormText } from '../forms'
import { CsrfField, issuePageUrl } from './issue-parts'

/** How a reaction reads (Gitea's emoji for its default set; another configured one by its name). */
const EMOJI: Record<string, string> = { '+1': '👍', '-1': '👎', laugh: '😄', hooray: '🎉', confused: '😕', heart: '❤️', rocket: '🚀', eyes: '👀' }
const shown = (type: string) => EMOJI[type] ?? `:${type}:`

/** One reaction given to an issue (comment 0) or a comment: how many gave it, and whether the reader did. */
export interface ReactionCount {
  type: string
  count: number
  mine: boolean
}

/**
 * The reactions of an issue and of its comments, counted by kind in one grouped query (bounded by
 * the comments times the configured reactions), with whether `viewerId` gave each; by comment id.
 */
export async function reactionCounts(deps: AppDeps, issueId: number, viewerId: number): Promise<Map<number, ReactionCount[]>> {
  const rows = await deps.db
    .select({
      commentId: reactions.commentId,
      type: reactions.type,
      count: sql<number>`count(*)`,
      mine: sql<number>`sum(case when ${reactions.userId} = ${viewerId} then 1 else 0 end)`,
    })
    .from(reactions)
    .where(eq(reactions.issueId, issueId))
    .groupBy(reactions.commentId, reactions.type)
    .orderBy(sql`min(${reactions.id})`)
  const byComment = new Map<number, ReactionCount[]>()
  for (const r of rows) {
    let list = byComment.get(r.commentId)
    if (!list) byComment.set(r.commentId, (list = []))
    list.push({ type: r.type, count: Number(r.count), mine: Number(r.mine) > 0 })
  }
  return byComment
}

/** A button giving or taking back one reaction (Gitea's `…/reactions/react` or `unreact`, with `content`). */
function ReactionButton(props: { web: WebContext; action: string; type: string; label: string; mine: boolean }): Html {
  return (
    <form class="inline" method="post" action={`${props.action}/${props.mine ? 'unreact' : 'react'}`}>
      <CsrfField ctx={props.web} />
      <input type="hidden" name="content" value={props.type} />
      <button type="submit" class="secondary reaction" aria-pressed={props.mine ? 'true' : 'false'} title={props.mine ? `Take back ${props.type}` : `React with ${props.type}`}>
        {props.label}
      </button>
    </form>
  )
}

/**
 * The reactions under an issue's description or a comment: each kind given with its count (a
 * button that gives or takes back the reader's own when `action` is set: a signed-in reader who
 * may react), and the configured reactions to add, folded.
 */
export function ReactionBar(props: { web: WebContext; counts: ReactionCount[]; allowed: string[]; action: string | null }): Html | null {
  const { web, counts, action } = props
  if (!counts.length && !action) return null
  const given = new Set(counts.filter((c) => c.mine).map((c) => c.type))
  return (
    <div class="reactions" aria-label="Reactions">
      {counts.map((c) =>
        action ? (
          <ReactionButton web={web} action={action} type={c.type} label={`${shown(c.type)} ${c.count}`} mine={c.mine} />
        ) : (
          <span class="reaction" title={c.type}>
            {shown(c.type)} {c.count}
          </span>
        ),
      )}
      {action ? (
        <details class="edit-box add-reaction">
          <summary>Add reaction</summary>
          {props.allowed
            .filter((type) => !given.has(type))
            .map((type) => (
              <ReactionButton web={web} action={action} type={type} label={shown(type)} mine={false} />
            ))}
        </details>
      ) : null}
    </div>
  )
}

const Name = t.String({ maxLength: 255 })
const ReactionBody = t.Object({ _csrf: CsrfText, content: FormText(64) }, { additionalProperties: true })

/** A reaction form's POST: the target the path names, then the reactions service the API's POST and DELETE use; back to the conversation. */
function reactionForm(deps: AppDeps, request: Request, ctx: RepoContext, body: typeof ReactionBody.static, action: string, target: () => Promise<ReactionTarget>) {
  return formRoute(deps.config, { request, caller: ctx.caller, body }, async () => {
    if (action !== 'react' && action !== 'unreact') throw badRequest(`Unknown action: ${action}`)
    const found = await target()
    if (!(found.issue.isPull ? ctx.repo.hasPullRequests : ctx.repo.hasIssues)) throw notFound('no such issue')
    if (action === 'react') await addReaction(deps, ctx, ctx.caller.user!, found, body.content)
    else await removeReaction(deps, ctx, ctx.caller.user!, found, body.content)
    const url = issuePageUrl(ctx.owner.name, ctx.repo.name, found.issue.index, found.issue.isPull)
    return found.commentId ? `${url}#issuecomment-${found.commentId}` : url
  })
}

/**
 * Gitea's reaction forms: `POST /{o}/{r}/{issues|pulls}/{index}/reactions/{react|unreact}` and
 * `/{o}/{r}/comments/{id}/reactions/{react|unreact}`, with `content`, for a signed-in reader,
 * through the reactions service (its allowed set, the lock and block rules are the API's).
 */
export const reactionPages = (deps: AppDeps) => {
  const app = new Elysia({ name: 'web-reactions', detail: { hide: true } }).use(pipeline(deps, { session: true }))
  const needs = { scope: 'repository', repo: { unit: 'issuesOrPulls' }, signed: true, body: ReactionBody } as const
  for (const kind of ['issues', 'pulls'] as const)
    app.post(
      `/:owner/:repo/${kind}/:index/reactions/:action`,
      ({ request, params, body, repo: ctx }) =>
        reactionForm(deps, request, ctx, body, params.action, async () => {
          const target = await issueTarget(deps, ctx, pathNumber(params.index))
          if (target.issue.isPull !== (kind === 'pulls')) throw notFound('no such issue')
          return target
        }),
      { ...needs, params: t.Object({ owner: Name, repo: Name, index: t.String({ maxLength: 40 }), action: t.String({ maxLength: 16 }) }), detail: pageDetail(kind === 'pulls' ? 'webPullReaction' : 'webIssueReaction') },
    )
  return app.post(
    '/:owner/:repo/comments/:id/reactions/:action',
    ({ request, params, body, repo: ctx }) => reactionForm(deps, request, ctx, body, params.action, () => commentTarget(deps, ctx, pathNumber(params.id))),
    { ...needs, params: t.Object({ owner: Name, repo: Name, id: t.String({ maxLength: 40 }), action: t.String({ maxLength: 16 }) }), detail: pageDetail('webCommentReaction') },
  )
}
