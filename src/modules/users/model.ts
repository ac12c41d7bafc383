import { t } from 'elysia'
import { BoundedList, ListName, QueryText, numeric } from '../../lib/validate'
import { Type, type IntegerOptions } from '@sinclair/typebox'
import { literals, recordLiterals } from '../../lib/literals'
import { EMAIL_PREFERENCES } from '../../notify/mails'

/** Who may see a user or an organisation (Gitea's VisibleType). */
export const VISIBILITIES = ['public', 'limited', 'private'] as const

/**
 * A record's integer, for response schemas: TypeBox's plain Integer (records only ever hold real
 * numbers). Never Elysia's `t.Integer()` nor validate.ts's `integer()` there: they read numeric
 * strings through a Transform, and one Transform anywhere in an answer's schema makes Elysia encode
 * the whole answer through TypeBox's interpreted Value.Encode (a deep walk: most of a notification
 * list's CPU, more than building a 50-repository page).
 */
export const Int = (options?: IntegerOptions) => Type.Integer(options)

/** The User record's fields. */
const userFields = {
  id: Int(),
  login: t.String(),
  username: t.String(),
  full_name: t.String(),
  email: t.String(),
  avatar_url: t.String(),
  html_url: t.String(),
  language: t.String(),
  is_admin: t.Boolean(),
  last_login: t.String(),
  created: t.String(),
  restricted: t.Boolean(),
  active: t.Boolean(),
  prohibit_login: t.Boolean(),
  location: t.String(),
  website: t.String(),
  description: t.String(),
  visibility: recordLiterals(VISIBILITIES),
  followers_count: Int(),
  following_count: Int(),
  starred_repos_count: Int(),
}

/** The User record. */
export const UserSchema = t.Object(userFields, { $id: '#/components/schemas/User' })

/** The same record, for users nested in other records (owner, poster ...): the same object, so
 * that the document names one User whatever Elysia records on the schema as routes use it. */
export const PlainUserSchema = UserSchema

export const UsernameParams = t.Object({ username: t.String() })

export const FollowParams = t.Object({ username: t.String(), target: t.String() })
export const TokenParams = t.Object({ username: t.String(), id: t.String() })

/** `/users/search` query: `q`, `uid`, `page`, `limit` (default 10, max 50). */
export const UserSearchQuery = t.Object({
  q: QueryText(),
  uid: t.Optional(numeric()),
  page: t.Optional(numeric()),
  limit: t.Optional(numeric()),
})

/** The `/users/search` answer. */
export const UserSearchResult = t.Object({ ok: t.Boolean(), data: t.Array(UserSchema) })

/** The Email record. */
export const EmailSchema = t.Object(
  { email: t.String(), verified: t.Boolean(), primary: t.Boolean() },
  { $id: '#/components/schemas/Email' },
)

/** CreateEmailOption / DeleteEmailOption. */
export const EmailListOption = t.Object({ emails: t.Optional(BoundedList(ListName)) })

/**
 * The AccessToken record: `sha1` is the secret, shown only on create; `scopes`
 * the token's normalised scope as a list (Gitea 1.19+).
 */
export const AccessTokenSchema = t.Object(
  { id: Int(), name: t.String(), sha1: t.String(), token_last_eight: t.String(), scopes: t.Array(t.String()) },
  { $id: '#/components/schemas/AccessToken' },
)

/**
 * CreateAccessTokenOption. `scopes` may be one string where a form gives one
 * field (Gitea's form binding reads it as a list of one).
 */
export const CreateAccessTokenOption = t.Object(
  { name: t.String(), scopes: t.Optional(t.Union([BoundedList(ListName), ListName])) },
  { $id: '#/components/schemas/CreateAccessTokenOption' },
)

/** How a user's diffs are laid out ('' = the default, unified). */
export const DIFF_VIEW_STYLES = ['', 'unified', 'split'] as const

const userSettingsFields = {
  full_name: t.String(),
  website: t.String(),
  description: t.String(),
  location: t.String(),
  language: t.String(),
  theme: t.String(),
  diff_view_style: recordLiterals(DIFF_VIEW_STYLES),
  hide_email: t.Boolean(),
  hide_activity: t.Boolean(),
  /** Warren's addition to Gitea's record: which notifications are mailed (Gitea's account setting). */
  email_notifications_preference: recordLiterals(EMAIL_PREFERENCES),
}

/** The UserSettings record. */
export const UserSettingsSchema = t.Object(userSettingsFields, { $id: '#/components/schemas/UserSettings' })

/** UserSettingsOptions: an absent key leaves the setting unchanged; lengths checked by the service. */
export const UserSettingsOptions = t.Object(
  {
    full_name: t.Optional(t.String()),
    website: t.Optional(t.String()),
    description: t.Optional(t.String()),
    location: t.Optional(t.String()),
    language: t.Optional(t.String()),
    theme: t.Optional(t.String()),
    diff_view_style: t.Optional(literals(DIFF_VIEW_STYLES)),
    hide_email: t.Optional(t.Boolean()),
    hide_activity: t.Optional(t.Boolean()),
    email_notifications_preference: t.Optional(literals(EMAIL_PREFERENCES)),
  },
  { $id: '#/components/schemas/UserSettingsOptions' },
)

/** UserHeatmapData: the contributions of one 15-minute bucket starting at `timestamp` (Unix seconds). */
export const UserHeatmapData = t.Object({ timestamp: Int(), contributions: Int() }, { $id: '#/components/schemas/UserHeatmapData' })
