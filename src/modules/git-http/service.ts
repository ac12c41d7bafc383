import type { AppDeps } from '../../deps'
import type { RepoRow } from '../../auth/access'
import { gitRepoOf, redirectedLocation } from '../../auth/repo-context'
import { findGitRepository, tokenGitAccess, type GitCaller, type TokenGitAccess } from '../../auth/git-access'
import type { Caller, UserRow } from '../../auth/caller'
import { TWO_FACTOR_GIT_PASSWORD } from '../../auth/two-factor'
import { ApiError, apiErrorOfGit } from '../../lib/errors'
import { GitError, type GitRepo } from '../../git/run'
import { wikiForGit } from '../wiki/service'
import { boundedStream, bodyTooLarge, readBodyBounded } from '../../lib/body'
import { docsUrl } from '../../lib/urls'
import { advertiseRefs, isLsRefsRequest, lsRefs, MAX_LS_REFS_REQUEST, serviceRpc, type GitService, type GitSessionService } from '../../git/smart-http'
import { MAX_COMMAND_BYTES, readPushHead, refusalReport, replayed } from '../../git/push-commands'
import { gitPusher, pushHook, withPush } from '../../push'
import { trackWork } from '../../lib/in-flight'
import { errorFields, loggerOf } from '../../lib/log'

/** A repository reached over git HTTP, once the caller is known to be allowed. */
export interface GitTarget {
  repo: RepoRow
  owner: UserRow
  /** The repository for git, with the request's signal (git dies when the client hangs up). */
  git: GitRepo
  user: UserRow | null
  /** The repository's wiki (`{repo}.wiki.git`) rather than the repository itself. */
  wiki: boolean
}

const NO_CACHE = {
  Expires: 'Fri, 01 Jan 1980 00:00:00 GMT',
  Pragma: 'no-cache',
  'Cache-Control': 'no-cache, max-age=0, must-revalidate',
}

/** An error answer for git clients (JSON body; 401 asks for Basic credentials). */
export function gitErrorResponse(deps: AppDeps, status: number, message: string, extraHeaders: Record<string, string> = {}): Response {
  const headers: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', ...NO_CACHE, ...extraHeaders }
  if (status === 401) headers['WWW-Authenticate'] = 'Basic realm="."'
  return new Response(JSON.stringify({ message, url: docsUrl(deps.config) }), { status, headers })
}

/** How git HTTP words each refusal of the shared decision (src/auth/git-access.ts). */
export const GIT_REFUSALS: Record<NonNullable<TokenGitAccess['refused']>, [number, string]> = {
  'not-found': [404, 'Repository not found'],
  scope: [403, 'token does not have the repository scope'],
  'public-only': [403, 'token scope is limited to public repos'],
  'sign-in': [401, 'authentication required'],
  forbidden: [403, 'User permission denied'],
  mirror: [403, 'mirror repository is read-only'],
  archived: [403, 'repo is archived'],
}

/** A refusal as an HTTP answer words it. */
export interface HttpRefusal {
  status: number
  message: string
  headers?: Record<string, string>
}

/**
 * The caller of a request as git over HTTP finds it (Basic with a password or a token, a token
 * header), and the git services' decision for them (tokenGitAccess): the user git runs as, or the
 * refusal. The LFS endpoints find their callers here too.
 */
export async function httpGitAccess(deps: AppDeps, request: Request, found: { repo: RepoRow; owner: UserRow }, service: GitSessionService): Promise<{ user: UserRow | null } | { refused: HttpRefusal }> {
  const caller = await httpGitCaller(deps, request)
  if ('refused' in caller) return caller
  const decided = await tokenGitAccess(deps, caller, found, service)
  if (!decided.refused) return { user: decided.user }
  const [status, message] = GIT_REFUSALS[decided.refused]
  return { refused: { status, message: decided.message ?? message } }
}

