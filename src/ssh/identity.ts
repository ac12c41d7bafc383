import type { AppDeps } from '../deps'
import { maySignIn, type UserRow } from '../auth/caller'
import type { GitCaller } from '../auth/git-access'
import type { PublicKeyRow } from '../db/schema'
import { recordPublicKeyUse, userKeyByFingerprint } from '../modules/keys/service'
import { deployKeysByFingerprint, recordDeployKeyUse, type DeployKeyGrant } from '../modules/deploy-keys/service'

/**
 * Who an SSH key stands for: a user's key (public_keys) acts as that user; a deploy key
 * (deploy_keys, possibly added to several repositories) opens exactly its repositories. A key is
 * one or the other, never both (adding refuses a key already used as the other kind). Looked up
 * afresh on every sign-in and every command, so a deleted key stops working at once.
 */
export type SshIdentity = { kind: 'user'; key: PublicKeyRow; user: UserRow } | { kind: 'deploy-key'; grants: DeployKeyGrant[] }

export async function identityOfKey(deps: AppDeps, fingerprint: string): Promise<SshIdentity | undefined> {
  const userKey = await userKeyByFingerprint(deps, fingerprint)
  if (userKey) return { kind: 'user', key: userKey.key, user: userKey.owner }
  const grants = await deployKeysByFingerprint(deps, fingerprint)
  return grants.length ? { kind: 'deploy-key', grants } : undefined
}

/** The identity as the shared git access decision takes it. */
export const gitCallerOf = (identity: SshIdentity): GitCaller =>
  identity.kind === 'user' ? { user: identity.user } : { user: null, deployKeys: identity.grants }

/** Why a user's key may not be used now (the account is disabled), or null. */
export function accountRefusal(identity: SshIdentity): string | null {
  if (identity.kind === 'user' && !maySignIn(identity.user))
    return 'your account is disabled (prohibited from signing in); please contact your site administrator'
  return null
}

/** Records the key's use on `repoId` (throttled; see KEY_USE_RECORD_INTERVAL). */
export async function recordKeyUse(deps: AppDeps, identity: SshIdentity, repoId: number): Promise<void> {
  if (identity.kind === 'user') return await recordPublicKeyUse(deps, identity.key)
  const grant = identity.grants.find((g) => g.repoId === repoId)
  if (grant) await recordDeployKeyUse(deps, grant)
}
