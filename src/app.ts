import { Elysia } from 'elysia'
import { databaseUnavailable, UNAVAILABLE_RETRY_AFTER } from './db/unavailable'
import { openapi } from '@elysiajs/openapi'
import type { AppDeps } from './deps'
import { ApiError, apiErrorOfGit, badRequest, notFound, unprocessable } from './lib/errors'
import { GitError } from './git/run'
import { checkStorable, formObject, hasNul, jsonNestsDeeper, readBodyBounded, tooDeep } from './lib/body'
import { docsUrl } from './lib/urls'
import { errorFields, loggerOf } from './lib/log'
import { WARREN_VERSION } from './version'
import { docsAssetsModule, rootModule } from './modules/docs'
import { miscModule } from './modules/misc'
import { usersModule } from './modules/users'
import { reposModule } from './modules/repos'
import { forksModule } from './modules/forks'
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
import { starsModule } from './modules/stars'
import { GIT_RPC_PATH, gitHttpModule } from './modules/git-http'
import { deployKeysModule } from './modules/deploy-keys'
import { statusesModule } from './modules/statuses'
import { migrationsModule } from './modules/migrations'
import { pullsModule } from './modules/pulls'
import { ASSET_UPLOAD_PATH, releaseDownloadsModule, releasesModule } from './modules/releases'
import { hooksModule } from './modules/hooks'

/** Routes whose body is raw text whatever its Content-Type (their own `parse` reads it). */
const RAW_BODY_PATHS = /^\/api\/v1\/markdown\/raw\/?$/

/** Where the OpenAPI document is served. */
const SPEC_PATH = '/swagger.v1.json'

const SUDO = 'Sudo API request as the user provided as the key. Admin privileges are required.'
const QUERY_TOKEN = 'A token in the query string; prefer AuthorizationHeaderToken.'
/** How a caller proves who they are (src/auth/caller.ts), named as Gitea's swagger names them. */
const SECURITY_SCHEMES = {
  BasicAuth: { type: 'http', scheme: 'basic', description: 'User name (or e-mail) and password, or a token as the password' },
  Token: { type: 'apiKey', name: 'token', in: 'query', description: QUERY_TOKEN },
  AccessToken: { type: 'apiKey', name: 'access_token', in: 'query', description: QUERY_TOKEN },
  AuthorizationHeaderToken: { type: 'apiKey', name: 'Authorization', in: 'header', description: 'API tokens must be prepended with "token" followed by a space.' },
  SudoParam: { type: 'apiKey', name: 'sudo', in: 'query', description: SUDO },
  SudoHeader: { type: 'apiKey', name: 'Sudo', in: 'header', description: SUDO },
} as const

/** A route as the OpenAPI hook needs it: method, Elysia path and the body schema. */
type RouteInfo = { method: string; path: string; hooks?: { body?: unknown } }

/**
 * Completes the OpenAPI document (in place: the plugin caches it, so every step is idempotent):
 * - the plugin documents every string response as `text/plain`; a route whose answer has another
 *   media type (markdown → `text/html`) names it in `detail['x-content-type']`;
 * - the lenient body parser below is a function, so the plugin cannot tell a route's media type
 *   and leaves `requestBody.content` empty: it is filled from the route's own TypeBox schema
 *   (JSON for objects, `text/plain` for strings);
 * - one operation id, one operation: when several paths are served under one operation id (the
 *   seed's quirks beside Gitea's paths, endpoints.md), only the one registered last is documented
 *   and the others stay served. Modules register Gitea's path first, then the seed's spelling,
 *   so the document keeps the seed's (the API users asked for, whose ids we use);
 * - named records (`$id: '#/components/schemas/<Name>'` on a model's schema) become
 *   `components.schemas.<Name>`, referenced by `$ref` wherever they appear;
 * - enumerated fields (`literals()`: unions of string constants) read as `enum` lists.
 */
