/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import { and, eq, lte, sql } from 'drizzle-orm'
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { RepoContext } from '../../auth/repo-context'
import { reactions, users } from '../../db/schema'
import { inJsonList } from '../../db/sql'
import { perConnection } from '../../db/client'
import { badRequest, notFound } from '../../lib/errors'
import { pathNumber } from '../../lib/path-number'
import { addReaction, commentTarget, issueTarget, removeReaction, type ReactionTarget } from '../../modules/reactions/service'
import { pageDetail, type WebContext } from '../context'
import { CsrfText, formRoute, FormText } from '../forms'
import { CsrfField, issuePageUrl, trackerOn } from './issue-parts'

/** How a reaction reads (Gitea's emoji for its default set; another configured one by its name). */
const EMOJI: Record<string, string> = { '+1': '👍', '-1': '👎', laugh: '😄', hooray: '🎉', confused: '😕', heart: '❤️', rocket: '🚀', eyes: '👀' }
const shown = (type: string) => EMOJI[type] ?? `:${type}:`

/** One reaction given to an issue (comment 0) or a comment: how many gave it, the first of them by name, and whether the reader did. */
export interface ReactionCount {
  type: string
  count: number
  mine: boolean
  /** The first (at most REACTION_MAX_USERS) who gave it, by login, oldest first. */
  names: string[]
}

/** How many of those who gave a reaction its button names (Gitea's [ui] REACTION_MAX_USERS); "and N more" past it. */
export const REACTION_MAX_USERS = 10

/** reactionCounts' statement, prepared once per connection (every conversation page reads it; building it took longer than running it). */
const reactionCountsOf = perConnection((db: AppDeps['db']) => {
  const kind = sql`partition by ${reactions.commentId}, ${reactions.type}`
  const ranked = db
    .select({
      commentId: reactions.commentId,
      type: reactions.type,
      userId: reactions.userId,
      nth: sql<number>`row_number() over (${kind} order by ${reactions.createdUnix}, ${reactions.id})`.as('nth'),
      total: sql<number>`count(*) over (${kind})`.as('total'),
      mine: sql<number>`max(case when ${reactions.userId} = ${sql.placeholder('viewer')} then 1 else 0 end) over (${kind})`.as('mine'),
      firstId: sql<number>`min(${reactions.id}) over (${kind})`.as('first_id'),
    })
    .from(reactions)
    .where(and(eq(reactions.issueId, sql.placeholder('issue')), inJsonList(reactions.commentId, 'comments')))
    .as('ranked')
  return db
    .select({ commentId: ranked.commentId, type: ranked.type, total: ranked.total, mine: ranked.mine, name: users.name })
    .from(ranked)
    .innerJoin(users, eq(users.id, ranked.userId))
    .where(lte(ranked.nth, REACTION_MAX_USERS))
    .orderBy(sql`${ranked.firstId}`, sql`${ranked.nth}`)
    .prepare()
})

/**
 * The reactions of an issue (comment 0) and of the comments `commentIds` (a page's), counted by
 * kind with the first REACTION_MAX_USERS who gave each and whether `viewerId` did: one query (window
 * functions over each comment's kind, the same on SQLite and PostgreSQL), bounded by the comments
 * times the configured reactions times the names; by comment id, each kind in the order first given.
 */
export async function reactionCounts(deps: AppDeps, issueId: number, commentIds: number[], viewerId: number): Promise<Map<number, ReactionCount[]>> {
  const rows = await reactionCountsOf(deps.db).execute({ issue: issueId, comments: JSON.stringify([0, ...commentIds]), viewer: viewerId })
  const byComment = new Map<number, ReactionCount[]>()
  for (const r of rows) {
    let list = byComment.get(r.commentId)
    if (!list) byComment.set(r.commentId, (list = []))
    let count = list.at(-1)
    if (count?.type !== r.type) list.push((count = { type: r.type, count: Number(r.total), mine: Number(r.mine) > 0, names: [] }))
    count.names.push(r.name)
  }
  return byComment
}

/** Who gave a reaction, as Gitea's tooltip names them: "alice, bob and 3 more reacted with :+1:". */
export function reactedBy(c: ReactionCount): string {
  const more = c.count - c.names.length
  return `${c.names.join(', ')}${more > 0 ? ` and ${more} more` : ''} reacted with :${c.type}:`
}

/** A button giving or taking back one reaction (Gitea's `…/reactions/react` or `unreact`, with `content`). */
function ReactionButton(props: { web: WebContext; action: string; type: string; label: string; mine: boolean; title?: string }): Html {
  return (
    <form class="inline" method="post" action={`${props.action}/${props.mine ? 'unreact' : 'react'}`}>
      <CsrfField ctx={props.web} />
      <input type="hidden" name="content" value={props.type} />
      <button type="submit" class="secondary reaction" aria-pressed={props.mine ? 'true' : 'false'} title={props.title ?? `React with ${props.type}`}>
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
          <ReactionButton web={web} action={action} type={c.type} label={`${shown(c.type)} ${c.count}`} mine={c.mine} title={reactedBy(c)} />
        ) : (
          <span class="reaction" title={reactedBy(c)}>
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
    if (!trackerOn(ctx.repo, found.issue.isPull)) throw notFound('no such issue')
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
export const reactionPages = (deps: AppDeps, webApp: AreaApp) => {
  const app = pageGroup(webApp)
  const needs = { scope: 'repository', repo: { unit: 'issuesOrPulls' }, signed: true, body: ReactionBody } as const
  for (const kind of ['issues', 'pulls'] as const)
    app.post(
      `/:owner/:repo/${kind}/:index/reactions/:action`,
      ({ request, params, body, repo: ctx }) =>
        // Either kind at either address: issues and pull requests share one sequence of numbers (Gitea's GetActionIssue).
        reactionForm(deps, request, ctx, body, params.action, () => issueTarget(deps, ctx, pathNumber(params.index))),
      { ...needs, params: t.Object({ owner: Name, repo: Name, index: t.String({ maxLength: 40 }), action: t.String({ maxLength: 16 }) }), detail: pageDetail(kind === 'pulls' ? 'webPullReaction' : 'webIssueReaction') },
    )
  return app.post(
    '/:owner/:repo/comments/:id/reactions/:action',
    ({ request, params, body, repo: ctx }) => reactionForm(deps, request, ctx, body, params.action, () => commentTarget(deps, ctx, pathNumber(params.id))),
    { ...needs, params: t.Object({ owner: Name, repo: Name, id: t.String({ maxLength: 40 }), action: t.String({ maxLength: 16 }) }), detail: pageDetail('webCommentReaction') },
  )
}
