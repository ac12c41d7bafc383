import type { AppDeps } from '../deps'
import { AccessMode, repoAccess, unitMode, type RepoRow } from './access'
import type { Caller, UserRow } from './caller'
import { scopeRefusal } from './scopes'
import { findRepoByName, findRepoRedirect } from './repo-context'
import type { GitSessionService } from '../git/smart-http'

/**
 * Who may run which git service on a repository: the one decision behind both git transports,
 * smart HTTP (modules/git-http) and SSH (src/ssh). Each transport finds the caller its own way
 * (Basic credentials; an SSH key) and words the refusal its own way (git-shaped HTTP answers;
 * a message on the SSH channel's stderr), but what is allowed is decided here only.
 */

/** What a deploy key opens: exactly one repository, read-only unless it was added with write access. */
export interface DeployKeyAccess {
  repoId: number
  readOnly: boolean
}

/**
 * A git caller: a user (null when anonymous, over HTTP), or a deploy key, which stands for no
 * user: its grants (one per repository the key was added to) are all it may use.
 */
export type GitCaller = { user: UserRow | null; deployKeys?: undefined } | { user: null; deployKeys: DeployKeyAccess[] }

/**
 * Why a git request is refused: `not-found` (no such repository, or one the caller may not read:
 * existence is not revealed), `sign-in` (an anonymous caller needs to sign in), `forbidden` (read
 * but no write access), `mirror` / `archived` (pushes to read-only repositories).
 */
export type GitRefusal = 'not-found' | 'sign-in' | 'forbidden' | 'mirror' | 'archived'

/** A repository reached by a git transport: the row, its owner, and whether the name was an old one. */
export interface GitRepoFound {
  repo: RepoRow
  owner: UserRow
  /** Found by an old name of a renamed repository (HTTP redirects; SSH serves the repository). */
  moved: boolean
  /** The path named the repository's wiki (`{repo}.wiki.git`) rather than the repository. */
  wiki: boolean
  /** The repository name the path gave (without `.wiki` and `.git`): the name a redirect replaces. */
  name: string
}

/** `{repo}` in git paths may carry `.git`. */
export const stripGitSuffix = (name: string) => (name.toLowerCase().endsWith('.git') ? name.slice(0, -4) : name)

/**
 * The repository name of a git path and whether the path names the repository's wiki
 * (`{repo}.wiki`, `.git` optional: no repository's name ends in `.wiki`).
 */
function gitPathName(repoName: string): { name: string; wiki: boolean } {
  const name = stripGitSuffix(repoName)
  return /\.wiki$/i.test(name) ? { name: name.slice(0, -'.wiki'.length), wiki: true } : { name, wiki: false }
}

/**
 * The repository a git path names (`.git` optional, names case-insensitive), or by an old name;
 * `{repo}.wiki(.git)` names its wiki, which is reached only while the repository's wiki is on
 * (undefined otherwise, as for no repository) and then under the repository's access rule.
 * Both transports find what they serve here.
 */
export async function findGitRepository(deps: AppDeps, ownerName: string, repoName: string): Promise<GitRepoFound | undefined> {
  const { name, wiki } = gitPathName(repoName)
  const named = await findRepoByName(deps, ownerName, name)
  const found = named ?? (await findRepoRedirect(deps, ownerName, name))
  if (!found || (wiki && !found.repo.hasWiki)) return undefined
  return { repo: found.repo, owner: found.owner, moved: !named, wiki, name }
}

/**
 * What the caller may do in the repository: a user's mode in its code (in its wiki, for the wiki's
 * repository: Gitea's serv picks the unit so), or a deploy key's grant.
 */
async function gitAccessMode(deps: AppDeps, caller: GitCaller, found: { repo: RepoRow; owner: UserRow; wiki?: boolean }): Promise<AccessMode> {
  if (!caller.deployKeys) return unitMode(await repoAccess(deps.db, caller.user, found.repo, found.owner), found.wiki ? 'repo.wiki' : 'repo.code')
  const grant = caller.deployKeys.find((g) => g.repoId === found.repo.id)
  if (!grant) return AccessMode.None
  return grant.readOnly ? AccessMode.Read : AccessMode.Write
}

/**
 * Whether `caller` may run `service` on the repository: null when allowed, else why not.
 * Pulls and archives of readable repositories are open to anyone who can read them (anonymous
 * callers included, for public repositories); pushes need a signed-in caller with write access
 * to a repository that is neither a mirror nor archived. A caller who cannot read the repository
 * is told it does not exist (or, anonymous, to sign in), never that it exists.
 */
export async function gitAccessRefusal(deps: AppDeps, caller: GitCaller, found: { repo: RepoRow; owner: UserRow; wiki?: boolean }, service: GitSessionService): Promise<GitRefusal | null> {
  const need = service === 'receive-pack' ? AccessMode.Write : AccessMode.Read
  const signedIn = caller.user !== null || caller.deployKeys !== undefined
  const mode = await gitAccessMode(deps, caller, found)
  if (need === AccessMode.Write && !signedIn) return 'sign-in'
  if (mode < AccessMode.Read) return signedIn ? 'not-found' : 'sign-in'
  if (mode < need) return 'forbidden'
  if (need === AccessMode.Write && found.repo.isMirror) return 'mirror'
  if (need === AccessMode.Write && found.repo.isArchived) return 'archived'
  return null
}

/** An HTTP caller's decision: the user git runs as (null: as anonymous), or why not. */
export type TokenGitAccess = { user: UserRow | null; refused?: undefined } | { refused: GitRefusal | 'scope' | 'public-only'; message?: string }

/**
 * `gitAccessRefusal` for a caller of the API's credentials (git over HTTP), with what a token
 * adds: it needs the repository scope, read to clone or fetch and write to push. As in Gitea, a
 * pull that needs no credentials at all (a public repository) is served whatever the token's
 * scope, as it would be to an anonymous client; and a public-only token's user who could reach
 * a private repository otherwise is told why rather than told it does not exist.
 */
export async function tokenGitAccess(deps: AppDeps, caller: Pick<Caller, 'user' | 'scope'>, found: { repo: RepoRow; owner: UserRow; wiki?: boolean }, service: GitSessionService): Promise<TokenGitAccess> {
  let user = caller.user
  const scopeRefused = caller.scope && scopeRefusal(caller.scope, ['repository'], service === 'receive-pack' ? 2 : 1)
  if (scopeRefused) {
    if (service === 'receive-pack' || (await gitAccessRefusal(deps, { user: null }, found, service))) return { refused: 'scope', message: scopeRefused }
    user = null
  }
  const refusal = await gitAccessRefusal(deps, { user }, found, service)
  if (refusal === 'not-found' && user?.publicOnly && !(await gitAccessRefusal(deps, { user: { ...user, publicOnly: undefined } }, found, service)))
    return { refused: 'public-only' }
  return refusal ? { refused: refusal } : { user }
}
