/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { AccessMode } from '../../auth/access'
import type { OrgRow } from '../../auth/org-context'
import type { TeamContext, TeamRow } from '../../auth/team-context'
import { unprocessable } from '../../lib/errors'
import { reposToApi } from '../../convert/repo'
import { teamUnitsView, withUnitModes } from '../../convert/team'
import { TEAM_UNITS } from '../../modules/teams/model'
import {
  addTeamRepo,
  changeAllTeamRepos,
  createTeam,
  deleteTeam,
  editTeam,
  listTeamRepos,
  removeTeamRepoById,
  type TeamFields,
} from '../../modules/teams/service'
import { pageDetail, webContext, type WebContext } from '../context'
import { ButtonForm, CsrfField, CsrfText, FormCheck, FormText, formRoute, Pager, type FormRequest, pageNumber, pagesOf, seeOther, SubmitRow, ticked } from '../forms'
import { repoUrl } from '../links'
import { orgBase, orgPage, teamUrl, UNIT_LABELS } from './org'

/*
 * An organisation's team settings at Gitea 1.23's addresses, for its owners: a new team
 * (`/org/{org}/teams/new`), a team's edit form (`/teams/{team}/edit`) and deletion
 * (`/teams/{team}/delete`), and its repositories (`/teams/{team}/repositories`, given and taken
 * back one at a time or all at once at `/teams/{team}/action/repo/{add|remove|addall|removeall}`),
 * each through the teams service the API's routes use, so its rules and refusals are the API's.
 */

const LISTED = 50
const NAME_MAX = 255
/** What the add form takes: a repository's name, or `{org}/{name}`. */
const REPO_NAME_MAX = 2 * NAME_MAX + 1
const OrgParams = t.Object({ org: t.String({ maxLength: NAME_MAX }) })
const TeamParams = t.Object({ org: t.String({ maxLength: NAME_MAX }), team: t.String({ maxLength: NAME_MAX }) })

/** The units a team form offers, by Gitea's unit type (its `unit_{type}` fields) and label. */
const UNIT_TYPES: [number, (typeof TEAM_UNITS)[number]][] = [
  [1, 'repo.code'],
  [2, 'repo.issues'],
  [3, 'repo.pulls'],
  [4, 'repo.releases'],
  [5, 'repo.wiki'],
  [6, 'repo.ext_wiki'],
  [7, 'repo.ext_issues'],
  [8, 'repo.projects'],
  [9, 'repo.packages'],
]
const UNIT_FIELDS = UNIT_TYPES.map(([type, key]) => ({ type, key, label: UNIT_LABELS[key]! }))
const PERMISSIONS = [
  ['read', 'Unit access: each unit as chosen below'],
  ['admin', 'Administrator: every unit, and the repositories’ settings'],
] as const
/** A unit's choices (its `unit_{type}` values, Gitea's access modes); the external tracker and wiki are read at most. */
const UNIT_CHOICES = [
  ['0', 'None'],
  ['1', 'Read'],
  ['2', 'Write'],
] as const
const readOnlyUnit = (u: (typeof UNIT_FIELDS)[number]) => u.key === 'repo.ext_issues' || u.key === 'repo.ext_wiki'
const UNIT_MODE_NAMES: Record<string, string> = { '0': 'none', '1': 'read', '2': 'write' }

/**
 * Gitea's CreateTeamForm: `team_name`, `description`, `repo_access` (`specific` or `all`),
 * `can_create_org_repo`, `permission` (`read`: per unit; `admin`), and a `unit_{type}` field per
 * unit, its mode: `0` none, `1` read, `2` write (Gitea's getUnitPerms; absent: none).
 */
const TeamForm = t.Object({
  _csrf: CsrfText,
  team_name: FormText(NAME_MAX),
  description: FormText(1024),
  repo_access: FormText(16),
  can_create_org_repo: FormCheck,
  permission: FormText(16),
  ...Object.fromEntries(UNIT_FIELDS.map((u) => [`unit_${u.type}`, FormText(16)])),
})
type TeamValues = Partial<typeof TeamForm.static> & Record<string, string | undefined>

const isOwnersTeam = (team: TeamRow | undefined) => team !== undefined && team.authorize >= AccessMode.Owner