function completeDocument(doc: any, routes: RouteInfo[]): void {
  // The plugin answers the same cached object every time: complete it once.
  if (!doc?.paths || completed.has(doc)) return
  const bodies = new Map<string, unknown>()
  for (const route of routes)
    if (route.hooks?.body) bodies.set(`${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, '{$1}')}`, route.hooks.body)
  const documented = new Map<string, unknown>()
  for (const operations of Object.values<any>(doc?.paths ?? {}))
    for (const op of Object.values<any>(operations)) if (typeof op?.operationId === 'string') documented.set(op.operationId, op)
  for (const [path, operations] of Object.entries<any>(doc?.paths ?? {})) {
    for (const [method, op] of Object.entries<any>(operations)) {
      if (typeof op?.operationId === 'string' && documented.get(op.operationId) !== op) {
        delete operations[method]
        continue
      }
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
    if (Object.keys(operations).length === 0) delete doc.paths[path]
  }
  doc.components ??= {}
  const schemas: Record<string, any> = (doc.components.schemas ??= {})
  doc.paths = documentedSchemas(doc.paths, schemas)
  // An operation's own body and answers also carry their record's fields beside the `$ref`
  // (OpenAPI 3.1 allows siblings): one operation reads whole, its nested records by name.
  for (const operations of Object.values<any>(doc.paths))
    for (const op of Object.values<any>(operations))
      for (const holder of [op?.requestBody, ...Object.values<any>(op?.responses ?? {})])
        for (const media of Object.values<any>(holder?.content ?? {})) {
          const ref = media?.schema?.$ref
          if (typeof ref === 'string' && Object.keys(media.schema).length === 1 && ref.startsWith(COMPONENT_SCHEMA))
            media.schema = { $ref: ref, ...schemas[ref.slice(COMPONENT_SCHEMA.length)] }
        }
  completed.add(doc)
}

/** Documents already completed (the plugin answers the same cached object every time). */
const completed = new WeakSet<object>()

const COMPONENT_SCHEMA = '#/components/schemas/'

/**
 * A copy of `node` (schemas are never changed in place: routes validate with them) where named
 * schemas are hoisted into `schemas` and referenced, and unions of string constants are `enum`s.
 * A name already taken by a different schema stays inline, `$id` and all, for a test to catch.
 */
function documentedSchemas(node: unknown, schemas: Record<string, unknown>): any {
  if (Array.isArray(node)) return node.map((item) => documentedSchemas(item, schemas))
  if (!node || typeof node !== 'object') return node
  const { $id, ...rest } = node as Record<string, any>
  if (typeof rest.error === 'string') delete rest.error
  // Elysia marks a schema closed once a route has used it (a state, not the API: unknown keys
  // are ignored), which would make the copies of one record differ.
  if (rest.additionalProperties === false) delete rest.additionalProperties
  const members: any[] | undefined = Array.isArray(rest.anyOf) ? rest.anyOf : undefined
  if (members?.length && members.every((m) => typeof m?.const === 'string' && Object.keys(m).every((k) => k === 'const' || k === 'type'))) {
    const { anyOf: _members, ...others } = rest
    return { ...others, type: 'string', enum: members.map((m) => m.const) }
  }
  const copy: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(rest)) copy[key] = documentedSchemas(value, schemas)
  if (typeof $id !== 'string' || !$id.startsWith(COMPONENT_SCHEMA)) return $id === undefined ? copy : { $id, ...copy }
  // The plugin writes `t.Nullable(Record)` as the record plus `nullable: true` or a `null` type.
  const { nullable: nullableFlag, ...record } = copy
  const types = Array.isArray(record.type) ? (record.type as string[]) : undefined
  const nullable = nullableFlag === true || types?.includes('null') === true
  if (types) record.type = types.length === 2 ? types.find((type) => type !== 'null') : types.filter((type) => type !== 'null')
  const name = $id.slice(COMPONENT_SCHEMA.length)
  if (schemas[name] === undefined) schemas[name] = record
  else if (JSON.stringify(schemas[name]) !== JSON.stringify(record)) return { $id, ...copy }
  return nullable ? { anyOf: [{ $ref: $id }, { type: 'null' }] } : { $ref: $id }
}

