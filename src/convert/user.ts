import type { Config } from '../config'
import type { UserRow } from '../auth/caller'
import { isoTime, ZERO_TIME } from '../lib/time'
import { webUrl } from '../lib/urls'
import { gitTakesName } from '../git/ident'

/** Avatar URLs already computed, by the e-mail (or name) they derive from; bounded. */
const avatarUrls = new Map<string, string>()
const AVATAR_URLS_KEPT = 10_000

/**
 * Avatar of a user or organisation: the uploaded one (`{base}avatars/{hash}`, modules/avatars),
 * else a Gravatar-style URL derived from the e-mail (memoised).
 */
export function avatarUrl(config: Config, user: Pick<UserRow, 'email' | 'lowerName' | 'avatar'>): string {
  if (user.avatar) return webUrl(config, `avatars/${user.avatar}`)
  const source = user.email || user.lowerName
  let url = avatarUrls.get(source)
  if (url === undefined) {
    const hash = new Bun.CryptoHasher('md5').update(source.trim().toLowerCase()).digest('hex')
    url = `https://secure.gravatar.com/avatar/${hash}?d=identicon`
    if (avatarUrls.size >= AVATAR_URLS_KEPT) avatarUrls.clear()
    avatarUrls.set(source, url)
  }
  return url
}

/** The address shown to callers who may not see a user's real one. */
export const noReplyEmail = (config: Config, user: Pick<UserRow, 'lowerName'>) => `${user.lowerName}@${config.noReplyDomain}`

/**
 * A user as git records them in what the server writes (a commit, a merge, a tag's tagger): full
 * name, else login name (also for a full name git would refuse, gitTakesName: a login name always
 * holds a letter, digit, `-` or `_`), and the address others may see.
 */
export const gitIdentityOf = (config: Config, user: UserRow): { name: string; email: string } => ({
  name: user.fullName && gitTakesName(user.fullName) ? user.fullName : user.name,
  email: user.keepEmailPrivate || !user.email ? noReplyEmail(config, user) : user.email,
})

/**
 * The User record, as `viewer` may see it (modern Gitea's rules): the real e-mail only for
 * signed-in viewers, and for a user who keeps it private only for that user or a site admin;
 * `is_admin`, `language` and `last_login` only for the user themself or a site admin.
 */
export function toApiUser(config: Config, user: UserRow, viewer: UserRow | null) {
  const privileged = viewer !== null && (viewer.id === user.id || viewer.isAdmin)
  const showEmail = viewer !== null && (!user.keepEmailPrivate || privileged)
  // An organisation's address is a public contact, but only for signed-in callers.
  const email = user.type === 1 ? (viewer !== null ? user.email : '') : showEmail ? user.email : noReplyEmail(config, user)
  return {
    id: user.id,
    login: user.name,
    username: user.name,
    full_name: user.fullName,
    email,
    avatar_url: avatarUrl(config, user),
    html_url: webUrl(config, encodeURIComponent(user.name)),
    language: privileged ? user.language : '',
    is_admin: privileged ? user.isAdmin : false,
    last_login: privileged && user.lastLoginUnix ? isoTime(user.lastLoginUnix) : ZERO_TIME,
    created: isoTime(user.createdUnix),
    restricted: false,
    active: privileged ? user.isActive : false,
    prohibit_login: privileged ? user.prohibitLogin : false,
    location: user.location,
    website: user.website,
    description: user.description,
    visibility: user.visibility,
    followers_count: user.numFollowers,
    following_count: user.numFollowing,
    starred_repos_count: user.numStars,
  }
}
export type ApiUser = ReturnType<typeof toApiUser>

/** The UserSettings record: what `/user/settings` shows the user themself. */
export function toApiUserSettings(user: UserRow) {
  return {
    full_name: user.fullName,
    website: user.website,
    description: user.description,
    location: user.location,
    language: user.language,
    theme: user.theme,
    diff_view_style: user.diffViewStyle,
    hide_email: user.keepEmailPrivate,
    hide_activity: user.keepActivityPrivate,
    email_notifications_preference: user.emailNotificationsPreference,
  }
}

/** Id and name Gitea gives the stand-in for a deleted account (models/user NewGhostUser). */
const GHOST_USER_ID = -1
const GHOST_USER_NAME = 'Ghost'

/**
 * The User record of the "Ghost": the author shown on issues and comments whose account was
 * deleted (Gitea: id -1, login "Ghost", every other field empty or zero). Same shape as toApiUser.
 */
export function ghostUser(config: Config): ApiUser {
  return {
    id: GHOST_USER_ID,
    login: GHOST_USER_NAME,
    username: GHOST_USER_NAME,
    full_name: '',
    email: '',
    avatar_url: avatarUrl(config, { email: '', lowerName: GHOST_USER_NAME.toLowerCase(), avatar: '' }),
    html_url: webUrl(config, GHOST_USER_NAME),
    language: '',
    is_admin: false,
    last_login: ZERO_TIME,
    created: ZERO_TIME,
    restricted: false,
    active: false,
    prohibit_login: false,
    location: '',
    website: '',
    description: '',
    visibility: 'public',
    followers_count: 0,
    following_count: 0,
    starred_repos_count: 0,
  }
}

/** The Organization record; its e-mail is hidden from anonymous callers (`viewer` null). */
export function toApiOrg(config: Config, org: UserRow, viewer: UserRow | null) {
  return {
    id: org.id,
    username: org.name,
    name: org.name,
    full_name: org.fullName,
    email: viewer === null ? '' : org.email,
    avatar_url: avatarUrl(config, org),
    description: org.description,
    website: org.website,
    location: org.location,
    visibility: org.visibility,
    repo_admin_change_team_access: org.repoAdminChangeTeamAccess,
  }
}
export type ApiOrg = ReturnType<typeof toApiOrg>

/**
 * toApiUser for a list: each user is converted once (lists repeat the same authors and owners);
 * no user (a deleted account) is the Ghost.
 */
export function userConverter(config: Config, viewer: UserRow | null): (user: UserRow | undefined) => ApiUser {
  const done = new Map<number, ApiUser>()
  let ghost: ApiUser | undefined
  return (user) => {
    if (!user) return (ghost ??= ghostUser(config))
    let api = done.get(user.id)
    if (!api) done.set(user.id, (api = toApiUser(config, user, viewer)))
    return api
  }
}
