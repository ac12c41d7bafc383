/** @jsxImportSource warren-jsx */
import { Elysia, t } from 'elysia'
import type { Child } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, pipeline, type AreaApp } from '../../auth/pipeline'
import type { UserRow } from '../../auth/caller'
import type { OrgRow } from '../../auth/org-context'
import { deliveryToApi, hookToApi } from '../../convert/hook'
import type { HookRow } from '../../db/schema'
import { ApiError } from '../../lib/errors'
import { pathNumber } from '../../lib/path-number'
import { HOOK_EVENT_TYPES, EVENT_MODES } from '../../webhooks/events'
import { createHook, deleteHook, editHook, getDelivery, getHook, listDeliveries, listHooks, redeliver, type HookScope } from '../../modules/hooks/service'
import { pageDetail, webContext, type WebContext } from '../context'
import { ButtonForm, CsrfField, CsrfText, FormCheck, FormList, FormText, formRoute, type FormRequest, listOf, ListTable, Pager, pageNumber, pagesOf, seeOther, SubmitRow, ticked } from '../forms'
import { adminPage } from './admin'
import { orgSettingsPage } from './org-settings'
import { settingsPage as userSettingsPage } from './settings-user'
import { TimeAt } from './issue-parts'

/** Hooks a list page shows at once; deliveries a hook's page shows. */
const LISTED = 50
const DELIVERIES_SHOWN = 20

export const HookForm = t.Object({
  _csrf: CsrfText,
  url: FormText(2048),
  content_type: FormText(8),
  secret: FormText(255),
  branch_filter: FormText(2048),
  authorization_header: FormText(2048),
  events_mode: FormText(16),
  events: FormList(HOOK_EVENT_TYPES.length, 40),
  active: FormCheck,
})
export type HookValues = Partial<typeof HookForm.static>
export type ApiHook = ReturnType<typeof hookToApi>

export function HookFields(props: { web: WebContext; hook?: ApiHook; values?: HookValues; action: string; submit: string }) {
  const { hook, values: v } = props
  const mode = v?.events_mode ?? (hook ? (hook.events.length === HOOK_EVENT_TYPES.length ? 'send_everything' : hook.events.length === 1 && hook.events[0] === 'push' ? 'push_only' : 'choose_events') : 'push_only')
  const chosen = new Set(v ? listOf(v.events) : (hook?.events ?? []))
  return (
    <form class="stack wide" method="post" action={props.action}>
      <CsrfField ctx={props.web} />
      <label>
        Target URL
        <input name="url" type="url" required maxlength="2048" value={v?.url ?? hook?.config.url ?? ''} />
      </label>
      <label>
        Content type
        <select name="content_type">
          {['json', 'form'].map((c) => (
            <option value={c} selected={(v?.content_type ?? hook?.config.content_type ?? 'json') === c}>
              {c === 'json' ? 'application/json' : 'application/x-www-form-urlencoded'}
            </option>
          ))}
        </select>
      </label>
      <label>
        Secret{hook ? ' (leave empty to keep the current one)' : ''}
        <input name="secret" type="password" autocomplete="off" maxlength="255" />
      </label>
      <label>
        Branch filter
        <input name="branch_filter" maxlength="2048" value={v?.branch_filter ?? hook?.branch_filter ?? '*'} />
      </label>
      <label>
        Authorization header (optional)
        <input name="authorization_header" autocomplete="off" maxlength="2048" />
      </label>
      <fieldset>
        <legend>Trigger on</legend>
        {EVENT_MODES.map((m) => (
          <label class="check">
            <input type="radio" name="events_mode" value={m} checked={mode === m} />
            {m === 'push_only' ? 'Push events' : m === 'send_everything' ? 'All events' : 'Custom events:'}
          </label>
        ))}
        {HOOK_EVENT_TYPES.map((e) => (
          <label class="check">
            <input type="checkbox" name="events" value={e} checked={chosen.has(e)} />
            {e}
          </label>
        ))}
      </fieldset>
      <label class="check">
        <input type="checkbox" name="active" checked={v ? ticked(v.active) : (hook?.active ?? true)} />
        Active
      </label>
      <SubmitRow label={props.submit} />
    </form>
  )
}

