import { Elysia, NotFoundError } from 'elysia'
import { databaseUnavailable, referenceGone, UNAVAILABLE_RETRY_AFTER } from './db/unavailable'
import type { AppDeps } from './deps'
import { ApiError, apiErrorOfGit, challengeOf, notFound } from './lib/errors'
import { GitError } from './git/run'
import { checkStorable, hasNul, readsBody } from './lib/body'
import { docsUrl } from './lib/urls'
import { errorFields, loggerOf } from './lib/log'
import { openapiDocument, type RouteInfo } from './edge/openapi-document'
import { bodyParser } from './edge/body-parser'
import { docsAssetsModule } from './modules/docs'
import { webRefusal } from './web/errors'
import { area, pipeline, type Area } from './auth/pipeline'
import { miscModule } from './modules/misc'
import { usersModule } from './modules/users'
import { reposModule } from './modules/repos'
import { forksModule } from './modules/forks'
import { adminModule } from './modules/admin'
import { keysModule } from './modules/keys'
import { markdownModule } from './modules/markdown'
import { branchesModule } from './modules/branches'
import { tagsModule } from './modules/tags'
import { filesModule } from './modules/files'
import { contentsModule } from './modules/contents'
import { collaboratorsModule } from './modules/collaborators'
import { orgsModule } from './modules/orgs'
import { teamsModule } from './modules/teams'
import { issuesModule } from './modules/issues'
import { issueDependenciesModule } from './modules/issue-dependencies'
import { issuePinsModule } from './modules/issue-pins'
import { commentsModule } from './modules/comments'
import { issueAttachmentsModule } from './modules/attachments'
import { reactionsModule } from './modules/reactions'
import { issueTemplatesModule } from './modules/issue-templates'
import { licensesModule } from './modules/licenses'
import { labelsModule } from './modules/labels'
import { milestonesModule } from './modules/milestones'
import { timesModule } from './modules/times'
import { starsModule } from './modules/stars'
import { blocksModule } from './modules/blocks'
import { activitiesModule } from './modules/activities'
import { subscriptionsModule } from './modules/subscriptions'
import { notificationsModule } from './modules/notifications'
import { topicsModule } from './modules/topics'
import { settingsModule } from './modules/settings'
import { gitHttpModule } from './modules/git-http'
import { lfsModule } from './modules/lfs'
import { deployKeysModule } from './modules/deploy-keys'
import { actionsModule } from './modules/actions'
import { protectionsModule } from './modules/protections'
import { statusesModule } from './modules/statuses'
import { migrationsModule } from './modules/migrations'
import { pullsModule } from './modules/pulls'
import { reviewsModule } from './modules/reviews'
import { releaseDownloadsModule, releasesModule } from './modules/releases'
import { wikiModule } from './modules/wiki'
import { hooksModule } from './modules/hooks'
import { gitHooksModule } from './modules/git-hooks'
import { commitsModule } from './modules/commits'
import { gitDataModule } from './modules/git-data'
import { oauth2Module, oauth2ProviderModule } from './modules/oauth2'
import { avatarFilesModule, avatarsModule } from './modules/avatars'
import { packageRegistryModule, packagesModule } from './modules/packages'

/** Reads a validation error as Gitea's `[Field]: problem` message. */
function validationMessage(error: any): { message: string; errors: unknown[] } {
  // A value that fails while it is decoded (a comma list the query turns into an array) comes as
  // TypeBox's decode error, with its one error in `error`.
  const all: any[] = Array.isArray(error?.all) && error.all.length ? error.all : error?.error?.path !== undefined ? [error.error] : []
  const errors = all.map((e) => {
    const field = String(e.path ?? '').replace(/^\//, '').replace(/\//g, '.') || error?.type || 'body'
    // A schema's own `error` (enumerations say their values) before TypeBox's generic wording.
    const message = typeof e.schema?.error === 'string' ? e.schema.error : (e.summary ?? e.message)
    const named = /^\[([^\]]+)\]:/.exec(message)
    return { fieldNames: [named ? named[1] : field], classification: 'ValidationError', message }
  })
  const first = errors[0] as { fieldNames: string[]; message: string } | undefined
  const where = error?.type === 'body' || !error?.type ? '' : `${error.type} `
  // A schema's own message may name its field itself (`[field]: …`), for errors that carry no path.
  const message = first ? (first.message.startsWith('[') ? `${where}${first.message}` : `${where}[${first.fieldNames[0]}]: ${first.message}`) : 'Invalid request'
  return { message, errors }
}

/** A request's query without `sudo` (the caller's resolution answers a NUL there as an unknown user). */
function queryFilters(query: unknown): Record<string, unknown> {
  const { sudo: _, ...filters } = (query ?? {}) as Record<string, unknown>
  return filters
}

/** Paths of the API, whose unknown ones are never a page's. */
const API_PATH = '/api/'
/** The API's app's route of what none of its others serves: handed to the web pages' app (createApp). */
const TO_PAGES = '/*'

/** A browser's request (HTML first in Accept) for a path outside the API. */
const wantsPage = (request: Request) =>
  /^\s*text\/html/i.test(request.headers.get('accept') ?? '') && !new URL(request.url).pathname.startsWith(API_PATH)

