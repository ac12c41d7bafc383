/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Child, Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { Caller, UserRow } from '../../auth/caller'
import type { RepoContext } from '../../auth/repo-context'
import { AccessMode } from '../../auth/access'
import { packageAccessMode } from '../../auth/package-access'
import { linkedRepos, packagesToApi } from '../../convert/package'
import {
  deletePackageVersion,
  getPackage,
  getPackageVersion,
  getVersionFileById,
  listLatestPackages,
  listVersionFiles,
  listVersionsOf,
  packageFileResponse,
  setPackageRepository,
  type PackageVersion,
} from '../../modules/packages/service'
import { listOwnedRepos } from '../../modules/repos/queries'
import { ApiError } from '../../lib/errors'
import type { Paged } from '../../lib/pagination'
import { webUrl } from '../../lib/urls'
import { isoTime } from '../../lib/time'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { ButtonForm, CsrfField, CsrfText, FormText, formRoute, type FormRequest, ListTable, Notices, Pager, pageNumber, pagesOf, seeOther } from '../forms'
import { ownerUrl, repoUrl } from '../links'
import { OwnerHeading, OwnerTabs } from './people'
import { RepoHeader, pageRepo } from './repo-chrome'
import { CodeNav, When } from './code-nav'
import { sizeText } from './source'

/*
 * The package pages at Gitea 1.23's addresses (routers/web/user/package.go, templates/package/,
 * templates/user/overview/packages.tmpl, templates/repo/packages.tmpl), from the packages service
 * and the Package record's converter: an owner's packages, a package's latest version, a
 * version's page (files, installation, versions), its file downloads, its versions, and the
 * settings (link to a repository, unlink, delete a version); a repository's linked packages.
 * Who sees and who changes is the registry's rule (the pipeline's `packageOwner` need).
 */

/** Packages and versions a list shows at a time (Gitea's UI.PackagesPagingNum). */
const PER_PAGE = 20
/** The versions a version's page lists beside it (Gitea's five latest). */
const LATEST_SHOWN = 5
/** Repositories the link form offers at most (the owner's, by name). */
const MAX_LINKABLE = 100
/** The registry's types Warren serves (the list filter's choices). */
const TYPES = [['generic', 'Generic']] as const

const Name = t.String({ maxLength: 255 })
const OwnerParams = t.Object({ owner: Name })
const PackageParams = t.Object({ owner: Name, type: t.String({ maxLength: 32 }), name: Name })
const VersionParams = t.Object({ owner: Name, type: t.String({ maxLength: 32 }), name: Name, version: Name })
const FileParams = t.Object({ owner: Name, type: t.String({ maxLength: 32 }), name: Name, version: Name, fileid: t.String({ maxLength: 20 }) })
const RepoParams = t.Object({ owner: Name, repo: Name })
const ListQuery = t.Object({ type: FormText(32), q: FormText(255), page: FormText(10) })
const VersionsQuery = t.Object({ q: FormText(255), page: FormText(10) })
const PageQuery = t.Object({ page: FormText(10) })
/** Gitea's PackageSettingForm: `action` (link, unlink, delete) and `repo_id`; `version` names the version to delete on the package's own settings. */
const SettingsForm = t.Object({ _csrf: CsrfText, action: FormText(16), repo_id: FormText(20), version: FormText(255) })
const DeleteForm = t.Object({ _csrf: CsrfText })

const seg = encodeURIComponent
const ownerPackagesUrl = (owner: string) => `${ownerUrl(owner)}/-/packages`
export const packageUrl = (owner: string, type: string, name: string) => `${ownerPackagesUrl(owner)}/${seg(type)}/${seg(name.toLowerCase())}`
export const versionUrl = (owner: string, type: string, name: string, version: string) => `${packageUrl(owner, type, name)}/${seg(version.toLowerCase())}`

type PackageRecord = Awaited<ReturnType<typeof packagesToApi>>[number]

/** What the viewer may do with the owner's packages (the registry's rule): whether they may change them. */
const mayWrite = async (deps: AppDeps, owner: UserRow, viewer: UserRow | null) => (await packageAccessMode(deps, owner, viewer)) >= AccessMode.Write

