import { Elysia } from 'elysia'
import { and, eq } from 'drizzle-orm'
import { comments, issues } from '../db/schema'
import type { AppDeps } from '../deps'
import type { Config } from '../config'
import { ApiError, forbidden, notFound } from '../lib/errors'
import { askedPage, pageOf, setListHeaders, type Page, type Paged } from '../lib/pagination'
import { AccessMode, unitMode, type RepoAccess, type RepoUnitKey } from './access'
import { requireSiteAdmin, requireUser, type UserRow } from './caller'
import { loadAttachmentByTag, loadAttachmentByUuid } from './attachment-context'
import { loadRepoById, loadRepoContext, startRepoLookup, type RepoContext } from './repo-context'
import { requireScope, scopeLevelOf, type ScopeCategory } from './scopes'
import { loadOrg, requireOrgMember, requireOrgOwner } from './org-context'
import { loadTeam, requireTeamOwner } from './team-context'
import { loadVisibleOwner } from './owner-context'
import { loadPackageOwner, type PackageNeed } from './package-access'
import { API_PREFIX } from '../lib/api-prefix'

/**
 * The request pipeline: what a route needs, declared beside its schemas, resolved before its
 * handler runs. A controller never looks up its caller, repository or organisation by hand:
 *
 *   .get('/user/repos', ({ user }) => ..., { signed: true, ... })
 *   .post('/repos/:owner/:repo/labels', ({ repo }) => ..., { repo: { level: 'write', unit: 'issuesOrPulls' } })
 *
 * Needs (each an Elysia macro; a route may combine them):
 * - `scope: ScopeNeed`: the token scope category (or categories) the route belongs to, as Gitea's
 *   tokenRequiresScopes groups them, or `'none'` for the few open routes Gitea leaves outside
 *   every category (`/version`, markdown). A token must hold each category at read (GET, HEAD)
 *   or write (other methods), else 403 with Gitea's message; passwords are not limited. Every
 *   API route declares one (test/route-table.test.ts), first among its needs, so that a token
 *   without the scope is refused before anything else is checked, as in Gitea (a repository's
 *   route starts looking its repository up meanwhile, a read whose answer then goes unused).
 * - `caller: true`: the caller, anonymous allowed (`caller`).
 * - `signed: true`: a signed-in caller, else 401 (`caller`, `user`).
 * - `siteAdmin: true`: a site administrator, else 401 / 403 (`caller`, `user`).
 * - `gitHooks: true`: a caller allowed to edit git's server-side hooks (Gitea's reqGitHook: the
 *   hooks turned on with WARREN_DISABLE_GIT_HOOKS=false, and a site administrator or a user given
 *   `allow_git_hook`), else 401 / 403 (`caller`, `user`); written after a repository's `repo`.
 * - `repo: RepoNeed`: the repository of `:owner/:repo` (`repo`: a RepoContext, plus `caller`).
 *   404 when it does not exist or the caller may not read it (a renamed repository's old name
 *   answers 307 to its new one), 404 when the caller may not read the route's unit (a team's
 *   none; a route naming no unit is the code's, as in Gitea), 401/403 below the level in that
 *   unit (the context's `mode`), 404 when the unit is disabled, 423 "repo is archived" for a
 *   write to an archived repository.
 *
 * Needs resolve in the order they are written: a route that reads a repository but needs a
 * signed-in caller (filing an issue) writes `repo` before `signed`, so that a hidden repository
 * answers 404 before an anonymous caller's 401, as Gitea does.
 * - `org: 'visible' | 'member' | 'owner'`: the organisation of `:org` (`org`: an OrgContext,
 *   plus `caller`). 404 when unknown or hidden from the caller; 401/403 below the role.
 * - `team: 'member' | 'owner'`: the team of `:id` (or the team named `:team` in the organisation
 *   `:org`: the web's `/org/{org}/teams/{team}`) (`team`: a TeamContext, plus `caller`). 401
 *   anonymous; 404 unless the caller is a member of its organisation (or, for `owner`, an owner:
 *   Gitea's check knows only the team). The web's team forms for owners write `team: 'member'`
 *   then `org: 'owner'`: 404 outside the organisation, 403 to its members who are not owners.
 * - `owner: true`: the user or organisation of `:owner` (`owner`: its row, plus `caller`). 404
 *   when unknown or hidden from the caller (the web's `/{owner}` page).
 * - `packageOwner: 'read' | 'write'`: the user or organisation of `:owner` whose packages the
 *   route reads or changes (`packageOwner`: its row, plus `caller`), by the rule of
 *   package-access.ts: 404 when unknown or hidden, 401 anonymous / 403 signed in below the need.
 * - `repoById: true`: the repository of `:id` (`repoById`: its row, plus `caller`). 404 when it
 *   does not exist or the caller may not read it.
 * - `attachment: 'uuid' | 'tag'`: the release asset a download URL names (`attachment`: its row,
 *   plus `caller`): `'uuid'` that of `/attachments/:uuid`; `'tag'` the `{tag}/{name}` of the
 *   wildcard of `/:owner/:repo/releases/download/*`, in the repository of a `repo` need written
 *   before it. 404 when it does not exist, the caller may not read its repository, or it belongs
 *   to a draft release and the caller does not see drafts.
 *   These two are looked up once the path is validated (a malformed id answers as the schema
 *   says, before any lookup), as the handlers that decided it before them did.
 * - `paged: true` (or its own PageSizes): Gitea's `page`/`limit` (`page`), and
 *   `respond(paged, convert)` which sets X-Total-Count and Link and converts the rows: the recipe
 *   every list repeats. `pageIfAsked: true` is the same for the small collections Gitea answers
 *   whole unless a page is asked for (`page` is then null: the whole list).
 *
 * Each need is also recorded in the route's `detail` under ACCESS_KEYS (and so in the OpenAPI
 * document as an extension), which is where the route table test reads what every route declared.
 */

