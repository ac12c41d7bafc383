/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Child } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { OrgContext } from '../../auth/org-context'
import type { TeamContext } from '../../auth/team-context'
import { reposToApi } from '../../convert/repo'
import { teamToApi } from '../../convert/team'
import { listMembers } from '../../modules/orgs/service'
import { addTeamMember, listOrgTeams, listTeamMembers, listTeamRepos, removeTeamMember } from '../../modules/teams/service'
import { getUserByName } from '../../modules/users/service'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { ButtonForm, CsrfField, CsrfText, FormText, formRoute, Notices, Pager, pageNumber, seeOther, pagesOf, type FormRequest } from '../forms'
import { ownerUrl, repoUrl } from '../links'

const LISTED = 50

/** The names a team's units are shown by (Gitea's unit keys). */
export const UNIT_LABELS: Record<string, string> = {
  'repo.code': 'Code',
  'repo.issues': 'Issues',
  'repo.pulls': 'Pull requests',
  'repo.releases': 'Releases',
  'repo.wiki': 'Wiki',
  'repo.ext_wiki': 'External wiki',
  'repo.ext_issues': 'External issue tracker',
  'repo.projects': 'Projects',
  'repo.packages': 'Packages',
}
const OrgParams = t.Object({ org: t.String({ maxLength: 255 }) })
const TeamParams = t.Object({ org: t.String({ maxLength: 255 }), team: t.String({ maxLength: 255 }) })
const ListQuery = t.Object({ page: FormText(10), done: FormText(40) })
const pageAt = (n: number) => ({ page: n, limit: LISTED, offset: (n - 1) * LISTED })

export const orgBase = (name: string) => `/org/${encodeURIComponent(name)}`
export const teamUrl = (org: string, team: string) => `${orgBase(org)}/teams/${encodeURIComponent(team.toLowerCase())}`

/** A page of the organisation: its links (for its owners, its settings' too), the notices, the body. */
export function orgPage(web: WebContext, org: OrgContext['org'], title: string, body: Child, opts: { error?: string; status?: number; owner?: boolean } = {}) {
  return htmlResponse(
    <Layout ctx={web} title={`${title} · ${org.name}`}>
      <h1>
        <a href={ownerUrl(org.name)}>{org.name}</a> · {title}
      </h1>
      <nav class="counts" aria-label="Organisation">
        <a href={ownerUrl(org.name)}>Repositories</a>
        <a href={`${orgBase(org.name)}/members`}>Members</a>
        <a href={`${orgBase(org.name)}/teams`}>Teams</a>
        {opts.owner ? <a href={`${orgBase(org.name)}/settings`}>Settings</a> : null}
      </nav>
      <Notices ctx={web} error={opts.error} />
      {body}
    </Layout>,
    opts.status ?? 200,
  )
}

