import { t } from 'elysia'
import { Int } from '../users/model'

/** Longest attachment name. */
export const MAX_ATTACHMENT_NAME = 255

/** The Attachment record. */
export const AttachmentSchema = t.Object(
  {
    id: Int(),
    name: t.String(),
    size: Int(),
    download_count: Int(),
    created_at: t.String(),
    uuid: t.String(),
    browser_download_url: t.String(),
  },
  { $id: '#/components/schemas/Attachment' },
)

/** EditAttachmentOptions. */
export const EditAttachmentOptions = t.Object(
  { name: t.Optional(t.String({ maxLength: MAX_ATTACHMENT_NAME })) },
  { $id: '#/components/schemas/EditAttachmentOptions' },
)

/** The name an upload is stored under (else the file's own name). */
export const UploadQuery = t.Object({ name: t.Optional(t.String({ maxLength: MAX_ATTACHMENT_NAME, description: 'name of the attachment' })) })

/** How an upload's body is documented (the route reads it itself, so it declares no `body` schema). */
export const UPLOAD_BODY = {
  required: true,
  content: {
    'multipart/form-data': {
      schema: { type: 'object', required: ['attachment'], properties: { attachment: { type: 'string', format: 'binary', description: 'attachment to upload' } } },
    },
  },
}

export const IssueAssetParams = t.Object({
  owner: t.String(),
  repo: t.String(),
  index: t.String({ description: 'index of the issue' }),
  attachment_id: t.String({ description: 'id of the attachment' }),
})
export const CommentAssetsParams = t.Object({ owner: t.String(), repo: t.String(), id: t.String({ description: 'id of the comment' }) })
export const CommentAssetParams = t.Object({
  owner: t.String(),
  repo: t.String(),
  id: t.String({ description: 'id of the comment' }),
  attachment_id: t.String({ description: 'id of the attachment' }),
})
