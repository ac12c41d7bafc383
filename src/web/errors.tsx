import { Layout } from './layout'
import { htmlResponse, type WebContext } from './context'

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