async function teamPage(deps: AppDeps, team: TeamContext, web: WebContext, pageNo: number, opts: { error?: string; status?: number } = {}) {
  const members = await listTeamMembers(deps, team.viewer, team.team, pageAt(pageNo))
  const repos = await listTeamRepos(deps, team, pageAt(1))
  const records = await reposToApi(deps, team.viewer, repos.rows)
  const record = await teamToApi(deps, team.team, team.org, team.viewer)
  const base = teamUrl(team.org.name, team.team.name)
  return orgPage(
    web,
    team.org,
    `Team ${record.name}`,
    <>
      {record.description ? <p>{record.description}</p> : null}
      {team.owner ? (
        <p>
          <a href={`${base}/edit`}>Edit team</a> · <a href={`${base}/repositories`}>Manage repositories</a>
        </p>
      ) : null}
      <p class="muted">
        Permission: {record.permission}
        {record.includes_all_repositories ? ' · all repositories' : ''}
      </p>
      <table class="list" aria-label="Team units">
        <thead>
          <tr>
            <th scope="col">Unit</th>
            <th scope="col">Access</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(record.units_map).map(([unit, mode]) => (
            <tr>
              <th scope="row">{UNIT_LABELS[unit] ?? unit}</th>
              <td>{mode}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <h2>Members</h2>
      <div class="box">
        <ul class="entries" aria-label="Team members">
          {members.rows.map((u) => (
            <li>
              <a href={ownerUrl(u.name)}>{u.name}</a>{' '}
              {team.owner ? <ButtonForm ctx={web} action={`${base}/remove`} label={`Remove ${u.name}`} fields={{ uid: u.name }} danger /> : null}
            </li>
          ))}
          {members.rows.length === 0 ? <li class="muted">No members.</li> : null}
        </ul>
      </div>
      <Pager path={base} query={{}} page={pageNo} pages={pagesOf(members.total, LISTED)} />
      {team.owner ? (
        <form class="row" method="post" action={`${base}/add`}>
          <CsrfField ctx={web} />
          <label>
            Username
            <input name="uid" required maxlength="255" />
          </label>
          <button class="primary" type="submit">
            Add member
          </button>
        </form>
      ) : null}
      <h2>Repositories</h2>
      <div class="box">
        <ul class="entries" aria-label="Team repositories">
          {records.map((r) => (
            <li>
              <a href={repoUrl(r.owner.login, r.name)}>{r.full_name}</a>
            </li>
          ))}
          {records.length === 0 ? <li class="muted">No repositories.</li> : null}
        </ul>
      </div>
      {repos.total > records.length ? <p class="muted">{repos.total - records.length} more not shown.</p> : null}
    </>,
    { ...opts, owner: team.owner },
  )
}

/**
 * An organisation's members (`/org/{org}/members`: all of them for its members, the public ones
 * for others, as the API's lists), its teams (`/org/{org}/teams`, members) and a team's page
 * (`/org/{org}/teams/{team}`) where its organisation's owners add and remove members.
 */
export const orgPages = (deps: AppDeps, webApp: AreaApp) => {
  const memberChange = (change: typeof addTeamMember, done: 'member-added' | 'member-removed', id: string) => ({
    // Destructured: Elysia parses only the members a handler names (test/route-context.test.ts).
    handler: ({ request, caller, body, team }: FormRequest & { team: TeamContext; body: { uid?: string } }) =>
      formRoute(
        deps.config,
        { request, caller, body },
        async () => {
          await change(deps, team, await getUserByName(deps, (body.uid ?? '').trim()))
          return seeOther(teamUrl(team.org.name, team.team.name), done)
        },
        (web, error, status) => teamPage(deps, team, web, 1, { error, status }),
      ),
    options: { scope: 'organization' as const, team: 'owner' as const, params: TeamParams, body: t.Object({ _csrf: CsrfText, uid: FormText(255) }), detail: pageDetail(id) },
  })
  const add = memberChange(addTeamMember, 'member-added', 'webTeamMemberAdd')
  const remove = memberChange(removeTeamMember, 'member-removed', 'webTeamMemberRemove')
  return pageGroup(webApp)
    .get(
      '/org/:org/members',
      async ({ request, org, caller, query }) => {
        const page = pageNumber(query.page)
        const found = await listMembers(deps, org.viewer, org.org, !org.member, pageAt(page))
        return orgPage(
          webContext(deps.config, request, caller),
          org.org,
          'Members',
          <>
            <div class="box">
              <ul class="entries" aria-label="Members">
                {found.rows.map((u) => (
                  <li>
                    <a href={ownerUrl(u.name)}>{u.name}</a>
                    {u.fullName ? <span class="muted"> · {u.fullName}</span> : null}
                  </li>
                ))}
                {found.rows.length === 0 ? <li class="muted">No members to show.</li> : null}
              </ul>
            </div>
            <Pager path={`${orgBase(org.org.name)}/members`} query={{}} page={page} pages={pagesOf(found.total, LISTED)} />
          </>,
          { owner: org.owner },
        )
      },
      { scope: 'organization', org: 'visible', params: OrgParams, query: ListQuery, detail: pageDetail('webOrgMembers') },
    )
    .get(
      '/org/:org/teams',
      async ({ request, org, caller, query }) => {
        const page = pageNumber(query.page)
        const found = await listOrgTeams(deps, org.org, pageAt(page))
        return orgPage(
          webContext(deps.config, request, caller),
          org.org,
          'Teams',
          <>
            <div class="box">
              <ul class="entries" aria-label="Teams">
                {found.rows.map((team) => (
                  <li>
                    <a href={teamUrl(org.org.name, team.name)}>{team.name}</a>
                    {team.description ? <span class="muted"> · {team.description}</span> : null}
                  </li>
                ))}
              </ul>
            </div>
            <Pager path={`${orgBase(org.org.name)}/teams`} query={{}} page={page} pages={pagesOf(found.total, LISTED)} />
            {org.owner ? <p><a href={`${orgBase(org.org.name)}/teams/new`}>New team</a></p> : null}
          </>,
          { owner: org.owner },
        )
      },
      { scope: 'organization', signed: true, org: 'member', params: OrgParams, query: ListQuery, detail: pageDetail('webOrgTeams') },
    )
    .get(
      '/org/:org/teams/:team',
      async ({ request, team, caller, query }) => teamPage(deps, team, webContext(deps.config, request, caller), pageNumber(query.page)),
      { scope: 'organization', team: 'member', params: TeamParams, query: ListQuery, detail: pageDetail('webOrgTeam') },
    )
    .post('/org/:org/teams/:team/add', add.handler, add.options)
    .post('/org/:org/teams/:team/remove', remove.handler, remove.options)
}