/**
 * The caller of a git HTTP (or LFS) request, or the refusal of its credentials: wrong ones are
 * 401 (`invalid credentials`), too many failed sign-ins 429 with its Retry-After, whether or not
 * the repository named exists.
 */
async function httpGitCaller(deps: AppDeps, request: Request): Promise<Caller | { refused: HttpRefusal }> {
  try {
    return await deps.auth.caller(request)
  } catch (e) {
    // A 429 keeps its Retry-After (too many failed sign-ins from this client or for this account).
    // A password of a user with a second factor is refused with Gitea's advice to use a token.
    if (e instanceof ApiError)
      return { refused: { status: e.status, message: e.status === 401 && e.message !== TWO_FACTOR_GIT_PASSWORD ? 'invalid credentials' : e.message, headers: e.headers } }
    throw e
  }
}

/**
 * The refusal of a request naming no repository: what a repository the caller may not read
 * answers, so that a name's existence shows to no one who may not see it (as Gitea): credentials
 * are checked first (wrong ones 401, too many failures 429, as anywhere), then an anonymous
 * caller is asked to sign in (401) and a signed-in one told it is not found (404).
 */
export async function unknownRepositoryRefusal(deps: AppDeps, request: Request): Promise<HttpRefusal> {
  const caller = await httpGitCaller(deps, request)
  if ('refused' in caller) return caller.refused
  if (!caller.user) return { status: GIT_REFUSALS['sign-in'][0], message: GIT_REFUSALS['sign-in'][1] }
  return { status: 404, message: 'Repository not found' }
}

/**
 * Who may do what over git HTTP is decided by auth/git-access (tokenGitAccess), as for SSH: pulls of readable
 * public repositories are anonymous; everything else needs Basic credentials (401 +
 * WWW-Authenticate when missing or wrong). A signed-in caller who cannot read the repository
 * gets 404 (existence is not revealed), one who can read but not write gets 403 on push.
 */
export async function authorizeGit(deps: AppDeps, request: Request, ownerName: string, repoName: string, service: GitService): Promise<GitTarget | Response> {
  // An old name of a renamed repository: once the caller passes the same checks as for the
  // repository itself, 301 to the same URL under the new name (git follows it). `{repo}.wiki(.git)`
  // is the repository's wiki, found only while its wiki is on (findGitRepository).
  const found = await findGitRepository(deps, ownerName, repoName)
  if (!found) {
    const refused = await unknownRepositoryRefusal(deps, request)
    return gitErrorResponse(deps, refused.status, refused.message, refused.headers)
  }
  const decided = await httpGitAccess(deps, request, found, service)
  if ('refused' in decided) return gitErrorResponse(deps, decided.refused.status, decided.refused.message, decided.refused.headers)
  const user = decided.user
  if (found.moved)
    return new Response(null, {
      status: 301,
      headers: { Location: redirectedLocation(request, ownerName, found.name, found), ...NO_CACHE },
    })
  const git = gitRepoOf(deps, found, request.signal)
  if (!found.wiki) return { repo: found.repo, owner: found.owner, user, git, wiki: false }
  const wikiGit = await wikiForGit(deps, git, service)
  if (!wikiGit) return gitErrorResponse(deps, 404, 'Repository not found')
  return { repo: found.repo, owner: found.owner, user, git: wikiGit, wiki: true }
}

/**
 * The 415 of an RPC request whose body is not the service's (`application/x-git-<service>-request`,
 * what every git client sends), or null. Checked once the caller is known to be allowed, as Gitea
 * and git's own http-backend do, so the answer reveals nothing a refusal would hide.
 */
export function requestTypeRefusal(deps: AppDeps, request: Request, service: GitService): Response | null {
  const expected = `application/x-git-${service}-request`
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase()
  if (type === expected) return null
  return gitErrorResponse(deps, 415, `git-${service} expects a request body of type ${expected}`)
}

