/** @jsxImportSource warren-jsx */
import type { Child, Html } from 'warren-jsx/jsx-runtime'
import { isoTime } from '../../lib/time'
import type { EventRecord } from '../../events/outbox'
import type { ApiTimelineComment } from '../../convert/timeline'
import { ownerUrl } from '../links'
import { COMMENTS_PER_PAGE, type Conversation, type TimelineItem } from './conversation'
import { Attachments, MarkdownBody, Pager, TimeAt, UserLink } from './issue-parts'
import type { ConversationControls } from './issue-edit'

/** A conversation's body, its comments, reviews and events, in time order: the middle of an issue or pull request page. */

type Named = { id: number; name: string }
const namesOf = (value: unknown): string[] =>
  Array.isArray(value) ? value.map((v) => (v && typeof v === 'object' && typeof (v as Named).name === 'string' ? (v as Named).name : '')).filter(Boolean) : []
const text = (value: unknown): string => (typeof value === 'string' ? value : '')
const shortSha = (value: unknown) => text(value).slice(0, 10)

function Person(props: { name: string | null | undefined }): Html {
  return props.name ? <a class="user" href={ownerUrl(props.name)}>{props.name}</a> : <span class="user">Ghost</span>
}

function list(names: string[]): Child {
  return names.map((n, i) => (
    <>
      {i === 0 ? '' : i === names.length - 1 ? ' and ' : ', '}
      <strong>{n}</strong>
    </>
  ))
}

/** A commit of a repository (`owner/name`), by its short id. */
function CommitLink(props: { repo: string; sha: string }): Html {
  const [owner, name] = props.repo.split('/')
  return (
    <a href={`/${encodeURIComponent(owner ?? '')}/${encodeURIComponent(name ?? '')}/commit/${props.sha}`}>
      <code>{props.sha.slice(0, 10)}</code>
    </a>
  )
}

/** What an event says after its actor's name ("closed this", "added the bug label"). */
function eventWords(event: EventRecord, actor: string | null, people: Map<number, string>): Child {
  const p = event.payload
  switch (event.kind) {
    case 'issue.closed':
      return typeof p.commit === 'string' && typeof p.commitRepo === 'string' ? <>closed this in <CommitLink repo={p.commitRepo} sha={p.commit} /></> : 'closed this'
    case 'issue.reopened':
      return typeof p.commit === 'string' && typeof p.commitRepo === 'string' ? <>reopened this in <CommitLink repo={p.commitRepo} sha={p.commit} /></> : 'reopened this'
    case 'issue.label_updated':
    case 'issue.label_cleared': {
      const added = namesOf(p.added)
      const removed = namesOf(p.removed)
      return (
        <>
          {added.length ? <>added the {list(added)} {added.length === 1 ? 'label' : 'labels'}</> : null}
          {added.length && removed.length ? ' and ' : null}
          {removed.length ? <>removed the {list(removed)} {removed.length === 1 ? 'label' : 'labels'}</> : null}
        </>
      )
    }
    case 'issue.assigned':
    case 'issue.unassigned': {
      const login = text((p.assignee as { login?: unknown } | undefined)?.login)
      const self = login !== '' && login === actor
      if (event.kind === 'issue.assigned') return self ? 'self-assigned this' : <>assigned <Person name={login || null} /></>
      return self ? 'removed their assignment' : <>unassigned <Person name={login || null} /></>
    }
    case 'issue.milestoned':
      return <>added this to the <strong>{text((p.milestone as { title?: unknown } | undefined)?.title)}</strong> milestone</>
    case 'issue.demilestoned':
      return <>removed this from the <strong>{text((p.milestone as { title?: unknown } | undefined)?.title)}</strong> milestone</>
    case 'issue.edited':
      return <>changed the title from <del>{text((p.changes as { title?: { from?: unknown } } | undefined)?.title?.from)}</del></>
    case 'issue.ref_changed': {
      const from = text(p.oldRef)
      const to = text(p.newRef)
      if (!to) return <>removed the reference <code>{from}</code></>
      return from ? <>changed the reference from <code>{from}</code> to <code>{to}</code></> : <>added the reference <code>{to}</code></>
    }
    case 'issue.dependency_added':
    case 'issue.dependency_removed': {
      // The other one is named only within this repository: one elsewhere may be hidden from the reader.
      const other = p.dependent as { repoId?: unknown; index?: unknown } | undefined
      const named = other?.repoId === event.repoId && typeof other.index === 'number' ? <> <strong>#{other.index}</strong></> : null
      return event.kind === 'issue.dependency_added' ? <>added a dependency{named}</> : <>removed a dependency{named}</>
    }
    case 'issue.pinned':
      return 'pinned this'
    case 'issue.unpinned':
      return 'unpinned this'
    case 'issue.locked':
      return text(p.reason) ? <>locked as <strong>{text(p.reason)}</strong> and limited conversation to collaborators</> : 'locked and limited conversation to collaborators'
    case 'issue.unlocked':
      return 'unlocked this conversation'
    case 'issue.project_changed': {
      const to = text((p.project as { title?: unknown } | null | undefined)?.title)
      const from = text((p.oldProject as { title?: unknown } | null | undefined)?.title)
      if (!to) return <>removed this from the <strong>{from}</strong> project</>
      return from ? <>modified the project from <strong>{from}</strong> to <strong>{to}</strong></> : <>added this to the <strong>{to}</strong> project</>
    }
    case 'issue.project_column_changed':
      return (
        <>
          moved this to <strong>{text((p.column as { title?: unknown } | undefined)?.title)}</strong> in <strong>{text((p.project as { title?: unknown } | undefined)?.title)}</strong>
        </>
      )
    case 'pull.merged':
      return <>merged commit <code>{shortSha(p.mergeCommitSha)}</code></>
    case 'pull.synchronized':
      return <>pushed, moving the head from <code>{shortSha(p.before)}</code> to <code>{shortSha(p.after)}</code></>
    case 'review.requested':
      return <>requested a review from <Person name={people.get(Number(p.reviewerId)) ?? null} /></>
    case 'review.request_removed':
      return <>removed the review request for <Person name={people.get(Number(p.reviewerId)) ?? null} /></>
    default:
      return event.kind
  }
}

