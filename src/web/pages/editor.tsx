/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { Child, Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { UserRow } from '../../auth/caller'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { branchProtectionView, branchRulesOf } from '../../auth/protection'
import { type ApiRepo } from '../../convert/repo'
import { MAX_API_BODY } from '../../config'
import { normaliseTreePath } from '../../git/blob'
import { isSafeRefName } from '../../git/ref-name'
import { objectInfos } from '../../git/objects'
import { entryAt, folderTree } from '../../git/tree'
import { ApiError, unprocessable } from '../../lib/errors'
import { RepoWildcardParams, wildcardOf } from '../../modules/files/model'
import { MAX_MESSAGE_LENGTH, MAX_PATH_LENGTH } from '../../modules/contents/model'
import { treePath } from '../../modules/contents/paths'
import { changeFiles, checkWritable, cherryPick, type FileChange } from '../../modules/contents/write'
import { getCommit } from '../../modules/commits/service'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext, type WebContext } from '../context'
import { errorPage } from '../errors'
import { CsrfField, CsrfText, FormCheck, FormText, formFiles, formRoute, Notices, seeOther, ticked, withoutFieldPrefix } from '../forms'
import { cherryPickUrl, editorUrl, rawUrl, refPath, repoUrl, srcUrl } from '../links'
import { branchNames, fileAt, resolveSource } from '../source-data'
import { textDiff, type Diff } from '../diff-data'
import { DiffView } from '../diff'
import { RepoHeader, pageRepo } from './repo-chrome'
import { CodeNav } from './code-nav'
import { sizeText } from './source'
import { multiline } from './issue-parts'

/*
 * Gitea's web editor: `/{o}/{r}/_new/{branch}/{folder}` (a new file), `_edit/{branch}/{path}` (a
 * text file's content and path), `_delete/{branch}/{path}` (a file, after a confirmation) and
 * `_upload/{branch}/{folder}` (files of a multipart form into a folder), each a form posted to its
 * own address. Every commit goes through the contents service the API's contents routes use
 * (`changeFiles`): the one push path decides whether the branch may move (branch protection),
 * and the push is recorded, announced and delivered as any other. A form opened on a file carries
 * the blob id it showed (`sha`), so that a file changed meanwhile is refused, not overwritten.
 */

/** Longest path (still URL-encoded) an editor page reads from its address. */
const MAX_EDITOR_PATH = 4096
/** Gitea's CommitSummary bound. */
const MAX_SUMMARY = 100
/** Files one upload may commit (the body itself is bounded by WARREN_MAX_API_BODY, each file by WARREN_MAX_BLOB_SIZE). */
export const MAX_UPLOAD_FILES = 20
/** How many `{user}-patch-{n}` names the form tries for its suggested new branch. */
const PATCH_NAMES = 20

const DIRECT = 'direct'
const NEW_BRANCH = 'commit-to-new-branch'

/** What every editor form sends about its commit (Gitea's EditRepoFileForm and its kin). */
const commitFields = {
  _csrf: CsrfText,
  commit_summary: FormText(MAX_SUMMARY),
  commit_message: FormText(MAX_MESSAGE_LENGTH),
  commit_choice: FormText(32),
  new_branch_name: FormText(255),
  signoff: FormCheck,
}
/** A new or edited file: its path, its text, and (editing) the blob id the form showed. */
const FileForm = t.Object({ ...commitFields, tree_path: FormText(MAX_PATH_LENGTH), content: FormText(MAX_API_BODY), sha: FormText(64) })
const DeleteForm = t.Object({ ...commitFields, sha: FormText(64) })
/** A cherry-pick or revert (Gitea's CherryPickForm): the commit part, and `revert`. */
const PickForm = t.Object({ ...commitFields, revert: FormText(10) })
/** Gitea links a revert with `?cherry-pick-type=revert`; Warren's older `?revert=true` is read too. */
const PickQuery = t.Object({ revert: FormText(10), 'cherry-pick-type': FormText(20) })
const PickParams = t.Object({ owner: t.String(), repo: t.String(), sha: t.String({ maxLength: 64 }) }, { additionalProperties: true })
/** Other branches the cherry-pick page links to as targets. */
const PICK_BRANCHES = 50
/** The files come as Files of the multipart body (one or several `files`), checked by the handler. */
const UploadForm = t.Object({ ...commitFields, tree_path: FormText(MAX_PATH_LENGTH), files: t.Optional(t.Unknown()) })

type CommitBody = { commit_summary?: string; commit_message?: string; commit_choice?: string; new_branch_name?: string; signoff?: string }

