/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { RepoContext } from '../../auth/repo-context'
import type { AttachmentRow, ReleaseRow } from '../../db/schema'
import { MAX_TEXT, MAX_TITLE } from '../../lib/validate'
import { refNameOf, RepoWildcardParams } from '../../modules/files/model'
import { branchHeads } from '../../modules/branches/service'
import { MAX_TAG_NAME, MAX_TARGET } from '../../modules/releases/model'
import { createRelease, deleteRelease, editRelease, getRelease, getReleaseByTag } from '../../modules/releases/service'
import { addAssetFiles, checkAssetFiles, deleteAsset, editAsset, listAssets } from '../../modules/releases/assets'
import { MAX_ATTACHMENT_NAME } from '../../modules/attachments/model'
import { checkAttachmentName } from '../../modules/attachments/files'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { CsrfField, CsrfText, FormCheck, FormText, formFiles, formRoute, Notices, seeOther, ticked } from '../forms'
import { repoUrl } from '../links'
import { RepoHeader, pageRepo } from './repo-chrome'
import { CodeNav } from './code-nav'

/** Branches the target choice lists at most (a release's target is usually the default branch). */
const MAX_TARGETS = 100

const RepoParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }) })

/** Gitea's NewReleaseForm / EditReleaseForm: the draft button sends `draft`, the publishing one nothing. */
const ReleaseForm = t.Object({
  _csrf: CsrfText,
  tag_name: FormText(MAX_TAG_NAME),
  tag_target: FormText(MAX_TARGET),
  title: FormText(MAX_TITLE),
  content: FormText(MAX_TEXT),
  prerelease: FormCheck,
  draft: FormText(8),
  /** The files to attach (Gitea's `files`), Files of the multipart body, checked by the asset service. */
  files: t.Optional(t.Unknown()),
}, { additionalProperties: true })
type ReleaseValues = Partial<typeof ReleaseForm.static>

const DeleteForm = t.Object({ _csrf: CsrfText, id: FormText(20), confirm: FormCheck })

const releasesUrl = (ctx: RepoContext) => `${repoUrl(ctx.owner.name, ctx.repo.name)}/releases`
const editUrl = (ctx: RepoContext, tag: string) => `${releasesUrl(ctx)}/edit/${tag.split('/').map(encodeURIComponent).join('/')}`