export type RepoLevel = 'read' | 'write' | 'admin' | 'owner'

/**
 * A repository unit a route belongs to; disabled units answer 404 (Gitea's mustEnable...).
 * `issuesOrPulls`: what both trackers share, labels and milestones, served while either is on
 * (Gitea's reqRepoWriter(unit.TypeIssues, unit.TypePullRequests) on the API's label and milestone
 * writes, reqRepoIssuesOrPullsReader on its pages).
 */
export type RepoUnit = 'issues' | 'pulls' | 'issuesOrPulls' | 'wiki' | 'releases' | 'packages' | 'projects'

export interface RepoNeed {
  /** The least access the route needs; `read` when absent. */
  level?: RepoLevel
  /** The unit the route belongs to. */
  unit?: RepoUnit
  /**
   * Whether the route changes the repository, so that an archived one refuses it (Gitea's
   * mustNotBeArchived). Absent: every method but GET and HEAD writes. Routes that must work on an
   * archived repository (editing the repository to unarchive it, deleting it) say `false`.
   */
  writes?: boolean
}

/** Where each need is recorded in a route's `detail` (one key per need: Elysia merges them). */
export const ACCESS_KEYS = {
  scope: 'x-warren-scope',
  caller: 'x-warren-caller',
  signed: 'x-warren-signed',
  siteAdmin: 'x-warren-site-admin',
  gitHooks: 'x-warren-git-hooks',
  repo: 'x-warren-repo',
  org: 'x-warren-org',
  team: 'x-warren-team',
  owner: 'x-warren-owner',
  packageOwner: 'x-warren-package-owner',
  repoById: 'x-warren-repo-by-id',
  attachment: 'x-warren-attachment',
} as const

/** The token scope categories a route needs (all of them), or none. */
export type ScopeNeed = ScopeCategory | readonly ScopeCategory[] | 'none'

export type OrgRoleNeed = 'visible' | 'member' | 'owner'
export type TeamRoleNeed = 'member' | 'owner'
export type AttachmentNeed = 'uuid' | 'tag'