/** The branch an editor address names (longest match), and the path after it; an empty repository's default branch before its first commit. */
interface EditAt {
  branch: string
  /** The branch's head; null in an empty repository. */
  commit: string | null
  path: string[]
}

async function branchAt(deps: AppDeps, ctx: RepoContext, wildcard: string): Promise<EditAt | null> {
  const segments = wildcard.length <= MAX_EDITOR_PATH ? normaliseTreePath(wildcard) : null
  if (!segments) return null
  const at = await resolveSource(deps, ctx, 'branch', segments)
  if (at) return { branch: at.ref, commit: at.commit, path: at.path }
  const first = ctx.repo.defaultBranch.split('/')
  if (ctx.repo.isEmpty && first.every((s, i) => segments[i] === s)) return { branch: ctx.repo.defaultBranch, commit: null, path: segments.slice(first.length) }
  return null
}

/** What the commit part of a form shows. */
interface CommitValues {
  summary: string
  message: string
  choice: string
  newBranch: string
  signoff: boolean
}

const valuesOf = (body: CommitBody): CommitValues => ({
  summary: body.commit_summary ?? '',
  message: body.commit_message ?? '',
  choice: body.commit_choice === NEW_BRANCH ? NEW_BRANCH : DIRECT,
  newBranch: body.new_branch_name ?? '',
  signoff: ticked(body.signoff),
})

/** The first `{user}-patch-{n}` branch that does not exist (Gitea's GetUniquePatchBranchName), or ''. */
async function patchBranchName(deps: AppDeps, ctx: RepoContext, user: UserRow): Promise<string> {
  const names = Array.from({ length: PATCH_NAMES }, (_, i) => `${user.name.toLowerCase()}-patch-${i + 1}`).filter(isSafeRefName)
  const found = await objectInfos(gitRepoOf(deps, ctx), names.map((n) => `refs/heads/${n}`))
  return names[found.findIndex((f) => f === null)] ?? ''
}

/**
 * Whether the caller may commit to the branch itself, as the branch's record says it
 * (`user_can_push`, from the protection rules): when not, the form proposes a new branch. The
 * push path decides again when the commit is made.
 */
async function mayCommitTo(deps: AppDeps, ctx: RepoContext, at: EditAt): Promise<boolean> {
  if (!at.commit) return true
  const rules = await branchRulesOf(deps.db, ctx.repo.id)
  return (await branchProtectionView(deps.db, rules, at.branch, ctx.caller.user, ctx.repo, ctx.mode)).userCanPush
}

/** A fresh form's commit part: commit to the branch when allowed, else to a new branch. */
async function freshValues(deps: AppDeps, ctx: RepoContext, user: UserRow, at: EditAt): Promise<CommitValues> {
  const [canCommit, newBranch] = await Promise.all([mayCommitTo(deps, ctx, at), at.commit ? patchBranchName(deps, ctx, user) : ''])
  return { summary: '', message: '', choice: canCommit ? DIRECT : NEW_BRANCH, newBranch, signoff: false }
}

/** The commit part of every editor form: summary, description, sign-off, and where the commit goes. */
function CommitFields(props: { at: EditAt; values: CommitValues; canCommit: boolean; pulls: boolean; placeholder: string }): Html {
  const { at, values } = props
  return (
    <>
      <label>
        Commit summary
        <input name="commit_summary" maxlength={String(MAX_SUMMARY)} placeholder={props.placeholder} value={values.summary} />
      </label>
      <label>
        Extended description (optional)
        <textarea name="commit_message" rows="4">
          {'\n' + values.message}
        </textarea>
      </label>
      <label class="check">
        <input type="checkbox" name="signoff" checked={values.signoff} />
        Add a Signed-off-by trailer
      </label>
      {at.commit ? (
        <fieldset>
          <legend>Where to commit</legend>
          <label class="check">
            <input type="radio" name="commit_choice" value={DIRECT} checked={values.choice === DIRECT && props.canCommit} disabled={!props.canCommit} />
            Commit directly to the <strong>{at.branch}</strong> branch
          </label>
          <label class="check">
            <input type="radio" name="commit_choice" value={NEW_BRANCH} checked={values.choice === NEW_BRANCH || !props.canCommit} />
            Commit to a new branch{props.pulls ? ' and start a pull request' : ''}
          </label>
          <label>
            New branch name
            <input name="new_branch_name" maxlength="255" value={values.newBranch} />
          </label>
          {props.canCommit ? null : <p class="muted">You may not commit to {at.branch} directly: it is protected.</p>}
        </fieldset>
      ) : (
        <input type="hidden" name="commit_choice" value={DIRECT} />
      )}
    </>
  )
}

