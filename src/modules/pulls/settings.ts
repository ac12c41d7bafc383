import type { RepoRow } from '../../auth/access'
import type { PullRow } from '../../db/schema'

/**
 * Pull request settings read in one place, each with Gitea's default where the row has no such
 * column: a repository's `allow_fast_forward_only_merge` and `allow_rebase_update` (true, as
 * Gitea's new repositories), a pull request's `allow_maintainer_edit` (false).
 */

type RepoPullSetting = 'allowFastForwardOnlyMerge' | 'allowRebaseUpdate'

/** A repository's pull request setting, true unless the row says otherwise. */
export const repoPullSetting = (repo: RepoRow, name: RepoPullSetting): boolean => (repo as Partial<Record<RepoPullSetting, boolean>>)[name] ?? true

/** Whether the poster lets those who may merge into the base push to the head branch (Gitea's maintainer edits). */
export const allowsMaintainerEdit = (pull: PullRow): boolean => (pull as { allowMaintainerEdit?: boolean }).allowMaintainerEdit ?? false
