import { Elysia } from 'elysia'
import { openapi } from '@elysiajs/openapi'
import type { AppDeps } from './deps'
import { ApiError, badRequest, unprocessable } from './lib/errors'
import { formObject, readBodyBounded } from './lib/body'
import { docsUrl } from './lib/urls'
import { WARREN_VERSION } from './version'
import { docsAssetsModule } from './modules/docs'
import { miscModule } from './modules/misc'
import { usersModule } from './modules/users'
import { reposModule } from './modules/repos'
import { adminModule } from './modules/admin'
import { keysModule } from './modules/keys'
import { markdownModule } from './modules/markdown'
import { branchesModule } from './modules/branches'
import { filesModule } from './modules/files'
import { collaboratorsModule } from './modules/collaborators'
import { orgsModule } from './modules/orgs'
import { teamsModule } from './modules/teams'
import { issuesModule } from './modules/issues'
import { commentsModule } from './modules/comments'
import { labelsModule } from './modules/labels'
import { milestonesModule } from './modules/milestones'
import { timesModule } from './modules/times'
import { gitHttpModule } from './modules/git-http'

/** Routes whose body is raw text whatever its Content-Type (their own `parse` reads it). */
const RAW_BODY_PATHS = /^\/api\/v1\/markdown\/raw\/?$/

/**
 * Default largest body the API reads (JSON, forms, multipart, text; `config.maxApiBody` sets it).
 * Every body is counted as it arrives, whatever its framing, and refused with 413 past it. Git
 * packs stream into git with their own bound (`config.maxPushSize`, src/modules/git-http).
 */
export const MAX_API_BODY = 32 * 1024 * 1024

/** Where the OpenAPI document is served. */
const SPEC_PATH = '/swagger.v1.json'

/** A route as the OpenAPI hook needs it: method, Elysia path and the body schema. */
type RouteInfo = { method: string; path: string; hooks?: { body?: unknown } }

/**
 * Completes the OpenAPI document (in place: the plugin caches it):
 * - the plugin documents every string response as `text/plain`; a route whose answer has another
 *   media type (markdown → `text/html`) names it in `detail['x-content-type']`;
 * - the lenient body parser below is a function, so the plugin cannot tell a route's media type
 *   and leaves `requestBody.content` empty: it is filled from the route's own TypeBox schema
 *   (JSON for objects, `text/plain` for strings).
 */
function completeDocument(doc: any, routes: RouteInfo[]): void {
  const bodies = new Map<string, unknown>()
  for (const route of routes)
    if (route.hooks?.body) bodies.set(`${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, '{$1}')}`, route.hooks.body)
  for (const [path, operations] of Object.entries<any>(doc?.paths ?? {}))
    for (const [method, op] of Object.entries<any>(operations)) {
      const type = op?.['x-content-type']
      if (typeof type === 'string') {
        for (const response of Object.values<any>(op.responses ?? {}))
          if (response?.content?.['text/plain']) response.content = { [type]: response.content['text/plain'] }
        delete op['x-content-type']
      }
      const body = bodies.get(`${method} ${path}`)
      if (op?.requestBody && Object.keys(op.requestBody.content ?? {}).length === 0 && body) {
        const schema = JSON.parse(JSON.stringify(body))
        op.requestBody.content = { [schema.type === 'string' ? 'text/plain' : 'application/json']: { schema } }
      }
    }
}

