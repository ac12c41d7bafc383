/** @jsxImportSource warren-jsx */
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import { type ApiRepo } from '../../convert/repo'
import { gitRepoOf } from '../../auth/repo-context'
import { blameOf, type Blame } from '../../git/blame'
import { Layout } from '../layout'
import { htmlResponse, pageDetail, webContext } from '../context'
import { errorPage } from '../errors'
import { fileAt, type SourceAt } from '../source-data'
import { historyUrl, rawUrl, repoUrl, srcUrl } from '../links'
import { Breadcrumb, RepoHeader, pageRepo } from './repo-chrome'
import { CodeNav, When } from './code-nav'
import { SourceParams, sourceAtOf } from './repo'
import { sizeText } from './source'

/**
 * Gitea's blame page (`/{o}/{r}/blame/{branch|tag|commit}/{path}`): each line of a text file with
 * the commit that last changed it, a commit's details once for each run of its lines, the lines
 * numbered with `#L{n}` targets as the file view's. Read through the same rules as the file view
 * (the pipeline's read need, the file view's size limit; binary files and folders not blamed);
 * git's blame runs as its own process (git/blame.ts).
 */
export const blamePages = (deps: AppDeps, webApp: AreaApp) =>
  pageGroup(webApp).get(
    '/:owner/:repo/blame/:kind/*',
    async ({ request, params, repo: ctx }) => {
      const web = webContext(deps.config, request, ctx.caller)
      const at = await sourceAtOf(deps, ctx, params)
      if (!at) return errorPage(404, 'no such ref', web)
      const file = at.path.length ? await fileAt(deps, ctx, at, deps.config.webMaxFileView) : null
      if (!file) return errorPage(404, 'no such file', web)
      if (file.kind !== 'text' && file.kind !== 'long-lines')
        return errorPage(422, file.kind === 'too-large' ? `This file is too large to blame here (${sizeText(file.size)}).` : file.kind === 'binary' ? 'A binary file has no lines to blame.' : 'Only a file has lines to blame.', web)
      const blame = await blameOf(gitRepoOf(deps, ctx), at.commit, at.path.join('/'))
      if (!blame) return errorPage(404, 'no such file', web)
      const repo = await pageRepo(deps, ctx)
      return htmlResponse(
        <Layout ctx={web} title={`Blame ${at.path.join('/')} · ${repo.full_name}`}>
          <RepoHeader repo={repo} />
          <CodeNav repo={repo} current="code" />
          <Breadcrumb repo={repo} at={at} />
          <BlameView repo={repo} at={at} blame={blame} />
        </Layout>,
      )
    },
    { scope: 'repository', repo: { level: 'read' }, params: SourceParams, detail: pageDetail('webRepoBlame') },
  )

/** The blamed lines: a table, a commit's cell spanning the run of lines it last changed. */
function BlameView(props: { repo: ApiRepo; at: SourceAt; blame: Blame }): Html {
  const { repo, at, blame } = props
  const owner = repo.owner.login
  const commitUrl = (sha: string) => `${repoUrl(owner, repo.name)}/commit/${sha}`
  const runs: { sha: string; from: number; lines: string[] }[] = []
  blame.lines.forEach((line, i) => {
    const last = runs[runs.length - 1]
    if (last && last.sha === line.sha) last.lines.push(line.text)
    else runs.push({ sha: line.sha, from: i + 1, lines: [line.text] })
  })
  return (
    <div class="box">
      <header>
        <strong>{at.path[at.path.length - 1]}</strong>
        <span class="muted">
          {blame.lines.length} {blame.lines.length === 1 ? 'line' : 'lines'}
        </span>
        <a href={srcUrl(owner, repo.name, at.kind, at.ref, at.path)}>Normal view</a>
        <a href={rawUrl(owner, repo.name, at.kind, at.ref, at.path)}>Raw</a>
        <a href={historyUrl(owner, repo.name, at.kind, at.ref, at.path)}>History</a>
      </header>
      <table class="blame">
        <caption class="sr-only">Each line with the commit that last changed it</caption>
        <tbody>
          {runs.map((run) => {
            const c = blame.commits.get(run.sha)!
            return run.lines.map((text, k) => (
              <tr id={`L${run.from + k}`} class={k === 0 ? 'run' : undefined}>
                {k === 0 ? (
                  <td class="blame-commit" rowspan={run.lines.length}>
                    <a href={commitUrl(c.sha)} title={c.summary}>
                      {c.sha.slice(0, 10)}
                    </a>{' '}
                    <span class="blame-summary">{c.summary}</span>
                    <div class="muted">
                      {c.author} · <When iso={new Date(c.time * 1000).toISOString().replace('.000Z', 'Z')} />
                    </div>
                  </td>
                ) : null}
                <td class="blame-num">
                  <a href={`#L${run.from + k}`}>{run.from + k}</a>
                </td>
                <td class="blame-code">{text}</td>
              </tr>
            ))
          })}
        </tbody>
      </table>
    </div>
  )
}
