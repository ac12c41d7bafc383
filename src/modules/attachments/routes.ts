import { t, type TSchema } from 'elysia'
import type { RepoNeed, ScopeNeed } from '../../auth/pipeline'
import { readsBody } from '../../lib/body'
import { AttachmentSchema, EditAttachmentOptions, UPLOAD_BODY, UploadQuery } from './model'

const AttachmentList = t.Array(AttachmentSchema)

/** A holder of attachments (a release, an issue, a comment) as its five asset routes see it. */
export interface AssetHolder<S extends ScopeNeed, W extends AssetWriter, H extends TSchema, A extends TSchema, L extends object> {
  /** The token scope category of its routes. */
  scope: S
  /** Who may read its assets (list, get). */
  read: RepoNeed
  /** Who may change them (upload, rename, delete), with `signed` where the holder's rule asks it. */
  write: W
  /** The path's parameters naming the holder, and those naming one of its assets. */
  holderParams: H
  assetParams: A
  /** What the list route adds (paging, where the holder pages its list). */
  list: L
}

/** Who may change a holder's assets. */
type AssetWriter = { repo: RepoNeed; signed?: true }

type Detail = { operationId: string; summary: string }

/**
 * The options of one holder's five asset routes (list, upload, get, rename, delete): what they
 * share is said once here, each route adding its operation id and summary. The upload streams its
 * multipart body itself (`readsBody('unread')`), documented by UPLOAD_BODY; a rename answers 201,
 * as Gitea.
 */
export function assetRouteOptions<const S extends ScopeNeed, const W extends AssetWriter, H extends TSchema, A extends TSchema, const L extends object>(
  holder: AssetHolder<S, W, H, A, L>,
) {
  const { scope, read, write, holderParams, assetParams } = holder
  return {
    list: (detail: Detail) => ({ scope, repo: read, ...holder.list, params: holderParams, response: { 200: AttachmentList }, detail }),
    upload: (detail: Detail) => ({
      scope,
      ...write,
      params: holderParams,
      query: UploadQuery,
      response: { 201: AttachmentSchema },
      detail: { ...detail, requestBody: UPLOAD_BODY as any, ...readsBody('unread') },
    }),
    get: (detail: Detail) => ({ scope, repo: read, params: assetParams, response: { 200: AttachmentSchema }, detail }),
    edit: (detail: Detail) => ({ scope, ...write, params: assetParams, body: EditAttachmentOptions, response: { 201: AttachmentSchema }, detail }),
    delete: (detail: Detail) => ({ scope, ...write, params: assetParams, response: { 204: t.Void() }, detail }),
  }
}
