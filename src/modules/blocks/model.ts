import { t } from 'elysia'

/** Gitea's Blocking.Note is a varchar(255). */
export const MAX_BLOCK_NOTE = 255

/** `?note=` of PUT .../blocks/{username}. */
export const BlockQuery = t.Object({ note: t.Optional(t.String({ maxLength: MAX_BLOCK_NOTE, description: 'optional note for the block' })) })

/** `/user/blocks/{username}`. */
export const UserBlockParams = t.Object({ username: t.String() })
/** `/orgs/{org}/blocks/{username}`. */
export const OrgBlockParams = t.Object({ org: t.String(), username: t.String() })