/** An editor page: the repository's header and tabs, the page's heading, the notice or error, the body. */
function editorPage(web: WebContext, repo: ApiRepo, title: string, body: Child, error?: string, status = 200): Response {
  return htmlResponse(
    <Layout ctx={web} title={`${title} · ${repo.full_name}`}>
      <RepoHeader repo={repo} />
      <CodeNav repo={repo} current="code" />
      <h2>{title}</h2>
      <Notices ctx={web} error={error} />
      {body}
    </Layout>,
    status,
  )
}

/** The buttons under a form: its submit button and the way back. */
const FormButtons = (props: { label: string; back: string; danger?: boolean; preview?: string }): Html => (
  <div class="buttons">
    <button type="submit" class={props.danger ? 'danger' : 'primary'}>
      {props.label}
    </button>
    {props.preview ? (
      <button type="submit" formaction={props.preview}>
        Preview changes
      </button>
    ) : null}
    <a href={props.back}>Cancel</a>
  </div>
)

/** The file form (new and edit): path, text, the commit part. */
async function fileForm(
  deps: AppDeps,
  ctx: RepoContext,
  web: WebContext,
  at: EditAt,
  mode: '_new' | '_edit',
  file: { path: string; content: string; sha: string },
  values: CommitValues,
  error?: string,
  status = 200,
  preview?: Diff,
): Promise<Response> {
  const repo = await pageRepo(deps, ctx)
  const owner = repo.owner.login
  const folder = mode === '_edit' ? at.path.slice(0, -1) : at.path
  const back = at.commit ? srcUrl(owner, repo.name, 'branch', at.branch, mode === '_edit' ? at.path : folder) : repoUrl(owner, repo.name)
  const title = mode === '_new' ? 'New file' : `Edit ${at.path.join('/')}`
  return editorPage(
    web,
    repo,
    title,
    <>
      {preview ? (
        <section aria-label="Preview of the changes">
          <h3>Preview of the changes</h3>
          <DiffView diff={preview} viewUrl={() => srcUrl(owner, repo.name, 'branch', at.branch, at.path)} />
        </section>
      ) : null}
      <form class="stack wide" method="post" action={editorUrl(owner, repo.name, mode, at.branch, at.path)}>
        <CsrfField ctx={web} />
        {mode === '_edit' ? <input type="hidden" name="sha" value={file.sha} /> : null}
        <label>
          Path of the file
          <input name="tree_path" required maxlength={String(MAX_PATH_LENGTH)} value={file.path} spellcheck="false" />
        </label>
        <label>
          Content
          <textarea name="content" rows="24" class="code-editor" spellcheck="false">
            {'\n' + file.content}
          </textarea>
        </label>
        <CommitFields at={at} values={values} canCommit={await mayCommitTo(deps, ctx, at)} pulls={ctx.repo.hasPullRequests} placeholder={`${mode === '_new' ? 'Add' : 'Update'} ${file.path || 'file'}`} />
        <FormButtons label="Commit changes" back={back} preview={mode === '_edit' ? editorUrl(owner, repo.name, '_preview', at.branch, at.path) : undefined} />
      </form>
    </>,
    error,
    status,
  )
}

/** The delete form: what goes, the commit part. */
async function deleteForm(deps: AppDeps, ctx: RepoContext, web: WebContext, at: EditAt, sha: string, values: CommitValues, error?: string, status = 200): Promise<Response> {
  const repo = await pageRepo(deps, ctx)
  const owner = repo.owner.login
  const path = at.path.join('/')
  const fileUrl = srcUrl(owner, repo.name, 'branch', at.branch, at.path)
  return editorPage(
    web,
    repo,
    `Delete ${path}`,
    <>
      <p>
        This commits the removal of <a href={fileUrl}>{path}</a> from the {at.branch} branch (its history keeps it).
      </p>
      <form class="stack wide" method="post" action={editorUrl(owner, repo.name, '_delete', at.branch, at.path)}>
        <CsrfField ctx={web} />
        <input type="hidden" name="sha" value={sha} />
        <CommitFields at={at} values={values} canCommit={await mayCommitTo(deps, ctx, at)} pulls={ctx.repo.hasPullRequests} placeholder={`Delete ${path}`} />
        <FormButtons label="Delete the file" back={fileUrl} danger />
      </form>
    </>,
    error,
    status,
  )
}

