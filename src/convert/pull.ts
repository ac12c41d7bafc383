import type { Config } from '../config'
import type { UserRow } from '../auth/caller'
import type { IssueRow, PullRow } from '../db/schema'
import { isoTimeOrNull } from '../lib/time'
import type { ApiRepo } from './repo'
import { issueHtmlUrl, toApiIssue, type IssueRelations, type RepoRef } from './issue'
import { userConverter, type ApiUser } from './user'

/** A branch end of a pull request: its repository's record (permissions all false, as Gitea), or null when that repository is gone. */
export interface PullEnd {
  repoId: number
  repo: ApiRepo | null
}

/** What toApiPull needs besides the rows, fetched in batch for lists. */
export interface PullRelations extends IssueRelations {
  base: PullEnd
  head: PullEnd
  /** Undefined when the merger's account was deleted (the Ghost), null when not merged. */
  mergedBy: UserRow | undefined | null
}

/** PRBranchInfo: Gitea's `label` is the bare branch name. */
const branchInfo = (branch: string, sha: string, end: PullEnd) => ({ label: branch, ref: branch, sha, repo_id: end.repoId, repo: end.repo })

/** The PullRequest record (records.md §13), as `viewer` may see it. */
export function toApiPull(
  config: Config,
  repo: RepoRef,
  pull: PullRow,
  issue: IssueRow,
  rel: PullRelations,
  viewer: UserRow | null,
  userToApi: (user: UserRow | undefined) => ApiUser = userConverter(config, viewer),
) {
  const i = toApiIssue(config, repo, issue, rel, viewer, userToApi)
  const html = issueHtmlUrl(config, repo, issue)
  return {
    id: pull.id,
    url: html,
    number: issue.index,
    user: i.user,
    title: i.title,
    body: i.body,
    labels: i.labels,
    milestone: i.milestone,
    assignee: i.assignee,
    assignees: i.assignees,
    state: i.state,
    is_locked: i.is_locked,
    comments: i.comments,
    html_url: html,
    diff_url: `${html}.diff`,
    patch_url: `${html}.patch`,
    mergeable: !pull.hasMerged && (pull.status === 'mergeable'),
    merged: pull.hasMerged,
    merged_at: pull.hasMerged ? isoTimeOrNull(pull.mergedUnix) : null,
    merge_commit_sha: pull.hasMerged ? pull.mergeCommitSha : null,
    merged_by: pull.hasMerged && rel.mergedBy !== null ? userToApi(rel.mergedBy) : null,
    /** Warren's own: the paths that conflict, when `mergeable` is false because of them. */
    conflicted_files: pull.status === 'conflict' && !pull.hasMerged ? (JSON.parse(pull.conflictedFiles) as string[]) : [],
    base: branchInfo(pull.baseBranch, pull.baseSha, rel.base),
    head: branchInfo(pull.headBranch, pull.headSha, rel.head),
    merge_base: pull.mergeBase,
    due_date: i.due_date,
    created_at: i.created_at,
    updated_at: i.updated_at,
    closed_at: i.closed_at,
  }
}
export type ApiPull = ReturnType<typeof toApiPull>
