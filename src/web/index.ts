import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { webAssets } from './assets'
import { signInRoutes } from './sign-in'
import { peoplePages } from './pages/people'
import { repoPages } from './pages/repo'
import { commitPages } from './pages/commits'
import { refPages } from './pages/refs'
import { comparePages } from './pages/compare'

export { errorPage } from './errors'

/**
 * The web interface: server-rendered pages at Gitea's URLs, outside /api/v1, from the same
 * services, converters and pipeline as the API (`pipeline(deps, { session: true })`: the session
 * cookie counts here and nowhere else). A new page is a route in `pages/`, added below.
 */
export const webModule = (deps: AppDeps) =>
  new Elysia({ name: 'web' })
    .use(webAssets())
    .use(signInRoutes(deps))
    .use(peoplePages(deps))
    .use(repoPages(deps))
    .use(commitPages(deps))
    .use(refPages(deps))
    .use(comparePages(deps))