/** The upload form: the folder, the files, the commit part. */
async function uploadForm(deps: AppDeps, ctx: RepoContext, web: WebContext, at: EditAt, folder: string, values: CommitValues, error?: string, status = 200): Promise<Response> {
  const repo = await pageRepo(deps, ctx)
  const owner = repo.owner.login
  const back = at.commit ? srcUrl(owner, repo.name, 'branch', at.branch, at.path) : repoUrl(owner, repo.name)
  return editorPage(
    web,
    repo,
    'Upload files',
    <form class="stack wide" method="post" action={editorUrl(owner, repo.name, '_upload', at.branch, at.path)} enctype="multipart/form-data">
      <CsrfField ctx={web} />
      <label>
        Folder
        <input name="tree_path" maxlength={String(MAX_PATH_LENGTH)} value={folder} spellcheck="false" />
      </label>
      <label>
        Files
        <input type="file" name="files" multiple required />
      </label>
      <p class="muted">
        At most {MAX_UPLOAD_FILES} files, each at most {sizeText(deps.config.maxBlobSize)}; a file of the same name in the folder is replaced.
      </p>
      <CommitFields at={at} values={values} canCommit={await mayCommitTo(deps, ctx, at)} pulls={ctx.repo.hasPullRequests} placeholder={`Upload files to "${folder || '/'}"`} />
      <FormButtons label="Commit changes" back={back} />
    </form>,
    error,
    status,
  )
}

const STALE = 'The file changed since you opened it: someone committed to it meanwhile. Open it again to see the current version, and make your change there.'
const GONE = 'The file no longer exists on this branch: it was deleted or moved since you opened it.'

/**
 * A refusal of the contents service as the form says it: a stale blob id is the file changed
 * since the form was opened, a file that is gone is said so; the rest keep the service's
 * message, without the API's `[field]: ` prefix.
 */
function editorError(e: unknown): unknown {
  if (!(e instanceof ApiError)) return e
  const errors = e.extra.errors as { fieldNames?: string[] }[] | undefined
  if (/(^|\.)sha$/.test(errors?.[0]?.fieldNames?.[0] ?? '')) return new ApiError(409, STALE)
  if (e.status === 404 && e.message.startsWith('repository file does not exist')) return new ApiError(409, GONE)
  return new ApiError(e.status, withoutFieldPrefix(e.message))
}

/** Where a commit went: its branch, and whether the form asked for a new one. */
interface Committed {
  sha: string
  branch: string
  toNewBranch: boolean
}

/** The form's commit options (Gitea's message: the summary or `fallback`, then the description; its branch), and where the commit goes. */
function commitOptions(at: EditAt, body: CommitBody, fallback: string) {
  const toNewBranch = body.commit_choice === NEW_BRANCH && at.commit !== null
  const newBranch = (body.new_branch_name ?? '').trim()
  if (toNewBranch && !newBranch) throw unprocessable('Give the new branch a name, or commit directly to the branch.')
  let message = (body.commit_summary ?? '').trim() || fallback
  const more = multiline(body.commit_message).trim()
  if (more) message += '\n\n' + more
  const opts = { branch: at.branch, new_branch: toNewBranch ? newBranch : undefined, message, signoff: ticked(body.signoff) }
  return { opts, branch: toNewBranch ? newBranch : at.branch, toNewBranch }
}

/** Makes the form's commit of `changes` through the contents service. */
async function commitChanges(deps: AppDeps, ctx: RepoContext, user: UserRow, at: EditAt, body: CommitBody, changes: FileChange[], fallback: string): Promise<Committed> {
  const { opts, ...where } = commitOptions(at, body, fallback)
  try {
    const { commit } = await changeFiles(deps, ctx, user, opts, changes)
    return { sha: commit.sha, ...where }
  } catch (e) {
    throw editorError(e)
  }
}


/**
 * Where the browser goes after a commit (Gitea's redirectForCommitChoice): a new branch to the
 * comparison with the branch it came from, where its pull request is opened (when the repository
 * takes pull requests); otherwise to `path` on the branch, with the notice.
 */
function afterCommit(ctx: RepoContext, at: EditAt, done: Committed, path: string[], notice: 'committed' | 'file-deleted'): Response {
  const owner = ctx.owner.name
  const name = ctx.repo.name
  if (done.toNewBranch && ctx.repo.hasPullRequests) return seeOther(`${repoUrl(owner, name)}/compare/${refPath(at.branch)}...${refPath(done.branch)}`)
  return seeOther(srcUrl(owner, name, 'branch', done.branch, path), notice)
}

