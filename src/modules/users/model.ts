import { t } from 'elysia'

/** The User record (records.md §1). */
export const UserSchema = t.Object(
  {
    id: t.Integer(),
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
    visibility: t.String(),
    followers_count: t.Integer(),
    following_count: t.Integer(),
    starred_repos_count: t.Integer(),
  },
  { $id: '#/components/schemas/User' },
)

export const UsernameParams = t.Object({ username: t.String() })