/** Seconds as Gitea says a duration ("1 hour 2 minutes"); other text as it is. */
function duration(body: string): string {
  if (!/^\d{1,15}$/.test(body)) return body
  const n = Number(body)
  const parts: [number, string][] = [[Math.floor(n / 3600), 'hour'], [Math.floor((n % 3600) / 60), 'minute'], [n % 60, 'second']]
  const said = parts.filter(([v]) => v > 0).map(([v, unit]) => `${v} ${unit}${v === 1 ? '' : 's'}`)
  return said.length ? said.join(' ') : '0 seconds'
}

/** What a comment row kept as a timeline event says after its poster's name, by its API type (convert/timeline.ts). */
function recordWords(record: ApiTimelineComment): Child {
  const body = record.body
  switch (record.type) {
    case 'start_tracking':
      return 'started working'
    case 'stop_tracking':
      return <>stopped working, spent <strong>{duration(body)}</strong></>
    case 'add_time_manual':
      return <>added spent time <strong>{duration(body)}</strong></>
    case 'cancel_tracking':
      return 'cancelled time tracking'
    case 'delete_time_manual':
      return <>deleted spent time <strong>{body}</strong></>
    case 'added_deadline':
      return <>added the due date <strong>{body}</strong></>
    case 'modified_deadline': {
      const [to, from] = body.split('|')
      return <>modified the due date to <strong>{to}</strong> from <strong>{from}</strong></>
    }
    case 'removed_deadline':
      return <>removed the due date <strong>{body}</strong></>
    case 'delete_branch':
      return <>deleted branch <code>{body}</code></>
    case 'commit_ref': {
      // The body is the commit's link as commit-refs.ts wrote it; the page draws its own from it.
      const href = /^<a href="([^"]*)">/.exec(body)?.[1]?.replace(/&amp;/g, '&')
      const sha = record.ref_commit_sha ?? ''
      const path = href && /^https?:\/\/[^/]+\/([^/]+)\/([^/]+)\/commit\/([0-9a-f]{40,64})$/.exec(href)
      return path ? <>referenced this from a commit <CommitLink repo={`${decodeURIComponent(path[1]!)}/${decodeURIComponent(path[2]!)}`} sha={sha} /></> : <>referenced this from a commit <code>{sha.slice(0, 10)}</code></>
    }
    case 'pull_scheduled_merge':
      return 'scheduled this pull request to merge when all checks succeed'
    case 'pull_cancel_scheduled_merge':
      return 'cancelled auto merging this pull request when all checks succeed'
    default:
      return record.type
  }
}

