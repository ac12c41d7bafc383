import { eq, and } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import type { UserRow } from '../../auth/caller'
import { gitOfRow, gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { releases } from '../../db/schema'
import { ZERO_ID } from '../../events/push-events'
import { resolveCommitish, tagCommit, tagNameClash } from '../../git/refs'
import { getTag, listTags, writeTagObject, type TagInfo } from '../../git/tags'
import { pushRefProblem } from '../../git/push-commands'
import { gitIdentityOf } from '../../convert/user'
import { moveRef } from '../../push'
import { conflict, notFound, unprocessable } from '../../lib/errors'
import type { Page, Paged } from '../../lib/pagination'
import { nowUnix } from '../../lib/time'

/**
 * Tags (Gitea's routers/api/v1/repo/tag.go and services/release's CreateNewTag): read from git,
 * made and deleted through the one push path (moveRef: the push decision, the ref.created /
 * ref.deleted and push events with the caller as pusher, webhooks from those). Releases make
 * their tags with the same createTagRef. A tag a release names is not deleted here (409). Git
 * writes use the repository's handle without the request's signal (gitOfRow): a client that
 * goes away does not stop a write half-way.
 */

/** A tag name the API can serve (git's check-ref-format rules, no component starting with `-`), else 422. */
export function checkTagName(tag: string): string {
  if (tag === '') throw unprocessable('Required', 'TagName')
  // A lone surrogate reaches git as U+FFFD: the tag would not be the one recorded.
  if (!tag.isWellFormed() || pushRefProblem(`refs/tags/${tag}`)) throw unprocessable(`invalid tag name [name: ${tag.toWellFormed()}]`, 'TagName')
  return tag
}


const nameClash = (tag: string) => conflict(`tag name conflicts with an existing tag [name: ${tag}]`)

/**
 * Creates `refs/tags/<tag>` at `commit` as a push by `actor`: an annotated tag with `actor` as
 * tagger when `message` has text, else a lightweight one (as Gitea's createTag). Answers false
 * when the tag exists already (or another request made it meanwhile); 409 for a name git refuses
 * beside the existing tags (`v1` beside `v1/rc`). `tag` must have passed checkTagName.
 */
export async function createTagRef(deps: AppDeps, ctx: RepoContext, actor: UserRow, tag: string, commit: string, message = ''): Promise<boolean> {
  const repo = gitOfRow(deps, ctx.repo)
  if (await tagCommit(repo, tag)) return false
  if (await tagNameClash(repo, tag)) throw nameClash(tag)
  const target = message.trim() ? await writeTagObject(repo, commit, tag, message, { ...gitIdentityOf(deps.config, actor), unix: nowUnix() }) : commit
  // Created only where no tag is (a compare-and-swap from nothing).
  if (await moveRef(deps, ctx, actor, { ref: `refs/tags/${tag}`, old: ZERO_ID, new: target })) return true
  if (await tagCommit(repo, tag)) return false
  throw nameClash(tag)
}

/** A page of the repository's tags, newest first as Gitea lists them. */
export async function listRepoTags(deps: AppDeps, ctx: RepoContext, page: Page): Promise<Paged<TagInfo>> {
  const { tags, total } = await listTags(gitRepoOf(deps, ctx), page)
  // The tags are shared kept records (read only); the page's list is the caller's own.
  return { rows: [...tags], total }
}

/** A tag by name (the path's decoded wildcard), else 404. */
export async function getRepoTag(deps: AppDeps, ctx: RepoContext, name: string | null): Promise<TagInfo> {
  const tag = name ? await getTag(gitRepoOf(deps, ctx), name) : null
  if (!tag) throw notFound(`tag doesn't exist: ${name ?? ''}`)
  return tag
}

export interface TagInput {
  tag_name: string
  target?: string
  message?: string
}

/**
 * Creates a tag (Gitea's CreateTag): 422 for a name the API could not serve, 404 when `target`
 * (a branch, a tag or a commit id; the default branch when empty) names no commit (so also in an
 * empty repository), 409 when the tag exists. Answers the new tag.
 */
export async function createTag(deps: AppDeps, ctx: RepoContext, actor: UserRow, input: TagInput): Promise<TagInfo> {
  const tag = checkTagName(input.tag_name)
  const target = input.target || ctx.repo.defaultBranch
  const commit = target ? await resolveCommitish(gitRepoOf(deps, ctx), target) : null
  if (!commit) throw notFound(`target not found: ${target}`)
  if (!(await createTagRef(deps, ctx, actor, tag, commit, input.message ?? ''))) throw conflict(`tag already exists [name: ${tag}]`)
  return await getRepoTag(deps, ctx, tag)
}

/**
 * Deletes a tag (Gitea's DeleteTag): 404 when there is none, 409 when a release names it (drafts
 * too: delete the release first, which keeps the tag) or when the tag moved while it was being
 * deleted (a push meanwhile, which is kept).
 */
export async function deleteTag(deps: AppDeps, ctx: RepoContext, actor: UserRow, name: string | null): Promise<void> {
  const tag = await getRepoTag(deps, { ...ctx, signal: undefined }, name)
  const release = (await deps.db
    .select({ id: releases.id })
    .from(releases)
    .where(and(eq(releases.repoId, ctx.repo.id), eq(releases.lowerTagName, tag.name.toLowerCase()))))[0]
  if (release) throw conflict('a tag attached to a release cannot be deleted directly')
  if (!(await moveRef(deps, ctx, actor, { ref: `refs/tags/${tag.name}`, old: tag.id, new: ZERO_ID })))
    throw conflict(`tag ${tag.name} changed while it was being deleted`)
}
