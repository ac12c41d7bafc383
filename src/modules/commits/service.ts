import { and, desc, eq } from 'drizzle-orm'
import { resolve } from 'node:path'
import type { AppDeps } from '../../deps'
import { gitDirOf, gitOfRow, gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { pullRequests } from '../../db/schema'
import { countHistory, historyPage, type ComparedCommit, type HistoryFilter } from '../../git/commit-page'
import { changedFiles, startCommitDiff, type FileChange } from '../../git/compare'
import { mergeBase, readRef } from '../../git/merge'
import { isSafeRefName } from '../../git/ref-name'
import { isObjectName, objectInfos, resolveCommit } from '../../git/objects'
import type { GitRepo } from '../../git/run'
import { boundedOutput } from '../../git/stream'
import { ApiError, conflict, notFound, unprocessable } from '../../lib/errors'
import type { Page, Paged } from '../../lib/pagination'
import { findPull, headRepository, parseHeadName } from '../pulls/service'
import type { PullItem } from '../../convert/pull'

/**
 * A repository's history as Gitea's commits API reads it: pages of `git log` from a branch, tag
 * or commit (optionally only the commits touching a path, or within dates, or not reachable from
 * another), one commit with its files and line counts, its diff or patch, the pull request that
 * merged it, and comparisons of two commits.
 */

/** Which parts of a commit record are read (Gitea's `stat`, `files`). */
export interface CommitParts {
  stats: boolean
  files: boolean
}

/** 422 unless `name` may name a ref or a commit (Gitea's IsValidRefPattern). */
export function checkRefName(name: string): void {
  if (!isObjectName(name)) throw unprocessable(`no valid ref or sha: ${name.slice(0, 80)}`)
}

/** The commit `name` leads to; 404 when none. */
export async function commitOf(git: GitRepo, name: string, what = 'sha'): Promise<string> {
  const sha = await resolveCommit(git, name)
  if (!sha) throw notFound(`${what} not found: ${name.slice(0, 80)}`)
  return sha
}

/**
 * A path from a query: separators trimmed; control characters refused (422), and `..` segments
 * (git refuses a path outside the repository and would fail the whole listing). Empty: no path.
 */
export function queryPath(path: string | undefined): string | undefined {
  const trimmed = (path ?? '').replace(/^\/+|\/+$/g, '')
  if (/[\x00-\x1f\x7f]/.test(trimmed)) throw unprocessable('path holds control characters', 'path')
  if (trimmed.split('/').includes('..')) throw unprocessable(`path is outside the repository [path: ${trimmed.slice(0, 200)}]`, 'path')
  return trimmed === '' ? undefined : trimmed
}

/** An RFC 3339 time from a query as Unix seconds; 422 when it is not one. */
export function queryTime(value: string | undefined, field: string): number | undefined {
  if (value === undefined || value === '') return undefined
  const ms = /^\d{4}-\d\d-\d\d(T\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)?)?$/i.test(value) ? Date.parse(value) : NaN
  if (Number.isNaN(ms)) throw unprocessable(`not an RFC 3339 time: ${value}`, field)
  return Math.floor(ms / 1000)
}

export interface CommitListFilter {
  sha?: string
  path?: string
  not?: string
  since?: string
  until?: string
}

/**
 * A page of a repository's commits, newest first, and their number: from `sha` (the default
 * branch unless given). 409 for an empty repository, 404 for a ref that does not exist, and (as
 * Gitea) when `path` was never touched.
 */
export async function listCommits(deps: AppDeps, ctx: RepoContext, query: CommitListFilter, page: Page, parts: CommitParts): Promise<Paged<ComparedCommit>> {
  if (ctx.repo.isEmpty) throw conflict('Git Repository is empty.')
  const git = gitRepoOf(deps, ctx)
  const path = queryPath(query.path)
  const since = queryTime(query.since, 'since')
  const until = queryTime(query.until, 'until')
  const head = await commitOf(git, query.sha || ctx.repo.defaultBranch)
  const not = query.not ? await commitOf(git, query.not, 'not') : null
  const filter: HistoryFilter = { revisions: not ? [head, `^${not}`] : [head], paths: path ? [path] : undefined, since, until }
  const total = await countHistory(git, filter)
  if (path && total === 0) throw notFound(`no commit touches ${path.slice(0, 200)}`)
  const rows = total > page.offset ? await historyPage(git, filter, { skip: page.offset, max: page.limit }, { ...parts, maxFiles: deps.config.maxCommitFiles }) : []
  return { rows, total }
}

