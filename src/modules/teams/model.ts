import { t } from 'elysia'
import { BoundedList, QueryText, numeric } from '../../lib/validate'
import { OrganizationSchema } from '../orgs/model'
import { literals, recordLiterals } from '../../lib/literals'
import { AccessMode, REPO_UNITS } from '../../auth/access'
import { Int } from '../users/model'

/** The repository units a team can be given (Gitea's unit keys). */
export const TEAM_UNITS = REPO_UNITS
/** A unit's mode in `units_map` (Gitea parses these; a unit at admin is a writer's below an admin team). */
export const UNIT_MODES = ['none', 'read', 'write', 'admin'] as const
/** What a team may do; `owner` is the Owners team's alone and cannot be given through the API. */
const TEAM_PERMISSIONS = ['read', 'write', 'admin'] as const

/** Every unit at `mode` (an admin or owner team's: the external tracker and wiki at read, as Gitea keeps them). */
export const everyUnitMode = (mode: number): [string, number][] =>
  TEAM_UNITS.map((u) => [u, mode >= AccessMode.Admin && (u === 'repo.ext_issues' || u === 'repo.ext_wiki') ? AccessMode.Read : mode])

/** The Team record. */
export const TeamSchema = t.Object(
  {
    id: Int(),
    name: t.String(),
    description: t.String(),
    permission: recordLiterals(['none', ...TEAM_PERMISSIONS, 'owner']),
    organization: t.Union([OrganizationSchema, t.Null()]),
    units: t.Array(t.String()),
    units_map: t.Record(t.String(), t.String()),
    includes_all_repositories: t.Boolean(),
    can_create_org_repo: t.Boolean(),
  },
  { $id: '#/components/schemas/Team' },
)

const teamFields = {
  name: t.String(),
  description: t.Optional(t.String()),
  units: t.Optional(BoundedList(literals(TEAM_UNITS))),
  /** Each unit's own mode (Gitea 1.23); takes precedence over `units` and `permission` below admin. */
  units_map: t.Optional(
    t.Record(t.String({ maxLength: 64 }), literals(UNIT_MODES), {
      maxProperties: 32,
      description: 'the mode of each unit (repo.code, repo.issues, ...): none, read or write (admin teams have admin on every unit)',
    }),
  ),
  includes_all_repositories: t.Optional(t.Boolean()),
  can_create_org_repo: t.Optional(t.Boolean()),
}

/** CreateTeamOption; names and lengths are checked by the service. */
export const CreateTeamOption = t.Object(
  { ...teamFields, permission: t.Optional(literals(TEAM_PERMISSIONS)) },
  { $id: '#/components/schemas/CreateTeamOption' },
)

/** EditTeamOption: every field optional, absent = unchanged; the Owners team may send back `owner`. */
export const EditTeamOption = t.Partial(t.Object({ ...teamFields, permission: literals([...TEAM_PERMISSIONS, 'owner']) }), {
  $id: '#/components/schemas/EditTeamOption',
})

/** A team id in a path: a non-numeric one is an unknown team (404), not a validation error. */
const TeamId = t.String({ description: 'id of the team' })
export const TeamParams = t.Object({ id: TeamId })
export const TeamMemberParams = t.Object({ id: TeamId, username: t.String() })
export const TeamRepoParams = t.Object({ id: TeamId, org: t.String(), repo: t.String() })

/** `/orgs/{org}/teams/search` query: `q`, `include_desc` (Go's boolean; absent: true), page and limit. */
export const TeamSearchQuery = t.Object({
  q: QueryText(),
  include_desc: QueryText('also search the description (default true)'),
  page: t.Optional(numeric()),
  limit: t.Optional(numeric()),
})

/** The `/orgs/{org}/teams/search` answer. */
export const TeamSearchResult = t.Object({ ok: t.Boolean(), data: t.Array(TeamSchema) })

/** `/repos/{owner}/{repo}/teams/{team}`. */
export const RepoTeamParams = t.Object({ owner: t.String(), repo: t.String(), team: t.String() })
