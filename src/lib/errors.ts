import type { GitError } from '../git/run'
/**
 * The one error type services throw. The root app turns it into Gitea's error shape:
 * `{"message": "...", "url": "{base}api/swagger"}` (plus `errors` for validation failures).
 */
export class ApiError extends Error {
  constructor(
    public readonly status: number,
    message: string,
    /** Extra keys merged into the body (e.g. `errors`, or Gitea's capitalised `Message`). */
    public readonly extra: Record<string, unknown> = {},
    /** Extra response headers (e.g. `Location` of a redirect). */
    public readonly headers: Record<string, string> = {},
  ) {
    super(message)
    this.name = 'ApiError'
  }
}

export const notFound = (message = "The target couldn't be found.") => new ApiError(404, message)
export const unauthorized = (message = 'token is required') => new ApiError(401, message)
export const forbidden = (message = 'Forbidden') => new ApiError(403, message)
export const unprocessable = (message: string, field?: string) =>
  new ApiError(422, field ? `[${field}]: ${message}` : message, field ? { errors: [{ fieldNames: [field], message }] } : {})
export const conflict = (message: string) => new ApiError(409, message)
export const badRequest = (message: string) => new ApiError(400, message)

/**
 * How the API answers a git process that did not give what a service needed (the one mapping
 * of GitError): a time limit is 504 with "git took longer than N s", a stopped process 503 (its
 * client is gone), a repository folder gone from under the request 503 (folderGone), another
 * failure 500 with git's own first error line (no server paths).
 */
export function apiErrorOfGit(e: GitError): ApiError {
  if (e.kind === 'failed' && folderGone(e)) return folderGoneError()
  const status = e.kind === 'timeout' ? 504 : e.kind === 'aborted' ? 503 : 500
  return new ApiError(status, e.message)
}

/**
 * What git (or its start) says when a repository's folder is not where the request found it: a
 * rename or transfer moves the folder before its rows change, and a deletion removes it, while
 * requests that looked the repository up before run git at the old place. Such a request is
 * answered 503 with Retry-After: asked again, it finds the repository where it is now (a renamed
 * one's old name redirects), or finds it gone (404).
 */
const FOLDER_GONE = /not a git repository|cannot start git: .*ENOENT|the repository's folder is missing/

/** Whether an error is a git run in a repository folder that was moved or removed meanwhile (FOLDER_GONE). */
export const folderGone = (e: unknown): boolean => e instanceof Error && FOLDER_GONE.test(e.message)

/** The answer to such a request. */
export const folderGoneError = () =>
  new ApiError(503, 'The repository was moved or deleted while this request was answered; try again', {}, { 'Retry-After': '1' })

/** The `WWW-Authenticate` challenge of each request whose routes ask for one (setChallenge). */
const challenges = new WeakMap<Request, string>()

/**
 * Makes a 401 to `request` carry `challenge` as its `WWW-Authenticate` header (the package
 * registry asks for Basic credentials, as Gitea's): declared by the routes that want it, added by
 * the app's error handler (challengeOf).
 */
export function setChallenge(request: Request, challenge: string): void {
  challenges.set(request, challenge)
}

/** The headers a 401 to `request` carries: its routes' challenge, if they set one. */
export function challengeOf(request: Request): Record<string, string> {
  const challenge = challenges.get(request)
  return challenge ? { 'www-authenticate': challenge } : {}
}