/**
 * The mode the form gives a unit, by name: its `unit_{type}` (`0` none, `1` read, `2` write, more
 * is write as in Gitea; the external tracker and wiki read at most); anything else none.
 */
const unitChosen = (body: TeamValues, unit: (typeof UNIT_FIELDS)[number]): string => {
  const value = Math.min(Number(body[`unit_${unit.type}`] ?? 0) || 0, readOnlyUnit(unit) ? 1 : 2)
  return UNIT_MODE_NAMES[String(Math.max(0, Math.trunc(value)))] ?? 'none'
}

/** The form as the service's TeamFields (the Owners team: its name and description only, as Gitea's form). */
function teamFieldsOf(body: TeamValues, team?: TeamRow): TeamFields & { name: string } {
  const name = (body.team_name ?? '').trim()
  const description = (body.description ?? '').trim()
  if (isOwnersTeam(team)) return { name, description }
  const permission = body.permission || 'read'
  const unitsMap = Object.fromEntries(UNIT_FIELDS.map((u) => [u.key, unitChosen(body, u)]))
  // Gitea's team_no_units_error: a team below admin needs a unit to reach.
  if (permission !== 'admin' && Object.values(unitsMap).every((m) => m === 'none'))
    throw unprocessable('Allow access to at least one repository section.', 'Units')
  return {
    name,
    description,
    permission,
    units_map: unitsMap,
    includes_all_repositories: body.repo_access === 'all',
    can_create_org_repo: ticked(body.can_create_org_repo),
  }
}