const LEVELS: Record<RepoLevel, AccessMode> = {
  read: AccessMode.Read,
  write: AccessMode.Write,
  admin: AccessMode.Admin,
  owner: AccessMode.Owner,
}

/**
 * The units whose modes a route's unit reads: its own; for `issuesOrPulls` those of the trackers
 * that are on (the best of them counts, Gitea's reqRepoWriter(TypeIssues, TypePullRequests)).
 */
const UNIT_KEYS: Record<RepoUnit, (repo: RepoContext['repo']) => readonly RepoUnitKey[]> = {
  issues: () => ['repo.issues'],
  pulls: () => ['repo.pulls'],
  issuesOrPulls: (repo) => [...(repo.hasIssues ? ['repo.issues' as const] : []), ...(repo.hasPullRequests ? ['repo.pulls' as const] : [])],
  wiki: () => ['repo.wiki'],
  releases: () => ['repo.releases'],
  packages: () => ['repo.packages'],
  projects: () => ['repo.projects'],
}

/**
 * Whether the issue a tracker route's path names is a pull request: by `:index` under `issues/` or
 * `pulls/` (a plain issue named under `pulls/` is still an issue: its unit decides, not the path's),
 * or by a comment's `:id` under `comments/`; undefined when the path names none (a list, or
 * `pulls/{base}/{head}`, whose `:index` is a branch) or no such issue exists (the handler's 404).
 */
async function namedIssueIsPull(deps: AppDeps, repoId: number, request: Request, params: Record<string, string>): Promise<boolean | undefined> {
  const path = new URL(request.url).pathname
  const number = (text: string | undefined) => (text !== undefined && /^[0-9]{1,15}$/.test(text) ? Number(text) : undefined)
  const index = /\/(issues|pulls)\/[^/]+/.test(path) && params['*'] === undefined ? number(params.index) : undefined
  if (index !== undefined) {
    const [row] = await deps.db.select({ isPull: issues.isPull }).from(issues).where(and(eq(issues.repoId, repoId), eq(issues.index, index))).limit(1)
    return row?.isPull
  }
  const commentId = params.index === undefined && /\/comments\/[^/]+/.test(path) ? number(params.id) : undefined
  if (commentId === undefined) return undefined
  const [row] = await deps.db
    .select({ isPull: issues.isPull })
    .from(comments)
    .innerJoin(issues, eq(issues.id, comments.issueId))
    .where(and(eq(comments.id, commentId), eq(comments.repoId, repoId)))
    .limit(1)
  return row?.isPull
}

const UNIT_ENABLED: Record<RepoUnit, (repo: RepoContext['repo']) => boolean> = {
  issues: (repo) => repo.hasIssues,
  pulls: (repo) => repo.hasPullRequests,
  issuesOrPulls: (repo) => repo.hasIssues || repo.hasPullRequests,
  wiki: (repo) => repo.hasWiki,
  releases: (repo) => repo.hasReleases,
  packages: (repo) => repo.hasPackages,
  projects: (repo) => repo.hasProjects,
}

/** Whether a request with this method and need changes the repository. */
export const isRepoWrite = (method: string, need: RepoNeed): boolean =>
  need.writes ?? (method !== 'GET' && method !== 'HEAD')

/**
 * Resolves a repository need for a request (the `repo` macro's work). Git smart HTTP decides with
 * the same accessLevel in authorizeGit (src/modules/git-http), which answers in git's own shape.
 */