/** The hook form as the API's CreateHookOption / EditHookOption fields. */
export function hookInputOf(body: HookValues, editing: boolean) {
  const mode = (EVENT_MODES as readonly string[]).includes(body.events_mode ?? '') ? body.events_mode! : 'push_only'
  const config: Record<string, string> = { url: (body.url ?? '').trim(), content_type: body.content_type ?? 'json' }
  if (!editing || body.secret) config.secret = body.secret ?? ''
  return {
    config,
    active: ticked(body.active),
    branch_filter: body.branch_filter ?? '',
    ...(body.authorization_header || !editing ? { authorization_header: body.authorization_header ?? '' } : {}),
    push_only: mode === 'push_only',
    send_everything: mode === 'send_everything',
    choose_events: mode === 'choose_events',
    events: mode === 'choose_events' ? listOf(body.events) : mode === 'push_only' ? ['push'] : undefined,
  }
}


/** A list of hooks, each linking to its page. */
export function HookList(props: { label: string; hooks: ApiHook[]; hookUrl: (id: number) => string }) {
  return (
    <div class="box">
      <ul class="entries" aria-label={props.label}>
        {props.hooks.map((h) => (
          <li>
            <a href={props.hookUrl(h.id)}>{h.config.url}</a> <span class="muted">({h.active ? 'active' : 'inactive'}; {h.events.length} events)</span>
          </li>
        ))}
        {props.hooks.length === 0 ? <li class="muted">No webhooks yet.</li> : null}
      </ul>
    </div>
  )
}

/** A hook's newest deliveries, each with its request, its answer and a redeliver button. */
export async function HookDeliveries(props: { deps: AppDeps; web: WebContext; hook: HookRow; redeliverUrl: (uuid: string) => string }) {
  const { hook, web } = props
  const deliveries = (await listDeliveries(props.deps, hook, { page: 1, limit: DELIVERIES_SHOWN, offset: 0 })).rows.map((task) => deliveryToApi(hook, task))
  return (
    <>
      <h3>Recent deliveries</h3>
      <div class="box">
        <ListTable label="Recent deliveries" columns={['Delivery', 'Event', 'Result', 'Created']} empty={deliveries.length === 0 && 'No deliveries yet.'} actions>
          {deliveries.map((d) => (
            <tr>
              <td>
                <details>
                  <summary>
                    <code>{d.uuid}</code>
                  </summary>
                  <pre class="code">{d.request.body}</pre>
                  {d.response ? <pre class="code">{`${d.response.status}\n${d.response.body}`}</pre> : null}
                </details>
              </td>
              <td>{d.event_type}</td>
              <td>{!d.delivered ? 'pending' : d.success ? `ok (${d.status_code})` : `failed (${d.status_code || 'no answer'})`}</td>
              <td>
                <TimeAt iso={d.created_at} />
              </td>
              <td>
                <ButtonForm ctx={web} action={props.redeliverUrl(d.uuid)} label={`Redeliver ${d.uuid.slice(0, 8)}`} />
              </td>
            </tr>
          ))}
        </ListTable>
      </div>
    </>
  )
}

/** A hook id of a path: 404 when it is not one. */
export const hookIdOf = (text: string): number => {
  const n = pathNumber(text)
  if (!Number.isSafeInteger(n) || n <= 0) throw new ApiError(404, 'hook does not exist')
  return n
}

// ---- the hooks of an organisation, of a user, of the site ----------------------------------------

type Opts = { values?: HookValues; error?: string; status?: number }

/**
 * Where a scope's hook pages are: the scope, its list's path (`base`), the settings area the
 * pages are drawn in, and the pages adding a hook (one per kind: the site's system and default
 * hooks; `system` is what a hook added there is).
 */
interface HookPlace {
  scope: HookScope
  base: string
  adds: { path: string; title: string; system?: boolean }[]
  frame: (web: WebContext, current: string, title: string, body: Child, opts: Opts) => Response
}

/** The request a place's route is given: the pipeline's contexts its needs resolve. */
type PlaceRequest = FormRequest & { params: Record<string, string | undefined>; query?: Record<string, string | undefined>; org?: { org: OrgRow }; user?: UserRow }

async function placeListPage(deps: AppDeps, place: HookPlace, web: WebContext, pageAt: number, opts: Opts = {}) {
  const found = await listHooks(deps, place.scope, { page: pageAt, limit: LISTED, offset: (pageAt - 1) * LISTED })
  const hookUrl = (id: number) => `${place.base}/${id}`
  const lists =
    'site' in place.scope
      ? ([
          ['System webhooks (fired for every repository)', found.rows.filter((h) => h.isSystem)],
          ['Default webhooks (copied into each new repository)', found.rows.filter((h) => !h.isSystem)],
        ] as const)
      : ([['Webhooks', found.rows]] as const)
  return place.frame(
    web,
    place.base,
    'Webhooks',
    <>
      <p class="repo-actions">
        {place.adds.map((a) => (
          <a class="button" href={a.path}>
            {a.title}
          </a>
        ))}
      </p>
      {lists.map(([label, rows]) => (
        <>
          {lists.length > 1 ? <h3>{label}</h3> : null}
          <HookList label={label} hooks={rows.map(hookToApi)} hookUrl={hookUrl} />
        </>
      ))}
      <Pager path={place.base} query={{}} page={pageAt} pages={pagesOf(found.total, LISTED)} />
    </>,
    opts,
  )
}