const REVIEW_WORDS: Record<string, string> = { APPROVED: 'approved these changes', REQUEST_CHANGES: 'requested changes', COMMENT: 'reviewed' }

/** " · edited" linking a text's history (content-history.tsx), when it was edited. */
function Edited(props: { times: number | undefined; href: string }): Html {
  if (!props.times) return <></>
  return (
    <>
      {' · '}
      <a href={props.href} title={`Edited ${props.times} time${props.times === 1 ? '' : 's'}: its history`}>
        edited
      </a>
    </>
  )
}

function Item(props: { item: TimelineItem; controls?: ConversationControls; edits?: Map<number, number>; history?: string }): Html {
  const { item } = props
  if (item.kind === 'comment') {
    const c = item.comment
    return (
      <article class="comment" id={`issuecomment-${c.id}`} aria-label={`Comment by ${c.user.login}`}>
        <header>
          <UserLink user={c.user} /> commented{' '}
          <a href={`#issuecomment-${c.id}`}>
            <TimeAt iso={c.created_at} />
          </a>
          <Edited times={props.edits?.get(c.id)} href={`${props.history}?comment_id=${c.id}`} />
        </header>
        <MarkdownBody html={item.html} text={c.body} />
        <Attachments assets={c.assets} />
        {props.controls?.comment(c) ?? null}
      </article>
    )
  }
  if (item.kind === 'review') {
    const r = item.review
    const state = r.state.toLowerCase().replace('_', '-')
    return (
      <article class={`comment review review-${state}`} id={`pullrequestreview-${r.id}`} aria-label={`Review by ${r.user?.login ?? 'Ghost'}`}>
        <header>
          <UserLink user={r.user} /> {REVIEW_WORDS[r.state] ?? 'reviewed'} <TimeAt iso={r.submitted_at} />
          {r.dismissed ? <span class="tag"> dismissed</span> : null}
          {r.stale ? <span class="tag"> outdated</span> : null}
        </header>
        {r.body.trim() ? <MarkdownBody html={item.html} text={r.body} /> : null}
        {item.lines.map(({ comment, html }) => (
          <div class="line-comment" id={`issuecomment-${comment.id}`}>
            <p class="muted">
              <code>{comment.path}</code> line {comment.position || comment.original_position}
              {comment.position === 0 ? ' (outdated)' : ''} · <a href={comment.html_url}>in the diff</a>
            </p>
            {comment.diff_hunk ? <pre class="hunk">{comment.diff_hunk}</pre> : null}
            <MarkdownBody html={html} text={comment.body} />
          </div>
        ))}
      </article>
    )
  }
  if (item.kind === 'record')
    return (
      <p class="event" id={`issuecomment-${item.record.id}`} data-type={item.record.type}>
        <UserLink user={item.record.user} /> {recordWords(item.record)} <TimeAt iso={item.record.created_at} />
      </p>
    )
  return (
    <p class="event">
      <Person name={item.actor} /> {eventWords(item.event, item.actor, item.people)} <TimeAt iso={isoTime(item.at)} />
    </p>
  )
}

/** The conversation; `controls`: the forms the reader may use on its description and comments (issue-edit.tsx). */
export function ConversationView(props: { conv: Conversation; url: string; controls?: ConversationControls }): Html {
  const { conv } = props
  const pager = <Pager path={props.url} query={{}} page={conv.page} pages={conv.pages} label="Pages of comments" />
  // Gitea's address of a text's history: under the issue's, a pull request's too.
  const history = `${props.url.replace(/\/pulls\/(\d+)$/, '/issues/$1')}/content-history`
  return (
    <>
      <article class="comment" id="issue-body" aria-label="Description">
        <header>
          <UserLink user={conv.issue.user} /> wrote <TimeAt iso={conv.issue.created_at} />
          <Edited times={conv.edits.get(0)} href={history} />
        </header>
        <MarkdownBody html={conv.bodyHtml} text={conv.issue.body} />
        <Attachments assets={conv.issue.assets} />
        {props.controls?.body ?? null}
      </article>
      {conv.pages > 1 ? (
        <p class="muted">
          {conv.totalComments} comments, {COMMENTS_PER_PAGE} a page: page {conv.page} of {conv.pages}.
        </p>
      ) : null}
      {pager}
      {conv.items.map((item) => (
        <Item item={item} controls={props.controls} edits={conv.edits} history={history} />
      ))}
      {conv.moreEvents ? <p class="muted">More events happened here than are shown.</p> : null}
      {pager}
    </>
  )
}
