import { asc } from 'drizzle-orm'
import { inJsonList } from '../db/sql'
import { perConnection } from '../db/client'
import { attachments, type AttachmentRow } from '../db/schema'
import type { AppDeps } from '../deps'
import type { Config } from '../config'
import { isoTime } from '../lib/time'
import { webUrl } from '../lib/urls'

/** Where an attachment is downloaded: `{base}attachments/<uuid>`. */
export const attachmentDownloadUrl = (config: Config, uuid: string) => webUrl(config, `attachments/${uuid}`)

/** The Attachment record (a release's asset, an issue's or a comment's file alike). */
export function toApiAttachment(config: Config, row: AttachmentRow) {
  return {
    id: row.id,
    name: row.name,
    size: row.size,
    download_count: row.downloadCount,
    created_at: isoTime(row.createdUnix),
    uuid: row.uuid,
    browser_download_url: attachmentDownloadUrl(config, row.uuid),
  }
}
export type ApiAttachment = ReturnType<typeof toApiAttachment>

/** Attachment rows grouped by their holder's id (each group in the rows' order). */
export function groupAttachments(rows: AttachmentRow[], key: (row: AttachmentRow) => number | null): Map<number, AttachmentRow[]> {
  const groups = new Map<number, AttachmentRow[]>()
  for (const row of rows) {
    const k = key(row)
    if (k === null) continue
    const list = groups.get(k)
    if (list) list.push(row)
    else groups.set(k, [row])
  }
  return groups
}

/**
 * The attachments of a list of releases, or of comments, oldest first: prepared once per
 * connection, the ids bound as one JSON list (each page and list of comments read them; building
 * the statement anew cost more than running it).
 */
const attachmentReadsOf = perConnection((db: AppDeps['db']) => ({
  ofReleases: db.select().from(attachments).where(inJsonList(attachments.releaseId, 'ids')).orderBy(asc(attachments.id)).prepare(),
  ofComments: db.select().from(attachments).where(inJsonList(attachments.commentId, 'ids')).orderBy(asc(attachments.id)).prepare(),
}))

/** The attachments of each release, oldest first, in one query. */
export async function attachmentsOfReleases(deps: AppDeps, ids: number[]): Promise<Map<number, AttachmentRow[]>> {
  if (ids.length === 0) return new Map()
  const rows = await attachmentReadsOf(deps.db).ofReleases.execute({ ids: JSON.stringify(ids) })
  return groupAttachments(rows, (r) => r.releaseId)
}

/** The attachments of each comment, oldest first, in one query (one bound list, however many comments). */
export async function attachmentsOfComments(deps: AppDeps, ids: number[]): Promise<Map<number, AttachmentRow[]>> {
  if (ids.length === 0) return new Map()
  const rows = await attachmentReadsOf(deps.db).ofComments.execute({ ids: JSON.stringify(ids) })
  return groupAttachments(rows, (r) => r.commentId)
}