/** One commit by branch, tag or (leading part of a) commit id, with its line counts and files; 404 when none. */
export async function getCommit(deps: AppDeps, ctx: RepoContext, name: string, parts: CommitParts): Promise<ComparedCommit> {
  checkRefName(name)
  const git = gitRepoOf(deps, ctx)
  const sha = await commitOf(git, name)
  const [commit] = await historyPage(git, { revisions: [sha] }, { skip: 0, max: 1 }, { ...parts, maxFiles: deps.config.maxCommitFiles })
  if (!commit) throw notFound(`sha not found: ${name.slice(0, 80)}`)
  return commit
}

/** `…/git/commits/{sha}.diff` / `.patch`: the segment's commit name and format. */
export function commitDownloadOf(segment: string): { sha: string; kind: 'diff' | 'patch' | null } {
  const m = /^(.*)\.(diff|patch)$/.exec(segment)
  return m ? { sha: m[1]!, kind: m[2] as 'diff' | 'patch' } : { sha: segment, kind: null }
}

/**
 * A commit's diff against its first parent (or its patch), streamed as text and held to
 * WARREN_MAX_DIFF_SIZE as a pull request's is (boundedOutput: 406 when that shows before the
 * answer starts; cut with an error past it once streaming).
 */
export async function commitDiff(deps: AppDeps, ctx: RepoContext, name: string, kind: 'diff' | 'patch'): Promise<Response> {
  checkRefName(name)
  const git = gitRepoOf(deps, ctx)
  const sha = await commitOf(git, name)
  const [parent] = await objectInfos(git, [`${sha}^`])
  const out = await startCommitDiff(git, sha, parent?.oid ?? null, kind)
  if (!out) throw notFound(`sha not found: ${name.slice(0, 80)}`)
  const max = deps.config.maxDiffSize
  const body = await boundedOutput(out.body, max)
  if (!body) throw new ApiError(406, `the ${kind} of commit ${sha} is larger than ${max} bytes (WARREN_MAX_DIFF_SIZE)`)
  return new Response(body, { headers: { 'Content-Type': 'text/plain; charset=utf-8' } })
}

/**
 * The pull request of this repository that merged the commit `ref` leads to (its merge commit,
 * as Gitea's GetPullRequestByMergedCommit), else the newest whose head is that commit; 404 when none.
 */
export async function pullOfCommit(deps: AppDeps, ctx: RepoContext, ref: string): Promise<PullItem> {
  checkRefName(ref)
  const sha = await commitOf(gitRepoOf(deps, ctx), ref)
  const inRepo = eq(pullRequests.baseRepoId, ctx.repo.id)
  const pick = { index: pullRequests.index }
  const merged = await deps.db.select(pick).from(pullRequests).where(and(inRepo, eq(pullRequests.hasMerged, true), eq(pullRequests.mergeCommitSha, sha))).orderBy(desc(pullRequests.id)).limit(1)
  const found = merged[0] ?? (await deps.db.select(pick).from(pullRequests).where(and(inRepo, eq(pullRequests.headSha, sha))).orderBy(desc(pullRequests.id)).limit(1))[0]
  if (!found) throw notFound(`pull request does not exist [commit: ${sha}]`)
  return findPull(deps, ctx.repo.id, found.index)
}

/** `base...head` (from their merge base) or `base..head` (from base itself); a lone name compares the default branch with it. */
export function parseBasehead(basehead: string, defaultBranch: string): { base: string; head: string; direct: boolean } {
  const three = basehead.indexOf('...')
  if (three >= 0) return { base: basehead.slice(0, three), head: basehead.slice(three + 3), direct: false }
  const two = basehead.indexOf('..')
  if (two >= 0) return { base: basehead.slice(0, two), head: basehead.slice(two + 2), direct: true }
  return { base: defaultBranch, head: basehead, direct: false }
}