function placeNewPage(place: HookPlace, add: HookPlace['adds'][number], web: WebContext, opts: Opts = {}) {
  return place.frame(web, place.base, add.title, <HookFields web={web} values={opts.values} action={add.path} submit="Add webhook" />, opts)
}

async function placeHookPage(deps: AppDeps, place: HookPlace, web: WebContext, id: number, opts: Opts = {}) {
  const row = await getHook(deps, place.scope, id)
  const hook = hookToApi(row)
  const b = `${place.base}/${hook.id}`
  return place.frame(
    web,
    place.base,
    `Webhook ${hook.id}`,
    <>
      {'site' in place.scope ? <p class="muted">{row.isSystem ? 'A system webhook: fired for every repository.' : 'A default webhook: copied into each new repository.'}</p> : null}
      <HookFields web={web} hook={hook} values={opts.values} action={b} submit="Update webhook" />
      <div class="repo-actions">
        <ButtonForm ctx={web} action={`${place.base}/delete`} label="Delete webhook" fields={{ id: String(hook.id) }} danger />
      </div>
      {await HookDeliveries({ deps, web, hook: row, redeliverUrl: (d) => `${b}/replay/${d}` })}
    </>,
    opts,
  )
}

/** A place's routes at Gitea 1.23's addresses: the list, each add page, a hook's page and edit, delete, a delivery's replay. */
function placeRoutes(deps: AppDeps, name: string, pattern: string, adds: { pattern: string; id: string }[], needs: Record<string, unknown>, placeOf: (c: PlaceRequest) => HookPlace) {
  const web = (c: PlaceRequest) => webContext(deps.config, c.request, c.caller)
  const id = (c: PlaceRequest) => hookIdOf(c.params.id ?? '')
  const route = (detail: string, extra: Record<string, unknown> = {}) => ({ ...needs, ...extra, detail: pageDetail(detail) })
  const Empty = t.Object({ _csrf: CsrfText })
  const app = new Elysia({ name: `web-hooks-${name}`, detail: { hide: true } }).use(pipeline(deps, { session: true }))
  // The pipeline's needs differ by place (an organisation's owner, a signed-in user, a site
  // administrator); Elysia cannot type a handler over their union, so each is given the plain
  // request shape the needs resolve, taken from the context member by member (one handed on whole
  // has Elysia parse each request's cookies and headers: test/route-context.test.ts).
  const shaped =
    (handler: (c: PlaceRequest) => Promise<Response> | Response) =>
    ({ request, caller, body, params, query, org, user }: PlaceRequest) =>
      handler({ request, caller, body, params, query, org, user })
  const get = (path: string, handler: (c: PlaceRequest) => Promise<Response> | Response, opts: Record<string, unknown>) => app.get(path, shaped(handler) as never, opts as never)
  const post = (path: string, handler: (c: PlaceRequest) => Promise<Response>, opts: Record<string, unknown>) => app.post(path, shaped(handler) as never, opts as never)
  get(pattern, (c) => placeListPage(deps, placeOf(c), web(c), pageNumber(c.query?.page)), route(`web${name}Hooks`, { query: t.Object({ page: FormText(10), done: FormText(40) }) }))
  adds.forEach((a, i) => {
    const addOf = (c: PlaceRequest) => placeOf(c).adds[i]!
    get(a.pattern, (c) => placeNewPage(placeOf(c), addOf(c), web(c)), route(`web${name}HookNew${a.id}`))
    post(
      a.pattern,
      (c) =>
        formRoute(
          deps.config,
          c,
          async () => {
            const place = placeOf(c)
            const input = hookInputOf(c.body as HookValues, false)
            const hook = await createHook(deps, place.scope, { type: 'gitea', ...input, is_system_webhook: addOf(c).system })
            return seeOther(`${place.base}/${hook.id}`, 'hook-added')
          },
          (w, error, status) => placeNewPage(placeOf(c), addOf(c), w, { values: c.body as HookValues, error, status }),
        ),
      route(`web${name}HookAdd${a.id}`, { body: HookForm }),
    )
  })
  post(
    `${pattern}/delete`,
    (c) =>
      formRoute(deps.config, c, async () => {
        const place = placeOf(c)
        await deleteHook(deps, place.scope, hookIdOf((c.body as { id?: string }).id ?? ''))
        return seeOther(place.base, 'hook-deleted')
      }),
    route(`web${name}HookDelete`, { body: t.Object({ _csrf: CsrfText, id: FormText(20) }) }),
  )
  get(`${pattern}/:id`, (c) => placeHookPage(deps, placeOf(c), web(c), id(c)), route(`web${name}Hook`))
  post(
    `${pattern}/:id`,
    (c) =>
      formRoute(
        deps.config,
        c,
        async () => {
          const place = placeOf(c)
          await editHook(deps, place.scope, id(c), hookInputOf(c.body as HookValues, true))
          return seeOther(`${place.base}/${id(c)}`, 'saved')
        },
        (w, error, status) => placeHookPage(deps, placeOf(c), w, id(c), { values: c.body as HookValues, error, status }),
      ),
    route(`web${name}HookEdit`, { body: HookForm }),
  )
  post(
    `${pattern}/:id/replay/:delivery`,
    (c) =>
      formRoute(
        deps.config,
        c,
        async () => {
          const place = placeOf(c)
          const hook = await getHook(deps, place.scope, id(c))
          await redeliver(deps, hook, await getDelivery(deps, hook, c.params.delivery ?? ''))
          return seeOther(`${place.base}/${hook.id}`, 'redelivered')
        },
        (w, error, status) => placeHookPage(deps, placeOf(c), w, id(c), { error, status }),
      ),
    route(`web${name}HookReplay`, { body: Empty }),
  )
  return app
}

