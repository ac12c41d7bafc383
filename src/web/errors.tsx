/** @jsxImportSource warren-jsx */
import { Layout } from './layout'
import { htmlResponse, webContext, type WebContext } from './context'
import type { Config } from '../config'
import type { Caller } from '../auth/caller'
import { signInUrl } from './links'

const TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Sign in required',
  403: 'Forbidden',
  404: 'Page not found',
  413: 'Too large',
  422: 'Invalid request',
  429: 'Too many requests',
  500: 'Internal server error',
  503: 'Service unavailable',
}

/**
 * An error as a page (web routes answer pages, never the API's JSON). The message is shown for
 * the 4xx answers, which say what to change; a 5xx says only what happened.
 */
export function errorPage(status: number, message: string, ctx: WebContext | null = null, headers: Record<string, string> = {}): Response {
  const title = TITLES[status] ?? (status >= 500 ? 'Server error' : 'Request refused')
  const detail = status === 404 ? 'There is nothing here, or you may not see it.' : status >= 500 ? 'Something went wrong on our side.' : message
  return htmlResponse(
    <Layout ctx={ctx} title={title}>
      <h1>
        {status} · {title}
      </h1>
      <p>{detail}</p>
      <p>
        <a href="/">Go to the home page</a>
      </p>
    </Layout>,
    status,
    headers,
  )
}

/** To the sign-in page, back to `path` once signed in (a See Other: what follows is a GET). */
export const signInRedirect = (path: string): Response => new Response(null, { status: 303, headers: { location: signInUrl(path) } })

/**
 * A web request's refusal, as `app.ts` answers it: a page needing a signed-in visitor sends one
 * who is not to the sign-in page and back (Gitea's `reqSignIn`), when the request is a plain
 * visit (a GET without credentials of its own: a form's POST, or a request whose Authorization
 * header failed, is told why instead); anything else is an error page, drawn for the visitor
 * the request was found to be (`seen`: its caller, when the pipeline got that far) as every page.
 */
export function webRefusal(request: Request, status: number, message: string, headers: Record<string, string> = {}, seen?: { config: Config; caller: Caller }): Response {
  if (status === 401 && (request.method === 'GET' || request.method === 'HEAD') && !request.headers.has('authorization')) {
    const url = new URL(request.url)
    return signInRedirect(url.pathname + url.search)
  }
  return errorPage(status, message, seen ? webContext(seen.config, request, seen.caller) : null, headers)
}