/** The closest folder above `path` still in `commit` (a deleted file's folder may have gone with it). */
async function closestFolder(deps: AppDeps, ctx: RepoContext, commit: string, path: string[]): Promise<string[]> {
  const git = gitRepoOf(deps, ctx)
  for (let folder = path.slice(0, -1); folder.length; folder = folder.slice(0, -1)) if (await folderTree(git, commit, folder)) return folder
  return []
}

/** The form's file path, checked as the contents service checks it, ending in a name (not a folder's `docs/`). */
function formPath(value: string | undefined, field: string): string[] {
  const given = (value ?? '').trim()
  const segments = treePath(given, field)
  if (segments.length === 0 || given.endsWith('/')) throw unprocessable('Give the file a name.')
  return segments
}

/** The files of an upload (an empty file field sends a nameless part: not a file). */
function uploadedFiles(value: unknown): File[] {
  const files = formFiles(value)
  if (files.length === 0) throw unprocessable('Choose at least one file to upload.')
  if (files.length > MAX_UPLOAD_FILES) throw unprocessable(`At most ${MAX_UPLOAD_FILES} files may be uploaded at once.`)
  return files
}

/** The needs of every editor page: write access to a repository that is not archived, GET included (Gitea's editor routes). */
const editorNeeds = { scope: 'repository', repo: { level: 'write', writes: true }, signed: true, params: RepoWildcardParams } as const

/** What an editor route's handler is given. */
interface EditorRequest<B = unknown> {
  request: Request
  params: Record<string, unknown>
  repo: RepoContext
  user: UserRow
  body: B
}

/**
 * A form's GET: the branch its address names (404 without one; `existing`: an empty repository's
 * branch-to-be will not do), on a repository whose files may be written (not a mirror), then the form.
 */
const formPage =
  (deps: AppDeps, existing: boolean, show: (web: WebContext, at: EditAt, ctx: RepoContext, user: UserRow) => Promise<Response>) =>
  async ({ request, params, repo: ctx, user }: Omit<EditorRequest, 'body'>): Promise<Response> => {
    const web = webContext(deps.config, request, ctx.caller)
    checkWritable(ctx)
    const at = await branchAt(deps, ctx, wildcardOf(params))
    if (!at || (existing && !at.commit)) return errorPage(404, 'no such branch', web)
    return await show(web, at, ctx, user)
  }

/**
 * A form's POST: the branch its address names (404 without one; `onFile`: a file of an existing
 * branch), then formRoute: the CSRF check, `act` (the commit, and where the browser goes next),
 * and on a refusal the form again (`again`) with the message.
 */
const formPost =
  <B extends CommitBody & { _csrf?: string }>(
    deps: AppDeps,
    onFile: boolean,
    act: (at: EditAt, ctx: RepoContext, user: UserRow, body: B, web: WebContext) => Promise<Response>,
    again: (web: WebContext, at: EditAt, ctx: RepoContext, body: B, error: string, status: number) => Promise<Response>,
  ) =>
  async ({ request, params, body, repo: ctx, user }: EditorRequest<B>): Promise<Response> => {
    const at = await branchAt(deps, ctx, wildcardOf(params))
    if (!at || (onFile && (!at.commit || at.path.length === 0))) return errorPage(404, onFile ? 'no such file' : 'no such branch', webContext(deps.config, request, ctx.caller))
    return await formRoute(
      deps.config,
      { request, caller: ctx.caller, body },
      (web) => act(at, ctx, user, body, web),
      (web, error, status) => again(web, at, ctx, body, error, status),
    )
  }

/** The text of a file form as the file's bytes (line breaks as `\n`, as Gitea writes them). */
const textBytes = (text: string | undefined) => new TextEncoder().encode(multiline(text))

type FileBody = typeof FileForm.static

/** A file form shown again with what was sent. */
const fileFormAgain =
  (deps: AppDeps, mode: '_new' | '_edit') =>
  (web: WebContext, at: EditAt, ctx: RepoContext, body: FileBody, error: string, status: number) =>
    fileForm(deps, ctx, web, at, mode, { path: body.tree_path ?? '', content: multiline(body.content), sha: body.sha ?? '' }, valuesOf(body), error, status)