/** The new and edit pages: the repository's header and tabs, then the form (and, editing, the deletion). */
async function releaseFormPage(
  deps: AppDeps,
  web: WebContext,
  ctx: RepoContext,
  opts: { release?: ReleaseRow; values?: ReleaseValues; error?: string; status?: number },
): Promise<Response> {
  const { release } = opts
  const v: ReleaseValues = opts.values ?? (release ? { title: release.title, content: release.note, prerelease: release.isPrerelease ? 'on' : undefined } : {})
  const [repo, branches, assets] = await Promise.all([
    pageRepo(deps, ctx),
    release ? null : branchHeads(deps, ctx, { page: 1, limit: MAX_TARGETS, offset: 0 }),
    release ? listAssets(deps, ctx, String(release.id), null) : null,
  ])
  const target = v.tag_target || ctx.repo.defaultBranch
  const heading = release ? `Edit release ${release.tagName}` : 'New release'
  return htmlResponse(
    <Layout ctx={web} title={`${heading} · ${repo.full_name}`}>
      <RepoHeader repo={repo} />
      <CodeNav repo={repo} current="releases" />
      <h2>{heading}</h2>
      <Notices ctx={web} error={opts.error} />
      <form class="stack wide" method="post" action={release ? editUrl(ctx, release.tagName) : `${releasesUrl(ctx)}/new`} enctype="multipart/form-data">
        <CsrfField ctx={web} />
        {release ? (
          <p>
            Tag: <strong>{release.tagName}</strong> <span class="muted">(target {release.target || ctx.repo.defaultBranch})</span>
          </p>
        ) : (
          <>
            <label>
              Tag name (an existing tag, or a new one made at the target)
              <input name="tag_name" required maxlength={String(MAX_TAG_NAME)} value={v.tag_name ?? ''} placeholder="v1.0.0" />
            </label>
            <label>
              Target branch (for a new tag)
              <select name="tag_target">
                {(branches?.rows ?? []).map((b) => (
                  <option value={b.name} selected={b.name === target}>
                    {b.name}
                  </option>
                ))}
              </select>
            </label>
          </>
        )}
        <label>
          Title
          <input name="title" required maxlength={String(MAX_TITLE)} value={v.title ?? ''} />
        </label>
        <label>
          Notes (markdown)
          <textarea name="content" rows="10" maxlength={String(MAX_TEXT)}>
            {v.content ?? ''}
          </textarea>
        </label>
        <label class="check">
          <input type="checkbox" name="prerelease" checked={ticked(v.prerelease)} />
          This is a pre-release (not ready for production)
        </label>
        {assets?.rows.length ? <AssetFields assets={assets.rows} values={v} /> : null}
        <label>
          Attach files (each at most {String(deps.config.maxAttachmentSize)} bytes)
          <input type="file" name="files" multiple />
        </label>
        <div>
          <button class="primary" type="submit">
            {release && !release.isDraft ? 'Update release' : 'Publish release'}
          </button>{' '}
          {!release || release.isDraft ? (
            <button class="secondary" type="submit" name="draft" value="1">
              Save draft
            </button>
          ) : null}
        </div>
      </form>
      {release ? (
        <section class="box danger-zone" aria-labelledby="delete-release">
          <h3 id="delete-release">Delete this release</h3>
          <p>The release and its assets are deleted; its tag stays.</p>
          <form class="stack" method="post" action={`${releasesUrl(ctx)}/delete`}>
            <CsrfField ctx={web} />
            <input type="hidden" name="id" value={String(release.id)} />
            <label class="check">
              <input type="checkbox" name="confirm" required />
              Yes, delete release {release.tagName}
            </label>
            <div>
              <button class="danger" type="submit">
                Delete release
              </button>
            </div>
          </form>
        </section>
      ) : null}
    </Layout>,
    opts.status ?? 200,
  )
}

/**
 * The edit form's assets (Gitea's edit form): each one's name in `attachment-edit-{uuid}` (a new
 * name renames it) and a box `attachment-del-{uuid}` (`true`) deleting it.
 */
function AssetFields(props: { assets: AttachmentRow[]; values: ReleaseValues }) {
  const values = props.values as Record<string, unknown>
  return (
    <fieldset class="stack">
      <legend>Attached files</legend>
      {props.assets.map((a) => {
        const typed = values[`attachment-edit-${a.uuid}`]
        return (
          <div class="asset">
            <label>
              Name of {a.name} ({String(a.size)} bytes)
              <input name={`attachment-edit-${a.uuid}`} maxlength={String(MAX_ATTACHMENT_NAME)} value={typeof typed === 'string' ? typed : a.name} />
            </label>
            <label class="check">
              <input type="checkbox" name={`attachment-del-${a.uuid}`} value="true" checked={values[`attachment-del-${a.uuid}`] === 'true'} />
              Delete {a.name}
            </label>
          </div>
        )
      })}
    </fieldset>
  )
}

/**
 * The edit form's asset changes, read for the release's own assets only (other fields named so
 * are passed over): renames (a changed, non-empty name) and deletions; names checked before anything changes.
 */
function assetChanges(body: Record<string, unknown>, assets: AttachmentRow[]) {
  const renames: { row: AttachmentRow; name: string }[] = []
  const deletions: AttachmentRow[] = []
  for (const row of assets) {
    if (body[`attachment-del-${row.uuid}`] === 'true') {
      deletions.push(row)
      continue
    }
    const name = body[`attachment-edit-${row.uuid}`]
    if (typeof name === 'string' && name.trim() !== '' && name.trim() !== row.name) renames.push({ row, name: checkAttachmentName(name.trim()) })
  }
  return { renames, deletions }
}

/** The release of an edit page's path; a missing one is the service's 404. */
const releaseAt = (deps: AppDeps, ctx: RepoContext, params: Record<string, unknown>) => getReleaseByTag(deps, ctx, refNameOf(params) ?? '')

// Writers of the releases unit, signed in, of a repository that is not archived (Gitea's reqRepoReleaseWriter, RepoMustNotBeArchived).
const WRITER = { scope: 'repository', repo: { level: 'write', unit: 'releases', writes: true }, signed: true } as const

