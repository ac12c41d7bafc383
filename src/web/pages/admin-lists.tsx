/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { UserRow } from '../../auth/caller'
import { ApiError } from '../../lib/errors'
import { searchEmails, setEmailActivated, type UserEmail } from '../../modules/admin/service'
import { deleteRepositoryConfirmed, repoWithOwnerById } from '../../modules/admin/repos'
import { adoptRepository, deleteUnadopted, listUnadopted } from '../../modules/repos/adopt'
import { searchRepositories } from '../../modules/repos/queries'
import { searchUsers } from '../../modules/users/service'
import { deletePackageVersionById, listAllPackageVersions } from '../../modules/packages/service'
import { pageDetail, webContext, type WebContext } from '../context'
import { ButtonForm, CsrfField, CsrfText, FormText, formRoute, seeOther } from '../forms'
import { ownerUrl, repoUrl } from '../links'
import { AdminQuery, adminListPage, adminPage, type AdminListSpec } from './admin'
import { packageUrl, versionUrl } from './packages'

/*
 * The site administration's lists at Gitea 1.23's addresses: organisations (`/-/admin/orgs`),
 * repositories (`/-/admin/repos`, each deletable after its name is typed, `/-/admin/repos/delete`),
 * unadopted repositories (`/-/admin/repos/unadopted`: adopt or delete, the service of the API's
 * `/admin/unadopted`), e-mail addresses (`/-/admin/emails`) and package versions
 * (`/-/admin/packages`, each deletable); each searched and paged, each through the same services
 * as the API.
 */

type RepoSearchRow = Awaited<ReturnType<typeof searchRepositories>>['rows'][number]
const day = (unix: number) => new Date(unix * 1000).toISOString().slice(0, 10)

const orgsList = (deps: AppDeps, admin: UserRow): AdminListSpec<UserRow> => ({
  path: '/-/admin/orgs',
  title: 'Organisations',
  searchLabel: 'Search organisations',
  noun: 'organisations',
  search: (q, page) => searchUsers(deps, admin, q, undefined, page, 1),
  columns: ['ID', 'Name', 'Visibility', 'Members', 'Teams', 'Repositories', 'Created'],
  empty: 'No organisations match.',
  row: (o) => (
  <tr>
    <td>{o.id}</td>
    <td>
      <a href={ownerUrl(o.name)}>{o.name}</a>
      {o.fullName ? <span class="muted"> · {o.fullName}</span> : null}
    </td>
    <td>{o.visibility}</td>
    <td>{o.numMembers}</td>
    <td>{o.numTeams}</td>
    <td>{o.numRepos}</td>
    <td>{day(o.createdUnix)}</td>
  </tr>
  ),
})

const reposList = (deps: AppDeps, admin: UserRow): AdminListSpec<RepoSearchRow> => ({
  path: '/-/admin/repos',
  title: 'Repositories',
  searchLabel: 'Search repositories',
  noun: 'repositories',
  // A site administrator reads every repository through the one visibility rule.
  search: (q, page) => searchRepositories(deps, admin, { q }, page),
  columns: ['ID', 'Owner', 'Name', 'Private', 'Kind', 'Stars', 'Forks', 'Issues', 'Size', 'Updated'],
  actions: true,
  empty: 'No repositories match.',
  row: (r) => (
  <tr>
    <td>{r.id}</td>
    <td>
      <a href={ownerUrl(r.ownerName)}>{r.ownerName}</a>
    </td>
    <td>
      <a href={repoUrl(r.ownerName, r.name)}>{r.name}</a>
    </td>
    <td>{r.isPrivate ? 'yes' : 'no'}</td>
    <td>{[r.isFork ? 'fork' : '', r.isMirror ? 'mirror' : '', r.isArchived ? 'archived' : ''].filter(Boolean).join(', ') || 'source'}</td>
    <td>{r.numStars}</td>
    <td>{r.numForks}</td>
    <td>{r.numIssues}</td>
    <td>{Math.ceil(r.size / 1024)} KiB</td>
    <td>{day(r.updatedUnix)}</td>
    <td>
      <a href={`/-/admin/repos/delete?id=${r.id}`} aria-label={`Delete ${r.ownerName}/${r.name}`}>
        Delete
      </a>
    </td>
  </tr>
  ),
})

/** A row id of a form or query (repository, user): a positive number, or 0, which names none. */
const idOf = (value: string | undefined) => (value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : 0)