/** An owner's page (its heading and tabs, Packages current) around `body`. */
function ownerPage(web: WebContext, owner: UserRow, title: string, body: Child, status = 200): Response {
  return htmlResponse(
    <Layout ctx={web} title={`${title} · ${owner.name}`}>
      <OwnerHeading owner={owner} kind={owner.type === 0 ? 'User' : 'Organisation'} />
      <OwnerTabs owner={owner} current="packages" />
      {body}
    </Layout>,
    status,
  )
}

/** Who published a version when, and in which repository when the viewer may read it (Gitea's packages.published_by_in). */
function Published(props: { record: PackageRecord }): Html {
  const p = props.record
  return (
    <>
      Published <When iso={p.created_at} /> by <a href={ownerUrl(p.creator.login)}>{p.creator.login}</a>
      {p.repository ? (
        <>
          {' '}
          in <a href={repoUrl(p.repository.owner.login, p.repository.name)}>{p.repository.full_name}</a>
        </>
      ) : null}
    </>
  )
}

/** Versions as table rows: each a link to its page, when it was published, and what `action` adds. */
function VersionRows(props: { owner: string; pkg: PackageVersion['pkg']; rows: PackageVersion['version'][]; action?: (v: PackageVersion['version']) => Html }): Html {
  return (
    <>
      {props.rows.map((v) => (
        <tr>
          <td>
            <a href={versionUrl(props.owner, props.pkg.type, props.pkg.name, v.version)}>{v.version}</a>
          </td>
          <td>
            <When iso={isoTime(v.createdUnix)} />
          </td>
          {props.action ? <td>{props.action(v)}</td> : null}
        </tr>
      ))}
    </>
  )
}

/** Gitea's package list (templates/package/shared/list.tmpl): each package's latest version, who published it when, in which repository. */
function PackageList(props: { records: PackageRecord[]; empty: string }): Html {
  return (
    <div class="box">
      <ul class="entries" aria-label="Packages">
        {props.records.map((p) => (
          <li>
            <a href={versionUrl(p.owner.login, p.type, p.name, p.version)}>{p.name}</a> <span class="label">{p.type}</span> <span class="muted">{p.version}</span>
            <div class="muted">
              <Published record={p} />
            </div>
          </li>
        ))}
        {props.records.length === 0 ? <li class="muted">{props.empty}</li> : null}
      </ul>
    </div>
  )
}

