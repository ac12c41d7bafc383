import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import { toApiAttachment } from '../../convert/attachment'
import { readsBody } from '../../lib/body'
import { pathNumber } from '../../lib/path-number'
import { IssueParams } from '../issues/model'
import { AttachmentSchema, CommentAssetParams, CommentAssetsParams, EditAttachmentOptions, IssueAssetParams, UPLOAD_BODY, UploadQuery } from './model'
import {
  deleteCommentAsset,
  deleteIssueAsset,
  editCommentAsset,
  editIssueAsset,
  getCommentAsset,
  getIssueAsset,
  listCommentAssets,
  listIssueAssets,
  uploadCommentAsset,
  uploadIssueAsset,
} from './issue-assets'

const AttachmentList = t.Array(AttachmentSchema)
/** The issue tracker's routes; who may change what is the service's rule (poster or writer). */
const tracker = { unit: 'issues' } as const
const uploadDetail = { requestBody: UPLOAD_BODY as any, ...readsBody('unread') }

/** Issues' and comments' attachments under /api/v1 (release assets are the releases area's). */
export const issueAttachmentsModule = (deps: AppDeps) =>
  new Elysia({ name: 'issue-attachments', detail: { tags: ['issue'] } })
    .use(pipeline(deps))
    .get(
      '/repos/:owner/:repo/issues/:index/assets',
      async ({ params, repo }) => (await listIssueAssets(deps, repo, pathNumber(params.index))).map((a) => toApiAttachment(deps.config, a)),
      {
        scope: 'issue',
        repo: tracker,
        params: IssueParams,
        response: { 200: AttachmentList },
        detail: { operationId: 'issueListIssueAttachments', summary: "List an issue's attachments" },
      },
    )
    .post(
      '/repos/:owner/:repo/issues/:index/assets',
      async ({ params, query, request, repo, user, status }) =>
        status(201, toApiAttachment(deps.config, await uploadIssueAsset(deps, repo, user, pathNumber(params.index), request, query.name))),
      {
        scope: 'issue',
        repo: tracker,
        signed: true,
        params: IssueParams,
        query: UploadQuery,
        response: { 201: AttachmentSchema },
        detail: {
          operationId: 'issueCreateIssueAttachment',
          summary: 'Attach a file to an issue (multipart field "attachment", streamed; at most WARREN_MAX_ATTACHMENT_SIZE bytes, of WARREN_ATTACHMENT_ALLOWED_TYPES)',
          ...uploadDetail,
        },
      },
    )
    .get(
      '/repos/:owner/:repo/issues/:index/assets/:attachment_id',
      async ({ params, repo }) => toApiAttachment(deps.config, await getIssueAsset(deps, repo, pathNumber(params.index), params.attachment_id)),
      {
        scope: 'issue',
        repo: tracker,
        params: IssueAssetParams,
        response: { 200: AttachmentSchema },
        detail: { operationId: 'issueGetIssueAttachment', summary: 'Get an issue attachment' },
      },
    )
    .patch(
      '/repos/:owner/:repo/issues/:index/assets/:attachment_id',
      async ({ params, body, repo, user, status }) =>
        status(201, toApiAttachment(deps.config, await editIssueAsset(deps, repo, user, pathNumber(params.index), params.attachment_id, body.name))),
      {
        scope: 'issue',
        repo: tracker,
        signed: true,
        params: IssueAssetParams,
        body: EditAttachmentOptions,
        response: { 201: AttachmentSchema },
        detail: { operationId: 'issueEditIssueAttachment', summary: 'Rename an issue attachment (answers 201, as Gitea)' },
      },
    )
    .delete(
      '/repos/:owner/:repo/issues/:index/assets/:attachment_id',
      async ({ params, repo, user, status }) => {
        await deleteIssueAsset(deps, repo, user, pathNumber(params.index), params.attachment_id)
        return status(204, undefined)
      },
      {
        scope: 'issue',
        repo: tracker,
        signed: true,
        params: IssueAssetParams,
        response: { 204: t.Void() },
        detail: { operationId: 'issueDeleteIssueAttachment', summary: 'Delete an issue attachment (and its file)' },
      },
    )
    .get(
      '/repos/:owner/:repo/issues/comments/:id/assets',
      async ({ params, repo }) => (await listCommentAssets(deps, repo, params.id)).map((a) => toApiAttachment(deps.config, a)),
      {
        scope: 'issue',
        repo: tracker,
        params: CommentAssetsParams,
        response: { 200: AttachmentList },
        detail: { operationId: 'issueListIssueCommentAttachments', summary: "List a comment's attachments" },
      },
    )
    .post(
      '/repos/:owner/:repo/issues/comments/:id/assets',
      async ({ params, query, request, repo, user, status }) =>
        status(201, toApiAttachment(deps.config, await uploadCommentAsset(deps, repo, user, params.id, request, query.name))),
      {
        scope: 'issue',
        repo: tracker,
        signed: true,
        params: CommentAssetsParams,
        query: UploadQuery,
        response: { 201: AttachmentSchema },
        detail: {
          operationId: 'issueCreateIssueCommentAttachment',
          summary: 'Attach a file to a comment (multipart field "attachment", streamed; at most WARREN_MAX_ATTACHMENT_SIZE bytes, of WARREN_ATTACHMENT_ALLOWED_TYPES)',
          ...uploadDetail,
        },
      },
    )
    .get(
      '/repos/:owner/:repo/issues/comments/:id/assets/:attachment_id',
      async ({ params, repo }) => toApiAttachment(deps.config, await getCommentAsset(deps, repo, params.id, params.attachment_id)),
      {
        scope: 'issue',
        repo: tracker,
        params: CommentAssetParams,
        response: { 200: AttachmentSchema },
        detail: { operationId: 'issueGetIssueCommentAttachment', summary: 'Get a comment attachment' },
      },
    )
    .patch(
      '/repos/:owner/:repo/issues/comments/:id/assets/:attachment_id',
      async ({ params, body, repo, user, status }) =>
        status(201, toApiAttachment(deps.config, await editCommentAsset(deps, repo, user, params.id, params.attachment_id, body.name))),
      {
        scope: 'issue',
        repo: tracker,
        signed: true,
        params: CommentAssetParams,
        body: EditAttachmentOptions,
        response: { 201: AttachmentSchema },
        detail: { operationId: 'issueEditIssueCommentAttachment', summary: 'Rename a comment attachment (answers 201, as Gitea)' },
      },
    )
    .delete(
      '/repos/:owner/:repo/issues/comments/:id/assets/:attachment_id',
      async ({ params, repo, user, status }) => {
        await deleteCommentAsset(deps, repo, user, params.id, params.attachment_id)
        return status(204, undefined)
      },
      {
        scope: 'issue',
        repo: tracker,
        signed: true,
        params: CommentAssetParams,
        response: { 204: t.Void() },
        detail: { operationId: 'issueDeleteIssueCommentAttachment', summary: 'Delete a comment attachment (and its file)' },
      },
    )
