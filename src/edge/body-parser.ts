import type { Config } from '../config'
import { badRequest, unprocessable } from '../lib/errors'
import { BODY_KEY, digestCheck, formObject, jsonNestsDeeper, readBodyBounded, tooDeep, type BodyKind } from '../lib/body'
import type { RouteInfo } from './openapi-document'

/**
 * The app's one body parser. Elysia runs a global parser before any a route declares, so a route
 * does not bring its own: it declares how its body is read (`readsBody` in its `detail`), and
 * this parser honours the declaration, found by the route's method and path:
 * - `unread`: the route streams its body itself (git packs into git, release assets to disk),
 *   whatever the Content-Type says and however large it is (each counts against its own limit);
 * - `text`: the body is the value, as text, whatever the Content-Type says (markdown/raw);
 * - undeclared: an API body (never git protocol data), at most WARREN_MAX_API_BODY bytes, read as a form
 *   (urlencoded or multipart) or as JSON. Gitea clients send JSON with or without a
 *   Content-Type (the 2017 SDK omits it on some calls), so a body that is not a form is read as
 *   JSON whatever its type, text/plain too.
 * A JSON body's `null` members are read as left out, as Gitea reads them (dropGoNulls).
 * A `Digest` header (RFC 3230: `SHA-256=` or `SHA-512=` and the base64 hash) is checked against the
 * bytes read, 400 when it differs (lib/body.ts digestCheck): an HTTP signature covers the Digest,
 * not the body (`auth/http-signature.ts`), so this check is what ties a signed request's body to
 * it. A route that streams its body checks it as it streams (a release asset's upload).
 */
export function bodyParser(config: Config, routes: () => RouteInfo[]) {
  let kinds: Map<string, BodyKind> | undefined
  let bodies: Map<string, BodySchema> | undefined
  const kindOf = (method: string, route: string): BodyKind | undefined => {
    // Built once the app is complete (the first request comes after every module was added).
    kinds ??= new Map(routes().flatMap((r) => {
      const kind = r.hooks?.detail?.[BODY_KEY] as BodyKind | undefined
      return kind ? [[`${r.method} ${r.path}`, kind] as const] : []
    }))
    // A route of every method (`.all`) is listed under ALL.
    return kinds.get(`${method} ${route}`) ?? kinds.get(`ALL ${route}`)
  }
  const bodyOf = (method: string, route: string): BodySchema | undefined => {
    bodies ??= new Map(routes().flatMap((r) => {
      const body = r.hooks?.body as BodySchema | undefined
      return body && typeof body === 'object' && body.properties ? [[`${r.method} ${r.path}`, body] as const] : []
    }))
    return bodies.get(`${method} ${route}`)
  }
  return async ({ request, contentType, route }: { request: Request; contentType: string; route: string }) => {
    const kind = kindOf(request.method, route)
    if (kind === 'unread') return {}
    const type = contentType.toLowerCase()
    // git protocol data is never an API body: left to Elysia, which reads no fields from it.
    if (kind === undefined && type.startsWith('application/x-git-')) return
    const bytes = await readBodyBounded(request, config.maxApiBody)
    const digest = digestCheck(request)
    digest?.update(bytes)
    digest?.verify()
    if (kind === 'text') return new TextDecoder().decode(bytes)
    if (type.startsWith('application/x-www-form-urlencoded')) return formObject(new URLSearchParams(new TextDecoder().decode(bytes)))
    if (type.startsWith('multipart/')) {
      // The boundary is in the full header (Elysia's `contentType` stops at ';').
      const form = await new Response(bytes, { headers: { 'content-type': request.headers.get('content-type') ?? '' } }).formData().catch(() => {
        throw badRequest('The request body is not valid multipart form data')
      })
      return formObject(form)
    }
    const text = new TextDecoder().decode(bytes)
    if (text.trim() === '') return {}
    if (jsonNestsDeeper(bytes)) throw tooDeep()
    const parsed = JSON.parse(text)
    // Every API body is an object: Elysia would coerce an array or a scalar to `{}` and run the
    // route as if no field had been sent (`null` already fails validation).
    if (parsed !== null && (typeof parsed !== 'object' || Array.isArray(parsed))) throw unprocessable('Expected object', 'body')
    if (parsed !== null) dropGoNulls(parsed, bodyOf(request.method, route))
    return parsed
  }
}

type BodySchema = { properties?: Record<string, FieldSchema>; required?: string[] }
type FieldSchema = { type?: string | string[]; anyOf?: FieldSchema[] }

const admitsNull = (s: FieldSchema | undefined): boolean =>
  !!s && (s.type === 'null' || (Array.isArray(s.type) && s.type.includes('null')) || !!s.anyOf?.some(admitsNull))

/**
 * Go clients (the Go SDK, so tea, the Terraform provider) send `null` for every slice and pointer
 * they leave unset (`"assignees": null`, `"comments": null`; an issue edit's `"milestone": null`),
 * and Gitea, decoding with Go's encoding/json, cannot tell a null from a field left out: both leave
 * it unset (unchanged, in an edit). So a `null` member of a JSON body is taken as left out, unless
 * the field is required and takes null (`POST .../deadline`'s `due_date`, where null is the
 * clearing Gitea does for a missing date too).
 */
function dropGoNulls(body: Record<string, unknown>, schema: BodySchema | undefined): void {
  for (const key of Object.keys(body)) {
    if (body[key] !== null) continue
    if (schema?.required?.includes(key) && admitsNull(schema.properties?.[key])) continue
    delete body[key]
  }
}
