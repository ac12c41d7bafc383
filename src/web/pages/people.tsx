/** @jsxImportSource warren-jsx */
import { Elysia, t } from 'elysia'
import { inArray } from 'drizzle-orm'
import { users } from '../../db/schema'
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import type { UserRow } from '../../auth/caller'
import type { RepoRow } from '../../auth/access'
import { listCallerRepos, listOwnedRepos } from '../../modules/repos/queries'
import { rootInfo } from '../../modules/docs'
import { Layout } from '../layout'
import { Notices } from '../forms'
import { htmlResponse, pageDetail, webContext } from '../context'
import { ownerUrl, repoUrl } from '../links'

/** Repositories a page lists at most (the rest are counted). */
const MAX_LISTED = 100

export function RepoList(props: { owners: Map<number, string>; rows: RepoRow[]; total: number; empty: string }): Html {
  return (
    <div class="box">
      <ul class="entries" aria-label="Repositories">
        {props.rows.map((r) => {
          const owner = props.owners.get(r.ownerId) ?? ''
          return (
            <li>
              <a href={repoUrl(owner, r.name)}>
                {owner}/{r.name}
              </a>
              {r.isPrivate ? <span class="muted"> (private)</span> : null}
              {r.description ? <div class="muted">{r.description}</div> : null}
            </li>
          )
        })}
        {props.rows.length === 0 ? <li class="muted">{props.empty}</li> : null}
      </ul>
      {props.total > props.rows.length ? <p class="notice muted">{props.total - props.rows.length} more not shown.</p> : null}
    </div>
  )
}

/** Owner names of repository rows, read in one query. */
export async function ownerNames(deps: AppDeps, rows: RepoRow[], known: UserRow[]): Promise<Map<number, string>> {
  const names = new Map(known.map((u) => [u.id, u.name]))
  const missing = [...new Set(rows.map((r) => r.ownerId).filter((id) => !names.has(id)))]
  if (missing.length) {
    for (const u of await deps.db.select({ id: users.id, name: users.name }).from(users).where(inArray(users.id, missing))) names.set(u.id, u.name)
  }
  return names
}

/** `/` (home: the signed-in user's repositories, or a sign-in link) and `/{owner}` (a profile). */
export const peoplePages = (deps: AppDeps) =>
  new Elysia({ name: 'web-people', detail: { hide: true } })
    .use(pipeline(deps, { session: true }))
    .get(
      '/',
      async ({ request, caller }) => {
        // Scripts and clients asking for anything but HTML get the service's description as before.
        if (!/^\s*text\/html/i.test(request.headers.get('accept') ?? '')) return rootInfo(deps.config)
        const web = webContext(deps.config, request, caller)
        const user = caller.user
        if (!user)
          return htmlResponse(
            <Layout ctx={web} title="Home">
              <h1>Warren</h1>
              <p>A self-hosted git service.</p>
              <p>
                <a href="/user/login">Sign in</a> to see your repositories.
              </p>
            </Layout>,
          )
        const { rows, total } = await listCallerRepos(deps, user, { page: 1, limit: MAX_LISTED, offset: 0 })
        return htmlResponse(
          <Layout ctx={web} title="Home">
            <h1>Your repositories</h1>
            <Notices ctx={web} />
            <RepoList owners={await ownerNames(deps, rows, [user])} rows={rows} total={total} empty="You have no repositories yet." />
          </Layout>,
        )
      },
      { caller: true, detail: pageDetail('webHome') },
    )
    .get(
      '/:owner',
      async ({ request, owner, caller }) => {
        const web = webContext(deps.config, request, caller)
        const { rows, total } = await listOwnedRepos(deps, caller.user, owner, { page: 1, limit: MAX_LISTED, offset: 0 })
        const kind = owner.type === 1 ? 'Organisation' : 'User'
        return htmlResponse(
          <Layout ctx={web} title={owner.name}>
            <h1>
              <a href={ownerUrl(owner.name)}>{owner.name}</a>
              {owner.fullName ? <span class="muted"> · {owner.fullName}</span> : null}
            </h1>
            <p class="muted">{kind}</p>
            <Notices ctx={web} />
            {owner.description ? <p>{owner.description}</p> : null}
            <h2>Repositories</h2>
            <RepoList owners={await ownerNames(deps, rows, [owner])} rows={rows} total={total} empty="No repositories to show." />
          </Layout>,
        )
      },
      { owner: true, params: t.Object({ owner: t.String({ maxLength: 255 }) }), detail: pageDetail('webOwner') },
    )
