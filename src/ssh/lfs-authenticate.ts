import type { ServerChannel } from 'ssh2'
import type { AppDeps } from '../deps'
import { findGitRepository, gitAccessRefusal } from '../auth/git-access'
import { lfsToken } from '../modules/lfs/access'
import { lfsBaseUrl } from '../modules/lfs/service'
import { isoTime } from '../lib/time'
import { printable, type GitCommand } from './command'
import { refusalMessage, refuse } from './git-session'
import { accountRefusal, gitCallerOf, recordKeyUse, type SshIdentity } from './identity'

/**
 * `git-lfs-authenticate {owner}/{repo}.git upload|download` (Gitea's cmd/serv.go): under the
 * same decision as a push (upload) or a fetch (download) over SSH, answers the LFS endpoints'
 * address and a short-lived token for them as Gitea's LFSTokenResponse (`href`,
 * `header.Authorization: Bearer …`), with `expires_at` so git-lfs asks again before it runs out.
 * A deploy key stands for no user, and the token names one: deploy keys are refused here.
 */
export async function lfsAuthenticate(deps: AppDeps, identity: SshIdentity, command: GitCommand, channel: ServerChannel): Promise<void> {
  if (!deps.config.lfsStartServer) return refuse(channel, 'Git LFS is not enabled on this server')
  if (identity.kind !== 'user') return refuse(channel, 'git-lfs-authenticate needs a user key: a deploy key stands for no user')
  const disabled = accountRefusal(identity)
  if (disabled) return refuse(channel, disabled)
  const path = printable(`${command.ownerName}/${command.repoName}`)
  const found = await findGitRepository(deps, command.ownerName, command.repoName)
  const refusal = found && !found.wiki ? await gitAccessRefusal(deps, gitCallerOf(identity), found, command.service) : 'not-found'
  if (refusal || !found) return refuse(channel, refusalMessage(refusal ?? 'not-found', identity, path))
  await recordKeyUse(deps, identity, found.repo.id)
  const { token, expiresAt } = lfsToken(deps, { repoId: found.repo.id, op: command.lfs!, userId: identity.user.id })
  const answer = { href: lfsBaseUrl(deps, found), header: { Authorization: `Bearer ${token}` }, expires_at: isoTime(expiresAt) }
  channel.write(JSON.stringify(answer) + '\n')
  channel.exit(0)
  channel.end()
}