async function resolveRepoNeed(deps: AppDeps, request: Request, params: Record<string, string>, need: RepoNeed): Promise<RepoContext> {
  let unit = need.unit
  // A tracker route naming one issue or comment belongs to that issue's unit (Gitea's CanReadIssuesOrPulls(issue.IsPull)),
  // under `pulls/` too: a form there must not reach a plain issue on the strength of the pull requests' unit.
  const unitsOf =
    unit === 'issues' || unit === 'issuesOrPulls' || unit === 'pulls'
      ? async (repo: RepoContext['repo'], access: RepoAccess) => {
          // Asked only when the answer matters: the two trackers on or off alike and the caller's
          // modes in them equal (no team limits one of them) decide the same either way.
          const alike = repo.hasIssues === repo.hasPullRequests && unitMode(access, 'repo.issues') === unitMode(access, 'repo.pulls')
          // Under a pull requests' route, a plain issue's own unit refuses only where the issues are
          // off or give less than the pull requests: elsewhere the read is spared.
          const issuesNoLess = unit === 'pulls' && repo.hasIssues && unitMode(access, 'repo.issues') >= unitMode(access, 'repo.pulls')
          const isPull = alike || issuesNoLess ? undefined : await namedIssueIsPull(deps, repo.id, request, params)
          if (isPull !== undefined) unit = isPull ? 'pulls' : 'issues'
          return UNIT_KEYS[unit!](repo)
        }
      : unit && UNIT_KEYS[unit]
  const ctx = await loadRepoContext(deps, request, params.owner ?? '', params.repo ?? '', LEVELS[need.level ?? 'read'], unitsOf)
  if (unit && !UNIT_ENABLED[unit](ctx.repo)) throw notFound()
  if (ctx.repo.isArchived && isRepoWrite(request.method, need)) throw new ApiError(423, 'repo is archived')
  return ctx
}

/**
 * Whether `user` may edit repositories' git hooks (Gitea's CanEditGitHook): never while
 * WARREN_DISABLE_GIT_HOOKS is on (the default, as Gitea's DISABLE_GIT_HOOKS), else site
 * administrators and users given `allow_git_hook`. A hook is a program the server runs at every
 * push: whoever writes one runs code as the server's user.
 */
export const canEditGitHooks = (config: Pick<Config, 'disableGitHooks'>, user: UserRow): boolean =>
  !config.disableGitHooks && (user.isAdmin || user.allowGitHook)

/** A list's own page sizes where they differ from Gitea's 30 / 50 (searches). */
export type PageSizes = { defaultLimit?: number; maxLimit?: number }

/** Sets the list headers of a page of rows (or of the whole list) and converts them. */
export type Respond = <R, T>(result: Paged<R>, convert: (rows: R[]) => T[] | Promise<T[]>) => Promise<T[]>

type ListContext = { request: Request; query: { page?: number; limit?: number }; set: { headers: Record<string, unknown> } }

/** The page a list route serves (null: the whole list) and its `respond`. */
function listAnswer<P extends Page | null>(deps: AppDeps, request: Request, set: ListContext['set'], page: P): { page: P; respond: Respond } {
  return {
    page,
    respond: async (result, convert) => {
      setListHeaders(set, deps.config, request, page, result.total)
      return await convert(result.rows)
    },
  }
}

const declare = (key: keyof typeof ACCESS_KEYS, value: unknown) => ({ detail: { [ACCESS_KEYS[key]]: value } as Record<string, unknown> })

type PathContext = { request: Request; params: Record<string, string> }

/** What each need resolved for a request, between its check (transform) and the handler (resolve). */
const resolvedNeeds = new WeakMap<Request, Map<string, unknown>>()

/**
 * A need whose check runs before the body and query are validated, as Gitea's middleware does
 * (401/403/404 come before a 422: a caller who may not write learns nothing from validation), and
 * whose result reaches the handler through `resolve`.
 */
function checkedNeed<T extends Record<string, unknown>>(key: keyof typeof ACCESS_KEYS, declared: unknown, check: (c: PathContext) => Promise<T> | T) {
  return {
    ...declare(key, declared),
    // The context is destructured, never handed on whole: Elysia reads from each hook's source
    // what the route uses, and a context passed whole makes every request parse its headers and
    // cookies, which no need reads from there.
    async transform({ request, params }: PathContext) {
      let needs = resolvedNeeds.get(request)
      if (!needs) resolvedNeeds.set(request, (needs = new Map()))
      needs.set(key, await check({ request, params }))
    },
    resolve({ request }: { request: Request }): T {
      return resolvedNeeds.get(request)!.get(key) as T
    },
  }
}

