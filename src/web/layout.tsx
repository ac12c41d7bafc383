/** @jsxImportSource warren-jsx */
import type { Child, Html } from 'warren-jsx/jsx-runtime'
import { WARREN_VERSION } from '../version'
import { docsUrl } from '../lib/urls'
import { SCRIPT_PATH, STYLESHEET_PATH } from './assets'
import type { WebContext } from './context'

/**
 * The one page frame: header with the sign-in state, the page, the footer. `enhanced`: the page
 * loads the enhancement script (pages without anything it enhances load no script at all).
 */
/** A page's feed, offered to feed readers in its head (Gitea's `<link rel="alternate">`): the address of its RSS form; Atom's is the same ending `.atom` or under `/atom/`. */
export interface PageFeed {
  title: string
  rss: string
}

/** The Atom address beside an RSS one (`….rss` → `….atom`, `…/rss/…` → `…/atom/…`). */
export const atomOf = (rss: string) => (rss.endsWith('.rss') ? rss.slice(0, -4) + '.atom' : rss.replace(/\/rss\//, '/atom/'))

export function Layout(props: { ctx: WebContext | null; title: string; enhanced?: boolean; feed?: PageFeed; children?: Child }): Html {
  const { ctx } = props
  const user = ctx?.caller.user
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{props.title} · Warren</title>
        <link rel="stylesheet" href={STYLESHEET_PATH} />
        {props.feed ? (
          <>
            <link rel="alternate" type="application/rss+xml" title={props.feed.title} href={props.feed.rss} />
            <link rel="alternate" type="application/atom+xml" title={props.feed.title} href={atomOf(props.feed.rss)} />
          </>
        ) : null}
        {props.enhanced ? <script src={SCRIPT_PATH} defer></script> : null}
      </head>
      <body>
        <header class="site-header">
          <a class="brand" href="/">Warren</a>
          <a href="/explore/repos">Explore</a>
          {user && ctx ? (
            <>
              <details class="new-menu">
                <summary>New</summary>
                <ul>
                  <li>
                    <a href="/repo/create">New repository</a>
                  </li>
                  <li>
                    <a href="/repo/migrate">New migration</a>
                  </li>
                  <li>
                    <a href="/org/create">New organisation</a>
                  </li>
                </ul>
              </details>
              <a href="/notifications">Notifications</a>
              {user.isAdmin ? <a href="/-/admin">Site administration</a> : null}
              <a href={`/${encodeURIComponent(user.name)}`}>{user.name}</a>
              <form method="post" action="/user/logout">
                <input type="hidden" name="_csrf" value={ctx.csrf ?? ''} />
                <button type="submit">Sign out</button>
              </form>
            </>
          ) : (
            <>
              {ctx?.config.webRegistration ? <a href="/user/sign_up">Register</a> : null}
              <a href={ctx && ctx.path !== '/' && !ctx.path.startsWith('/user/') ? `/user/login?redirect_to=${encodeURIComponent(ctx.path)}` : '/user/login'}>Sign in</a>
            </>
          )}
        </header>
        <main id="main">{props.children}</main>
        <footer class="site-footer">
          Warren {WARREN_VERSION} · <a href={ctx ? docsUrl(ctx.config) : '/api/swagger'}>API</a>
        </footer>
      </body>
    </html>
  )
}