/** Reads a validation error as Gitea's `[Field]: problem` message. */
function validationMessage(error: any): { message: string; errors: unknown[] } {
  const all: any[] = Array.isArray(error?.all) ? error.all : []
  const errors = all.map((e) => {
    const field = String(e.path ?? '').replace(/^\//, '').replace(/\//g, '.') || error?.type || 'body'
    // A schema's own `error` (enumerations say their values) before TypeBox's generic wording.
    const message = typeof e.schema?.error === 'string' ? e.schema.error : (e.summary ?? e.message)
    return { fieldNames: [field], classification: 'ValidationError', message }
  })
  const first = errors[0] as { fieldNames: string[]; message: string } | undefined
  const where = error?.type === 'body' ? '' : `${error?.type ?? ''} `
  const message = first ? `${where}[${first.fieldNames[0]}]: ${first.message}` : 'Invalid request'
  return { message, errors }
}

/** A request's query without `sudo` (the caller's resolution answers a NUL there as an unknown user). */
function queryFilters(query: unknown): Record<string, unknown> {
  const { sudo: _, ...filters } = (query ?? {}) as Record<string, unknown>
  return filters
}

/**
 * The root app. Every API area is its own Elysia instance under /api/v1; git over HTTP and the
 * docs live outside it. Tests call `createApp(deps).handle(request)`.
 */
export function createApp(deps: AppDeps) {
  const { config } = deps
  const log = loggerOf(config)
  /** The base URL's path (`/`, or `/warren/` behind a proxy that serves Warren there). */
  const basePath = new URL(config.baseUrl).pathname
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
    .use(migrationsModule(deps))
    .use(forksModule(deps))
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
    .use(starsModule(deps))
    .use(deployKeysModule(deps))
    .use(statusesModule(deps))
    .use(pullsModule(deps))
    .use(releasesModule(deps))
    .use(hooksModule(deps))

  const app: Elysia<any, any, any, any, any, any, any> = new Elysia()
    .onError({ as: 'global' }, ({ code, error: thrown, set, request }) => {
      const error = thrown instanceof GitError ? apiErrorOfGit(thrown) : thrown
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
          // The database refused or lost the connection (too many clients, the server down): the
          // request may be retried, as after a long write-lock wait.
          if (databaseUnavailable(error)) {
            log.warn('database unavailable', { method: request.method, path: new URL(request.url).pathname, ...errorFields(error) })
            set.headers['retry-after'] = UNAVAILABLE_RETRY_AFTER
            return errorBody(set, 503, 'The database is unavailable; try again')
          }
          // With its request, so the line says what was being answered.
          log.error('internal error', { method: request.method, path: new URL(request.url).pathname, ...errorFields(error) })
          return errorBody(set, 500, 'Internal server error')
      }
    })
    .onParse({ as: 'global' }, async ({ request, contentType, path }) => {
      const type = contentType.toLowerCase()
      // git smart HTTP bodies (packs) stay unread whatever their type: the git-http module
      // checks the type and streams them into git.
      if (GIT_RPC_PATH.test(path)) return {}
      if (type.startsWith('application/x-git-')) return
      // Release assets (multipart, up to maxAttachmentSize) stay unread too: their route streams them to disk.
      if (ASSET_UPLOAD_PATH.test(path)) return {}
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
      if (jsonNestsDeeper(bytes)) throw tooDeep()
      const parsed = JSON.parse(text)
      // Every API body is an object: Elysia would coerce an array or a scalar to `{}` and run
      // the route as if no field had been sent (`null` already fails validation).
      if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed))) throw unprocessable('Expected object', 'body')
      return parsed
    })
    // A NUL character names nothing that can be stored: such a path is not found (checked before
    // the pipeline resolves the path's owner, repository or team).
    .onTransform({ as: 'global' }, ({ params }) => {
      if (hasNul(params as Record<string, unknown>)) throw notFound()
    })
    // Bodies and queries hold only what every database can store (checkStorable), checked once
    // validated, so numbers the schemas made of strings are checked too.
    .onBeforeHandle({ as: 'global' }, ({ body, query }) => {
      if (body !== null && typeof body === 'object') checkStorable(body)
      checkStorable(queryFilters(query))
    })
    .use(
      // The hook is local to this wrapper: it runs on the document's route only.
      new Elysia({ name: 'openapi-document' }).onAfterHandle(({ response }) => completeDocument(response, app.routes as RouteInfo[])).use(openapi({
        path: '/api/swagger',
        specPath: SPEC_PATH,
        provider: 'swagger-ui',
        swagger: {
          // Under the base URL's path, as everything the page links to (a reverse proxy may serve
          // Warren under a path of its own).
          cdn: `${basePath}api/swagger/assets/swagger-ui-bundle.js`,
          theme: `${basePath}api/swagger/assets/swagger-ui.css`,
          // The plugin would point the page at "swagger.v1.json" relative to /api/swagger, i.e.
          // /api/swagger.v1.json, which does not exist: name the document's real place.
          url: `${basePath}swagger.v1.json`,
        } as any,
        documentation: {
          info: { title: 'Warren API', version: WARREN_VERSION, description: 'Gitea-compatible API of Warren.', license: { name: 'MIT' } },
          // Relative (the base URL's path only): the page's "Try it out" then calls the host the
          // page was opened on, whatever name or address that is, as Gitea's relative basePath does.
          servers: [{ url: basePath }],
          components: { securitySchemes: SECURITY_SCHEMES },
          // Any one of them (Gitea's swagger lists them the same way); routes open to anonymous
          // callers simply ignore absent credentials.
          security: Object.keys(SECURITY_SCHEMES).map((name) => ({ [name]: [] })),
        },
      })),
    )
    .use(docsAssetsModule())
    .use(rootModule(config))
    .use(api)
    .use(gitHttpModule(deps))
    .use(releaseDownloadsModule(deps))
  return app
}

