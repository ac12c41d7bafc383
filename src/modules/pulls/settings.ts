import type { PullRow } from '../../db/schema'

/** Whether the poster lets those who may merge into the base push to the head branch (Gitea's maintainer edits). */
export const allowsMaintainerEdit = (pull: PullRow): boolean => pull.allowMaintainerEdit