/** The editor's pages: each GET shows its form, each POST commits it (formRoute: the CSRF check, then the contents service). */
export const editorPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/:owner/:repo/_new/*',
      formPage(deps, false, async (web, at, ctx, user) => {
        const folder = at.path.length ? at.path.join('/') + '/' : ''
        return await fileForm(deps, ctx, web, at, '_new', { path: folder, content: '', sha: '' }, await freshValues(deps, ctx, user, at))
      }),
      { ...editorNeeds, detail: pageDetail('webEditorNew') },
    )
    .post(
      '/:owner/:repo/_new/*',
      formPost<FileBody>(
        deps,
        false,
        async (at, ctx, user, body) => {
          const path = formPath(body.tree_path, 'tree_path')
          const done = await commitChanges(deps, ctx, user, at, body, [{ operation: 'create', path: path.join('/'), bytes: textBytes(body.content) }], `Add ${path.join('/')}`)
          return afterCommit(ctx, at, done, path, 'committed')
        },
        fileFormAgain(deps, '_new'),
      ),
      { ...editorNeeds, body: FileForm, detail: pageDetail('webEditorNewPost') },
    )
    .get(
      '/:owner/:repo/_edit/*',
      formPage(deps, true, async (web, at, ctx, user) => {
        const file = await fileAt(deps, ctx, { kind: 'branch', ref: at.branch, commit: at.commit!, path: at.path }, deps.config.webMaxFileView, { maxLine: Infinity, utf8: true })
        if (!file) return errorPage(404, 'no such file', web)
        if (file.kind !== 'text') return await notEditable(deps, ctx, web, at, file.kind === 'other' ? 'other' : file.kind)
        return await fileForm(deps, ctx, web, at, '_edit', { path: at.path.join('/'), content: file.text, sha: file.oid }, await freshValues(deps, ctx, user, at))
      }),
      { ...editorNeeds, detail: pageDetail('webEditorEdit') },
    )
    .post(
      '/:owner/:repo/_edit/*',
      formPost<FileBody>(
        deps,
        true,
        async (at, ctx, user, body) => {
          const path = formPath(body.tree_path, 'tree_path')
          const change: FileChange = { operation: 'update', path: path.join('/'), from_path: at.path.join('/'), sha: body.sha ?? '', bytes: textBytes(body.content) }
          const done = await commitChanges(deps, ctx, user, at, body, [change], `Update ${path.join('/')}`)
          return afterCommit(ctx, at, done, path, 'committed')
        },
        fileFormAgain(deps, '_edit'),
      ),
      { ...editorNeeds, body: FileForm, detail: pageDetail('webEditorEditPost') },
    )
    .post(
      '/:owner/:repo/_preview/*',
      formPost<FileBody>(
        deps,
        true,
        async (at, ctx, _user, body, web) => {
          const diff = await previewOf(deps, ctx, at, body.content)
          return await fileForm(deps, ctx, web, at, '_edit', { path: body.tree_path ?? '', content: multiline(body.content), sha: body.sha ?? '' }, valuesOf(body), undefined, 200, diff)
        },
        fileFormAgain(deps, '_edit'),
      ),
      { ...editorNeeds, body: FileForm, detail: pageDetail('webEditorPreview') },
    )
    .get(
      '/:owner/:repo/_cherrypick/:sha/*',
      async ({ request, params, query, repo: ctx, user }) => {
        const web = webContext(deps.config, request, ctx.caller)
        checkWritable(ctx)
        const at = await branchAt(deps, ctx, wildcardOf(params))
        if (!at || !at.commit || at.path.length) return errorPage(404, 'no such branch', web)
        const commit = await pickedCommit(deps, ctx, params.sha)
        if (!commit) return errorPage(404, 'no such commit', web)
        const revert = isRevert(query.revert) || query['cherry-pick-type'] === 'revert'
        const fresh = await freshValues(deps, ctx, user, at)
        return await pickForm(deps, ctx, web, at, commit, revert, { ...fresh, ...pickValues(commit.message, commit.id, revert) })
      },
      { ...editorNeeds, params: PickParams, query: PickQuery, detail: pageDetail('webCherryPick') },
    )
    .post(
      '/:owner/:repo/_cherrypick/:sha/*',
      async ({ request, params, body, repo: ctx, user }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const at = await branchAt(deps, ctx, wildcardOf(params))
        if (!at || !at.commit || at.path.length) return errorPage(404, 'no such branch', web)
        const commit = await pickedCommit(deps, ctx, params.sha)
        if (!commit) return errorPage(404, 'no such commit', web)
        const revert = isRevert(body.revert)
        return await formRoute(
          deps.config,
          { request, caller: ctx.caller, body },
          async () => {
            const { opts, ...where } = commitOptions(at, body, pickValues(commit.message, commit.id, revert).summary)
            let sha: string
            try {
              sha = (await cherryPick(deps, ctx, user, opts, commit.id, revert)).sha
            } catch (e) {
              throw editorError(e)
            }
            return afterCommit(ctx, at, { sha, ...where }, [], 'committed')
          },
          (again, error, status) => pickForm(deps, ctx, again, at, commit, revert, valuesOf(body), error, status),
        )
      },
      { ...editorNeeds, params: PickParams, body: PickForm, detail: pageDetail('webCherryPickPost') },
    )
    .get(
      '/:owner/:repo/_delete/*',
      formPage(deps, true, async (web, at, ctx, user) => {
        const entry = await entryAt(gitRepoOf(deps, ctx), at.commit!, at.path)
        if (!entry || entry.kind === 'dir') return errorPage(404, 'no such file', web)
        if (entry.kind !== 'file' && entry.kind !== 'executable') return await notEditable(deps, ctx, web, at, 'other')
        return await deleteForm(deps, ctx, web, at, entry.oid, await freshValues(deps, ctx, user, at))
      }),
      { ...editorNeeds, detail: pageDetail('webEditorDelete') },
    )
    .post(
      '/:owner/:repo/_delete/*',
      formPost<typeof DeleteForm.static>(
        deps,
        true,
        async (at, ctx, user, body) => {
          const path = at.path.join('/')
          const done = await commitChanges(deps, ctx, user, at, body, [{ operation: 'delete', path, sha: body.sha ?? '' }], `Delete ${path}`)
          return afterCommit(ctx, at, done, await closestFolder(deps, ctx, done.sha, at.path), 'file-deleted')
        },
        (web, at, ctx, body, error, status) => deleteForm(deps, ctx, web, at, body.sha ?? '', valuesOf(body), error, status),
      ),
      { ...editorNeeds, body: DeleteForm, detail: pageDetail('webEditorDeletePost') },
    )
    .get(
      '/:owner/:repo/_upload/*',
      formPage(deps, false, async (web, at, ctx, user) => await uploadForm(deps, ctx, web, at, at.path.join('/'), await freshValues(deps, ctx, user, at))),
      { ...editorNeeds, detail: pageDetail('webEditorUpload') },
    )
    .post(
      '/:owner/:repo/_upload/*',
      formPost<typeof UploadForm.static>(
        deps,
        false,
        async (at, ctx, user, body) => {
          const folder = treePath((body.tree_path ?? '').trim(), 'tree_path')
          const changes = await uploadChanges(deps, ctx, at, folder, uploadedFiles(body.files))
          const done = await commitChanges(deps, ctx, user, at, body, changes, `Upload files to "${folder.join('/') || '/'}"`)
          return afterCommit(ctx, at, done, folder, 'committed')
        },
        (web, at, ctx, body, error, status) => uploadForm(deps, ctx, web, at, body.tree_path ?? '', valuesOf(body), error, status),
      ),
      { ...editorNeeds, body: UploadForm, detail: pageDetail('webEditorUploadPost') },
    )

/** The commit a cherry-pick page names (a hex id, 4 to 64 digits, as Gitea's route), or null. */
async function pickedCommit(deps: AppDeps, ctx: RepoContext, sha: string) {
  if (!/^[0-9a-f]{4,64}$/i.test(sha)) return null
  try {
    return await getCommit(deps, ctx, sha, { stats: false, files: false })
  } catch (e) {
    if (e instanceof ApiError && (e.status === 404 || e.status === 422)) return null
    throw e
  }
}