/** The new team form, or a team's edit form (its deletion below it, but for the Owners team). */
async function teamFormPage(deps: AppDeps, web: WebContext, org: OrgRow, row: TeamRow | undefined, opts: { values?: TeamValues; error?: string; status?: number } = {}) {
  const team = row && (await withUnitModes(deps, [row]))[0]
  const v = opts.values
  const owners = isOwnersTeam(team)
  const record = team ? teamUnitsView(team) : undefined
  const action = team ? `${teamUrl(org.name, team.name)}/edit` : `${orgBase(org.name)}/teams/new`
  const permission = v?.permission ?? (team && team.authorize >= AccessMode.Admin ? 'admin' : 'read')
  /** The mode a unit's choice shows: as posted, the team's, or read for a new team. */
  const unitShown = (u: (typeof UNIT_FIELDS)[number]) => (v ? unitChosen(v, u) : record ? (record.units_map[u.key] ?? 'none') : 'read')
  const allRepos = v ? v.repo_access === 'all' : (team?.includesAllRepositories ?? false)
  return orgPage(
    web,
    org,
    team ? `Team ${team.name} · Settings` : 'New team',
    <>
      <form class="stack wide" method="post" action={action}>
        <CsrfField ctx={web} />
        {owners ? <input type="hidden" name="team_name" value={team!.name} /> : null}
        <label>
          Team name
          <input name="team_name" required maxlength="30" autocomplete="off" value={v?.team_name ?? team?.name ?? ''} disabled={owners} />
        </label>
        <label>
          Description
          <input name="description" maxlength="255" value={v?.description ?? team?.description ?? ''} />
        </label>
        {owners ? (
          <p class="muted">The Owners team has every permission on every repository; its name and permission cannot change.</p>
        ) : (
          <>
            <fieldset>
              <legend>Repository access</legend>
              <label class="check">
                <input type="radio" name="repo_access" value="specific" checked={!allRepos} />
                Specific repositories: those added to the team
              </label>
              <label class="check">
                <input type="radio" name="repo_access" value="all" checked={allRepos} />
                All repositories of the organisation, present and future
              </label>
            </fieldset>
            <label class="check">
              <input type="checkbox" name="can_create_org_repo" checked={v ? ticked(v.can_create_org_repo) : (team?.canCreateOrgRepo ?? false)} />
              Members may create repositories in the organisation
            </label>
            <fieldset>
              <legend>Permission</legend>
              {PERMISSIONS.map(([value, label]) => (
                <label class="check">
                  <input type="radio" name="permission" value={value} checked={permission === value} />
                  {label}
                </label>
              ))}
            </fieldset>
            <table class="list">
              <caption>Each unit’s access (administrators have every unit)</caption>
              <thead>
                <tr>
                  <th scope="col">Unit</th>
                  {UNIT_CHOICES.map(([, label]) => (
                    <th scope="col">{label}</th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {UNIT_FIELDS.map((u) => (
                  <tr>
                    <th scope="row">{u.label}</th>
                    {UNIT_CHOICES.map(([value, label]) => (
                      <td>
                        {readOnlyUnit(u) && value === '2' ? null : (
                          <input
                            type="radio"
                            name={`unit_${u.type}`}
                            value={value}
                            aria-label={`${u.label}: ${label}`}
                            checked={unitShown(u) === UNIT_MODE_NAMES[value]}
                          />
                        )}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </>
        )}
        <SubmitRow label={team ? 'Update team' : 'Create team'} />
      </form>
      {team && !owners ? (
        <details>
          <summary>Delete this team</summary>
          <p>Its members stay in the organisation but lose the access the team gave them.</p>
          <ButtonForm ctx={web} action={`${teamUrl(org.name, team.name)}/delete`} label={`Delete team ${team.name}`} danger />
        </details>
      ) : null}
    </>,
    { ...opts, owner: true },
  )
}

/** A team's repositories, with its organisation's owners' forms to add and remove them. */
async function teamReposPage(deps: AppDeps, ctx: TeamContext, web: WebContext, pageNo: number, opts: { error?: string; status?: number } = {}) {
  const found = await listTeamRepos(deps, ctx, { page: pageNo, limit: LISTED, offset: (pageNo - 1) * LISTED })
  const records = await reposToApi(deps, ctx.viewer, found.rows)
  const base = teamUrl(ctx.org.name, ctx.team.name)
  const coversAll = isOwnersTeam(ctx.team) || ctx.team.includesAllRepositories
  const changes = ctx.owner && !coversAll
  return orgPage(
    web,
    ctx.org,
    `Team ${ctx.team.name} · Repositories`,
    <>
      <p>
        <a href={base}>Back to the team</a>
      </p>
      {coversAll ? <p class="muted">This team reaches every repository of the organisation.</p> : null}
      <div class="box">
        <ul class="entries" aria-label="Team repositories">
          {records.map((r, i) => (
            <li>
              <a href={repoUrl(r.owner.login, r.name)}>{r.full_name}</a>{' '}
              {changes ? <ButtonForm ctx={web} action={`${base}/action/repo/remove`} label={`Remove ${r.name}`} fields={{ repoid: String(found.rows[i]!.id) }} danger /> : null}
            </li>
          ))}
          {records.length === 0 ? <li class="muted">No repositories.</li> : null}
        </ul>
      </div>
      <Pager path={`${base}/repositories`} query={{}} page={pageNo} pages={pagesOf(found.total, LISTED)} />
      {changes ? (
        <>
          <form class="row" method="post" action={`${base}/action/repo/add`}>
            <CsrfField ctx={web} />
            <label>
              Repository name
              <input name="repo_name" required maxlength={String(REPO_NAME_MAX)} autocomplete="off" />
            </label>
            <button class="primary" type="submit">
              Add repository
            </button>
          </form>
          <div class="buttons">
            <ButtonForm ctx={web} action={`${base}/action/repo/addall`} label="Add all repositories" />
            <ButtonForm ctx={web} action={`${base}/action/repo/removeall`} label="Remove all repositories" danger />
          </div>
        </>
      ) : null}
    </>,
    { ...opts, owner: ctx.owner },
  )
}

export const teamSettingsPages = (deps: AppDeps, webApp: AreaApp) => {
  /**
   * The needs of an owner's team form: the team, as its organisation's members see it (404 to
   * everyone else, as Gitea's team pages), then the organisation's owners (403 to its other members).
   */
  const owned = (id: string) => ({ scope: 'organization' as const, signed: true as const, team: 'member' as const, org: 'owner' as const, params: TeamParams, detail: pageDetail(id) })
  const NoBody = t.Object({ _csrf: CsrfText })
  type RepoChange = { team: TeamContext; body: { repo_name?: string; repoid?: string } }
  /**
   * A change of the team's repositories, back to its repositories page (a refusal shown there with
   * its status). The handler names the members it uses: Elysia parses only those
   * (test/route-context.test.ts).
   */
  const repoAction =
    (change: (c: RepoChange) => Promise<void>, done: 'team-repo-added' | 'team-repo-removed' | 'team-repos-added' | 'team-repos-removed') =>
    ({ request, caller, body, team }: FormRequest & RepoChange) =>
      formRoute(
        deps.config,
        { request, caller, body },
        async () => {
          await change({ team, body })
          return seeOther(`${teamUrl(team.org.name, team.team.name)}/repositories`, done)
        },
        (web, error, status) => teamReposPage(deps, team, web, 1, { error, status }),
      )
  const addRepo = repoAction(async ({ team, body }) => {
    // Gitea takes the last segment of what was typed (`org/repo` or `repo`).
    const name = (body.repo_name ?? '').trim().split('/').pop() ?? ''
    if (!name) throw unprocessable('Enter the name of one of the organisation’s repositories.', 'repo_name')
    await addTeamRepo(deps, team, team.org.name, name)
  }, 'team-repo-added')
  const removeRepo = repoAction(async ({ team, body }) => {
    const id = Number(body.repoid)
    if (!Number.isSafeInteger(id) || id <= 0) throw unprocessable('Choose a repository of the team.', 'repoid')
    await removeTeamRepoById(deps, team, id)
  }, 'team-repo-removed')
  const addAll = repoAction(async ({ team }) => await changeAllTeamRepos(deps, team, true), 'team-repos-added')
  const removeAll = repoAction(async ({ team }) => await changeAllTeamRepos(deps, team, false), 'team-repos-removed')
  return pageGroup(webApp)
    .get('/org/:org/teams/new', ({ request, caller, org }) => teamFormPage(deps, webContext(deps.config, request, caller), org.org, undefined), {
      scope: 'organization',
      signed: true,
      org: 'owner',
      params: OrgParams,
      detail: pageDetail('webTeamNewForm'),
    })
    .post(
      '/org/:org/teams/new',
      ({ request, caller, body, org }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            const team = await createTeam(deps, org, teamFieldsOf(body))
            return seeOther(teamUrl(org.org.name, team.name), 'team-created')
          },
          (web, error, status) => teamFormPage(deps, web, org.org, undefined, { values: body, error, status }),
        ),
      { scope: 'organization', signed: true, org: 'owner', params: OrgParams, body: TeamForm, detail: pageDetail('webTeamNew') },
    )
    .get(
      '/org/:org/teams/:team/edit',
      ({ request, caller, team }) => teamFormPage(deps, webContext(deps.config, request, caller), team.org, team.team),
      owned('webTeamEditForm'),
    )
    .post(
      '/org/:org/teams/:team/edit',
      ({ request, caller, body, team }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            const saved = await editTeam(deps, team, teamFieldsOf(body, team.team))
            return seeOther(teamUrl(team.org.name, saved.name), 'team-saved')
          },
          (web, error, status) => teamFormPage(deps, web, team.org, team.team, { values: body, error, status }),
        ),
      { ...owned('webTeamEdit'), body: TeamForm },
    )
    .post(
      '/org/:org/teams/:team/delete',
      ({ request, caller, body, team }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            await deleteTeam(deps, team)
            return seeOther(`${orgBase(team.org.name)}/teams`, 'team-deleted')
          },
          (web, error, status) => teamFormPage(deps, web, team.org, team.team, { error, status }),
        ),
      { ...owned('webTeamDelete'), body: NoBody },
    )
    .get(
      '/org/:org/teams/:team/repositories',
      ({ request, caller, team, query }) => teamReposPage(deps, team, webContext(deps.config, request, caller), pageNumber(query.page)),
      { scope: 'organization', team: 'member', params: TeamParams, query: t.Object({ page: FormText(10), done: FormText(40) }), detail: pageDetail('webTeamRepos') },
    )
    .post('/org/:org/teams/:team/action/repo/add', addRepo, { ...owned('webTeamRepoAdd'), body: t.Object({ _csrf: CsrfText, repo_name: FormText(REPO_NAME_MAX) }) })
    .post('/org/:org/teams/:team/action/repo/remove', removeRepo, { ...owned('webTeamRepoRemove'), body: t.Object({ _csrf: CsrfText, repoid: FormText(20) }) })
    .post('/org/:org/teams/:team/action/repo/addall', addAll, { ...owned('webTeamRepoAddAll'), body: NoBody })
    .post('/org/:org/teams/:team/action/repo/removeall', removeAll, { ...owned('webTeamRepoRemoveAll'), body: NoBody })
}
