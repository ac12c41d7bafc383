import { and, eq } from 'drizzle-orm'
import type { AppDeps } from '../deps'
import { attachments, issues, releases, repositories } from '../db/schema'
import { notFound } from '../lib/errors'
import { AccessMode, issueUnitOf, repoAccess, unitMode, type RepoRow, type RepoUnitKey } from './access'
import type { Caller } from './caller'
import { modeIn, type RepoContext } from './repo-context'

/*
 * An attachment named by a download URL, beside repo-context.ts: the pipeline's `attachment`
 * need. Who may download it is who may read its own unit in its repository, that unit enabled
 * there: an issue's or comment's file the issues' (a pull request's the pull requests'), a
 * release's asset the releases' (a draft's: who may write them, who sees drafts); for everyone
 * else the attachment does not exist (404), as in Gitea, whose attachment handler answers NotFound
 * when the caller may not read the attachment's unit (LinkedRepository, CanRead(unitType)).
 */

export type AttachmentRow = typeof attachments.$inferSelect

/** Whether the caller sees draft releases, by their mode in the releases unit (Gitea: write access to the releases). */
export const seesDrafts = (mode: number): boolean => mode >= AccessMode.Write

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** Whether `s` has the shape of an attachment's uuid (anything else is looked up nowhere). */
export const isAttachmentUuid = (s: string): boolean => UUID.test(s)

/**
 * `GET /attachments/{uuid}`: the attachment for whoever may read its unit in its repository, the
 * unit enabled there (a draft's for those who see drafts); 404 otherwise, whether or not it exists.
 */
export async function loadAttachmentByUuid(deps: AppDeps, caller: Caller, uuid: string): Promise<AttachmentRow> {
  const found = isAttachmentUuid(uuid)
    ? (await deps.db
        .select({ attachment: attachments, draft: releases.isDraft, isPull: issues.isPull, repo: repositories })
        .from(attachments)
        .leftJoin(releases, eq(releases.id, attachments.releaseId))
        .leftJoin(issues, eq(issues.id, attachments.issueId))
        .innerJoin(repositories, and(eq(repositories.id, attachments.repoId), eq(repositories.status, 'ready')))
        .where(eq(attachments.uuid, uuid)))[0]
    : undefined
  if (!found) throw notFound()
  const { repo } = found
  // The attachment's unit and whether the repository has it on (an attachment of neither kind,
  // which none is, would be the code's).
  const unit: RepoUnitKey = found.isPull !== null ? issueUnitOf({ isPull: found.isPull }) : found.draft !== null ? 'repo.releases' : 'repo.code'
  const enabled = { 'repo.pulls': repo.hasPullRequests, 'repo.issues': repo.hasIssues, 'repo.releases': repo.hasReleases }[unit as string] ?? true
  if (!enabled) throw notFound()
  const mode = unitMode(await repoAccess(deps.db, caller.user, repo as RepoRow), unit)
  if (mode < AccessMode.Read || (found.draft && !seesDrafts(mode))) throw notFound()
  return found.attachment
}

/**
 * `GET /{owner}/{repo}/releases/download/{tag}/{name}`, in a repository the caller reads (`ctx`):
 * the asset `name` of the release of `tag` (the wildcard as sent, still URL-encoded: a tag may
 * hold slashes, the name is its last segment); 404 when either is missing, or the release is a
 * draft and the caller does not see drafts.
 */
export async function loadAttachmentByTag(deps: AppDeps, ctx: RepoContext, wildcard: string): Promise<AttachmentRow> {
  let segments: string[]
  try {
    segments = wildcard.split('/').map(decodeURIComponent)
  } catch {
    throw notFound()
  }
  if (segments.length < 2) throw notFound()
  const name = segments.pop()!
  const tag = segments.join('/')
  const release = (await deps.db
    .select()
    .from(releases)
    .where(and(eq(releases.repoId, ctx.repo.id), eq(releases.lowerTagName, tag.toLowerCase()))))[0]
  if (!release || (release.isDraft && !seesDrafts(modeIn(ctx, 'repo.releases')))) throw notFound('release does not exist')
  const row = (await deps.db
    .select()
    .from(attachments)
    .where(and(eq(attachments.releaseId, release.id), eq(attachments.name, name))))[0]
  if (!row) throw notFound('attachment does not exist')
  return row
}
