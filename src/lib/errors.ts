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
 * client is gone), a failure 500 with git's own first error line (no server paths).
 */
export function apiErrorOfGit(e: GitError): ApiError {
  const status = e.kind === 'timeout' ? 504 : e.kind === 'aborted' ? 503 : 500
  return new ApiError(status, e.message)
}

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
