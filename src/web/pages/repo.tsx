/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import { trustedHtml } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { findRepoByName, type RepoContext } from '../../auth/repo-context'
import { AccessMode, accessLevel } from '../../auth/access'
import type { Caller, UserRow } from '../../auth/caller'
import { normaliseTreePath } from '../../git/blob'
import { wildcardOf } from '../../modules/files/model'
import { MAX_MARKDOWN_TEXT } from '../../modules/markdown/model'
import { Layout } from '../layout'
import { Notices } from '../forms'
import { htmlResponse, pageDetail, webContext } from '../context'
import { errorPage } from '../errors'
import { branchNames, defaultSource, fileAt, folderEntries, homeSource, resolveSource, type SourceAt, type SourceKind } from '../source-data'
import { Breadcrumb, BranchSwitcher, CloneUrls, FindFileLink, RepoHeader, pageRepo } from './repo-chrome'
import { refsWritable } from './ref-forms'
import { FileView, FolderList } from './source'
import { repoActions } from './repo-actions'
import { fileLines } from '../highlight'
import { CodeNav } from './code-nav'
import { feedAsked, repoFeed } from './activity-feed'
import { editorUrl, historyUrl, repoUrl } from '../links'
import { LatestCommit, latestCommitOf } from './commits'
import { filesWritable } from '../../modules/contents/write'
import { renderAll } from './conversation'

/** Entries a folder view lists, branches the switcher lists (the rest are counted). */
const MAX_FOLDER_ENTRIES = 1000
const MAX_SWITCHER_BRANCHES = 50

const README = /^readme(\.(md|markdown|txt))?$/i

/** The README of a folder, rendered (markdown, sanitised by the renderer) or as text; null when none. */
async function readmeOf(deps: AppDeps, ctx: RepoContext, at: SourceAt, names: string[], client: string) {
  const name = names.filter((n) => README.test(n)).sort((a, b) => Number(/\.(md|markdown)$/i.test(b)) - Number(/\.(md|markdown)$/i.test(a)))[0]
  if (!name) return null
  return await readmeAt(deps, ctx, at, name, client)
}

/** The file `name` of a folder as a README: markdown rendered by the render pool (as a conversation's texts, renderAll: kept by the markdown service), other text as it is, null html when it cannot be shown. */
async function readmeAt(deps: AppDeps, ctx: RepoContext, at: SourceAt, name: string, client: string): Promise<{ name: string; html: string | null } | { name: string; text: string }> {
  const file = await fileAt(deps, ctx, { ...at, path: [...at.path, name] }, MAX_MARKDOWN_TEXT)
  if (!file || file.kind !== 'text') return { name, html: null }
  if (!/\.(md|markdown)$/i.test(name)) return { name, text: file.text }
  // Past the renderer's time budget (or with its queue full) null: the page shows the rest.
  const [html] = await renderAll(deps, ctx, [file.text], client)
  return { name, html: html ?? null }
}

/**
 * A profile README (Gitea 1.23's: a person's or organisation's `.profile` repository's README.md
 * at the root of its default branch, shown atop their page), rendered as a repository's home
 * renders its README; null unless the repository is public, ready and not empty (Gitea's rule:
 * a private `.profile` is shown to nobody, its owner included), the caller may read it (accessLevel:
 * the repository rule, without personal ties) and the file renders.
 */
export async function profileReadme(deps: AppDeps, caller: Caller, owner: UserRow, client: string): Promise<string | null> {
  const found = await findRepoByName(deps, owner.name, '.profile')
  if (!found || found.repo.isPrivate || found.repo.isEmpty || found.repo.status !== 'ready') return null
  // Only to those who may read the repository (Gitea's FindUserProfileReadme): a private person's
  // public `.profile` is not open to the people they follow or share an organisation with.
  if ((await accessLevel(deps.db, caller.user, found.repo, found.owner)) < AccessMode.Read) return null
  const ctx: RepoContext = { ...found, caller, mode: AccessMode.Read }
  const at = await defaultSource(deps, ctx)
  if (!at) return null
  const readme = await readmeAt(deps, ctx, at, 'README.md', client)
  return 'html' in readme ? readme.html : null
}

const RepoParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }) })
export const SourceParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), kind: t.String({ maxLength: 10 }) }, { additionalProperties: true })
/** Longest path (still URL-encoded) a source page reads. */
const MAX_SOURCE_PATH = 4096
const KINDS = new Set(['branch', 'tag', 'commit'])

/** The ref and path a `…/src/{kind}/…` (or `blame`) address names, or null. */
export async function sourceAtOf(deps: AppDeps, ctx: RepoContext, params: { kind: string } & Record<string, unknown>): Promise<SourceAt | null> {
  const wildcard = wildcardOf(params)
  const segments = wildcard.length <= MAX_SOURCE_PATH ? normaliseTreePath(wildcard) : null
  return KINDS.has(params.kind) && segments ? await resolveSource(deps, ctx, params.kind as SourceKind, segments) : null
}