/**
 * What every request goes through at the edge, on the API's app and on the web pages' alike
 * (`as: 'global'`: every route of the instances it is given): errors answered in the API's shape
 * or as pages, the one body parser, a NUL in the path not found, bodies and queries storable.
 * `pages`: the web pages' app, every error of which is a page, those before its pipeline has
 * taken the session too (a body it cannot parse, a NUL in the path), where they were the API's JSON.
 */
function withEdgeHooks(app: AnyElysia, deps: AppDeps, routes: () => RouteInfo[], pages = false): AnyElysia {
  const { config } = deps
  const log = loggerOf(config)
  const apiErrorBody = (set: any, status: number, message: string, extra: Record<string, unknown> = {}) => {
    set.status = status
    set.headers['content-type'] = 'application/json; charset=utf-8'
    const body: Record<string, unknown> = { message, url: docsUrl(config), ...extra }
    // An extra key set to undefined removes it (Gitea's sudo refusal has no `url`).
    for (const key of Object.keys(extra)) if (extra[key] === undefined) delete body[key]
    return body
  }
  return app
    .onError({ as: 'global' }, async ({ code, error: thrown, set, request }) => {
      const raised = thrown instanceof GitError ? apiErrorOfGit(thrown) : thrown
      // A refusal beneath a wrapper answers as itself: Elysia wraps what a parser throws (the 413 of
      // an oversized body) in a ParseError, Drizzle what a driver throws (db/read-thread.ts's 503).
      const cause = (raised as any)?.cause
      const error = !(raised instanceof ApiError) && cause instanceof ApiError ? cause : raised
      // Web pages (and a browser's request for a path nothing serves) answer error pages.
      const web = pages || deps.auth.sessionAccepted(request) || (code === 'NOT_FOUND' && wantsPage(request))
      // A page's refusal is drawn for its visitor (signed in, the header says so): the one its
      // pipeline found, or, refused before the pipeline (a query failing validation), the one its
      // session cookie names.
      const caller = !web
        ? undefined
        : deps.auth.sessionAccepted(request)
          ? await deps.auth.callerFound(request)
          : pages && request.headers.has('cookie')
            ? await deps.auth.sessionCaller(request)
            : undefined
      const errorBody = (set: any, status: number, message: string, extra: Record<string, unknown> = {}) =>
        web ? webRefusal(request, status, message, set.headers, caller && { config, caller }) : apiErrorBody(set, status, message, extra)
      if (error instanceof ApiError) {
        if (error.status === 401) Object.assign(set.headers, challengeOf(request))
        Object.assign(set.headers, error.headers)
        return errorBody(set, error.status, error.message, error.extra)
      }
      switch (code) {
        case 'VALIDATION': {
          const { message, errors } = validationMessage(error)
          return errorBody(set, 422, message, { errors })
        }
        case 'PARSE':
          return errorBody(set, 400, 'The request body is not valid JSON')
        case 'NOT_FOUND':
          return errorBody(set, 404, "The target couldn't be found.")
        default:
          // The database refused or lost the connection (too many clients, the server down): the
          // request may be retried, as after a long write-lock wait.
          if (databaseUnavailable(error)) {
            log.warn('database unavailable', { method: request.method, path: new URL(request.url).pathname, ...errorFields(error) })
            set.headers['retry-after'] = UNAVAILABLE_RETRY_AFTER
            return errorBody(set, 503, 'The database is unavailable; try again')
          }
          // A write named a row deleted meanwhile (a foreign key violation): what the request
          // refers to is gone, and nothing was written.
          if (referenceGone(error)) {
            log.warn('referenced row deleted meanwhile', { method: request.method, path: new URL(request.url).pathname, ...errorFields(error) })
            return errorBody(set, 404, 'What this request refers to no longer exists (it was deleted meanwhile)')
          }
          // With its request, so the line says what was being answered.
          log.error('internal error', { method: request.method, path: new URL(request.url).pathname, ...errorFields(error) })
          return errorBody(set, 500, 'Internal server error')
      }
    })
    .onParse({ as: 'global' }, bodyParser(config, routes) as never)
    // A NUL character names nothing that can be stored: such a path is not found (checked before
    // the pipeline resolves the path's owner, repository or team).
    // (Not on the route handing a request to the web pages' app, which checks it with its page's
    // route, so that a refusal there is a page's.)
    .onTransform({ as: 'global' }, ({ params, route }) => {
      if (route !== TO_PAGES && hasNul(params as Record<string, unknown>)) throw notFound()
    })
    // Bodies and queries hold only what every database can store (checkStorable), checked once
    // validated, so numbers the schemas made of strings are checked too (the pages' app's own).
    .onBeforeHandle({ as: 'global' }, ({ body, query, route }) => {
      if (route === TO_PAGES) return
      if (body !== null && typeof body === 'object') checkStorable(body)
      checkStorable(queryFilters(query))
    })
}

