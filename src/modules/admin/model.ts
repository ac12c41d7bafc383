import { t } from 'elysia'
import { literals } from '../../lib/literals'
import { pageQueryFields } from '../../lib/pagination'
import { MAX_QUERY_TEXT, integer } from '../../lib/validate'
import { Int, VISIBILITIES } from '../users/model'

/** CreateUserOption; lengths are checked in runes by the service. */
export const CreateUserOption = t.Object({
  username: t.String(),
  email: t.String(),
  password: t.String(),
  full_name: t.Optional(t.String()),
  login_name: t.Optional(t.String()),
  source_id: t.Optional(integer()),
  send_notify: t.Optional(t.Boolean()),
  must_change_password: t.Optional(t.Boolean()),
  visibility: t.Optional(literals(VISIBILITIES)),
  restricted: t.Optional(t.Boolean()),
}, { $id: '#/components/schemas/CreateUserOption' })

/** EditUserOption: an absent key leaves the value unchanged. */
export const EditUserOption = t.Object({
  email: t.Optional(t.String()),
  full_name: t.Optional(t.String()),
  password: t.Optional(t.String()),
  website: t.Optional(t.String()),
  location: t.Optional(t.String()),
  description: t.Optional(t.String()),
  login_name: t.Optional(t.String()),
  source_id: t.Optional(integer()),
  active: t.Optional(t.Boolean()),
  admin: t.Optional(t.Boolean()),
  allow_git_hook: t.Optional(t.Boolean()),
  allow_import_local: t.Optional(t.Boolean()),
  allow_create_organization: t.Optional(t.Boolean()),
  max_repo_creation: t.Optional(integer()),
  must_change_password: t.Optional(t.Boolean()),
  prohibit_login: t.Optional(t.Boolean()),
  hide_email: t.Optional(t.Boolean()),
  visibility: t.Optional(literals(VISIBILITIES)),
  restricted: t.Optional(t.Boolean()),
}, { $id: '#/components/schemas/EditUserOption' })
export type EditUserInput = typeof EditUserOption.static

/**
 * Gitea reads urlencoded forms as well as JSON; form values are strings. Turns "true"/"false"
 * (and "on"/"1"/"0") into booleans for the schema's boolean fields, before validation.
 */
export const formBooleans = (schema: { properties: Record<string, any> }) => {
  const keys = Object.entries(schema.properties)
    .filter(([, p]) => p.type === 'boolean')
    .map(([k]) => k)
  const values: Record<string, boolean> = { true: true, on: true, '1': true, false: false, off: false, '0': false }
  return ({ body }: { body: unknown }) => {
    if (!body || typeof body !== 'object') return
    const record = body as Record<string, unknown>
    for (const key of keys) {
      const value = record[key]
      if (typeof value === 'string' && value.toLowerCase() in values) record[key] = values[value.toLowerCase()]
    }
  }
}

/** RenameUserOption. */
export const RenameUserOption = t.Object({ new_username: t.String() }, { $id: '#/components/schemas/RenameUserOption' })

/** The Email record of the site administrator's lists: the address with its user. */
export const UserEmailSchema = t.Object(
  { email: t.String(), verified: t.Boolean(), primary: t.Boolean(), user_id: Int(), username: t.String() },
  { $id: '#/components/schemas/UserEmail' },
)

/** `/admin/emails/search`: the keyword (part of an address, a login or a full name) and the page. */
export const EmailSearchQuery = t.Object({ q: t.Optional(t.String({ maxLength: MAX_QUERY_TEXT })), ...pageQueryFields })

/** The Cron record: a background job, its schedule, its next and last rounds and how many ran. */
export const CronSchema = t.Object(
  { name: t.String(), schedule: t.String(), next: t.String(), prev: t.String(), exec_times: Int() },
  { $id: '#/components/schemas/Cron' },
)

export const CronTaskParams = t.Object({ task: t.String({ maxLength: 100 }) })

/** The Badge record. */
export const BadgeSchema = t.Object(
  { id: Int(), slug: t.String(), description: t.String(), image_url: t.String() },
  { $id: '#/components/schemas/Badge' },
)

/** UserBadgeOption: the badges given or taken, by slug. */
export const UserBadgeOption = t.Object(
  { badge_slugs: t.Optional(t.Array(t.String({ maxLength: 255 }), { maxItems: 100 })) },
  { $id: '#/components/schemas/UserBadgeOption' },
)

/** `/admin/unadopted`: the page, and a pattern (`owner/name`, `*` and `?` as wildcards; Gitea reads it as `query`). */
export const UnadoptedQuery = t.Object({
  pattern: t.Optional(t.String({ maxLength: MAX_QUERY_TEXT })),
  query: t.Optional(t.String({ maxLength: MAX_QUERY_TEXT })),
  ...pageQueryFields,
})

/** `/admin/unadopted/{owner}/{repo}`. */
export const UnadoptedParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }) })
