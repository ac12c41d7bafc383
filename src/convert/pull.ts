import type { Config } from '../config'
import type { UserRow } from '../auth/caller'
import { and, eq, inArray } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { repositories, type IssueRow, type PullRow, type RepoRow } from '../db/schema'
import { accessLevels } from '../auth/access'
import type { RepoContext } from '../auth/repo-context'
import { issueRelations } from './issue-relations'
import { usersByIds } from './people'
import { isoTimeOrNull } from '../lib/time'
import { mirrorsOf, repoRecord, transfersOf, type ApiRepo } from './repo'
import { gitOfRow } from '../auth/repo-context'
import { isObjectId, runGit } from '../git/run'
import { WeightedCache } from '../lib/weighted-cache'
import { isDraftTitle, issueHtmlUrl, toApiIssue, type IssueRelations, type RepoRef } from './issue'
import { userConverter, type ApiUser } from './user'
import { toApiTeam } from './team'
import { pullReviewStates, type PullReviewState } from './review'

/** A branch end of a pull request: its repository's record (with the viewer's permissions in it, as Gitea), or null when that repository is gone. */
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
  /** The changes from the merge base to the head (all 0 when git could not tell). */
  diff?: DiffStat
  /** Who is asked to review, and the line comments (none when not given). */
  reviews?: PullReviewState
  /** The base repository's owner: the organisation of requested teams. */
  baseOwner?: UserRow
}

/** Files changed, lines added and removed between a pull request's merge base and its head. */
export interface DiffStat {
  files: number
  additions: number
  deletions: number
}
const NO_DIFF: DiffStat = { files: 0, additions: 0, deletions: 0 }

export { isDraftTitle }

/** ` 4 files changed, 2 insertions(+), 1 deletion(-)` → numbers (absent parts are 0). */
function parseShortStat(line: string): DiffStat {
  const n = (re: RegExp) => Number(re.exec(line)?.[1] ?? 0)
  return { files: n(/(\d+) files? changed/), additions: n(/(\d+) insertions?\(\+\)/), deletions: n(/(\d+) deletions?\(-\)/) }
}

/**
 * The diff stats of pull requests of one base repository, as Gitea computes them (merge base to
 * head, renames found), in one git process: `diff-tree --stdin` reads "head base" per line and
 * answers, per line, the head's id and then its short stat when anything changed. Pull requests
 * without both commits, or a git failure, count 0.
 */
/** Stats by repository, head and merge base: what two commits differ by never changes, so a record shown again spawns no git. */
const statCache = new WeightedCache<DiffStat>(100_000, () => 1)

async function diffStats(deps: AppDeps, base: RepoRow, pulls: PullRow[]): Promise<Map<number, DiffStat>> {
  const stats = new Map<number, DiffStat>()
  const git = gitOfRow(deps, base)
  const keyOf = (p: PullRow) => `${git.gitDir}\0${p.headSha}\0${p.mergeBase}`
  const asked: PullRow[] = []
  for (const p of pulls) {
    if (!isObjectId(p.headSha) || !isObjectId(p.mergeBase)) continue
    const known = statCache.get(keyOf(p))
    if (known) stats.set(p.id, known)
    else asked.push(p)
  }
  if (asked.length === 0) return stats
  const r = await runGit(['diff-tree', '--stdin', '-r', '-M', '--always', '--shortstat'], {
    ...git,
    input: asked.map((p) => `${p.headSha} ${p.mergeBase}\n`).join(''),
  }).catch(() => null)
  if (!r || r.code !== 0) return stats
  const lines = r.stdout.toString('utf8').split('\n')
  let at = 0
  for (const pull of asked) {
    if (lines[at]?.trim() !== pull.headSha) break
    at++
    const stat = lines[at]?.startsWith(' ') ? parseShortStat(lines[at++]!) : NO_DIFF
    stats.set(pull.id, stat)
    statCache.set(keyOf(pull), stat)
  }
  return stats
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
    draft: isDraftTitle(issue.title),
    additions: (rel.diff ?? NO_DIFF).additions,
    deletions: (rel.diff ?? NO_DIFF).deletions,
    changed_files: (rel.diff ?? NO_DIFF).files,
    allow_maintainer_edit: pull.allowMaintainerEdit,
    pin_order: issue.pinOrder,
    review_comments: rel.reviews?.comments ?? 0,
    requested_reviewers: (rel.reviews?.reviewers ?? []).map((u) => userToApi(u)),
    requested_reviewers_teams: (rel.reviews?.teams ?? []).map((team) => toApiTeam(config, team, rel.baseOwner ?? null, viewer)),
    due_date: i.due_date,
    created_at: i.created_at,
    updated_at: i.updated_at,
    closed_at: i.closed_at,
  }
}
export type ApiPull = ReturnType<typeof toApiPull>