const IdParams = { id: t.String({ maxLength: 20 }), delivery: t.Optional(t.String({ maxLength: 40 })) }

/**
 * The hook pages of an organisation (`/org/{org}/settings/hooks`, its owners: the pipeline's
 * `org: 'owner'`, as `/orgs/{org}/hooks`), of the signed-in user (`/user/settings/hooks`, as
 * `/user/hooks`) and of the site (`/-/admin/hooks`, `/-/admin/system-hooks/gitea/new`,
 * `/-/admin/default-hooks/gitea/new`, site administrators, as `/admin/hooks`). Testing a hook is
 * a repository's alone (a push of one of its branches), as in Gitea.
 */
export const hookSettingsPages = (deps: AppDeps, webApp: AreaApp) => {
  const orgBase = (org: OrgRow) => `/org/${encodeURIComponent(org.name)}/settings/hooks`
  const orgPlace = (c: PlaceRequest): HookPlace => {
    const org = c.org!.org
    return {
      scope: { owner: org },
      base: orgBase(org),
      adds: [{ path: `${orgBase(org)}/gitea/new`, title: 'Add webhook' }],
      frame: (web, current, title, body, opts) => orgSettingsPage(web, org, current, title, body, opts),
    }
  }
  const userPlace = (c: PlaceRequest): HookPlace => ({
    scope: { owner: c.user! },
    base: '/user/settings/hooks',
    adds: [{ path: '/user/settings/hooks/gitea/new', title: 'Add webhook' }],
    frame: (web, current, title, body, opts) => userSettingsPage(web, current, title, body, opts),
  })
  const sitePlace: HookPlace = {
    scope: { site: true },
    base: '/-/admin/hooks',
    adds: [
      { path: '/-/admin/system-hooks/gitea/new', title: 'Add system webhook', system: true },
      { path: '/-/admin/default-hooks/gitea/new', title: 'Add default webhook', system: false },
    ],
    frame: adminPage,
  }
  const OrgParams = t.Object({ org: t.String({ maxLength: 255 }), ...IdParams })
  return pageGroup(webApp)
    .use(
      placeRoutes(deps, 'Org', '/org/:org/settings/hooks', [{ pattern: '/org/:org/settings/hooks/gitea/new', id: '' }], { scope: 'organization', signed: true, org: 'owner', params: t.Partial(OrgParams) }, orgPlace),
    )
    .use(placeRoutes(deps, 'User', '/user/settings/hooks', [{ pattern: '/user/settings/hooks/gitea/new', id: '' }], { scope: 'user', signed: true }, userPlace))
    .use(
      placeRoutes(
        deps,
        'Admin',
        '/-/admin/hooks',
        [
          { pattern: '/-/admin/system-hooks/gitea/new', id: 'System' },
          { pattern: '/-/admin/default-hooks/gitea/new', id: 'Default' },
        ],
        { scope: 'admin', siteAdmin: true },
        () => sitePlace,
      ),
    )
}
