/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Child } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { UserRow } from '../../auth/caller'
import type { OrgContext } from '../../auth/org-context'
import { unprocessable } from '../../lib/errors'
import { MAX_BLOCK_NOTE } from '../../modules/blocks/model'
import { blockNotes, blockPathUser, blockUser, listBlocks, setBlockNote, unblockUser } from '../../modules/blocks/service'
import { pageDetail, webContext, type WebContext } from '../context'
import { ButtonForm, CsrfField, CsrfText, FormText, formRoute, ListTable, Pager, pageNumber, pagesOf, seeOther, type FormRequest } from '../forms'
import { ownerUrl } from '../links'
import { settingsPage } from './settings-user'
import { orgSettingsPage } from './org-settings'

/** Blocked people a page lists. */
const LISTED = 50
const NAME_MAX = 255

/** The one form of the page, as Gitea's: `action` is block, unblock or note; `blockee` a user name. */
const BlockForm = t.Object({ _csrf: CsrfText, action: FormText(16), blockee: FormText(NAME_MAX), note: FormText(MAX_BLOCK_NOTE) })
type BlockValues = Partial<typeof BlockForm.static>
const ListQuery = t.Object({ page: FormText(10), done: FormText(40) })
const OrgParams = t.Object({ org: t.String({ maxLength: NAME_MAX }) })

/** Whose blocks a page shows: the signed-in person's, or an organisation's to its owners. */
interface Blocker {
  /** The one blocking (the person, or the organisation). */
  user: UserRow
  /** The page's path, which its forms post to. */
  path: string
  /** What blocking does, said to the reader. */
  about: string
  /** Who reads the notes. */
  noteReaders: string
  /** How the page frames its body. */
  frame: (web: WebContext, body: Child, opts: { error?: string; status?: number }) => Response
}

const userBlocker = (user: UserRow): Blocker => ({
  user,
  path: '/user/settings/blocked_users',
  about:
    'Someone you block cannot follow you, star or watch your repositories, open issues or pull requests in them, comment on, react to or review your issues and pull requests and those in your repositories, ask you for a review or be asked by you, become your collaborator or transfer a repository to you; their mentions of you notify you no more. Blocking also ends the follows, stars, watches, assignments and collaborations between you.',
  noteReaders: 'Only you can see the note.',
  frame: (web, body, opts) => settingsPage(web, '/user/settings/blocked_users', 'Blocked users', body, opts),
})

const orgBlocker = (org: OrgContext['org']): Blocker => {
  const path = `/org/${encodeURIComponent(org.name)}/settings/blocked_users`
  return {
    user: org,
    path,
    about:
      "Someone the organisation blocks cannot star or watch its repositories, open issues or pull requests in them, comment on, react to or review issues and pull requests there, become a collaborator or join one of its teams. Blocking also ends their stars, watches, assignments and collaborations in its repositories. The organisation's members cannot be blocked.",
    noteReaders: "Only the organisation's owners can see the note.",
    frame: (web, body, opts) => orgSettingsPage(web, org, path, 'Blocked users', body, opts),
  }
}

/** The page: what blocking forbids, the form that blocks someone, the people blocked with their notes, each unblocked or its note changed by a form. */
async function blockedUsersPage(deps: AppDeps, web: WebContext, viewer: UserRow, blocker: Blocker, pageAt: number, opts: { values?: BlockValues; error?: string; status?: number } = {}) {
  const found = await listBlocks(deps, viewer, blocker.user, { page: pageAt, limit: LISTED, offset: (pageAt - 1) * LISTED })
  const notes = await blockNotes(deps, blocker.user, found.rows.map((u) => u.id))
  // A refused block shows what was typed again; a refused unblock or note change shows the list as it is.
  const v = opts.values?.action === 'block' ? opts.values : undefined
  return blocker.frame(
    web,
    <>
      <p>{blocker.about}</p>
      <h3 id="block-a-user">Block a user</h3>
      <form class="stack" method="post" action={blocker.path} aria-labelledby="block-a-user">
        <CsrfField ctx={web} />
        <input type="hidden" name="action" value="block" />
        <label>
          Username
          <input name="blockee" required maxlength={String(NAME_MAX)} autocomplete="off" spellcheck="false" value={v?.blockee ?? ''} />
        </label>
        <label>
          Note (optional)
          <input name="note" maxlength={String(MAX_BLOCK_NOTE)} value={v?.note ?? ''} aria-describedby="note-help" />
        </label>
        <p id="note-help" class="muted">
          {blocker.noteReaders}
        </p>
        <div>
          <button class="danger" type="submit">
            Block user
          </button>
        </div>
      </form>
      <h3>Blocked users</h3>
      <div class="box">
        <ListTable label="Blocked users" columns={['User', 'Note']} actions>
          {found.rows.map((u) => (
            <tr>
              <td>
                <a href={ownerUrl(u.name)}>{u.name}</a>
                {u.fullName ? <span class="muted"> · {u.fullName}</span> : null}
              </td>
              <td>{notes.get(u.id) ? notes.get(u.id) : <span class="muted">No note</span>}</td>
              <td>
                <details>
                  <summary>Edit the note on {u.name}</summary>
                  <form class="row" method="post" action={blocker.path}>
                    <CsrfField ctx={web} />
                    <input type="hidden" name="action" value="note" />
                    <input type="hidden" name="blockee" value={u.name} />
                    <label>
                      Note on {u.name}
                      <input name="note" maxlength={String(MAX_BLOCK_NOTE)} value={notes.get(u.id) ?? ''} />
                    </label>
                    <button class="secondary" type="submit">
                      Save note
                    </button>
                  </form>
                </details>
                <ButtonForm ctx={web} action={blocker.path} label={`Unblock ${u.name}`} fields={{ action: 'unblock', blockee: u.name }} />
              </td>
            </tr>
          ))}
          {found.rows.length === 0 ? (
            <tr>
              <td colspan="3" class="muted">
                Nobody is blocked.
              </td>
            </tr>
          ) : null}
        </ListTable>
      </div>
      <Pager path={blocker.path} query={{}} page={pageAt} pages={pagesOf(found.total, LISTED)} />
    </>,
    opts,
  )
}