export interface Comparison {
  total: number
  commits: ComparedCommit[]
  files: FileChange[]
  head: string
  /** The commit the files are compared from: the merge base (`...`), or base itself (`..`). */
  from: string
  /** The branch, tag or commit names as given. */
  spec: { base: string; head: string; direct: boolean }
  /** Where the head's name is: this repository, or a fork of it (`owner:branch`), and the name there. */
  headAt: { owner: string; repo: string; name: string }
  /** Where both ends are read: the repository, with a fork's objects beside its own when the head is the fork's. */
  git: GitRepo
}

/**
 * The head of a comparison in `ctx`'s repository: a name of its own, or (`owner:branch`,
 * `owner/repo:branch`) a branch of a fork the caller may read. A fork's commits are read through
 * `git` with the fork's objects beside the repository's (GitRepo.alternates), never copied into
 * it: a copy would let every reader of this repository read a private fork's commits by their
 * id, and would make a GET write (unbounded, for a fork with a long history of its own). Answers
 * the name or commit to compare, where the name is, and the git view that holds both ends.
 */
async function compareHead(deps: AppDeps, ctx: RepoContext, git: GitRepo, head: string): Promise<{ name: string; at: Comparison['headAt']; git: GitRepo }> {
  const here = { owner: ctx.owner.name, repo: ctx.repo.name }
  const named = parseHeadName(head)
  if (!named) throw notFound(`head not found: ${head.slice(0, 80)}`)
  if (named.ownerName === undefined) return { name: head, at: { ...here, name: head }, git }
  const end = await headRepository(deps, ctx, ctx.caller.user, named)
  const branch = named.branch
  if (!isSafeRefName(branch)) throw notFound(`head branch not found: ${branch.slice(0, 80)}`)
  if (end.repo.id === ctx.repo.id) return { name: branch, at: { ...here, name: branch }, git }
  const sha = await readRef(gitOfRow(deps, end.repo), `refs/heads/${branch}`)
  if (!sha) throw notFound(`head branch not found: ${end.owner.name}/${end.repo.name}:${branch.slice(0, 80)}`)
  const view: GitRepo = { ...git, alternates: resolve(gitDirOf(deps, end), 'objects') }
  if (!(await resolveCommit(view, sha))) throw notFound(`head branch not found: ${end.owner.name}/${end.repo.name}:${branch.slice(0, 80)}`)
  return { name: sha, at: { owner: end.owner.name, repo: end.repo.name, name: branch }, git: view }
}

/**
 * The commits on `head` and not on `base` (newest first, at most WARREN_MAX_COMPARE_COMMITS, with
 * their number), and the files changed from the merge base (or from base, for `..`) to head
 * (unless `opts.changed` is false: a caller reading the diff itself lists them there).
 */
export async function compare(deps: AppDeps, ctx: RepoContext, basehead: string, files: boolean, opts: { changed?: boolean } = {}): Promise<Comparison> {
  let decoded: string
  try {
    decoded = decodeURIComponent(basehead)
  } catch {
    throw notFound('base or head not found')
  }
  const spec = parseBasehead(decoded, ctx.repo.defaultBranch)
  const headEnd = await compareHead(deps, ctx, gitRepoOf(deps, ctx), spec.head)
  const git = headEnd.git
  for (const name of [spec.base, headEnd.name]) if (!isObjectName(name)) throw notFound(`ref not found: ${name.slice(0, 80)}`)
  const base = await commitOf(git, spec.base, 'base')
  const head = await commitOf(git, headEnd.name, 'head')
  const from = spec.direct ? base : (await mergeBase(git, base, head)) ?? base
  const filter: HistoryFilter = { revisions: [head, `^${base}`] }
  const [total, commits, changed] = await Promise.all([
    countHistory(git, filter),
    historyPage(git, filter, { skip: 0, max: deps.config.maxCompareCommits }, { files, stats: true, maxFiles: deps.config.maxCommitFiles }),
    opts.changed === false ? null : changedFiles(git, from, head),
  ])
  return { total, commits, files: changed?.files ?? [], head, from, spec, headAt: headEnd.at, git }
}
