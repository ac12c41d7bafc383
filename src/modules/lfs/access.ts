import type { AppDeps } from '../../deps'
import type { RepoRow } from '../../auth/access'
import { maySignIn, type UserRow } from '../../auth/caller'
import { findGitRepository, gitAccessRefusal } from '../../auth/git-access'
import { openTicket, sealTicket } from '../../lib/secret-box'
import { docsUrl } from '../../lib/urls'
import { nowUnix } from '../../lib/time'
import { GIT_REFUSALS, httpGitAccess, unknownRepositoryRefusal } from '../git-http/service'

/** The LFS API's media type (requests' Accept, answers' Content-Type). */
export const LFS_MEDIA_TYPE = 'application/vnd.git-lfs+json'

/** An LFS answer that is not a success: `{message, url}` in the LFS media type; 401 asks for Basic credentials. */
export function lfsError(deps: AppDeps, status: number, message: string, headers: Record<string, string> = {}): Response {
  const all: Record<string, string> = { 'Content-Type': LFS_MEDIA_TYPE, ...headers }
  if (status === 401) all['WWW-Authenticate'] = 'Basic realm="warren-lfs"'
  return new Response(JSON.stringify({ message, url: docsUrl(deps.config) }), { status, headers: all })
}

/** A JSON answer in the LFS media type. */
export const lfsJson = (value: unknown, status = 200) => new Response(JSON.stringify(value), { status, headers: { 'Content-Type': LFS_MEDIA_TYPE } })

/** A repository reached through its LFS endpoints, once the caller is known to be allowed. */
export interface LfsTarget {
  repo: RepoRow
  owner: UserRow
  /** Who asks (null: anonymous, for a public repository's downloads). */
  user: UserRow | null
  /** The request's Authorization header, which the batch's actions carry on (Gitea's). */
  authorization: string | null
}

/** `read` to download and list locks, `write` to upload, verify and change locks. */
export type LfsNeed = 'read' | 'write'

const TICKET_KIND = 'lfs'

/** What a short-lived LFS token grants: one user, one repository, one operation (Gitea's JWT Claims). */
interface LfsTicket {
  repoId: number
  op: 'upload' | 'download'
  userId: number
}

/**
 * The token `git-lfs-authenticate` hands out over SSH (Gitea's LFS JWT: repository, operation
 * and user, valid WARREN_LFS_HTTP_AUTH_EXPIRY): sealed with the data folder's key, so a client can
 * neither read nor forge it. Sent back as `Authorization: Bearer …`.
 */
export function lfsToken(deps: AppDeps, ticket: LfsTicket): { token: string; expiresAt: number } {
  const lifetime = Math.ceil(deps.config.lfsHttpAuthExpiry)
  return { token: sealTicket(deps.config.dataDir, TICKET_KIND, ticket, lifetime), expiresAt: nowUnix() + lifetime }
}

/** The ticket a `Bearer` / `token` Authorization header carries, when it is one of ours and still valid. */
function ticketOf(deps: AppDeps, authorization: string | null): LfsTicket | undefined {
  const match = /^(?:bearer|token)\s+(\S+)$/i.exec(authorization ?? '')
  if (!match || !match[1]!.startsWith('v1.')) return undefined
  const value = openTicket(deps.config.dataDir, TICKET_KIND, match[1]) as Partial<LfsTicket> | undefined
  if (!value || typeof value.repoId !== 'number' || typeof value.userId !== 'number' || (value.op !== 'upload' && value.op !== 'download')) return undefined
  return value as LfsTicket
}

/**
 * Who may use a repository's LFS endpoints: the caller found as git over HTTP finds it (Basic with a
 * password or a token, a token header; or the short-lived token `git-lfs-authenticate` handed out,
 * which names its user, repository and operation), and the git services' one decision
 * (auth/git-access): download as a fetch (`upload-pack`), upload as a push (`receive-pack`), so a
 * reader downloads, only a writer uploads (403), and one who may not read is told the repository
 * does not exist (404; anonymous: 401). Protected branches do not apply: objects are no refs.
 * A wiki has no LFS store (404). Off unless WARREN_LFS_START_SERVER (404, as Gitea).
 */
export async function authorizeLfs(deps: AppDeps, request: Request, ownerName: string, repoName: string, need: LfsNeed): Promise<LfsTarget | Response> {
  if (!deps.config.lfsStartServer) return lfsError(deps, 404, 'Not Found')
  const found = await findGitRepository(deps, ownerName, repoName)
  // A name no repository has answers as one the caller may not read (git HTTP's unknownRepositoryRefusal).
  if (!found) {
    const refused = await unknownRepositoryRefusal(deps, request)
    return lfsError(deps, refused.status, refused.message, refused.headers)
  }
  if (found.wiki) return lfsError(deps, 404, 'Repository not found')
  const authorization = request.headers.get('authorization')
  const service = need === 'write' ? 'receive-pack' : 'upload-pack'
  const ticket = ticketOf(deps, authorization)
  let user: UserRow | null
  if (ticket) {
    const holder = ticket.repoId === found.repo.id && (need === 'read' || ticket.op === 'upload') ? await deps.auth.userRowById(ticket.userId) : undefined
    if (!holder || !maySignIn(holder)) return lfsError(deps, 401, 'invalid credentials')
    const refusal = await gitAccessRefusal(deps, { user: holder }, found, service)
    if (refusal) {
      const [status, message] = GIT_REFUSALS[refusal]
      return lfsError(deps, status, message)
    }
    user = holder
  } else {
    const decided = await httpGitAccess(deps, request, found, service)
    if ('refused' in decided) return lfsError(deps, decided.refused.status, decided.refused.message, decided.refused.headers)
    user = decided.user
  }
  return { repo: found.repo, owner: found.owner, user, authorization }
}
