import type { TSchema } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { toApiAttachment } from '../../convert/attachment'
import { pathNumber } from '../../lib/path-number'
import { IssueParams } from '../issues/model'
import { CommentAssetParams, CommentAssetsParams, IssueAssetParams } from './model'
import { assetRouteOptions } from './routes'
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

/** An issue's and a comment's assets: the issue tracker's routes, changed by the signed in (who may change what is the service's rule: poster or writer). */
const trackerAssets = <H extends TSchema, A extends TSchema>(holderParams: H, assetParams: A) =>
  assetRouteOptions({ scope: 'issue', read: { unit: 'issues' }, write: { repo: { unit: 'issues' }, signed: true }, holderParams, assetParams, list: {} })
const issueAssets = trackerAssets(IssueParams, IssueAssetParams)
const commentAssets = trackerAssets(CommentAssetsParams, CommentAssetParams)

/** Issues' and comments' attachments under /api/v1 (release assets are the releases area's). */
export const issueAttachmentsModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['issue'] })
    .get(
      '/repos/:owner/:repo/issues/:index/assets',
      async ({ params, repo }) => (await listIssueAssets(deps, repo, pathNumber(params.index))).map((a) => toApiAttachment(deps.config, a)),
      issueAssets.list({ operationId: 'issueListIssueAttachments', summary: "List an issue's attachments" }),
    )
    .post(
      '/repos/:owner/:repo/issues/:index/assets',
      async ({ params, query, request, repo, user, status }) =>
        status(201, toApiAttachment(deps.config, await uploadIssueAsset(deps, repo, user, pathNumber(params.index), request, query.name))),
      issueAssets.upload({ operationId: 'issueCreateIssueAttachment', summary: 'Attach a file to an issue (multipart field "attachment", streamed; at most WARREN_MAX_ATTACHMENT_SIZE bytes, of WARREN_ATTACHMENT_ALLOWED_TYPES)' }),
    )
    .get(
      '/repos/:owner/:repo/issues/:index/assets/:attachment_id',
      async ({ params, repo }) => toApiAttachment(deps.config, await getIssueAsset(deps, repo, pathNumber(params.index), params.attachment_id)),
      issueAssets.get({ operationId: 'issueGetIssueAttachment', summary: 'Get an issue attachment' }),
    )
    .patch(
      '/repos/:owner/:repo/issues/:index/assets/:attachment_id',
      async ({ params, body, repo, user, status }) =>
        status(201, toApiAttachment(deps.config, await editIssueAsset(deps, repo, user, pathNumber(params.index), params.attachment_id, body.name))),
      issueAssets.edit({ operationId: 'issueEditIssueAttachment', summary: 'Rename an issue attachment (answers 201, as Gitea)' }),
    )
    .delete(
      '/repos/:owner/:repo/issues/:index/assets/:attachment_id',
      async ({ params, repo, user, status }) => {
        await deleteIssueAsset(deps, repo, user, pathNumber(params.index), params.attachment_id)
        return status(204, undefined)
      },
      issueAssets.delete({ operationId: 'issueDeleteIssueAttachment', summary: 'Delete an issue attachment (and its file)' }),
    )
    .get(
      '/repos/:owner/:repo/issues/comments/:id/assets',
      async ({ params, repo }) => (await listCommentAssets(deps, repo, params.id)).map((a) => toApiAttachment(deps.config, a)),
      commentAssets.list({ operationId: 'issueListIssueCommentAttachments', summary: "List a comment's attachments" }),
    )
    .post(
      '/repos/:owner/:repo/issues/comments/:id/assets',
      async ({ params, query, request, repo, user, status }) =>
        status(201, toApiAttachment(deps.config, await uploadCommentAsset(deps, repo, user, params.id, request, query.name))),
      commentAssets.upload({ operationId: 'issueCreateIssueCommentAttachment', summary: 'Attach a file to a comment (multipart field "attachment", streamed; at most WARREN_MAX_ATTACHMENT_SIZE bytes, of WARREN_ATTACHMENT_ALLOWED_TYPES)' }),
    )
    .get(
      '/repos/:owner/:repo/issues/comments/:id/assets/:attachment_id',
      async ({ params, repo }) => toApiAttachment(deps.config, await getCommentAsset(deps, repo, params.id, params.attachment_id)),
      commentAssets.get({ operationId: 'issueGetIssueCommentAttachment', summary: 'Get a comment attachment' }),
    )
    .patch(
      '/repos/:owner/:repo/issues/comments/:id/assets/:attachment_id',
      async ({ params, body, repo, user, status }) =>
        status(201, toApiAttachment(deps.config, await editCommentAsset(deps, repo, user, params.id, params.attachment_id, body.name))),
      commentAssets.edit({ operationId: 'issueEditIssueCommentAttachment', summary: 'Rename a comment attachment (answers 201, as Gitea)' }),
    )
    .delete(
      '/repos/:owner/:repo/issues/comments/:id/assets/:attachment_id',
      async ({ params, repo, user, status }) => {
        await deleteCommentAsset(deps, repo, user, params.id, params.attachment_id)
        return status(204, undefined)
      },
      commentAssets.delete({ operationId: 'issueDeleteIssueCommentAttachment', summary: 'Delete a comment attachment (and its file)' }),
    )