/** Gitea's messages: a cherry-pick keeps the commit's; a revert says what it reverts. */
function pickValues(message: string, sha: string, revert: boolean): { summary: string; message: string } {
  const [subject = '', ...rest] = message.trim().split('\n')
  return revert ? { summary: `Revert "${subject}"`.slice(0, MAX_SUMMARY), message: `This reverts commit ${sha}.` } : { summary: subject.slice(0, MAX_SUMMARY), message: rest.join('\n').trim() }
}

const isRevert = (value: string | undefined) => value === 'true' || value === 'on' || value === '1'

/**
 * Gitea's cherry-pick and revert page (`_cherrypick/{sha}/{branch}`, `?cherry-pick-type=revert`): which commit
 * goes onto which branch (other branches linked as targets), the commit part with Gitea's message.
 */
async function pickForm(deps: AppDeps, ctx: RepoContext, web: WebContext, at: EditAt, commit: { id: string; message: string }, revert: boolean, values: CommitValues, error?: string, status = 200): Promise<Response> {
  const [repo, branches, canCommit] = await Promise.all([pageRepo(deps, ctx), branchNames(deps, ctx, PICK_BRANCHES), mayCommitTo(deps, ctx, at)])
  const owner = repo.owner.login
  const short = commit.id.slice(0, 10)
  const commitPage = `${repoUrl(owner, repo.name)}/commit/${commit.id}`
  const address = (branch: string) => cherryPickUrl(owner, repo.name, commit.id, branch, revert)
  const others = branches.names.filter((b) => b !== at.branch)
  return editorPage(
    web,
    repo,
    `${revert ? 'Revert' : 'Cherry-pick'} ${short} onto ${at.branch}`,
    <>
      <p>
        {revert ? 'Undoes the changes of commit ' : 'Applies the changes of commit '}
        <a href={commitPage}>
          <code>{short}</code> {commit.message.split('\n', 1)[0]}
        </a>{' '}
        {revert ? 'on' : 'to'} the <strong>{at.branch}</strong> branch, as a new commit. A change that does not apply cleanly is refused.
      </p>
      {others.length ? (
        <nav aria-label="Other branches">
          Onto another branch:{' '}
          {others.map((b, i) => (
            <>
              {i ? ' · ' : ''}
              <a href={address(b)}>{b}</a>
            </>
          ))}
        </nav>
      ) : null}
      <form class="stack wide" method="post" action={cherryPickUrl(owner, repo.name, commit.id, at.branch)}>
        <CsrfField ctx={web} />
        {revert ? <input type="hidden" name="revert" value="true" /> : null}
        <CommitFields at={at} values={values} canCommit={canCommit} pulls={ctx.repo.hasPullRequests} placeholder={pickValues(commit.message, commit.id, revert).summary} />
        <FormButtons label={revert ? 'Revert' : 'Cherry-pick'} back={commitPage} />
      </form>
    </>,
    error,
    status,
  )
}