/** A pull request: its own row and its issue's. */
export interface PullItem {
  pull: PullRow
  issue: IssueRow
}

/**
 * PullRequest records for pull requests of `base` (owned by `baseOwner`), in a fixed number of
 * queries whatever their number: the issue relations, the head repositories and their owners,
 * the mergers, and the viewer's access to the branch repositories (their records' `permissions`,
 * as Gitea's; an anonymous viewer's for webhook payloads).
 */
export async function pullsToApi(deps: AppDeps, base: RepoRow, baseOwner: UserRow, items: PullItem[], viewer: UserRow | null) {
  if (items.length === 0) return []
  const rel = await issueRelations(deps, items.map((i) => i.issue))
  const headIds = [...new Set(items.map((i) => i.pull.headRepoId).filter((id) => id !== base.id))]
  const heads = new Map(
    (headIds.length ? await deps.db.select().from(repositories).where(and(inArray(repositories.id, headIds), eq(repositories.status, 'ready'))) : []).map((r) => [r.id, r]),
  )
  const people = await usersByIds(deps, [...[...heads.values()].map((r) => r.ownerId), ...items.filter((i) => i.pull.hasMerged).map((i) => i.pull.mergedById)])
  const modes = await accessLevels(deps.db, viewer, [base, ...heads.values()], [baseOwner, ...people.values()])
  const userToApi = userConverter(deps.config, viewer)
  const diffs = await diffStats(deps, base, items.map((i) => i.pull))
  const [mirrorRows, transfers] = await Promise.all([mirrorsOf(deps, [base, ...heads.values()]), transfersOf(deps, [base, ...heads.values()])])
  const reviewStates = await pullReviewStates(deps, items.map((i) => i.issue.id))
  const baseRecord = repoRecord(deps.config, base, baseOwner.name, userToApi(baseOwner), modes.get(base.id) ?? 0, null, mirrorRows.get(base.id), transfers.get(base.id))
  const records = new Map<number, ApiRepo | null>([[base.id, baseRecord]])
  const endOf = (repoId: number): PullEnd => {
    let record = records.get(repoId)
    if (record === undefined) {
      const repo = heads.get(repoId)
      const owner = repo && people.get(repo.ownerId)
      record = repo && owner ? repoRecord(deps.config, repo, owner.name, userToApi(owner), modes.get(repo.id) ?? 0, repo.isFork && repo.forkId === base.id ? { ...baseRecord, parent: null } : null, mirrorRows.get(repo.id), transfers.get(repo.id)) : null
      records.set(repoId, record)
    }
    return { repoId, repo: record }
  }
  return items.map(({ pull, issue }) =>
    toApiPull(
      deps.config,
      base,
      pull,
      issue,
      { ...rel.get(issue.id)!, base: endOf(pull.baseRepoId), head: endOf(pull.headRepoId), mergedBy: pull.hasMerged ? people.get(pull.mergedById) : null, diff: diffs.get(pull.id), reviews: reviewStates.get(issue.id), baseOwner },
      viewer,
      userToApi,
    ),
  )
}

export const pullToApi = async (deps: AppDeps, ctx: Pick<RepoContext, 'repo' | 'owner'>, item: PullItem, viewer: UserRow | null) =>
  (await pullsToApi(deps, ctx.repo, ctx.owner, [item], viewer))[0]!