type ValidatedContext = { request: Request; params: Record<string, unknown> }

/**
 * A need checked after the path is validated (in `resolve`), for the lookups by a path value the
 * route's schema constrains (an id, a uuid): a malformed value answers as the schema says, as it
 * did when the handler looked it up.
 */
function validatedNeed<T extends Record<string, unknown>>(key: keyof typeof ACCESS_KEYS, declared: unknown, check: (c: ValidatedContext) => Promise<T>) {
  return { ...declare(key, declared), resolve: ({ request, params }: ValidatedContext): Promise<T> => check({ request, params }) }
}

/**
 * The dependencies as a web page's needs see them: every caller they resolve (theirs, and those
 * of the contexts they load) may be signed in by the session cookie.
 */
function withSessionCallers(deps: AppDeps): AppDeps {
  const auth = Object.create(deps.auth) as AppDeps['auth']
  auth.caller = (request: Request) => {
    // `api` is a reserved name (no user or organisation has it): a path under /api/ that reached
    // a page's route is an API path nothing serves, answered as the API answers it.
    if (new URL(request.url).pathname.startsWith('/api/')) throw notFound("The target couldn't be found.")
    deps.auth.acceptSession(request)
    return deps.auth.caller(request)
  }
  return { ...deps, auth }
}

/** The repository a `repo` need resolved for this request (a need that reads it is written after it). */
function resolvedRepo(request: Request): RepoContext {
  const found = resolvedNeeds.get(request)?.get('repo') as { repo: RepoContext } | undefined
  if (!found) throw new Error('this need reads the repository of a `repo` need written before it')
  return found.repo
}

/**
 * The pipeline plugin: the API's app uses it once, its areas add their routes to that app (`area`),
 * and an instance of routes of its own (`.use(pipeline(deps))`) has its needs too. Web pages use
 * `pipeline(deps, { session: true })`: the same needs, and the caller may also be signed in by
 * the web session cookie (never on API routes, whose writes carry no CSRF token).
 */
