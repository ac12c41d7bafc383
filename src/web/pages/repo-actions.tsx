/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { AccessMode } from '../../auth/access'
import type { UserRow } from '../../auth/caller'
import type { RepoContext } from '../../auth/repo-context'
import { loadOrg } from '../../auth/org-context'
import { ApiError } from '../../lib/errors'
import { createRepository, newRepoFromOption } from '../../modules/repos/create'
import { canCreateOrgRepo, createOrgRepo, listOrgsOfUser } from '../../modules/orgs/service'
import { hasMarked, setMark } from '../../modules/stars/service'
import { answerTransfer, transferOffer } from '../../modules/repos/transfer'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { ButtonForm, CsrfField, CsrfText, FormCheck, FormText, formRoute, Notices, seeOther, ticked } from '../forms'
import { repoUrl } from '../links'
import { gitignoreNames, labelTemplateNames, licenseList } from '../../modules/misc/service'

/** Organisations the owner choice of the creation form lists at most. */
const MAX_OWNER_CHOICES = 50

/**
 * The buttons of a repository's header: star and watch (for a signed-in visitor) and, for its
 * administrators, the settings link; above them, for whoever may answer a pending transfer of it
 * (its recipient, the receiving organisation's owners), Gitea's banner with Accept and Reject. `ctx.mode` is the pipeline's answer; nothing is decided here.
 */
export async function repoActions(deps: AppDeps, ctx: RepoContext, web: WebContext): Promise<Html> {
  const user = ctx.caller.user
  const base = repoUrl(ctx.owner.name, ctx.repo.name)
  if (!user) return <></>
  const [starred, watching, offer] = await Promise.all([hasMarked(deps, 'star', user.id, ctx.repo.id), hasMarked(deps, 'watch', user.id, ctx.repo.id), transferOffer(deps, ctx.repo.id, user)])
  return (
    <>
    {offer?.mayAnswer ? (
      <section class="notice-ok" aria-labelledby="transfer-offer">
        <p id="transfer-offer">
          {ctx.owner.name} would like to transfer this repository to {offer.recipient.name}.
        </p>
        <ButtonForm ctx={web} action={`${base}/action/accept_transfer`} label="Accept transfer" />{' '}
        <ButtonForm ctx={web} action={`${base}/action/reject_transfer`} label="Reject transfer" danger />
      </section>
    ) : null}
    <div class="repo-actions">
      <ButtonForm ctx={web} action={`${base}/action/${starred ? 'unstar' : 'star'}`} label={starred ? 'Unstar' : 'Star'} />
      <ButtonForm ctx={web} action={`${base}/action/${watching ? 'unwatch' : 'watch'}`} label={watching ? 'Unwatch' : 'Watch'} />
      <a href={`${base}/fork`}>Fork</a>
      {ctx.mode >= AccessMode.Admin ? <a href={`${base}/settings`}>Settings</a> : null}
    </div>
    </>
  )
}

/** The owners a user may create a repository for: themself, then the organisations that let them. */
async function ownerChoices(deps: AppDeps, user: UserRow): Promise<string[]> {
  const orgs = await listOrgsOfUser(deps, user, user, { page: 1, limit: MAX_OWNER_CHOICES, offset: 0 })
  const names = [user.name]
  for (const org of orgs.rows) if (await canCreateOrgRepo(deps, await loadOrg(deps, org.name, user))) names.push(org.name)
  return names
}

/** Gitea's "+" menu, at the top of each creation page: a new repository, a migration, a new organisation. */
export function NewThings(props: { current: string }): Html {
  const items: [string, string][] = [
    ['/repo/create', 'New repository'],
    ['/repo/migrate', 'New migration'],
    ['/org/create', 'New organisation'],
  ]
  return (
    <nav class="counts" aria-label="Create">
      {items.map(([href, label]) => (
        <a href={href} aria-current={href === props.current ? 'page' : undefined}>
          {label}
        </a>
      ))}
    </nav>
  )
}

/**
 * The owner choice and the repository name of a creation form (fork, migration, new): the user
 * and the organisations that let them create, `owner.chosen` selected; the form's own field names.
 */
export async function ownerAndNameFields(deps: AppDeps, user: UserRow, owner: { field: string; chosen: string }, name: { field: string; value: string }): Promise<Html> {
  return (
    <>
      <label>
        Owner
        <select name={owner.field}>
          {(await ownerChoices(deps, user)).map((choice) => (
            <option value={choice} selected={choice.toLowerCase() === owner.chosen.toLowerCase()}>
              {choice}
            </option>
          ))}
        </select>
      </label>
      <label>
        Repository name
        <input name={name.field} required maxlength="100" value={name.value} />
      </label>
    </>
  )
}

const CreateForm = t.Object({
  _csrf: CsrfText,
  owner: FormText(255),
  name: FormText(100),
  description: FormText(2048),
  default_branch: FormText(255),
  private: FormCheck,
  auto_init: FormCheck,
  gitignores: FormText(255),
  license: FormText(255),
  issue_labels: FormText(255),
})
type CreateValues = Partial<typeof CreateForm.static>