/**
 * The apps' handler reads a request's path from its URL after `http://` (the server speaks plain
 * HTTP): Elysia's default looks for the path's slash from the 12th character on, which takes a
 * Host of three characters or fewer (`Host: x`) for part of the path, so `/ab/api/v1/user` was
 * routed as `/api/v1/user` while everything reading the URL saw the first (a fuzzer's finding).
 */
const ELYSIA_OPTIONS = { handler: { standardHostname: false } }

/** An Elysia instance of any routes. */
type AnyElysia = Elysia<any, any, any, any, any, any, any>

/**
 * The web pages' app (src/web/index.ts), made at the first request the API's app leaves to it:
 * the pages' code (a third of the bundle's start) is neither loaded nor registered by a server
 * that has not been asked for a page. Behind the same edge hooks; their routes are theirs (none
 * is shadowed: the API's app holds no route of a page's shape, test/route-table.test.ts).
 */
function webAppOf(deps: AppDeps): () => Promise<AnyElysia> {
  let made: Promise<AnyElysia> | undefined
  return () =>
    (made ??= import('./web').then(({ webAreas }) => {
      const web: AnyElysia = withEdgeHooks(new Elysia(ELYSIA_OPTIONS), deps, () => web.routes as RouteInfo[], true)
      addAreas(web, deps, webAreas, { session: true })
      return web
    }).catch((e) => {
      // Tried again at the next request (a failure here is a bug, logged as every 500 is).
      made = undefined
      throw e
    }))
}

/** How many hooks of its own (every kind) the app holds: an area adds none. */
const hooksOf = (app: AnyElysia) => Object.values(app.event as Record<string, unknown[] | undefined>).reduce((n, list) => n + (list?.length ?? 0), 0)

/**
 * Areas of routes, each adding its routes to the app itself (the API's: `area`, under the API's
 * prefix, with its OpenAPI details; the web pages' groups: `pageGroup`), the pipeline's needs
 * given to the app once (with the web session for pages, `session`); the app's own prefix and
 * details are put back after each. An area that added a hook to the app itself (which would reach
 * every route added after it) stops the start: its routes need an instance of their own.
 */
export function addAreas(app: AnyElysia, deps: AppDeps, areas: Area[], opts: { session?: boolean } = {}): void {
  app.use(pipeline(deps, opts))
  const hooks = hooksOf(app)
  for (const add of areas) {
    add(deps, app)
    // The app's own again: no prefix, no details.
    area(app, undefined, '')
    if (hooksOf(app) !== hooks) throw new Error(`an area of routes (${add.name || 'unnamed'}) added a hook to the app itself`)
  }
}

/**
 * The root app. The API's areas add their routes to it under /api/v1 (addAreas); git over HTTP
 * and the docs live outside it; the web pages are an app of their own (webAppOf), given what no route of
 * this one serves outside /api/. Tests call `createApp(deps).handle(request)`.
 */
export function createApp(deps: AppDeps): AnyElysia & { webApp: () => Promise<AnyElysia> } {
  const { config } = deps
  const app: AnyElysia = withEdgeHooks(new Elysia(ELYSIA_OPTIONS), deps, () => app.routes as RouteInfo[])
    .use(openapiDocument(config, () => app))
    .use(docsAssetsModule())
  addAreas(app, deps, [
    miscModule,
    markdownModule,
    usersModule,
    keysModule,
    adminModule,
    reposModule,
    topicsModule,
    settingsModule,
    migrationsModule,
    forksModule,
    branchesModule,
    tagsModule,
    filesModule,
    contentsModule,
    collaboratorsModule,
    orgsModule,
    teamsModule,
    issuesModule,
    issueDependenciesModule,
    issuePinsModule,
    reactionsModule,
    issueTemplatesModule,
    licensesModule,
    commentsModule,
    issueAttachmentsModule,
    labelsModule,
    milestonesModule,
    timesModule,
    starsModule,
    blocksModule,
    activitiesModule,
    subscriptionsModule,
    notificationsModule,
    deployKeysModule,
    actionsModule,
    protectionsModule,
    statusesModule,
    pullsModule,
    reviewsModule,
    releasesModule,
    wikiModule,
    gitHooksModule,
    hooksModule,
    commitsModule,
    gitDataModule,
    // Its routes share a hook of their own (OAuth2 turned off): an instance of its own.
    (deps, app) => app.use(oauth2Module(deps)),
    avatarsModule,
    packagesModule,
  ])
  app
    .use(gitHttpModule(deps))
    .use(lfsModule(deps))
    .use(releaseDownloadsModule(deps))
    .use(packageRegistryModule(deps))
    .use(avatarFilesModule(deps))
    .use(oauth2ProviderModule(deps))
  // What no route above serves: the API's unknown paths answer its 404; the others are the web
  // pages' to answer (their body read there, not here).
  const webApp = webAppOf(deps)
  app.all(
    TO_PAGES,
    async ({ request }) => {
      if (new URL(request.url).pathname.startsWith(API_PATH)) throw new NotFoundError()
      return await (await webApp()).handle(request)
    },
    { detail: { hide: true, ...readsBody('unread') } },
  )
  return Object.assign(app, { webApp })
}
