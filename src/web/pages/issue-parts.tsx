/** @jsxImportSource warren-jsx */
import { trustedHtml, type Child, type Html } from 'warren-jsx/jsx-runtime'
import type { ApiIssue, ApiLabel } from '../../convert/issue'
import type { ApiUser } from '../../convert/user'
import type { ApiAttachment } from '../../convert/attachment'
import type { RepoRow } from '../../db/schema'
import { sizeText } from './source'
import { ApiError } from '../../lib/errors'
import { errorPage } from '../errors'
import { ownerUrl, repoUrl } from '../links'

/** Pieces the issue, pull request and notification pages share: links, labels, times, forms. */

/** `/{owner}/{repo}/issues/{n}` or `/pulls/{n}`. */
export const issuePageUrl = (owner: string, repo: string, index: number, isPull: boolean) => `${repoUrl(owner, repo)}/${isPull ? 'pulls' : 'issues'}/${index}`

/** Whether the tracker of an issue (or of a pull request) is on in its repository: what it holds is a 404 otherwise (Gitea's checkIssueRights). */
export const trackerOn = (repo: Pick<RepoRow, 'hasIssues' | 'hasPullRequests'>, isPull: boolean) => (isPull ? repo.hasPullRequests : repo.hasIssues)

/** A person's name, linked to their profile (the Ghost of a deleted account is not a link). */
export function UserLink(props: { user: Pick<ApiUser, 'login' | 'id'> | null | undefined }): Html {
  const login = props.user?.login ?? 'Ghost'
  return props.user && props.user.id > 0 ? <a class="user" href={ownerUrl(login)}>{login}</a> : <span class="user">{login}</span>
}

/** A time as a readable UTC date, with its machine form. */
export function TimeAt(props: { iso: string | null | undefined }): Html {
  if (!props.iso) return <span />
  return <time datetime={props.iso}>{props.iso.replace('T', ' ').replace(/:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/, ' UTC')}</time>
}

/** A label: its colour as a dot (an attribute of an SVG shape: no inline style under the CSP) and its name. */
export function LabelChip(props: { label: Pick<ApiLabel, 'name' | 'color' | 'description'>; href?: string }): Html {
  const color = /^[0-9a-f]{6}$/i.test(props.label.color) ? `#${props.label.color}` : '#8c959f'
  const inner = (
    <>
      <svg aria-hidden="true" focusable="false" width="10" height="10" viewBox="0 0 10 10">
        <circle cx="5" cy="5" r="5" fill={color} />
      </svg>
      {props.label.name}
    </>
  )
  return props.href ? (
    <a class="label" href={props.href} title={props.label.description || undefined}>
      {inner}
    </a>
  ) : (
    <span class="label" title={props.label.description || undefined}>
      {inner}
    </span>
  )
}

/** Open, closed or merged, as a badge. */
export function StateBadge(props: { state: string; merged?: boolean }): Html {
  const state = props.merged ? 'merged' : props.state
  return <span class={`state state-${state}`}>{state === 'open' ? 'Open' : state === 'merged' ? 'Merged' : 'Closed'}</span>
}

/** Rendered markdown (the markdown service's sanitised HTML), or the text itself when it could not be rendered. */
export function MarkdownBody(props: { html: string | null; text: string }): Html {
  if (!props.text.trim()) return <p class="markdown muted">No description provided.</p>
  if (props.html === null) return <pre class="markdown plain">{props.text}</pre>
  return <div class="markdown">{trustedHtml(props.html)}</div>
}

/** An issue's or comment's attachments: a list of download links (nothing when there are none). */
export function Attachments(props: { assets: ApiAttachment[] }): Html | null {
  if (props.assets.length === 0) return null
  return (
    <ul class="attachments" aria-label="Attachments">
      {props.assets.map((a) => (
        <li>
          <a href={a.browser_download_url} download={a.name}>
            {a.name}
          </a>{' '}
          <span class="muted">{sizeText(a.size)}</span>
        </li>
      ))}
    </ul>
  )
}

export { CsrfField } from '../forms'

export { Pager } from '../forms'

/** One row of an issue or pull request list. */
export function IssueRow(props: { owner: string; repo: string; issue: ApiIssue; listPath: string }): Html {
  const { issue } = props
  const isPull = issue.pull_request !== null
  return (
    <li class="issue-row">
      <StateBadge state={issue.state} merged={issue.pull_request?.merged} />{' '}
      <a class="title" href={issuePageUrl(props.owner, props.repo, issue.number, isPull)}>
        {issue.title}
      </a>{' '}
      {issue.labels.map((l) => (
        <LabelChip label={l} href={`${props.listPath}?labels=${l.id}&state=all`} />
      ))}
      <div class="muted meta">
        #{issue.number} opened <TimeAt iso={issue.created_at} /> by <UserLink user={issue.user} />
        {issue.milestone ? <> · milestone {issue.milestone.title}</> : null}
        {issue.assignees.length ? (
          <>
            {' '}
            · assigned to{' '}
            {issue.assignees.map((a, i) => (
              <>
                {i ? ', ' : ''}
                <UserLink user={a} />
              </>
            ))}
          </>
        ) : null}
        {' · '}
        {issue.comments} {issue.comments === 1 ? 'comment' : 'comments'}
      </div>
    </li>
  )
}

/** A box of facts beside a conversation: labels, milestone, assignees, and more. */
export function SideFacts(props: { issue: ApiIssue; children?: Child }): Html {
  const { issue } = props
  return (
    <aside class="side" aria-label="Details">
      <h2 class="side-title">Labels</h2>
      {issue.labels.length ? (
        <ul class="chips">
          {issue.labels.map((l) => (
            <li>
              <LabelChip label={l} />
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">None yet</p>
      )}
      <h2 class="side-title">Milestone</h2>
      <p class={issue.milestone ? '' : 'muted'}>{issue.milestone ? issue.milestone.title : 'No milestone'}</p>
      <h2 class="side-title">Assignees</h2>
      {issue.assignees.length ? (
        <ul class="chips">
          {issue.assignees.map((a) => (
            <li>
              <UserLink user={a} />
            </li>
          ))}
        </ul>
      ) : (
        <p class="muted">No one assigned</p>
      )}
      {props.children}
    </aside>
  )
}

/**
 * A textarea's text as the API would have it: browsers send a form's line breaks as CRLF (the
 * HTML form encoding), stored as the LF a client of the API sends.
 */
export const multiline = (value: string | undefined): string => (value ?? '').replace(/\r\n?/g, '\n')

/** A form field's values (one or repeated), as strings. */
export const fieldList = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : typeof value === 'string' ? [value] : [])