/** A list's filters, a GET form: the search (`q`), and the type (Gitea's `type`) for the package lists (`withType`). */
function ListFilters(props: { path: string; label: string; withType?: boolean; type?: string; q?: string }): Html {
  return (
    <form class="filters" method="get" action={props.path} role="search" aria-label={props.label}>
      {props.withType ? (
        <label>
          Type
          <select name="type">
            <option value="">All</option>
            {TYPES.map(([id, label]) => (
              <option value={id} selected={props.type === id}>
                {label}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      <label>
        Search
        <input type="search" name="q" value={props.q ?? ''} maxlength="255" />
      </label>
      <button type="submit">Filter</button>
    </form>
  )
}

/** A page of packages with their latest versions, as records the viewer sees (one converter). */
async function listedPackages(deps: AppDeps, viewer: UserRow | null, found: Paged<PackageVersion>, path: string, query: { type?: string; q?: string }, n: number, empty: string): Promise<Html> {
  const records = await packagesToApi(deps, viewer, found.rows)
  return (
    <>
      <ListFilters path={path} label="Filter packages" withType type={query.type} q={query.q} />
      <p class="muted">{found.total === 1 ? '1 package' : `${found.total} packages`}</p>
      <PackageList records={records} empty={empty} />
      <Pager path={path} query={{ type: query.type, q: query.q }} page={n} pages={pagesOf(found.total, PER_PAGE)} />
    </>
  )
}

const pageOfNumber = (n: number) => ({ page: n, limit: PER_PAGE, offset: (n - 1) * PER_PAGE })

/** Gitea's generic installation (templates/package/content/generic.tmpl): a curl command per file, at the registry's address under the root URL. */
function GenericInstallation(props: { deps: AppDeps; record: PackageRecord; files: { name: string }[] }): Html {
  const { record } = props
  const lines = props.files.map((f) => `curl -OJ ${webUrl(props.deps.config, `api/packages/${seg(record.owner.login)}/generic/${seg(record.name)}/${seg(record.version)}/${seg(f.name)}`)}`)
  return (
    <section aria-labelledby="installation">
      <h2 id="installation">Installation</h2>
      <p>Download the package's files with curl:</p>
      <pre class="code">
        <code>{lines.join('\n')}</code>
      </pre>
      <p class="muted">
        See the <a href="https://docs.gitea.com/usage/packages/generic">Generic registry's documentation</a> for more.
      </p>
    </section>
  )
}

/** A version's page (Gitea's ViewPackageVersion, templates/package/view.tmpl). */
async function versionPage(deps: AppDeps, web: WebContext, caller: Caller, owner: UserRow, found: PackageVersion): Promise<Response> {
  const viewer = caller.user
  const [[record], files, latest, writable] = await Promise.all([
    packagesToApi(deps, viewer, [found]),
    listVersionFiles(deps, found.version.id),
    listVersionsOf(deps, found.pkg.id, undefined, { page: 1, limit: LATEST_SHOWN, offset: 0 }),
    mayWrite(deps, owner, viewer),
  ])
  const p = record!
  const here = versionUrl(owner.name, p.type, p.name, p.version)
  const pkgBase = packageUrl(owner.name, p.type, p.name)
  const total = files.reduce((sum, f) => sum + f.size, 0)
  return ownerPage(
    web,
    owner,
    `${p.name} ${p.version}`,
    <>
      <h2>
        {p.name} ({p.version})
      </h2>
      <Notices ctx={web} />
      <p class="muted">
        <Published record={p} />
      </p>
      {p.type === 'generic' ? <GenericInstallation deps={deps} record={p} files={files} /> : null}
      <section aria-labelledby="details">
        <h2 id="details">Details</h2>
        <ul class="entries box">
          <li>Type: {p.type}</li>
          <li>
            Published: <When iso={p.created_at} />
          </li>
          <li>Total size: {sizeText(total)}</li>
          {p.repository ? (
            <li>
              Repository: <a href={repoUrl(p.repository.owner.login, p.repository.name)}>{p.repository.full_name}</a>
            </li>
          ) : null}
        </ul>
      </section>
      <h2>Assets ({files.length})</h2>
      <ListTable label={`Assets (${files.length})`} columns={['File', 'Size', 'Registry address']} empty={files.length === 0 ? 'No files.' : false}>
        {files.map((f) => (
          <tr>
            <td>
              <a href={`${here}/files/${f.id}`}>{f.name}</a>
            </td>
            <td>{sizeText(f.size)}</td>
            <td>
              <a href={`/api/packages/${seg(owner.name)}/generic/${seg(p.name)}/${seg(p.version)}/${seg(f.name)}`} aria-label={`${f.name} from the registry`}>
                registry
              </a>
            </td>
          </tr>
        ))}
      </ListTable>
      <section aria-labelledby="versions">
        <h2 id="versions">Versions ({latest.total})</h2>
        <ul class="entries box">
          {latest.rows.map((v) => (
            <li>
              <a href={versionUrl(owner.name, p.type, p.name, v.version)} aria-current={v.id === found.version.id ? 'page' : undefined}>
                {v.version}
              </a>{' '}
              <span class="muted">
                on <When iso={isoTime(v.createdUnix)} />
              </span>
            </li>
          ))}
        </ul>
        <p>
          <a href={`${pkgBase}/versions`}>View all versions</a>
          {writable ? (
            <>
              {' · '}
              <a href={`${here}/settings`}>Settings</a>
            </>
          ) : null}
        </p>
      </section>
    </>,
  )
}

/** The settings page (Gitea's PackageSettings, templates/package/settings.tmpl): link or unlink a repository of the owner, delete versions. */
async function settingsPage(
  deps: AppDeps,
  web: WebContext,
  user: UserRow,
  owner: UserRow,
  found: { pkg: PackageVersion['pkg']; version?: PackageVersion['version'] },
  n: number,
  opts: { error?: string; status?: number } = {},
): Promise<Response> {
  const { pkg } = found
  const base = packageUrl(owner.name, pkg.type, pkg.name)
  const action = found.version ? `${versionUrl(owner.name, pkg.type, pkg.name, found.version.version)}/settings` : `${base}/settings`
  const [repos, versions, linked] = await Promise.all([
    listOwnedRepos(deps, user, owner, { page: 1, limit: MAX_LINKABLE, offset: 0 }),
    found.version ? Promise.resolve({ rows: [found.version], total: 1 }) : listVersionsOf(deps, pkg.id, undefined, pageOfNumber(n)),
    linkedRepos(deps, user, [pkg]),
  ])
  const current = (pkg.repoId !== null && linked.get(pkg.repoId)) || null
  return ownerPage(
    web,
    owner,
    `Settings · ${pkg.name}`,
    <>
      <p>
        <a href={found.version ? versionUrl(owner.name, pkg.type, pkg.name, found.version.version) : base}>
          {pkg.name}
          {found.version ? ` (${found.version.version})` : ''}
        </a>{' '}
        / <strong>Settings</strong>
      </p>
      <Notices ctx={web} error={opts.error} />
      <section aria-labelledby="link">
        <h2 id="link">Repository link</h2>
        <p>Link this package to a repository of {owner.name} so that it is listed in the repository's packages.</p>
        {pkg.repoId !== null ? (
          <p>
            Linked to {current ? <a href={repoUrl(current.owner.login, current.name)}>{current.full_name}</a> : 'a repository you may not see'}.
          </p>
        ) : (
          <p class="muted">Not linked to a repository.</p>
        )}
        <form class="stack" method="post" action={action}>
          <CsrfField ctx={web} />
          <input type="hidden" name="action" value="link" />
          <label for="link-repo">Repository</label>
          <select id="link-repo" name="repo_id" required>
            {repos.rows.map((r) => (
              <option value={String(r.id)} selected={r.id === pkg.repoId}>
                {r.name}
              </option>
            ))}
          </select>
          {repos.total > repos.rows.length ? <p class="muted">The first {repos.rows.length} of {repos.total} repositories are offered.</p> : null}
          <div>
            <button class="primary" type="submit">
              Link repository
            </button>
          </div>
        </form>
        {pkg.repoId !== null ? <ButtonForm ctx={web} action={action} label="Unlink repository" fields={{ action: 'unlink' }} /> : null}
      </section>
      <section class="danger-zone" aria-labelledby="delete">
        <h2 id="delete">Delete {found.version ? 'this version' : 'versions'}</h2>
        <p>Deleting a version removes its files for good; the package goes with its last version.</p>
        <ListTable label="Versions" columns={['Version', 'Published']} actions empty={versions.rows.length === 0 ? 'No versions.' : false}>
          <VersionRows
            owner={owner.name}
            pkg={pkg}
            rows={versions.rows}
            action={(v) => <ButtonForm ctx={web} action={action} label={`Delete ${v.version}`} fields={{ action: 'delete', version: v.version }} danger />}
          />
        </ListTable>
        {found.version ? null : <Pager path={action} page={n} pages={pagesOf(versions.total, PER_PAGE)} />}
      </section>
    </>,
    opts.status,
  )
}

/** Where a settings form goes after deleting `version`: the package's settings while it has versions, else the owner's packages (Gitea's). */
async function afterDeletion(deps: AppDeps, owner: UserRow, pkg: PackageVersion['pkg']): Promise<Response> {
  const left = await getPackage(deps, owner.id, pkg.type, pkg.name).catch(() => null)
  return seeOther(left ? `${packageUrl(owner.name, pkg.type, pkg.name)}/settings` : ownerPackagesUrl(owner.name), 'package-version-deleted')
}

/** A settings form's action (Gitea's PackageSettingsPost), through the packages service: link, unlink, delete. */
async function settingsAction(deps: AppDeps, user: UserRow, owner: UserRow, pkg: PackageVersion['pkg'], body: typeof SettingsForm.static, pathVersion?: string): Promise<Response> {
  const back = `${pathVersion === undefined ? packageUrl(owner.name, pkg.type, pkg.name) : versionUrl(owner.name, pkg.type, pkg.name, pathVersion)}/settings`
  if (body.action === 'link' || body.action === 'unlink') {
    const repoId = body.action === 'unlink' || body.repo_id === '0' ? null : Number(body.repo_id)
    if (repoId !== null && !(Number.isSafeInteger(repoId) && repoId > 0)) throw new ApiError(422, 'Choose a repository to link.')
    await setPackageRepository(deps, user, pkg, repoId)
    return seeOther(back, repoId === null ? 'package-unlinked' : 'package-linked')
  }
  if (body.action === 'delete') {
    const version = pathVersion ?? body.version
    if (!version) throw new ApiError(422, 'Name the version to delete.')
    await deletePackageVersion(deps, user, owner.id, pkg.type, pkg.name, version)
    return await afterDeletion(deps, owner, pkg)
  }
  throw new ApiError(400, 'unknown action: link, unlink or delete')
}

/** What a settings address names: the package, and the version when the address has one (Gitea 1.23's version settings). */
async function settingsTarget(deps: AppDeps, ownerId: number, params: { type: string; name: string; version?: string }): Promise<{ pkg: PackageVersion['pkg']; version?: PackageVersion['version'] }> {
  return params.version === undefined ? { pkg: await getPackage(deps, ownerId, params.type, params.name) } : await getPackageVersion(deps, ownerId, params.type, params.name, params.version)
}

/** A settings form's POST, at the package's address or a version's: the action, or the settings again with its refusal. */
function settingsPost(deps: AppDeps, c: FormRequest & { packageOwner: UserRow; params: { type: string; name: string; version?: string }; body: typeof SettingsForm.static }): Promise<Response> {
  const { packageOwner: owner, params, body } = c
  const user = c.caller.user!
  return formRoute(
    deps.config,
    c,
    async () => {
      const found = await settingsTarget(deps, owner.id, params)
      return await settingsAction(deps, user, owner, found.pkg, body, found.version?.version)
    },
    async (web, error, status) => {
      const found = await settingsTarget(deps, owner.id, params).catch(() => null)
      return found ? await settingsPage(deps, web, user, owner, found, 1, { error, status }) : ownerPage(web, owner, 'Packages', <Notices ctx={web} error={error} />, status)
    },
  )
}

/** The package pages of owners and repositories. */
export const packagePages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/:owner/-/packages',
      async ({ request, packageOwner: owner, caller, query }) => {
        const web = webContext(deps.config, request, caller)
        const n = pageNumber(query.page)
        const found = await listLatestPackages(deps, { ownerId: owner.id }, { type: query.type, q: query.q }, pageOfNumber(n))
        return ownerPage(web, owner, 'Packages', <>{await listedPackages(deps, caller.user, found, ownerPackagesUrl(owner.name), query, n, 'No packages to show.')}</>)
      },
      { scope: 'package', packageOwner: 'read', params: OwnerParams, query: ListQuery, detail: pageDetail('webOwnerPackages') },
    )
    .get(
      '/:owner/-/packages/:type/:name',
      async ({ packageOwner: owner, params }) => {
        // Gitea's RedirectToLastVersion.
        const pkg = await getPackage(deps, owner.id, params.type, params.name)
        const [latest] = (await listVersionsOf(deps, pkg.id, undefined, { page: 1, limit: 1, offset: 0 })).rows
        if (!latest) throw new ApiError(404, 'package does not exist')
        return seeOther(versionUrl(owner.name, pkg.type, pkg.name, latest.version))
      },
      { scope: 'package', packageOwner: 'read', params: PackageParams, detail: pageDetail('webPackageLatest') },
    )
    .get(
      '/:owner/-/packages/:type/:name/versions',
      async ({ request, packageOwner: owner, caller, params, query }) => {
        const web = webContext(deps.config, request, caller)
        const pkg = await getPackage(deps, owner.id, params.type, params.name)
        const n = pageNumber(query.page)
        const found = await listVersionsOf(deps, pkg.id, query.q, pageOfNumber(n))
        const path = `${packageUrl(owner.name, pkg.type, pkg.name)}/versions`
        return ownerPage(
          web,
          owner,
          `Versions · ${pkg.name}`,
          <>
            <h2>
              <a href={packageUrl(owner.name, pkg.type, pkg.name)}>{pkg.name}</a> versions
            </h2>
            <ListFilters path={path} label="Filter versions" q={query.q} />
            <ListTable label="Versions" columns={['Version', 'Published']} empty={found.rows.length === 0 ? 'No versions to show.' : false}>
              <VersionRows owner={owner.name} pkg={pkg} rows={found.rows} />
            </ListTable>
            <Pager path={path} query={{ q: query.q }} page={n} pages={pagesOf(found.total, PER_PAGE)} />
          </>,
        )
      },
      { scope: 'package', packageOwner: 'read', params: PackageParams, query: VersionsQuery, detail: pageDetail('webPackageVersions') },
    )
    .get(
      '/:owner/-/packages/:type/:name/settings',
      async ({ request, packageOwner: owner, caller, params, query }) => {
        const pkg = await getPackage(deps, owner.id, params.type, params.name)
        return await settingsPage(deps, webContext(deps.config, request, caller), caller.user!, owner, { pkg }, pageNumber(query.page))
      },
      { scope: 'package', packageOwner: 'write', params: PackageParams, query: PageQuery, detail: pageDetail('webPackageSettings') },
    )
    .post('/:owner/-/packages/:type/:name/settings', ({ request, caller, body, packageOwner, params }) => settingsPost(deps, { request, caller, body, packageOwner, params }), {
      scope: 'package',
      packageOwner: 'write',
      params: PackageParams,
      body: SettingsForm,
      detail: pageDetail('webPackageSettingsPost'),
    })
    .get(
      '/:owner/-/packages/:type/:name/:version',
      async ({ request, packageOwner: owner, caller, params }) =>
        await versionPage(deps, webContext(deps.config, request, caller), caller, owner, await getPackageVersion(deps, owner.id, params.type, params.name, params.version)),
      { scope: 'package', packageOwner: 'read', params: VersionParams, detail: pageDetail('webPackageVersion') },
    )
    .get(
      '/:owner/-/packages/:type/:name/:version/files/:fileid',
      async ({ packageOwner: owner, params }) => {
        const found = await getPackageVersion(deps, owner.id, params.type, params.name, params.version)
        return packageFileResponse(deps, await getVersionFileById(deps, found.version.id, /^\d+$/.test(params.fileid) ? Number(params.fileid) : NaN))
      },
      { scope: 'package', packageOwner: 'read', params: FileParams, detail: pageDetail('webPackageFile') },
    )
    .get(
      '/:owner/-/packages/:type/:name/:version/settings',
      async ({ request, packageOwner: owner, caller, params }) => {
        const found = await getPackageVersion(deps, owner.id, params.type, params.name, params.version)
        return await settingsPage(deps, webContext(deps.config, request, caller), caller.user!, owner, found, 1)
      },
      { scope: 'package', packageOwner: 'write', params: VersionParams, detail: pageDetail('webPackageVersionSettings') },
    )
    .post('/:owner/-/packages/:type/:name/:version/settings', ({ request, caller, body, packageOwner, params }) => settingsPost(deps, { request, caller, body, packageOwner, params }), {
      scope: 'package',
      packageOwner: 'write',
      params: VersionParams,
      body: SettingsForm,
      detail: pageDetail('webPackageVersionSettingsPost'),
    })
    .post(
      '/:owner/-/packages/:type/:name/:version/delete',
      ({ request, caller, body, packageOwner: owner, params }) => {
        const user = caller.user!
        return formRoute(deps.config, { request, caller, body }, async () => {
          const found = await getPackageVersion(deps, owner.id, params.type, params.name, params.version)
          await deletePackageVersion(deps, user, owner.id, found.pkg.type, found.pkg.name, found.version.version)
          return await afterDeletion(deps, owner, found.pkg)
        })
      },
      { scope: 'package', packageOwner: 'write', params: VersionParams, body: DeleteForm, detail: pageDetail('webPackageVersionDelete') },
    )
    .get(
      '/:owner/:repo/packages',
      async ({ request, repo: ctx, query }) => await repoPackagesPage(deps, webContext(deps.config, request, ctx.caller), ctx, query),
      { scope: 'repository', repo: { level: 'read', unit: 'packages' }, params: RepoParams, query: ListQuery, detail: pageDetail('webRepoPackages') },
    )

/** `/{o}/{r}/packages` (Gitea's repo.Packages): the packages linked to the repository, with the owner's filters. */
async function repoPackagesPage(deps: AppDeps, web: WebContext, ctx: RepoContext, query: typeof ListQuery.static): Promise<Response> {
  const n = pageNumber(query.page)
  const [repo, found] = await Promise.all([
    pageRepo(deps, ctx),
    listLatestPackages(deps, { repoId: ctx.repo.id }, { type: query.type, q: query.q }, pageOfNumber(n)),
  ])
  return htmlResponse(
    <Layout ctx={web} title={`Packages · ${repo.full_name}`}>
      <RepoHeader repo={repo} />
      <CodeNav repo={repo} current="packages" />
      <h2>Packages</h2>
      {await listedPackages(deps, ctx.caller.user, found, `${repoUrl(ctx.owner.name, ctx.repo.name)}/packages`, query, n, 'No packages are linked to this repository.')}
    </Layout>,
  )
}