export const pipeline = (given: AppDeps, opts: { session?: boolean } = {}) => {
  const deps = opts.session ? withSessionCallers(given) : given
  return new Elysia().macro({
    scope: (need: ScopeNeed) => {
      if (need === 'none') return declare('scope', need)
      const categories = typeof need === 'string' ? [need as ScopeCategory] : need
      return checkedNeed('scope', need, async ({ request, params }) => {
        // A repository's route: its lookup goes along with the caller's (startRepoLookup).
        if (params?.owner !== undefined && params.repo !== undefined) startRepoLookup(deps, request, params.owner, params.repo)
        const { scope } = await deps.auth.caller(request)
        if (scope) requireScope(scope, categories, scopeLevelOf(request.method))
        return {}
      })
    },
    caller: checkedNeed('caller', true, async ({ request }) => ({ caller: await deps.auth.caller(request) })),
    signed: checkedNeed('signed', true, async ({ request }) => {
      const caller = await deps.auth.caller(request)
      return { caller, user: requireUser(caller) }
    }),
    siteAdmin: checkedNeed('siteAdmin', true, async ({ request }) => {
      const caller = await deps.auth.caller(request)
      return { caller, user: requireSiteAdmin(caller) }
    }),
    gitHooks: checkedNeed('gitHooks', true, async ({ request }) => {
      const caller = await deps.auth.caller(request)
      const user = requireUser(caller)
      if (!canEditGitHooks(deps.config, user)) throw forbidden('must be allowed to edit Git hooks')
      return { caller, user }
    }),
    repo: (need: RepoNeed) =>
      checkedNeed('repo', need, async ({ request, params }) => {
        const repo = await resolveRepoNeed(deps, request, params, need)
        return { repo, caller: repo.caller }
      }),
    org: (role: OrgRoleNeed) =>
      checkedNeed('org', role, async ({ request, params }) => {
        const caller = await deps.auth.caller(request)
        const org = await loadOrg(deps, params.org ?? '', caller.user)
        if (role === 'member') requireOrgMember(org)
        if (role === 'owner') requireOrgOwner(org)
        return { org, caller }
      }),
    team: (role: TeamRoleNeed) =>
      checkedNeed('team', role, async ({ request, params }) => {
        const caller = await deps.auth.caller(request)
        // `/org/{org}/teams/{team}` (the web's) names the team in its organisation; `/teams/{id}` by id.
        const team = params.team !== undefined ? await loadTeam(deps, params.team, caller.user, params.org ?? '') : await loadTeam(deps, params.id ?? '', caller.user)
        if (role === 'owner') requireTeamOwner(team)
        return { team, caller }
      }),
    owner: checkedNeed('owner', true, async ({ request, params }) => {
      const caller = await deps.auth.caller(request)
      return { owner: await loadVisibleOwner(deps, params.owner ?? '', caller.user), caller }
    }),
    packageOwner: (need: PackageNeed) =>
      checkedNeed('packageOwner', need, async ({ request, params }) => {
        const caller = await deps.auth.caller(request)
        return { packageOwner: await loadPackageOwner(deps, params.owner ?? '', caller.user, need), caller }
      }),
    repoById: validatedNeed('repoById', true, async ({ request, params }) => {
      const caller = await deps.auth.caller(request)
      return { repoById: await loadRepoById(deps, caller, Number(params.id)), caller }
    }),
    attachment: (need: AttachmentNeed) =>
      validatedNeed('attachment', need, async ({ request, params }) => {
        const caller = await deps.auth.caller(request)
        const attachment =
          need === 'uuid'
            ? await loadAttachmentByUuid(deps, caller, String(params.uuid ?? ''))
            : await loadAttachmentByTag(deps, resolvedRepo(request), String(params['*'] ?? ''))
        return { attachment, caller }
      }),
    paged(sizes: true | PageSizes) {
      return {
        resolve: ({ request, query, set }: ListContext) => listAnswer(deps, request, set, pageOf(query, sizes === true ? {} : sizes)),
      }
    },
    pageIfAsked: {
      resolve: ({ request, query, set }: ListContext) => listAnswer(deps, request, set, askedPage(query)),
    },
  })
}

/** What an area adds its routes to (`area`, `pageGroup`): the app itself (the API's, or the web pages'), with the pipeline's needs. */
export type AreaApp = ReturnType<typeof pipeline>

/** An area of routes (the API's, or a group of web pages): adds its routes to the app it is given (`area`, `pageGroup`; src/app.ts `addAreas`). */
export type Area = (deps: AppDeps, app: AreaApp) => unknown

/**
 * The API's app (src/app.ts `addAreas`), made ready for an area to add its routes to: under the
 * API's prefix and with the area's OpenAPI details (`detail`: its tags), where an instance of the
 * area's own (`new Elysia({ prefix, detail }).use(pipeline(deps))`) put them. Elysia copies every
 * route of an instance it is given, so an area made as an instance had each of its routes
 * registered twice at a start, beside the instance and its pipeline made for it. `addAreas` puts
 * the app's own prefix and details back after each area (`area(app, undefined, '')`). An area adds routes only: a hook added
 * to the app itself (`onBeforeHandle`, ...) would reach every route added after it, so `addAreas`
 * refuses one; routes that share a hook of their own stay in an instance of their own.
 */
export function area(app: AreaApp, detail?: Record<string, unknown>, prefix = API_PREFIX): AreaApp {
  const config = app.config as { prefix?: string; detail?: Record<string, unknown> }
  config.prefix = prefix || undefined
  config.detail = detail
  return app
}

/** A group of web pages: the web pages' app readied as `area` readies the API's, at the site's root, each page hidden from the API's document. */
export const pageGroup = (app: AreaApp): AreaApp => area(app, { hide: true }, '')