/** `/{owner}/{repo}` (the repository's home) and `/{owner}/{repo}/src/{branch|tag|commit}/{ref}/{path}`. */
export const repoPages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp)
    .get(
      '/:owner/:repo',
      async ({ request, repo: ctx }) => {
        // A feed reader asking for the page's feed by its Accept header gets it (Gitea's GetFeedType).
        const feed = feedAsked(request)
        if (feed) return await repoFeed(deps, ctx, undefined, feed)
        const web = webContext(deps.config, request, ctx.caller)
        const repo = await pageRepo(deps, ctx)
        const { at, branches } = await homeSource(deps, ctx, MAX_SWITCHER_BRANCHES)
        const [folder, latest] = at ? await Promise.all([folderEntries(deps, ctx, at, MAX_FOLDER_ENTRIES), latestCommitOf(deps, ctx, at.commit)]) : [null, null]
        const readme = at && folder ? await readmeOf(deps, ctx, at, folder.entries.map((e) => e.path), deps.auth.clientAddress(request) ?? '') : null
        return htmlResponse(
          <Layout ctx={web} title={repo.full_name} feed={{ title: `Feed of "${repo.full_name}"`, rss: `${repoUrl(repo.owner.login, repo.name)}.rss` }}>
            <RepoHeader repo={repo} actions={await repoActions(deps, ctx, web)} />
            <CodeNav repo={repo} current="code" />
            <Notices ctx={web} />
            <CloneUrls repo={repo} />
            {at && folder && branches ? (
              <>
                <BranchSwitcher repo={repo} at={at} branches={branches} create={refsWritable(ctx) ? web : undefined} />
                <FindFileLink repo={repo} at={at} />
                {latest ? <LatestCommit repo={repo} latest={latest} history={historyUrl(repo.owner.login, repo.name, at.kind, at.ref, [])} /> : null}
                <FolderList repo={repo} at={at} entries={folder.entries} total={folder.total} writable={filesWritable(ctx)} />
              </>
            ) : (
              <p class="notice muted">
                This repository is empty. Push a branch to it to see its files here
                {filesWritable(ctx) ? (
                  <>
                    , or add a <a href={editorUrl(repo.owner.login, repo.name, '_new', ctx.repo.defaultBranch)}>new file</a> or{' '}
                    <a href={editorUrl(repo.owner.login, repo.name, '_upload', ctx.repo.defaultBranch)}>upload files</a>
                  </>
                ) : null}
                .
              </p>
            )}
            {readme ? (
              <section class="box" aria-label="README">
                <header>
                  <strong>{readme.name}</strong>
                </header>
                {'text' in readme ? (
                  <pre class="markdown">{readme.text}</pre>
                ) : readme.html === null ? (
                  <p class="notice muted">The README could not be shown here.</p>
                ) : (
                  <div class="markdown">{trustedHtml(readme.html)}</div>
                )}
              </section>
            ) : null}
          </Layout>,
        )
      },
      { scope: 'repository', repo: { level: 'read' }, params: RepoParams, detail: pageDetail('webRepoHome') },
    )
    .get(
      '/:owner/:repo/src/:kind/*',
      async ({ request, params, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        const at = await sourceAtOf(deps, ctx, params)
        if (!at) return errorPage(404, 'no such ref', web)
        const repo = await pageRepo(deps, ctx)
        const folder = await folderEntries(deps, ctx, at, MAX_FOLDER_ENTRIES)
        const file = folder ? null : await fileAt(deps, ctx, at, deps.config.webMaxFileView, { lfs: true })
        if (!folder && !file) return errorPage(404, 'no such path', web)
        const branches = await branchNames(deps, ctx, MAX_SWITCHER_BRANCHES)
        const name = at.path[at.path.length - 1] ?? ''
        const lines = file?.kind === 'text' ? (await fileLines(deps.config, file.oid, name, file.text, deps.auth.clientAddress(request) ?? '')).lines : null
        const title = at.path.length ? `${at.path.join('/')} · ${repo.full_name}` : repo.full_name
        return htmlResponse(
          <Layout ctx={web} title={title} enhanced={!!lines}>
            <RepoHeader repo={repo} />
            <CodeNav repo={repo} current="code" />
            <Notices ctx={web} />
            <BranchSwitcher repo={repo} at={at} branches={branches} create={refsWritable(ctx) ? web : undefined} />
            <Breadcrumb repo={repo} at={at} />
            {folder ? (
              <>
                <FindFileLink repo={repo} at={at} />
                <FolderList repo={repo} at={at} entries={folder.entries} total={folder.total} writable={filesWritable(ctx)} />
              </>
            ) : (
              <FileView repo={repo} at={at} file={file!} lines={lines} writable={filesWritable(ctx)} />
            )}
          </Layout>,
        )
      },
      { scope: 'repository', repo: { level: 'read' }, params: SourceParams, detail: pageDetail('webRepoSource') },
    )
