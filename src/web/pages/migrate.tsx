/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { UserRow } from '../../auth/caller'
import { unprocessable } from '../../lib/errors'
import { migrateRepository } from '../../modules/migrations/service'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { CsrfField, CsrfText, FormCheck, FormText, formRoute, Notices, seeOther, ticked } from '../forms'
import { repoUrl } from '../links'
import { NewThings, ownerAndNameFields } from './repo-actions'

/**
 * The services Gitea's migration page offers (its `service_type` numbers). Warren migrates the
 * git data (and the wiki) of each the same way, a clone over git; they differ in the credentials
 * their forms ask: a token for GitHub and Gitea, a user name and password for the others.
 */
const SERVICES: Record<string, { name: string; token: boolean; example: string }> = {
  '1': { name: 'Git', token: false, example: 'https://example.com/owner/repo.git' },
  '2': { name: 'GitHub', token: true, example: 'https://github.com/owner/repo.git' },
  '3': { name: 'Gitea', token: true, example: 'https://gitea.example.com/owner/repo.git' },
  '5': { name: 'Gogs', token: false, example: 'https://gogs.example.com/owner/repo.git' },
}

const MigrateForm = t.Object({
  _csrf: CsrfText,
  service: FormText(4),
  clone_addr: FormText(2048),
  auth_username: FormText(255),
  auth_password: FormText(1024),
  auth_token: FormText(1024),
  uid: FormText(255),
  repo_name: FormText(100),
  private: FormCheck,
  description: FormText(255),
  mirror: FormCheck,
  mirror_interval: FormText(40),
  wiki: FormCheck,
})
type MigrateValues = Partial<typeof MigrateForm.static>

/** The choice of services (no `service_type`), as Gitea's first page. */
function choicePage(web: WebContext) {
  return htmlResponse(
    <Layout ctx={web} title="New migration">
      <h1>New migration</h1>
      <NewThings current="/repo/migrate" />
      <p>Migrate a repository from another service: its git data (branches, tags, and the wiki when asked) is cloned here.</p>
      <ul class="entries" aria-label="Services">
        {Object.entries(SERVICES).map(([id, service]) => (
          <li>
            <a href={`/repo/migrate?service_type=${id}`}>Migrate from {service.name}</a>
          </li>
        ))}
      </ul>
    </Layout>,
  )
}

async function migratePage(deps: AppDeps, web: WebContext, user: UserRow, serviceType: string, opts: { values?: MigrateValues; error?: string; status?: number } = {}) {
  const service = SERVICES[serviceType]!
  const v = opts.values
  const chosen = v?.uid ?? user.name
  return htmlResponse(
    <Layout ctx={web} title={`New migration from ${service.name}`}>
      <h1>New migration from {service.name}</h1>
      <NewThings current="/repo/migrate" />
      <p>
        <a href="/repo/migrate">Choose another service</a>
      </p>
      <Notices ctx={web} error={opts.error} />
      <form class="stack wide" method="post" action="/repo/migrate">
        <CsrfField ctx={web} />
        <input type="hidden" name="service" value={serviceType} />
        <label>
          Clone address
          <input name="clone_addr" type="url" required maxlength="2048" placeholder={service.example} value={v?.clone_addr ?? ''} />
        </label>
        {service.token ? (
          <label>
            Access token (optional)
            <input name="auth_token" type="password" maxlength="1024" autocomplete="off" />
          </label>
        ) : (
          <>
            <label>
              Username (optional)
              <input name="auth_username" maxlength="255" autocomplete="off" value={v?.auth_username ?? ''} />
            </label>
            <label>
              Password (optional)
              <input name="auth_password" type="password" maxlength="1024" autocomplete="off" />
            </label>
          </>
        )}
        {deps.config.mirrorEnabled && (
          <>
            <label class="check">
              <input type="checkbox" name="mirror" checked={ticked(v?.mirror)} />
              This repository will be a mirror, updated from the remote
            </label>
            <label>
              Mirror update interval (such as 8h0m0s or 10m; 0 for none; empty for the default)
              <input name="mirror_interval" maxlength="40" value={v?.mirror_interval ?? ''} />
            </label>
          </>
        )}
        <label class="check">
          <input type="checkbox" name="wiki" checked={ticked(v?.wiki)} />
          Migrate the wiki too
        </label>
        {await ownerAndNameFields(deps, user, { field: 'uid', chosen }, { field: 'repo_name', value: v?.repo_name ?? '' })}
        <label class="check">
          <input type="checkbox" name="private" checked={ticked(v?.private)} />
          Private: only the owner and collaborators see it
        </label>
        <label>
          Description
          <textarea name="description" rows="3" maxlength="255">
            {v?.description ?? ''}
          </textarea>
        </label>
        <div>
          <button class="primary" type="submit">
            Migrate repository
          </button>
        </div>
      </form>
    </Layout>,
    opts.status ?? 200,
  )
}

const serviceOf = (value: string | undefined): string => (value && value in SERVICES ? value : '1')

/**
 * `/repo/migrate` (Gitea's URL: the choice of services, then `?service_type=` its form): the
 * migrations service of POST /repos/migrate (`migrateRepository`: the same owners, remote policy
 * and errors, shown on the form again), then the new repository's page.
 */
export const migratePages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/repo/migrate',
      async ({ request, caller, user, query }) => {
        const web = webContext(deps.config, request, caller)
        return query.service_type && query.service_type in SERVICES ? migratePage(deps, web, user, query.service_type) : choicePage(web)
      },
      { scope: 'repository', signed: true, query: t.Object({ service_type: FormText(4) }), detail: pageDetail('webRepoMigrateForm') },
    )
    .post(
      '/repo/migrate',
      ({ request, caller, body, user }) => {
        return formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            const cloneAddr = (body.clone_addr ?? '').trim()
            if (!cloneAddr) throw unprocessable('Enter the clone address of the repository.', 'CloneAddr')
            const { repo, owner } = await migrateRepository(deps, user, {
              cloneAddr,
              authUsername: body.auth_username || undefined,
              authPassword: body.auth_password || body.auth_token || undefined,
              ownerName: (body.uid ?? user.name).trim(),
              repoName: (body.repo_name ?? '').trim(),
              mirror: ticked(body.mirror),
              mirrorInterval: body.mirror_interval,
              private: ticked(body.private),
              description: body.description || undefined,
              wiki: ticked(body.wiki),
            })
            return seeOther(repoUrl(owner.name, repo.name), 'migrated')
          },
          (web, error, status) => migratePage(deps, web, user, serviceOf(body.service), { values: body, error, status }),
        )
      },
      { scope: 'repository', signed: true, body: MigrateForm, detail: pageDetail('webRepoMigrate') },
    )