/**
 * `/{o}/{r}/releases/new`, `/{o}/{r}/releases/edit/{tag}` and `/{o}/{r}/releases/delete` (Gitea's
 * pages): the releases service's creation, edit and deletion, with its rules and events.
 */
export const releaseFormPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get('/:owner/:repo/releases/new', async ({ request, repo: ctx }) => await releaseFormPage(deps, webContext(deps.config, request, ctx.caller), ctx, {}), {
      ...WRITER,
      params: RepoParams,
      detail: pageDetail('webReleaseNewForm'),
    })
    .post(
      '/:owner/:repo/releases/new',
      ({ request, caller, body, user, repo: ctx }) => {
        return formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            const draft = !!body.draft
            const files = formFiles(body.files)
            // The files are checked before the release is made, so a refused file leaves nothing behind.
            checkAssetFiles(deps, files)
            const created = await createRelease(deps, ctx, user, {
              tag_name: (body.tag_name ?? '').trim(),
              target_commitish: body.tag_target?.trim() || undefined,
              name: (body.title ?? '').trim(),
              body: body.content ?? '',
              draft,
              prerelease: ticked(body.prerelease),
            })
            await addAssetFiles(deps, ctx, user, created.id, files)
            return seeOther(releasesUrl(ctx), draft ? 'release-draft-saved' : 'release-published')
          },
          async (web, error, status) => await releaseFormPage(deps, web, ctx, { values: body, error, status }),
        )
      },
      { ...WRITER, params: RepoParams, body: ReleaseForm, detail: pageDetail('webReleaseNew') },
    )
    .get(
      '/:owner/:repo/releases/edit/*',
      async ({ request, params, repo: ctx }) => await releaseFormPage(deps, webContext(deps.config, request, ctx.caller), ctx, { release: await releaseAt(deps, ctx, params) }),
      { ...WRITER, params: RepoWildcardParams, detail: pageDetail('webReleaseEditForm') },
    )
    .post(
      '/:owner/:repo/releases/edit/*',
      async ({ request, caller, body, params, user, repo: ctx }) => {
        const release = await releaseAt(deps, ctx, params)
        return formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            // A draft stays one with the draft button and is published by the other; a published release stays published.
            const draft = release.isDraft && !!body.draft
            const files = formFiles(body.files)
            checkAssetFiles(deps, files)
            const { renames, deletions } = assetChanges(body, (await listAssets(deps, ctx, String(release.id), null)).rows)
            await editRelease(deps, ctx, user, String(release.id), {
              name: (body.title ?? '').trim(),
              body: body.content ?? '',
              replaceNotes: true,
              draft,
              prerelease: ticked(body.prerelease),
            })
            for (const row of deletions) await deleteAsset(deps, ctx, String(release.id), String(row.id))
            for (const { row, name } of renames) await editAsset(deps, ctx, String(release.id), String(row.id), name)
            await addAssetFiles(deps, ctx, user, release.id, files)
            return seeOther(releasesUrl(ctx), draft ? 'release-draft-saved' : release.isDraft ? 'release-published' : 'release-saved')
          },
          async (web, error, status) => await releaseFormPage(deps, web, ctx, { release, values: body, error, status }),
        )
      },
      { ...WRITER, params: RepoWildcardParams, body: ReleaseForm, detail: pageDetail('webReleaseEdit') },
    )
    .post(
      '/:owner/:repo/releases/delete',
      ({ request, caller, body, user, repo: ctx }) => {
        return formRoute(
          deps.config,
          { request, caller, body },
          async () => {
            const release = await getRelease(deps, ctx, body.id ?? '')
            if (!ticked(body.confirm)) {
              const web = webContext(deps.config, request, ctx.caller)
              return await releaseFormPage(deps, web, ctx, { release, error: 'Tick the confirmation to delete the release.', status: 422 })
            }
            await deleteRelease(deps, ctx, user, release)
            return seeOther(releasesUrl(ctx), 'release-deleted')
          },
        )
      },
      { ...WRITER, params: RepoParams, body: DeleteForm, detail: pageDetail('webReleaseDelete') },
    )