async function createPage(deps: AppDeps, ctx: WebContext, user: UserRow, opts: { values?: CreateValues; error?: string; status?: number; owner?: string } = {}) {
  const v = opts.values
  const chosen = v?.owner ?? opts.owner ?? user.name
  // Gitea's choices of the first commit's files and of the label set (the API's template lists).
  const [gitignores, licenses, labelSets] = await Promise.all([gitignoreNames(), licenseList(deps), labelTemplateNames()])
  const choice = (name: 'gitignores' | 'license' | 'issue_labels', label: string, options: string[]) => (
    <label>
      {label}
      <select name={name}>
        <option value="">None</option>
        {options.map((o) => (
          <option value={o} selected={v?.[name] === o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  )
  return htmlResponse(
    <Layout ctx={ctx} title="New repository">
      <h1>New repository</h1>
      <NewThings current="/repo/create" />
      <Notices ctx={ctx} error={opts.error} />
      <form class="stack wide" method="post" action="/repo/create">
        <CsrfField ctx={ctx} />
        {await ownerAndNameFields(deps, user, { field: 'owner', chosen }, { field: 'name', value: v?.name ?? '' })}
        <label>
          Description
          <textarea name="description" rows="3" maxlength="2048">
            {v?.description ?? ''}
          </textarea>
        </label>
        <label>
          Default branch
          <input name="default_branch" maxlength="255" value={v?.default_branch ?? ''} placeholder="main" />
        </label>
        <label class="check">
          <input type="checkbox" name="private" checked={ticked(v?.private)} />
          Private: only the owner and collaborators see it
        </label>
        <label class="check">
          <input type="checkbox" name="auto_init" checked={v ? ticked(v.auto_init) : true} />
          Initialise with a README
        </label>
        {choice('gitignores', '.gitignore (with the first commit)', gitignores)}
        {choice('license', 'License (with the first commit)', licenses.map((l) => l.key))}
        {choice('issue_labels', 'Label set', labelSets)}
        <div>
          <button class="primary" type="submit">
            Create repository
          </button>
        </div>
      </form>
    </Layout>,
    opts.status ?? 200,
  )
}

const MARKS = { star: ['star', true], unstar: ['star', false], watch: ['watch', true], unwatch: ['watch', false] } as const
/** Gitea's `/{o}/{r}/action/accept_transfer` and `/action/reject_transfer`. */
const TRANSFER_ANSWERS = { accept_transfer: true, reject_transfer: false } as const

/**
 * `/repo/create` (Gitea's URL; `?org=` preselects an organisation) and the header's
 * `/{owner}/{repo}/action/{star,unstar,watch,unwatch}`: the API's creation and marking services;
 * `/action/{accept_transfer,reject_transfer}`: the recipient's answer to a pending transfer, as the
 * API's `transfer/accept` and `transfer/reject` (the repository's readers, archived ones too).
 */
export const repoActionPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/repo/create',
      async ({ request, caller, user, query }) => createPage(deps, webContext(deps.config, request, caller), user, { owner: query.org }),
      { scope: 'repository', signed: true, query: t.Object({ org: FormText(255) }), detail: pageDetail('webRepoCreateForm') },
    )
    .post(
      '/repo/create',
      ({ request, caller, body, user }) => {
        return formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            const name = (body.name ?? '').trim()
            const opts = {
              ...newRepoFromOption({
                name,
                description: body.description,
                private: ticked(body.private),
                auto_init: ticked(body.auto_init),
                default_branch: body.default_branch?.trim() || undefined,
                gitignores: body.gitignores || undefined,
                license: body.license || undefined,
                issue_labels: body.issue_labels || undefined,
              }),
              creator: user,
            }
            const ownerName = (body.owner ?? user.name).trim()
            if (ownerName.toLowerCase() === user.lowerName) await createRepository(deps, user, opts)
            // An organisation: seen as the API's `org` need sees it; the service checks who may create there.
            else await createOrgRepo(deps, await loadOrg(deps, ownerName, user), opts)
            return repoUrl(ownerName, name)
          },
          (web, error, status) => createPage(deps, web, user, { values: body, error, status }),
        )
      },
      { scope: 'repository', signed: true, body: CreateForm, detail: pageDetail('webRepoCreate') },
    )
    .post(
      '/:owner/:repo/action/:action',
      ({ request, caller, body, params, user, repo: ctx }) => {
        const answer = TRANSFER_ANSWERS[params.action as keyof typeof TRANSFER_ANSWERS]
        if (answer !== undefined)
          return formRoute(deps.config, { request, caller, body }, async () => {
            // The recipient's answer, as the API's transfer/accept and transfer/reject (answerTransfer's rule).
            const done = await answerTransfer(deps, ctx.repo, ctx.owner, user, answer)
            return seeOther(repoUrl(done.owner.name, done.repo.name), answer ? 'transfer-accepted' : 'transfer-rejected')
          })
        const mark = MARKS[params.action as keyof typeof MARKS]
        if (!mark) throw new ApiError(404, 'no such action')
        return formRoute(deps.config, { request, caller, body }, async () => {
          await setMark(deps, mark[0], user, ctx.repo, mark[1])
          return repoUrl(ctx.owner.name, ctx.repo.name)
        })
      },
      {
        scope: 'repository',
        // Marking changes the user's lists, not the repository: it works on an archived one too.
        repo: { level: 'read', writes: false },
        signed: true,
        params: t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), action: t.String({ maxLength: 16 }) }),
        body: t.Object({ _csrf: CsrfText }),
        detail: pageDetail('webRepoMark'),
      },
    )