/**
 * Gitea's "Preview changes": the diff of the form's text against the file at the branch's head,
 * as a commit's diff shows it; nothing is written to the repository (diff-data.ts `textDiff`).
 */
async function previewOf(deps: AppDeps, ctx: RepoContext, at: EditAt, content: string | undefined): Promise<Diff> {
  const file = await fileAt(deps, ctx, { kind: 'branch', ref: at.branch, commit: at.commit!, path: at.path }, deps.config.webMaxFileView, { maxLine: Infinity, utf8: true })
  if (!file) throw new ApiError(409, GONE)
  if (file.kind !== 'text') throw unprocessable(NOT_EDITABLE[file.kind === 'other' ? 'other' : file.kind])
  return await textDiff(at.path.join('/'), new TextEncoder().encode(file.text), textBytes(content))
}

/**
 * The changes an upload makes: each file into the folder under its own name, replacing a file of
 * that name (an update from the blob id at the branch's head, so one changed meanwhile is refused).
 */
async function uploadChanges(deps: AppDeps, ctx: RepoContext, at: EditAt, folder: string[], files: File[]): Promise<FileChange[]> {
  const git = gitRepoOf(deps, ctx)
  return await Promise.all(
    files.map(async (file, i): Promise<FileChange> => {
      const segments = [...folder, ...treePath(file.name, `files[${i}]`)]
      const existing = at.commit ? await entryAt(git, at.commit, segments) : null
      const bytes = new Uint8Array(await file.arrayBuffer())
      const path = segments.join('/')
      return existing && (existing.kind === 'file' || existing.kind === 'executable') ? { operation: 'update', path, sha: existing.oid, bytes } : { operation: 'create', path, bytes }
    }),
  )
}

const NOT_EDITABLE: Record<'binary' | 'too-large' | 'long-lines' | 'other', string> = {
  binary: 'This file is binary (or not UTF-8 text): it cannot be edited in the browser.',
  'too-large': 'This file is too large to edit in the browser.',
  'long-lines': 'This file has lines too long to edit in the browser.',
  other: 'Only files can be edited or deleted here: this is a symbolic link or a submodule.',
}

/** The editor's refusal of a file it cannot edit, saying why (422), with the way to its raw form. */
async function notEditable(deps: AppDeps, ctx: RepoContext, web: WebContext, at: EditAt, why: keyof typeof NOT_EDITABLE): Promise<Response> {
  const repo = await pageRepo(deps, ctx)
  const owner = repo.owner.login
  return editorPage(
    web,
    repo,
    `Edit ${at.path.join('/')}`,
    <p>
      <a href={srcUrl(owner, repo.name, 'branch', at.branch, at.path)}>Back to the file</a>
      {why === 'other' ? null : (
        <>
          {' · '}
          <a href={rawUrl(owner, repo.name, 'branch', at.branch, at.path)}>Download the raw file</a>
        </>
      )}
    </p>,
    NOT_EDITABLE[why],
    422,
  )
}
