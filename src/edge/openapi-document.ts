import { Elysia } from 'elysia'
import type { Config } from '../config'
import { WARREN_VERSION } from '../version'

/*
 * The OpenAPI document of the API and its page (`/api/swagger`): the routes read by
 * @elysiajs/openapi's `toOpenAPISchema`, completed from the routes themselves (what the plugin
 * cannot tell from Elysia's route list is filled in here), made when first asked for.
 */

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
  TOTPHeader: { type: 'apiKey', name: 'X-GITEA-OTP', in: 'header', description: 'Must be used in combination with BasicAuth if two-factor authentication is enabled.' },
} as const

/** A route as the OpenAPI hook needs it: method, Elysia path and the body schema. */
export type RouteInfo = { method: string; path: string; hooks?: { body?: unknown; detail?: Record<string, unknown> } }

/**
 * Completes the OpenAPI document (in place):
 * - the plugin documents every string response as `text/plain`; a route whose answer has another
 *   media type (markdown → `text/html`) names it in `detail['x-content-type']`;
 * - the body parser (edge/body-parser.ts) is a function, so the plugin cannot tell a route's media type
 *   and leaves `requestBody.content` empty: it is filled from the route's own TypeBox schema
 *   (JSON for objects, `text/plain` for strings);
 * - named records (`$id: '#/components/schemas/<Name>'` on a model's schema) become
 *   `components.schemas.<Name>`, referenced by `$ref` wherever they appear;
 * - enumerated fields (`literals()`: unions of string constants) read as `enum` lists.
 */
function completeDocument(doc: any, routes: RouteInfo[]): void {
  if (!doc?.paths) return
  const bodies = new Map<string, unknown>()
  for (const route of routes)
    if (route.hooks?.body) bodies.set(`${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, '{$1}')}`, route.hooks.body)
  for (const [path, operations] of Object.entries<any>(doc?.paths ?? {})) {
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
}

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
  // are ignored), which would make the copies of one record differ; a record left open for the
  // cost of checking (repos/model.ts RepositorySchema) is not a different record either.
  if (typeof rest.additionalProperties === 'boolean') delete rest.additionalProperties
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

/** What the document says of itself (the plugin's `documentation`), before the routes' paths. */
function documentation(basePath: string) {
  return {
    info: { title: 'Warren API', description: 'Gitea-compatible API of Warren.', version: WARREN_VERSION, license: { name: 'MIT' } },
    // Relative (the base URL's path only): the page's "Try it out" then calls the host the
    // page was opened on, whatever name or address that is, as Gitea's relative basePath does.
    servers: [{ url: basePath }],
    components: { securitySchemes: SECURITY_SCHEMES } as { securitySchemes: typeof SECURITY_SCHEMES; schemas?: Record<string, unknown> },
    // Any one of them (Gitea's swagger lists them the same way); routes open to anonymous
    // callers simply ignore absent credentials.
    security: Object.keys(SECURITY_SCHEMES).map((name) => ({ [name]: [] })),
  }
}

/** The OpenAPI version the document declares. */
const OPENAPI_VERSION = '3.1.2'

/** The app as the document reads it: its routes and models (Elysia's, read when the document is asked for). */
type DocumentedApp = Parameters<typeof import('@elysiajs/openapi').toOpenAPISchema>[0]

/**
 * The page at /api/swagger and the document at SPEC_PATH. Both are made when first asked for, not
 * at start: the plugin's code (@elysiajs/openapi and its schema conversions) is imported then, and
 * the document is built from `app()` (the whole app, its route list read then) and completed
 * (completeDocument) once; it is made again only if the routes changed since.
 */
export function openapiDocument(config: Config, app: () => DocumentedApp & { routes: RouteInfo[] }) {
  const basePath = new URL(config.baseUrl).pathname
  const doc = documentation(basePath)
  let page: Promise<string> | undefined
  let made: { routes: number; text: Promise<string> } | undefined
  const makeDocument = async (): Promise<string> => {
    const { toOpenAPISchema } = await import('@elysiajs/openapi')
    const { paths, components } = toOpenAPISchema(app(), undefined, undefined, undefined, OPENAPI_VERSION)
    // As the plugin assembles it (its own fields, then the routes' paths and schemas).
    const full = {
      ...doc,
      openapi: OPENAPI_VERSION,
      paths,
      components: { ...doc.components, schemas: { ...components.schemas, ...doc.components.schemas } },
    }
    completeDocument(full, app().routes)
    return JSON.stringify(full)
  }
  const makePage = async (): Promise<string> => {
    const { SwaggerUIRender } = await import('@elysiajs/openapi/swagger')
    return SwaggerUIRender(doc.info, {
      dom_id: '#swagger-ui',
      version: 'latest',
      autoDarkMode: true,
      // Under the base URL's path, as everything the page links to (a reverse proxy may serve
      // Warren under a path of its own).
      cdn: `${basePath}api/swagger/assets/swagger-ui-bundle.js`,
      theme: `${basePath}api/swagger/assets/swagger-ui.css`,
      // Relative to /api/swagger, "swagger.v1.json" would be /api/swagger.v1.json, which does not
      // exist: name the document's real place.
      url: `${basePath}swagger.v1.json`,
    } as any)
  }
  // A failed making is not kept: the next request tries again.
  const once = (make: () => Promise<string>, forget: () => void) => {
    const text = make()
    text.catch(forget)
    return text
  }
  return new Elysia({ name: 'openapi-document' })
    .get(
      '/api/swagger',
      async () => new Response(await (page ??= once(makePage, () => (page = undefined))), { headers: { 'content-type': 'text/html; charset=utf8' } }),
      { detail: { hide: true } },
    )
    .get(
      SPEC_PATH,
      async () => {
        const routes = app().routes.length
        if (made?.routes !== routes) made = { routes, text: once(makeDocument, () => (made = undefined)) }
        return new Response(await made.text, { headers: { 'content-type': 'application/json;charset=utf-8' } })
      },
      { detail: { hide: true } },
    )
}
