/** @jsxImportSource warren-jsx */
import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { gitRepoOf } from '../../auth/repo-context'
import { walkTree } from '../../git/tree'
import { fileMatchRank } from '../../lib/file-match'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext } from '../context'
import { errorPage } from '../errors'
import { FormText } from '../forms'
import { findUrl, srcUrl } from '../links'
import type { SourceAt } from '../source-data'
import { RepoHeader, pageRepo } from './repo-chrome'
import { CodeNav } from './code-nav'
import { SourceParams, sourceAtOf } from './repo'

/*
 * Gitea's "Go to file" (`/{o}/{r}/find/{branch|tag|commit}/{ref}`): the files of a ref whose path
 * matches what was typed (`?q=`, lib/file-match.ts), best first, each linked to its page. The
 * tree is read as git lists it, one entry at a time, up to MAX_SCANNED files: a repository of any
 * size costs a bounded walk.
 */

/** Files looked at, at most (the rest of a larger tree is said not to be searched). */
const MAX_SCANNED = 200_000
/**
 * Characters of paths times characters typed a walk may compare, at most (a few hundred
 * milliseconds): long paths and a long query end the walk early, as too many files do. Ordinary
 * trees (200,000 paths of 50 characters, 10 typed) stay well within it.
 */
const MAX_COMPARED = 300_000_000
/** Matches kept while walking (the best are shown), and shown. */
const MAX_KEPT = 5_000
const MAX_SHOWN = 100

/** The files of commit `at.commit` matching `q`, best first: at most MAX_SHOWN, their number, and whether the walk stopped early. */
async function matchingFiles(deps: AppDeps, ctx: Parameters<typeof gitRepoOf>[1], at: SourceAt, q: string) {
  const kept: { path: string; rank: number }[] = []
  let matched = 0
  let scanned = 0
  let compared = 0
  let cut = false
  await walkTree(gitRepoOf(deps, ctx), at.commit, { recursive: true }, (entry) => {
    if (entry.kind === 'dir' || entry.kind === 'submodule') return true
    compared += entry.path.length * Math.max(1, q.length)
    if (++scanned > MAX_SCANNED || compared > MAX_COMPARED) return !(cut = true)
    const rank = fileMatchRank(entry.path, q)
    if (rank === null) return true
    matched++
    if (kept.length < MAX_KEPT) kept.push({ path: entry.path, rank })
    return true
  })
  kept.sort((a, b) => a.rank - b.rank || (a.path < b.path ? -1 : 1))
  return { shown: kept.slice(0, MAX_SHOWN), matched, cut, scanned: scanned - (cut ? 1 : 0) }
}

export const findFilePages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp).get(
    '/:owner/:repo/find/:kind/*',
    async ({ request, params, query, repo: ctx }) => {
      const web = webContext(deps.config, request, ctx.caller)
      const at = await sourceAtOf(deps, ctx, params)
      // The ref alone: a path after it names nothing here.
      if (!at || at.path.length) return errorPage(404, 'no such ref', web)
      const repo = await pageRepo(deps, ctx)
      const q = (query.q ?? '').trim()
      const found = await matchingFiles(deps, ctx, at, q)
      return htmlResponse(
        <Layout ctx={web} title={`Go to file · ${repo.full_name}`}>
          <RepoHeader repo={repo} />
          <CodeNav repo={repo} current="code" />
          <form class="search" method="get" action={findUrl(repo.owner.login, repo.name, at.kind, at.ref)} role="search">
            <label for="find-q">Find a file in {at.kind === 'commit' ? at.ref.slice(0, 10) : at.ref}</label>
            <input id="find-q" name="q" type="search" value={q} maxlength={100} autofocus />
            <button type="submit">Find</button>
          </form>
          <p class="muted">
            {q ? `${found.matched} files match` : `${found.matched} files`}
            {found.matched > found.shown.length ? `; the first ${found.shown.length} are shown` : ''}
            {found.cut ? `; only the first ${found.scanned.toLocaleString('en')} files were looked at` : ''}.
          </p>
          <ul class="entries" aria-label="Files found">
            {found.shown.map(({ path }) => (
              <li>
                <a href={srcUrl(repo.owner.login, repo.name, at.kind, at.ref, path.split('/'))}>{path}</a>
              </li>
            ))}
          </ul>
        </Layout>,
      )
    },
    { scope: 'repository', repo: { level: 'read' }, params: SourceParams, query: t.Object({ q: FormText(100) }), detail: pageDetail('webRepoFindFile') },
  )