/** `GET info/refs?service=...`. */
export async function infoRefs(deps: AppDeps, target: GitTarget, service: GitService, gitProtocol: string | null): Promise<Response> {
  let body
  try {
    body = await advertiseRefs(target.git, service, gitProtocol)
  } catch (e) {
    if (!(e instanceof GitError)) throw e
    const answer = apiErrorOfGit(e)
    return gitErrorResponse(deps, answer.status, answer.message)
  }
  if (!body) return gitErrorResponse(deps, 404, 'Repository not found')
  return new Response(body, { headers: { 'Content-Type': `application/x-git-${service}-advertisement`, ...NO_CACHE } })
}

/** `POST git-upload-pack` / `git-receive-pack`: stream in, stream out. */
export async function serviceResponse(deps: AppDeps, target: GitTarget, service: GitService, request: Request): Promise<Response> {
  const limit = deps.config.maxPushSize
  if (Number(request.headers.get('content-length') ?? 0) > limit) return gitErrorResponse(deps, 413, bodyTooLarge(limit).message)
  const encoding = request.headers.get('content-encoding')?.toLowerCase()
  const headers = { 'Content-Type': `application/x-git-${service}-result`, ...NO_CACHE }
  const gitProtocol = request.headers.get('git-protocol')
  // A short protocol v2 request is read whole: an `ls-refs` (what `git ls-remote` and every fetch
  // start with) is answered from the refs (lsRefs), anything else goes to git as it came. Read at
  // once by its declared length (readBodyBounded), not through the counting stream below: a
  // stream piped through another took 1.6 ms for these few bytes, 40 times the answer itself.
  let read: Uint8Array<ArrayBuffer> | null = null
  const length = Number(request.headers.get('content-length') ?? NaN)
  if (service === 'upload-pack' && request.body && !encoding && length <= MAX_LS_REFS_REQUEST && /(^|:)version=2(:|$)/.test(gitProtocol ?? '')) {
    read = await readBodyBounded(request, MAX_LS_REFS_REQUEST)
    if (isLsRefsRequest(read)) {
      try {
        return new Response(await lsRefs(target.git, read, gitProtocol), { headers })
      } catch (e) {
        if (!(e instanceof GitError)) throw e
        const answer = apiErrorOfGit(e)
        return gitErrorResponse(deps, answer.status, answer.message)
      }
    }
  }
  // Counted as it streams (as sent and, for gzip, as git reads it): git sees the stream fail
  // past the limit and stops.
  let body = read ? new Response(read).body : request.body && boundedStream(request.body, limit)
  if (body && !read && (encoding === 'gzip' || encoding === 'x-gzip')) body = boundedStream(body.pipeThrough(new DecompressionStream('gzip')), limit)
  if (service === 'upload-pack') {
    const rpc = serviceRpc(target.git, service, body, gitProtocol)
    // A killed upload-pack ends its stream early; the client sees a cut-off pack and says so.
    rpc.done.then(({ code, stderr, killed }) => {
      if (killed?.kind === 'timeout') loggerOf(deps.config).warn('upload-pack stopped', { repo: `${target.repo.ownerName}/${target.repo.name}`, reason: killed.message })
      else if (!killed && code !== 0 && code !== 141 && stderr) loggerOf(deps.config).warn('upload-pack failed', { repo: `${target.repo.ownerName}/${target.repo.name}`, stderr: stderr.trim().slice(0, 300) })
    })
    return new Response(rpc.stdout, { headers })
  }
  return target.wiki ? wikiReceivePack(target, body, gitProtocol, headers) : receivePack(deps, target, body, gitProtocol, headers)
}

/**
 * A push to a wiki: git's receive-pack as it is, without the push decision or its recording (a
 * wiki has no branch protection, pull requests or push events; Gitea announces no push to it).
 * The pack is applied whether or not the client still listens.
 */
function wikiReceivePack(target: GitTarget, body: ReadableStream<Uint8Array> | null, gitProtocol: string | null, headers: Record<string, string>): Response {
  const rpc = serviceRpc({ ...target.git, signal: undefined }, 'receive-pack', body, gitProtocol)
  trackWork(rpc.done)
  return new Response(rpc.stdout, { headers })
}