/** Reads a validation error as Gitea's `[Field]: problem` message. */
function validationMessage(error: any): { message: string; errors: unknown[] } {
  const all: any[] = Array.isArray(error?.all) ? error.all : []
  const errors = all.map((e) => {
    const field = String(e.path ?? '').replace(/^\//, '').replace(/\//g, '.') || error?.type || 'body'
    return { fieldNames: [field], classification: 'ValidationError', message: e.summary ?? e.message }
  })
  const first = errors[0] as { fieldNames: string[]; message: string } | undefined
  const where = error?.type === 'body' ? '' : `${error?.type ?? ''} `
  const message = first ? `${where}[${first.fieldNames[0]}]: ${first.message}` : 'Invalid request'
  return { message, errors }
}

/**
 * The root app. Every API area is its own Elysia instance under /api/v1; git over HTTP and the
 * docs live outside it. Tests call `createApp(deps).handle(request)`.
 */
export function createApp(deps: AppDeps) {
  const { config } = deps
  const errorBody = (set: any, status: number, message: string, extra: Record<string, unknown> = {}) => {
    set.status = status
    set.headers['content-type'] = 'application/json; charset=utf-8'
    const body: Record<string, unknown> = { message, url: docsUrl(config), ...extra }
    // An extra key set to undefined removes it (Gitea's sudo refusal has no `url`).
    for (const key of Object.keys(extra)) if (extra[key] === undefined) delete body[key]
    return body
  }
  const api = new Elysia({ prefix: '/api/v1' })
    .use(miscModule(deps))
    .use(markdownModule(deps))
    .use(usersModule(deps))
    .use(keysModule(deps))
    .use(adminModule(deps))
    .use(reposModule(deps))
    .use(branchesModule(deps))
    .use(filesModule(deps))
    .use(collaboratorsModule(deps))
    .use(orgsModule(deps))
    .use(teamsModule(deps))
    .use(issuesModule(deps))
    .use(commentsModule(deps))
    .use(labelsModule(deps))
    .use(milestonesModule(deps))
    .use(timesModule(deps))

  const app: Elysia<any, any, any, any, any, any, any> = new Elysia()
    .onError({ as: 'global' }, ({ code, error, set }) => {
      if (error instanceof ApiError) {
        Object.assign(set.headers, error.headers)
        return errorBody(set, error.status, error.message, error.extra)
      }
      // Elysia wraps what a parser throws (e.g. the 413 of an oversized body) in a ParseError.
      const cause = (error as any)?.cause
      if (code === 'PARSE' && cause instanceof ApiError) return errorBody(set, cause.status, cause.message, cause.extra)
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
          console.error('internal error:', error)
          return errorBody(set, 500, 'Internal server error')
      }
    })
    .onParse({ as: 'global' }, async ({ request, contentType, path }) => {
      const type = contentType.toLowerCase()
      // git smart HTTP bodies (packs) stay unread: the git-http module streams them into git.
      if (type.startsWith('application/x-git-')) return
      const bytes = await readBodyBounded(request, config.maxApiBody)
      // Routes that read their body as raw text (RAW_BODY_PATHS) get it whatever its type.
      if (RAW_BODY_PATHS.test(path)) return new TextDecoder().decode(bytes)
      if (type.startsWith('application/x-www-form-urlencoded')) return formObject(new URLSearchParams(new TextDecoder().decode(bytes)))
      if (type.startsWith('multipart/')) {
        // The boundary is in the full header (Elysia's `contentType` stops at ';').
        const form = await new Response(bytes, { headers: { 'content-type': request.headers.get('content-type') ?? '' } }).formData().catch(() => {
          throw badRequest('The request body is not valid multipart form data')
        })
        return formObject(form)
      }
      // Gitea clients send JSON with or without a Content-Type (the 2017 SDK omits it on some
      // calls), so a body that is not a form is read as JSON whatever its type, text/plain too
      // (options.md §0).
      const text = new TextDecoder().decode(bytes)
      if (text.trim() === '') return {}
      const parsed = JSON.parse(text)
      // Every API body is an object: Elysia would coerce an array or a scalar to `{}` and run
      // the route as if no field had been sent (`null` already fails validation).
      if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed))) throw unprocessable('Expected object', 'body')
      return parsed
    })
    .use(
      // The hook is local to this wrapper: it runs on the document's route only.
      new Elysia({ name: 'openapi-document' }).onAfterHandle(({ response }) => completeDocument(response, app.routes as RouteInfo[])).use(openapi({
        path: '/api/swagger',
        specPath: SPEC_PATH,
        provider: 'swagger-ui',
        swagger: {
          cdn: '/api/swagger/assets/swagger-ui-bundle.js',
          theme: '/api/swagger/assets/swagger-ui.css',
          // The plugin would point the page at "swagger.v1.json" relative to /api/swagger, i.e.
          // /api/swagger.v1.json, which does not exist: name the document's real place.
          url: `${new URL(config.baseUrl).pathname}swagger.v1.json`,
        } as any,
        documentation: {
          info: { title: 'Warren API', version: WARREN_VERSION, description: 'Gitea-compatible API of Warren.', license: { name: 'MIT' } },
          servers: [{ url: config.baseUrl.replace(/\/$/, '') }],
        },
      })),
    )
    .use(docsAssetsModule())
    .use(api)
    .use(gitHttpModule(deps))
  return app
}

