import { eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { repositories } from '../../db/schema'
import { accessLevel, AccessMode, type RepoRow } from '../../auth/access'
import { findRepoByName, gitDirOf, findRepoRedirect, redirectedLocation } from '../../auth/repo-context'
import type { UserRow } from '../../auth/caller'
import { ApiError } from '../../lib/errors'
import { boundedStream, bodyTooLarge } from '../../lib/body'
import { docsUrl } from '../../lib/urls'
import { nowUnix } from '../../lib/time'
import { branchesAndAnyRef, repositorySize, setHeadBranch } from '../../git/refs'
import {
  advertiseRefs,
  pushedBranches,
  pushReportWatcher,
  serviceRpc,
  type GitService,
} from '../../git/smart-http'

/** A repository reached over git HTTP, once the caller is known to be allowed. */
export interface GitTarget {
  repo: RepoRow
  owner: UserRow
  gitDir: string
  user: UserRow | null
}

const NO_CACHE = {
  Expires: 'Fri, 01 Jan 1980 00:00:00 GMT',
  Pragma: 'no-cache',
  'Cache-Control': 'no-cache, max-age=0, must-revalidate',
}

/** An error answer for git clients (JSON body; 401 asks for Basic credentials). */
export function gitErrorResponse(deps: AppDeps, status: number, message: string): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', ...NO_CACHE }
  if (status === 401) headers['WWW-Authenticate'] = 'Basic realm="."'
  return new Response(JSON.stringify({ message, url: docsUrl(deps.config) }), { status, headers })
}

/** `{repo}` in git URLs may carry `.git`. */
const stripGitSuffix = (name: string) => (name.toLowerCase().endsWith('.git') ? name.slice(0, -4) : name)

/**
 * Who may do what over git HTTP: pulls of readable public repositories are anonymous;
 * everything else needs Basic credentials (401 + WWW-Authenticate when missing or wrong).
 * A signed-in caller who cannot read the repository gets 404 (existence is not revealed),
 * one who can read but not write gets 403 on push.
 */
export async function authorizeGit(deps: AppDeps, request: Request, ownerName: string, repoName: string, service: GitService): Promise<GitTarget | Response> {
  const name = stripGitSuffix(repoName)
  let found = findRepoByName(deps, ownerName, name)
  // An old name of a renamed repository: once the caller passes the same checks as for the
  // repository itself, 301 to the same URL under the new name (git follows it).
  const moved = found ? undefined : findRepoRedirect(deps, ownerName, name)
  found ??= moved
  if (!found) return gitErrorResponse(deps, 404, 'Repository not found')
  let user: UserRow | null
  try {
    user = (await deps.auth.caller(request)).user
  } catch (e) {
    if (e instanceof ApiError) return gitErrorResponse(deps, e.status, e.status === 401 ? 'invalid credentials' : e.message)
    throw e
  }
  const need = service === 'receive-pack' ? AccessMode.Write : AccessMode.Read
  const mode = accessLevel(deps.db, user, found.repo, found.owner)
  if (need === AccessMode.Write && !user) return gitErrorResponse(deps, 401, 'authentication required')
  if (mode < AccessMode.Read) return user ? gitErrorResponse(deps, 404, 'Repository not found') : gitErrorResponse(deps, 401, 'authentication required')
  if (mode < need) return gitErrorResponse(deps, 403, 'User permission denied')
  if (need === AccessMode.Write && found.repo.isMirror) return gitErrorResponse(deps, 403, 'mirror repository is read-only')
  if (need === AccessMode.Write && found.repo.isArchived) return gitErrorResponse(deps, 403, 'repo is archived')
  if (moved)
    return new Response(null, { status: 301, headers: { Location: redirectedLocation(request, ownerName, name, moved), ...NO_CACHE } })
  return { ...found, user, gitDir: gitDirOf(deps, found) }
}

/** `GET info/refs?service=...`. */
export async function infoRefs(deps: AppDeps, target: GitTarget, service: GitService, gitProtocol: string | null): Promise<Response> {
  const body = await advertiseRefs(target.gitDir, service, gitProtocol)
  if (!body) return gitErrorResponse(deps, 404, 'Repository not found')
  return new Response(body, { headers: { 'Content-Type': `application/x-git-${service}-advertisement`, ...NO_CACHE } })
}

/** `POST git-upload-pack` / `git-receive-pack`: stream in, stream out. */
export function serviceResponse(deps: AppDeps, target: GitTarget, service: GitService, request: Request): Response {
  const limit = deps.config.maxPushSize
  if (Number(request.headers.get('content-length') ?? 0) > limit) return gitErrorResponse(deps, 413, bodyTooLarge(limit).message)
  // Counted as it streams (as sent and, for gzip, as git reads it): git sees the stream fail
  // past the limit and stops.
  let body = request.body && boundedStream(request.body, limit)
  const encoding = request.headers.get('content-encoding')?.toLowerCase()
  if (body && (encoding === 'gzip' || encoding === 'x-gzip')) body = boundedStream(body.pipeThrough(new DecompressionStream('gzip')), limit)
  const headers = { 'Content-Type': `application/x-git-${service}-result`, ...NO_CACHE }
  const rpc = serviceRpc(target.gitDir, service, body, request.headers.get('git-protocol'))
  if (service === 'upload-pack') {
    rpc.done.then(({ code, stderr }) => {
      if (code !== 0 && code !== 141 && stderr) console.warn(`upload-pack ${target.repo.ownerName}/${target.repo.name}: ${stderr.trim().slice(0, 300)}`)
    })
    return new Response(rpc.stdout, { headers })
  }
  // The refs the push updated are read from git's report-status in its (small) answer.
  const report = pushReportWatcher()
  // The answer ends only after the repository row is up to date, so a client that sees its
  // push finish also sees the new metadata.
  const reader = rpc.stdout.getReader()
  const out = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await reader.read()
      if (!next.done) {
        report.observe(next.value)
        return controller.enqueue(next.value)
      }
      const { code } = await rpc.done
      if (code === 0) {
        try {
          await updateAfterPush(deps, target, report.updatedRefs())
        } catch (e) {
          console.error('updating repository after push failed:', e)
        }
      }
      controller.close()
    },
    cancel() {
      reader.cancel().catch(() => {})
    },
  })
  return new Response(out, { headers })
}

/**
 * After a successful push: `is_empty` from whether any ref exists, the default branch moved to
 * the first pushed branch when the current one does not exist (HEAD follows), size, updated.
 */
async function updateAfterPush(deps: AppDeps, target: GitTarget, updatedRefs: string[]): Promise<void> {
  const { gitDir } = target
  const current = deps.db.select().from(repositories).where(eq(repositories.id, target.repo.id)).get()
  if (!current) return
  // Two git processes at once (refs, size); a third only when HEAD has to move.
  const [{ branches: heads, anyRef }, size] = await Promise.all([branchesAndAnyRef(gitDir), repositorySize(gitDir)])
  let defaultBranch = current.defaultBranch
  if (heads.length > 0 && !heads.includes(defaultBranch)) {
    defaultBranch = pushedBranches(updatedRefs).find((b) => heads.includes(b)) ?? heads[0]!
    await setHeadBranch(gitDir, defaultBranch)
  }
  deps.db
    .update(repositories)
    .set({ isEmpty: !anyRef, defaultBranch, size, updatedUnix: nowUnix() })
    .where(eq(repositories.id, current.id))
    .run()
}