/**
 * A push over HTTP, through the one push path (withPush, src/push): the command list at the
 * start of the body is read first and judged by the push decision; a refused ref refuses the
 * whole push (git never sees it), answered as receive-pack's own report so that git shows each
 * ref rejected and why. Otherwise the pending push is recorded and the body (those bytes, then
 * the rest, streamed) goes to `git receive-pack`; when git exits the ref changes and the
 * repository's metadata are recorded, whether or not the client still listens. The answer ends
 * only after that, so a client that sees its push finish also sees the new metadata.
 */
async function receivePack(
  deps: AppDeps,
  target: GitTarget,
  body: ReadableStream<Uint8Array> | null,
  gitProtocol: string | null,
  headers: Record<string, string>,
): Promise<Response> {
  if (!body || !target.user) return gitErrorResponse(deps, 400, 'push request without a body')
  const reader = body.getReader()
  const head = await readPushHead(reader).catch(() => null)
  if (head === null) return gitErrorResponse(deps, 400, 'the push request ended early')
  if (head === 'too-long') {
    reader.cancel().catch(() => {})
    return gitErrorResponse(deps, 413, `a push may update refs in at most ${MAX_COMMAND_BYTES} bytes of commands`)
  }
  const drain = async () => {
    while (!(await reader.read().catch(() => ({ done: true }))).done);
  }
  if (head.commands === null) {
    // Unread, the refs would reach git unchecked: push certificates (never offered) and garbage.
    await drain()
    return gitErrorResponse(deps, 400, 'the push command list could not be read (push certificates are not accepted)')
  }
  const commands = head.commands
  const repo = `${target.repo.ownerName}/${target.repo.name}`
  // Not the request's signal: a client that hangs up after sending its pack still gets its push
  // applied (git sees the body end and finishes); the time limit still bounds git.
  const git: GitRepo = { ...target.git, signal: undefined }
  const started = Promise.withResolvers<ReadableStream<Uint8Array>>()
  const caller: GitCaller = { user: target.user }
  const hook = await pushHook(deps, git)
  const pushed = withPush(deps, target, gitPusher(caller), commands, async () => {
    const rpc = serviceRpc(git, 'receive-pack', replayed(head.head, reader), gitProtocol, hook.git)
    started.resolve(rpc.stdout)
    const { code, stderr, killed } = await rpc.done
    if (killed) loggerOf(deps.config).warn('receive-pack stopped', { repo, reason: killed.message })
    else if (code !== 0 && stderr) loggerOf(deps.config).warn('receive-pack failed', { repo, stderr: stderr.trim().slice(0, 300) })
  }, undefined, hook)
  const first = await Promise.race([started.promise, pushed])
  if (!(first instanceof ReadableStream)) {
    if (!first.refused) throw new Error('receive-pack finished before it started')
    // The client sends its pack before it reads the answer: take it (and drop it) first.
    await drain()
    const { message, reasons } = first.refused
    const report = refusalReport(commands, head.capabilities, reasons, message)
    return report.length ? new Response(new Uint8Array(report), { headers }) : gitErrorResponse(deps, 403, message)
  }
  // Recorded whatever happens to the client; shutdown waits for the record, not only for git.
  const finished = pushed.then(
    () => {},
    (e) => loggerOf(deps.config).error('updating a repository after a push failed', { repoId: target.repo.id, ...errorFields(e) }),
  )
  trackWork(finished)
  const out = first.getReader()
  let listening = true
  const answer = new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await out.read()
      if (!next.done) return controller.enqueue(next.value)
      await finished
      controller.close()
    },
    cancel() {
      // The client hung up: git still finishes (its answer is read and dropped), so the push
      // it already received is applied and recorded.
      if (!listening) return
      listening = false
      void (async () => {
        while (!(await out.read().catch(() => ({ done: true }))).done);
      })()
    },
  })
  return new Response(answer, { headers })
}
