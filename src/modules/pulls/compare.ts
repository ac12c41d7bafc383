import type { AppDeps } from '../../deps'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { changedFiles, commitsBetween, countCommits, startDiffOrPatch, type ComparedCommit, type FileChange } from '../../git/compare'
import { mergeBase } from '../../git/merge'
import { ApiError, notFound } from '../../lib/errors'
import { boundedOutput } from '../../git/stream'
import type { Page, Paged } from '../../lib/pagination'
import { findPull } from './service'

/**
 * What a pull request changes: its diff and patch, its commits, its files. All compare the
 * commits its record shows (`merge_base` and `head.sha`), so a merged pull request still shows
 * what it brought. The head commit is in the base repository (refs/pull/<index>/head) once the
 * pull request was checked.
 */

/** `…/pulls/{index}.diff` / `.patch`: the index and the format an `{index}` path segment names. */
export function pullDownloadOf(segment: string): { index: string; kind: 'diff' | 'patch' | null } {
  const m = /^(.*)\.(diff|patch)$/.exec(segment)
  return m ? { index: m[1]!, kind: m[2] as 'diff' | 'patch' } : { index: segment, kind: null }
}

/** The merge base and head commit of a pull request; 404 when it has none yet (or head and base share no history). */
export async function endsOf(deps: AppDeps, ctx: RepoContext, index: number): Promise<{ base: string; head: string }> {
  const { pull } = await findPull(deps, ctx.repo.id, index)
  const head = pull.headSha
  let base = pull.mergeBase
  if (!base && head && pull.baseSha) base = (await mergeBase(gitRepoOf(deps, ctx), pull.baseSha, head)) ?? ''
  if (!head || !base) throw notFound(`pull request ${index} has no merge base: its head and base share no history, or it was not checked yet`)
  return { base, head }
}

const missingHead = (index: number) => notFound(`the head commit of pull request ${index} is not in the base repository (yet)`)

/**
 * The diff (`git diff merge-base head`, binary files with `binary`) or the patch series (`git
 * format-patch`) of a pull request, streamed as text, held to config maxDiffSize (406 when
 * that shows before the answer starts; cut with an error past it once streaming).
 */
export async function pullDiff(deps: AppDeps, ctx: RepoContext, index: number, kind: 'diff' | 'patch', binary: boolean): Promise<Response> {
  const { base, head } = await endsOf(deps, ctx, index)
  const out = await startDiffOrPatch(gitRepoOf(deps, ctx), base, head, kind, binary)
  if (!out) throw missingHead(index)
  const max = deps.config.maxDiffSize
  const body = await boundedOutput(out.body, max)
  if (!body) throw new ApiError(406, `the ${kind} of pull request ${index} is larger than ${max} bytes (WARREN_MAX_DIFF_SIZE)`)
  return new Response(body, { headers: { 'Content-Type': 'text/plain; charset=utf-8' } })
}

/** How many commits a pull request brings (merge base to head), with those two ends; 404 as endsOf, or when the head commit is missing. */
export async function pullCommitCount(deps: AppDeps, ctx: RepoContext, index: number): Promise<{ base: string; head: string; total: number }> {
  const { base, head } = await endsOf(deps, ctx, index)
  const total = await countCommits(gitRepoOf(deps, ctx), base, head).catch(() => {
    throw missingHead(index)
  })
  return { base, head, total }
}

/**
 * A page of a pull request's commits, newest first, with their number; with `files`, each with the
 * files it changed (at most config maxCommitFiles each).
 */
export async function pullCommits(deps: AppDeps, ctx: RepoContext, index: number, page: Page, opts: { files: boolean }): Promise<Paged<ComparedCommit>> {
  const { base, head, total } = await pullCommitCount(deps, ctx, index)
  const git = gitRepoOf(deps, ctx)
  const rows = total > page.offset ? await commitsBetween(git, base, head, page.offset, page.limit, { files: opts.files, maxFiles: deps.config.maxCommitFiles }) : []
  return { rows, total }
}

/**
 * A page of the files a pull request changes (merge base to head, renames found), with their
 * number, and the head they are at: the first MAX_CHANGED_FILES of them (`truncated` when there
 * are more), as GitHub lists at most 3000.
 */
export async function pullFiles(deps: AppDeps, ctx: RepoContext, index: number, page: Page): Promise<Paged<FileChange> & { head: string; truncated: boolean }> {
  const { base, head } = await endsOf(deps, ctx, index)
  const found = await changedFiles(gitRepoOf(deps, ctx), base, head)
  if (!found) throw missingHead(index)
  return { rows: found.files.slice(page.offset, page.offset + page.limit), total: found.files.length, head, truncated: found.truncated }
}