/** The confirmation of a repository's deletion: its full name typed (Gitea's modal, as a page of its own). */
async function deleteRepoPage(deps: AppDeps, web: WebContext, id: string | undefined, opts: { confirm?: string; error?: string; status?: number } = {}) {
  const { repo, owner } = await repoWithOwnerById(deps, idOf(id))
  const full = `${owner.name}/${repo.name}`
  return adminPage(
    web,
    '/-/admin/repos',
    `Delete ${full}`,
    <form class="box" method="post" action="/-/admin/repos/delete">
      <CsrfField ctx={web} />
      <input type="hidden" name="id" value={String(repo.id)} />
      <p>
        This deletes <a href={repoUrl(owner.name, repo.name)}>{full}</a> with its issues, pull requests, releases, wiki and git data. It cannot be undone.
      </p>
      <label>
        Type the repository's full name, {full}, to confirm
        <input type="text" name="confirm" value={opts.confirm ?? ''} maxlength="255" required autocomplete="off" />
      </label>
      <div class="row">
        <button type="submit" class="danger">
          Delete this repository
        </button>
        <a href="/-/admin/repos">Cancel</a>
      </div>
    </form>,
    opts,
  )
}

const UNADOPTED = '/-/admin/repos/unadopted'

const unadoptedList = (deps: AppDeps, web: WebContext): AdminListSpec<string> => ({
  path: UNADOPTED,
  title: 'Unadopted repositories',
  searchLabel: 'Search (owner/name, * matches any part)',
  noun: 'unadopted repositories',
  intro: 'Git repositories in the data folder that no repository of the site accounts for. Adopting one makes it a private repository of its owner.',
  search: (q, page) => listUnadopted(deps, q, page),
  columns: ['Repository'],
  actions: true,
  empty: 'No unadopted repositories.',
  row: (full) => (
    <tr>
      <td>{full}</td>
      <td>
        <ButtonForm ctx={web} action={UNADOPTED} label={`Adopt ${full}`} fields={{ id: full, action: 'adopt' }} />{' '}
        <ButtonForm ctx={web} action={UNADOPTED} label={`Delete ${full}`} fields={{ id: full, action: 'delete' }} danger />
      </td>
    </tr>
  ),
})

const EMAILS = '/-/admin/emails'

const emailsList = (deps: AppDeps, web: WebContext): AdminListSpec<UserEmail> => ({
  path: EMAILS,
  title: 'E-mail addresses',
  searchLabel: 'Search e-mail addresses',
  noun: 'addresses',
  intro: "Deactivating a user's primary address deactivates their account; activating it activates the account again.",
  search: (q, page) => searchEmails(deps, q, page),
  columns: ['User', 'E-mail', 'Primary', 'Activated'],
  actions: true,
  empty: 'No addresses match.',
  row: (e, q) => (
    <tr>
      <td>
        <a href={ownerUrl(e.username)}>{e.username}</a>
      </td>
      <td>{e.email}</td>
      <td>{e.isPrimary ? 'yes' : 'no'}</td>
      <td>{e.isActivated ? 'yes' : 'no'}</td>
      <td>
        <ButtonForm
          ctx={web}
          action={`${EMAILS}/activate`}
          label={`${e.isActivated ? 'Deactivate' : 'Activate'} ${e.email}`}
          fields={{ uid: String(e.userId), email: e.email, activate: e.isActivated ? 'false' : 'true', q }}
          danger={e.isActivated}
        />
      </td>
    </tr>
  ),
})

const PACKAGES = '/-/admin/packages'

/** Gitea's admin package list: every owner's package versions, newest first, each deletable. */
const packagesList = (deps: AppDeps, web: WebContext): AdminListSpec<Awaited<ReturnType<typeof listAllPackageVersions>>['rows'][number]> => ({
  path: PACKAGES,
  title: 'Packages',
  searchLabel: 'Search packages',
  noun: 'package versions',
  search: (q, page) => listAllPackageVersions(deps, { q }, page),
  columns: ['Owner', 'Type', 'Name', 'Version', 'Published'],
  actions: true,
  empty: 'No packages match.',
  row: ({ pkg, version, ownerName }, q) => (
    <tr>
      <td>
        <a href={ownerUrl(ownerName)}>{ownerName}</a>
      </td>
      <td>{pkg.type}</td>
      <td>
        <a href={packageUrl(ownerName, pkg.type, pkg.name)}>{pkg.name}</a>
      </td>
      <td>
        <a href={versionUrl(ownerName, pkg.type, pkg.name, version.version)}>{version.version}</a>
      </td>
      <td>{day(version.createdUnix)}</td>
      <td>
        <ButtonForm ctx={web} action={`${PACKAGES}/delete`} label={`Delete ${pkg.name} ${version.version}`} fields={{ id: String(version.id), q }} danger />
      </td>
    </tr>
  ),
})
const DeletePackageForm = t.Object({ _csrf: CsrfText, id: FormText(20), q: FormText(255) })

const DeleteRepoQuery = t.Object({ id: FormText(20) })
const DeleteRepoForm = t.Object({ _csrf: CsrfText, id: FormText(20), confirm: FormText(255) })
const ActivateEmailForm = t.Object({ _csrf: CsrfText, uid: FormText(20), email: FormText(255), activate: FormText(8), q: FormText(255) })
const UnadoptedForm = t.Object({ _csrf: CsrfText, id: FormText(512), action: FormText(10) })

