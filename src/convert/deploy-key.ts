import type { AppDeps } from '../deps'
import type { DeployKeyRow } from '../db/schema'
import type { RepoContext } from '../auth/repo-context'
import { isoTime } from '../lib/time'
import { apiUrl } from '../lib/urls'
import { repoToApi } from './repo'

/**
 * DeployKey records (records.md §18) of one repository's keys; `key_id` is the key's own id (no
 * separate public-key row). The repository's record is made once for all of them.
 */
export async function deployKeysToApi(deps: AppDeps, ctx: RepoContext, keys: DeployKeyRow[]) {
  const repository = await repoToApi(deps, ctx.repo, ctx.owner, ctx.caller.user, ctx.mode)
  return keys.map((key) => ({
    id: key.id,
    key_id: key.id,
    key: key.content,
    url: apiUrl(deps.config, `repos/${ctx.owner.name}/${ctx.repo.name}/keys/${key.id}`),
    title: key.title,
    fingerprint: key.fingerprint,
    created_at: isoTime(key.createdUnix),
    read_only: key.readOnly,
    repository,
  }))
}
