/** @jsxImportSource warren-jsx */
import type { Html } from 'warren-jsx/jsx-runtime'
import type { ApiActivity, OpType } from '../../convert/activity'
import type { FeedItem } from '../feed-xml'
import { ownerUrl, refPath, repoUrl } from '../links'
import { TimeAt } from './issue-parts'

/*
 * One activity (an Activity record of convert/activity.ts) as the pages and the feeds tell it:
 * what its actor did (Gitea's action descriptions, shortened), what it is about (the issue, the
 * branch, the release) and where that is. The profile's activity tab, the dashboard and the RSS /
 * Atom feeds all use these.
 */

/**
 * What an activity's op type says its actor did (Gitea's action descriptions): `{subject}` is what
 * it was done to (linked to it), `{repo}` the repository (linked to its home).
 */
const DID: Record<OpType, string> = {
  create_repo: 'created repository {repo}',
  rename_repo: 'renamed repository {repo}',
  transfer_repo: 'transferred repository {repo}',
  commit_repo: 'pushed to {subject} at {repo}',
  push_tag: 'pushed tag {subject} to {repo}',
  delete_tag: 'deleted tag {subject} from {repo}',
  delete_branch: 'deleted branch {subject} from {repo}',
  create_issue: 'opened issue {subject} in {repo}',
  create_pull_request: 'opened pull request {subject} in {repo}',
  close_issue: 'closed issue {subject} in {repo}',
  reopen_issue: 'reopened issue {subject} in {repo}',
  close_pull_request: 'closed pull request {subject} in {repo}',
  reopen_pull_request: 'reopened pull request {subject} in {repo}',
  comment_issue: 'commented on issue {subject} in {repo}',
  comment_pull: 'commented on pull request {subject} in {repo}',
  merge_pull_request: 'merged pull request {subject} in {repo}',
  approve_pull_request: 'approved pull request {subject} in {repo}',
  reject_pull_request: 'asked for changes on pull request {subject} in {repo}',
  publish_release: 'published release {subject} in {repo}',
}

/** The words of an op type's description and its two places, in order. */
function sentence(op: string): (string | 'subject' | 'repo')[] {
  const template = DID[op as OpType] ?? `${op} {repo}`
  return template.split(/\{(subject|repo)\}/).map((part, i) => (i % 2 ? (part as 'subject' | 'repo') : part))
}

const PULL_OPS = new Set<OpType>(['create_pull_request', 'close_pull_request', 'reopen_pull_request', 'comment_pull', 'merge_pull_request', 'approve_pull_request', 'reject_pull_request'])
const ISSUE_OPS = new Set<OpType>(['create_issue', 'close_issue', 'reopen_issue', 'comment_issue'])

/** The short name of an activity's ref (`main`, `v1.0`). */
const shortRef = (ref: string) => ref.replace(/^refs\/(heads|tags)\//, '')

/** The issue or pull request number and the text after it in an activity's `index|text` content. */
function issueParts(a: ApiActivity): { index: string; text: string } {
  const bar = a.content.indexOf('|')
  return bar < 0 ? { index: a.content, text: '' } : { index: a.content.slice(0, bar), text: a.content.slice(bar + 1) }
}

/** The commits a push's content lists (Gitea's PushCommits), newest first; none when it cannot be read. */
function pushedCommits(a: ApiActivity): { sha: string; message: string }[] {
  if (a.op_type !== 'commit_repo' || !a.content) return []
  try {
    const commits = (JSON.parse(a.content) as { Commits?: { Sha1?: unknown; Message?: unknown }[] | null }).Commits ?? []
    return commits.map((c) => ({ sha: String(c.Sha1 ?? ''), message: String(c.Message ?? '') }))
  } catch {
    return []
  }
}

export interface ActivityStory {
  /** What it was done to, shown before the repository: "#3", "branch main". */
  subject: string
  /** The path (from the site's root) of what the activity is about. */
  path: string
  /** Plain text: the issue's title, the comment, the release's title, the commits pushed. */
  text: string
}

/** What `a` tells, and where it points (Gitea's feed links: the issue, the branch, the tag, the release, the comment). */
export function activityStory(a: ApiActivity): ActivityStory {
  const repo = repoUrl(a.repo.owner.login, a.repo.name)
  const op = a.op_type as OpType
  if (ISSUE_OPS.has(op) || PULL_OPS.has(op)) {
    const { index, text } = issueParts(a)
    const commentUrl = a.comment && new URL(a.comment.html_url)
    const path = commentUrl ? commentUrl.pathname + commentUrl.hash : `${repo}/${PULL_OPS.has(op) ? 'pulls' : 'issues'}/${encodeURIComponent(index)}`
    return { subject: `#${index}`, path, text: a.comment ? a.comment.body : text }
  }
  const ref = shortRef(a.ref_name)
  switch (op) {
    case 'commit_repo': {
      const commits = pushedCommits(a)
      return { subject: ref, path: commits.length === 1 ? `${repo}/commit/${commits[0]!.sha}` : `${repo}/src/branch/${refPath(ref)}`, text: commits.map((c) => `${c.sha.slice(0, 10)} ${c.message.split('\n')[0]}`).join('\n') }
    }
    case 'push_tag':
      return { subject: ref, path: `${repo}/src/tag/${refPath(ref)}`, text: '' }
    case 'delete_tag':
    case 'delete_branch':
      return { subject: ref, path: repo, text: '' }
    case 'publish_release':
      return { subject: ref, path: `${repo}/releases/tag/${refPath(ref)}`, text: a.content }
    case 'rename_repo':
    case 'transfer_repo':
      return { subject: '', path: repo, text: a.content ? `from ${a.content}` : '' }
    default:
      return { subject: '', path: repo, text: '' }
  }
}

/** The activities as a list: who did what in which repository, when, with the text it carries. */
export function ActivityEntries(props: { records: ApiActivity[]; empty: string }): Html {
  return (
    <ul class="entries" aria-label="Activity">
      {props.records.map((a) => {
        const story = activityStory(a)
        return (
          <li>
            <a href={ownerUrl(a.act_user.login)}>{a.act_user.login}</a>{' '}
            {sentence(a.op_type).map((part) =>
              part === 'subject' ? <a href={story.path}>{story.subject}</a> : part === 'repo' ? <a href={repoUrl(a.repo.owner.login, a.repo.name)}>{a.repo.full_name}</a> : part,
            )}
            {story.text ? <div class="muted">{story.text.split('\n')[0]!.slice(0, 200)}</div> : null}
            <div class="muted">
              <TimeAt iso={a.created} />
            </div>
          </li>
        )
      })}
      {props.records.length === 0 ? <li class="muted">{props.empty}</li> : null}
    </ul>
  )
}

/** An activity as a feed's item (Gitea's feedActionsToFeedItems): "{actor} opened issue #3 in {repo}", linked absolutely from `base`. */
export function activityFeedItem(a: ApiActivity, base: string): FeedItem {
  const story = activityStory(a)
  const link = base.replace(/\/$/, '') + story.path
  const told = sentence(a.op_type).map((part) => (part === 'subject' ? story.subject : part === 'repo' ? a.repo.full_name : part))
  return {
    title: `${a.act_user.full_name || a.act_user.login} ${told.join('')}`,
    link,
    id: `${a.id}: ${link}`,
    description: story.text,
    author: { name: a.act_user.full_name || a.act_user.login, email: a.act_user.email || undefined },
    created: a.created,
  }
}