/** `owner/name` of the unadopted form's `id` (Gitea's form field), 422 otherwise. */
function unadoptedName(id: string | undefined): [string, string] {
  const parts = (id ?? '').split('/')
  if (parts.length !== 2 || !parts[0] || !parts[1]) throw new ApiError(422, 'Name the repository as owner/name.')
  return [parts[0], parts[1]]
}

/** The lists' pages and forms: site administrators only (the pipeline's siteAdmin need). */
export const adminListPages = (deps: AppDeps, webApp: AreaApp) => {
  const web = (request: Request, caller: Parameters<typeof webContext>[2]) => webContext(deps.config, request, caller)
  return pageGroup(webApp)
    .get('/-/admin/orgs', ({ request, caller, user, query }) => adminListPage(web(request, caller), query, orgsList(deps, user)), {
      scope: 'admin', siteAdmin: true,
      query: AdminQuery,
      detail: pageDetail('webAdminOrgs'),
    })
    .get('/-/admin/repos', ({ request, caller, user, query }) => adminListPage(web(request, caller), query, reposList(deps, user)), {
      scope: 'admin', siteAdmin: true,
      query: AdminQuery,
      detail: pageDetail('webAdminRepos'),
    })
    .get('/-/admin/repos/delete', ({ request, caller, query }) => deleteRepoPage(deps, web(request, caller), query.id), {
      scope: 'admin', siteAdmin: true,
      query: DeleteRepoQuery,
      detail: pageDetail('webAdminRepoDeleteForm'),
    })
    .post(
      '/-/admin/repos/delete',
      ({ request, caller, user, body }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            await deleteRepositoryConfirmed(deps, user, idOf(body.id), body.confirm ?? '')
            return seeOther('/-/admin/repos', 'repo-deleted')
          },
          (w, error, status) => deleteRepoPage(deps, w, body.id, { confirm: body.confirm, error, status }),
        ),
      { scope: 'admin', siteAdmin: true, body: DeleteRepoForm, detail: pageDetail('webAdminRepoDelete') },
    )
    .get(UNADOPTED, ({ request, caller, query }) => {
      const w = web(request, caller)
      return adminListPage(w, query, unadoptedList(deps, w))
    }, {
      scope: 'admin', siteAdmin: true,
      query: AdminQuery,
      detail: pageDetail('webAdminUnadopted'),
    })
    .post(
      UNADOPTED,
      ({ request, caller, user, body }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            const [owner, name] = unadoptedName(body.id)
            if (body.action === 'adopt') {
              await adoptRepository(deps, user, owner, name)
              return seeOther(UNADOPTED, 'repo-adopted')
            }
            if (body.action === 'delete') {
              await deleteUnadopted(deps, owner, name)
              return seeOther(UNADOPTED, 'unadopted-deleted')
            }
            throw new ApiError(422, 'Choose to adopt or to delete.')
          },
          (w, error, status) => adminListPage(w, {}, unadoptedList(deps, w), { error, status }),
        ),
      { scope: 'admin', siteAdmin: true, body: UnadoptedForm, detail: pageDetail('webAdminUnadoptedAction') },
    )
    .get(EMAILS, ({ request, caller, query }) => {
      const w = web(request, caller)
      return adminListPage(w, query, emailsList(deps, w))
    }, {
      scope: 'admin', siteAdmin: true,
      query: AdminQuery,
      detail: pageDetail('webAdminEmails'),
    })
    .get(PACKAGES, ({ request, caller, query }) => {
      const w = web(request, caller)
      return adminListPage(w, query, packagesList(deps, w))
    }, {
      scope: 'admin', siteAdmin: true,
      query: AdminQuery,
      detail: pageDetail('webAdminPackages'),
    })
    .post(
      `${PACKAGES}/delete`,
      ({ request, caller, user, body }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            await deletePackageVersionById(deps, user, idOf(body.id))
            return seeOther(body.q ? `${PACKAGES}?q=${encodeURIComponent(body.q)}` : PACKAGES, 'package-version-deleted')
          },
          (w, error, status) => adminListPage(w, { q: body.q }, packagesList(deps, w), { error, status }),
        ),
      { scope: 'admin', siteAdmin: true, body: DeletePackageForm, detail: pageDetail('webAdminPackageDelete') },
    )
    .post(
      `${EMAILS}/activate`,
      ({ request, caller, user, body }) =>
        formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            if (body.activate !== 'true' && body.activate !== 'false') throw new ApiError(422, 'Choose to activate or to deactivate the address.')
            await setEmailActivated(deps, user, idOf(body.uid), body.email ?? '', body.activate === 'true')
            return seeOther(body.q ? `${EMAILS}?q=${encodeURIComponent(body.q)}` : EMAILS, body.activate === 'true' ? 'email-activated' : 'email-deactivated')
          },
          (w, error, status) => adminListPage(w, { q: body.q }, emailsList(deps, w), { error, status }),
        ),
      { scope: 'admin', siteAdmin: true, body: ActivateEmailForm, detail: pageDetail('webAdminEmailActivate') },
    )
}
