/** @jsxImportSource warren-jsx */
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import type { RepoContext } from '../../auth/repo-context'
import type { ReviewCommentRow } from '../../db/schema'
import type { PullItem } from '../../convert/pull'
import { reviewCommentsToApi } from '../../convert/review'
import { commentsOfReviews } from '../../modules/reviews/service'
import type { WebContext } from '../context'
import { rowKeys, type DiffNotes } from '../diff'
import type { Diff } from '../diff-data'
import { renderAll, submittedReviews, type ApiReviewComment } from './conversation'
import { CsrfField, MarkdownBody, TimeAt, UserLink } from './issue-parts'

/**
 * A pull request's review line comments on its files page: each under its line of the diff, with
 * the id its record's html_url names (`/files#issuecomment-{id}`); those a push made outdated, and
 * those on lines the page does not show, listed apart with the hunk they were made on. For a
 * signed-in reader of an open pull request each line's number links to the page again with a
 * comment form under that line (`?comment={file}-{R|L}{line}`: no script needed), whose POST is the
 * review form's: a review of that one comment, through the reviews service.
 */

export interface LineComment {
  row: ReviewCommentRow
  record: ApiReviewComment
  html: string | null
}

/** The line comments of the pull request's submitted reviews (bounded as the conversation's), their texts rendered in one batch. */
export async function loadLineComments(deps: AppDeps, ctx: RepoContext, item: PullItem, client: string): Promise<LineComment[]> {
  const reviews = await submittedReviews(deps, ctx, item.issue.index)
  const rows = await commentsOfReviews(deps, reviews.map((r) => r.id))
  if (rows.length === 0) return []
  const records = await reviewCommentsToApi(deps, { repo: ctx.repo, issue: item.issue, pull: item.pull, owner: ctx.owner }, rows, ctx.caller.user)
  const html = await renderAll(deps, ctx, records.map((r) => r.body), client)
  return rows.map((row, i) => ({ row, record: records[i]!, html: html[i] ?? null }))
}

/** The line a `?comment=` value names: the file's place in the diff (1-based) and its line key (`R12`, `L3`). */
export function askedLine(value: string | undefined): { file: number; key: string } | null {
  const m = /^(\d{1,6})-([LR][1-9]\d{0,8})$/.exec(value ?? '')
  return m ? { file: Number(m[1]), key: m[2]! } : null
}

/** A line comment; `placed`: where it was made is said (when it is not shown at its line). */
function CommentView(props: { c: LineComment; conversation: string; placed?: boolean }): Html {
  const { c } = props
  return (
    <div class="line-comment" id={`issuecomment-${c.record.id}`}>
      {props.placed ? (
        <>
          <p>
            <code>{c.row.path}</code> {c.row.line > 0 ? 'line' : 'old line'} {Math.abs(c.row.line)}
          </p>
          {c.row.patch ? <pre class="hunk">{c.row.patch}</pre> : null}
        </>
      ) : null}
      <p class="muted">
        <UserLink user={c.record.user} /> <TimeAt iso={c.record.created_at} /> ·{' '}
        <a href={`${props.conversation}#pullrequestreview-${c.record.pull_request_review_id}`}>its review</a>
      </p>
      <MarkdownBody html={c.html} text={c.record.body} />
    </div>
  )
}

function LineForm(props: { web: WebContext; action: string; path: string; line: string; cancel: string }): Html {
  const old = props.line.startsWith('L')
  const line = props.line.slice(1)
  return (
    <form class="stack wide" method="post" action={props.action} id="line-form">
      <CsrfField ctx={props.web} />
      <input type="hidden" name="type" value="comment" />
      <input type="hidden" name="return_to" value="files" />
      <input type="hidden" name="line_path" value={props.path} />
      <input type="hidden" name="line_number" value={line} />
      <input type="hidden" name="line_side" value={old ? 'old' : 'new'} />
      <label>
        Comment on {props.path}, {old ? 'old line' : 'line'} {line}
        <textarea name="line_content" rows="4" required maxlength="65536" />
      </label>
      <div class="buttons">
        <button class="primary" type="submit">
          Comment
        </button>
        <a href={props.cancel}>Cancel</a>
      </div>
    </form>
  )
}

/** What the files page shows of its line comments: the diff's notes, and the comments listed apart. */
export function lineNotes(props: {
  diff: Diff
  comments: LineComment[]
  web: WebContext
  /** The pull request's page (`/{o}/{r}/pulls/{n}`). */
  conversation: string
  /** Whether the viewer may comment on lines (signed in, the pull request open). */
  commenting: boolean
  asked: { file: number; key: string } | null
}): { notes: DiffNotes | undefined; apart: Html | null } {
  const { diff, conversation } = props
  const fileOf = new Map<string, number>()
  const shown = new Set<string>()
  // The lines shown, as `{file}:{key}`: asked only to place comments and the form (most pages
  // have neither, and the set is a string a line).
  if (props.comments.length || (props.commenting && props.asked))
    diff.files.forEach((f, i) => {
      if (f.hunks.length === 0) return
      fileOf.set(f.change.path, i + 1)
      for (const h of f.hunks) for (const r of h.rows) for (const key of rowKeys(r)) shown.add(`${i + 1}:${key}`)
    })
  const at = new Map<string, LineComment[]>()
  const outdated: LineComment[] = []
  const unshown: LineComment[] = []
  for (const c of props.comments) {
    if (c.row.invalidated) {
      outdated.push(c)
      continue
    }
    const file = fileOf.get(c.row.path)
    const place = `${file}:${c.row.line > 0 ? 'R' : 'L'}${Math.abs(c.row.line)}`
    if (file === undefined || !shown.has(place)) unshown.push(c)
    else at.set(place, [...(at.get(place) ?? []), c])
  }
  const asked = props.commenting && props.asked && shown.has(`${props.asked.file}:${props.asked.key}`) ? props.asked : null
  // Nothing to add to the diff's lines (no comment at one, not commenting): none, drawn as a commit's diff.
  const notes: DiffNotes | undefined = at.size === 0 && !props.commenting ? undefined : {
    after(file, key) {
      if (at.size === 0 && !asked) return null
      const here = at.get(`${file}:${key}`)
      const form = asked && asked.file === file && asked.key === key
      if (!here && !form) return null
      return (
        <div class="line-comments">
          {(here ?? []).map((c) => (
            <CommentView c={c} conversation={conversation} />
          ))}
          {form ? <LineForm web={props.web} action={`${conversation}/reviews`} path={diff.files[file - 1]!.change.path} line={key} cancel={`${conversation}/files#diff-${file}`} /> : null}
        </div>
      )
    },
    link: (file, key) => (props.commenting ? `?comment=${file}-${key}#line-form` : null),
  }
  const listed = (title: string, list: LineComment[]) =>
    list.length ? (
      <details class="box" open>
        <summary>
          {title} ({list.length})
        </summary>
        {list.map((c) => (
          <CommentView c={c} conversation={conversation} placed />
        ))}
      </details>
    ) : null
  const apart =
    outdated.length || unshown.length ? (
      <>
        {listed('Outdated comments: their lines have changed since', outdated)}
        {listed('Comments on lines not shown here', unshown)}
      </>
    ) : null
  return { notes, apart }
}