/** What the form asks, through the services the API's `/user/blocks` and `/orgs/{org}/blocks` call. */
async function act(deps: AppDeps, doer: UserRow, blocker: Blocker, body: BlockValues): Promise<Response> {
  const name = (body.blockee ?? '').trim()
  if (!name) throw unprocessable('Enter the name of a user.', 'blockee')
  const action = body.action ?? ''
  if (action !== 'block' && action !== 'unblock' && action !== 'note') throw unprocessable(`unknown action: ${action}`, 'action')
  const note = (body.note ?? '').trim()
  const { user } = await blockPathUser(deps, doer, blocker.user, name)
  if (action === 'block') await blockUser(deps, doer, blocker.user, user, note)
  else if (action === 'unblock') await unblockUser(deps, doer, blocker.user, user)
  else await setBlockNote(deps, blocker.user, user, note)
  return seeOther(blocker.path, action === 'block' ? 'blocked' : action === 'unblock' ? 'unblocked' : 'note-saved')
}

/** Why a form was refused, saying what it was for. */
const FAILED: Record<string, string> = { block: 'Could not block the user', unblock: 'Could not unblock the user', note: 'Could not save the note' }

function post(deps: AppDeps, c: FormRequest & { body: BlockValues }, doer: UserRow, blocker: Blocker) {
  return formRoute(
    deps.config,
    c,
    () => act(deps, doer, blocker, c.body),
    (web, error, status) => blockedUsersPage(deps, web, doer, blocker, 1, { values: c.body, error: `${FAILED[c.body.action ?? ''] ?? 'Refused'}: ${error}`, status }),
  )
}

/**
 * Blocked users (Gitea 1.23's `/user/settings/blocked_users` and, for an organisation's owners,
 * `/org/{org}/settings/blocked_users`): the list with each note, a form that blocks someone by
 * name with an optional note, and forms that unblock or change a note, all posted to the page
 * itself as Gitea's (`action`: block, unblock, note). The same services as the API's routes.
 */
export const blockedUsersPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/user/settings/blocked_users',
      ({ request, caller, user, query }) => blockedUsersPage(deps, webContext(deps.config, request, caller), user, userBlocker(user), pageNumber(query.page)),
      { scope: 'user', signed: true, query: ListQuery, detail: pageDetail('webUserBlockedUsers') },
    )
    .post('/user/settings/blocked_users', ({ request, caller, body, user }) => post(deps, { request, caller, body }, user, userBlocker(user)), { scope: 'user', signed: true, body: BlockForm, detail: pageDetail('webUserBlockUser') })
    .get(
      '/org/:org/settings/blocked_users',
      ({ request, caller, user, org, query }) => blockedUsersPage(deps, webContext(deps.config, request, caller), user, orgBlocker(org.org), pageNumber(query.page)),
      { scope: 'organization', signed: true, org: 'owner', params: OrgParams, query: ListQuery, detail: pageDetail('webOrgBlockedUsers') },
    )
    .post('/org/:org/settings/blocked_users', ({ request, caller, body, user, org }) => post(deps, { request, caller, body }, user, orgBlocker(org.org)), {
      scope: 'organization',
      signed: true,
      org: 'owner',
      params: OrgParams,
      body: BlockForm,
      detail: pageDetail('webOrgBlockUser'),
    })
