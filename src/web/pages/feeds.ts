import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pageGroup, type AreaApp } from '../../auth/pipeline'
import type { RepoContext } from '../../auth/repo-context'
import { listReleases } from '../../modules/releases/service'
import { releasesToApi } from '../../convert/release'
import { listRepoTags } from '../../modules/tags/service'
import { listCommits } from '../../modules/commits/service'
import { renderMarkdownAll } from '../../modules/markdown/service'
import { ApiError } from '../../lib/errors'
import { feedResponse, xmlText, type Feed, type FeedFormat, type FeedItem } from '../feed-xml'
import { pageDetail, webContext } from '../context'
import { errorPage } from '../errors'
import { refPath, repoUrl } from '../links'
import { FormText } from '../forms'
import { FEED_ITEMS, feedBase, ownerFeed, repoFeed } from './activity-feed'
import { SourceParams, sourceAtOf } from './repo'

/*
 * Gitea's RSS and Atom feeds (routers/web/feed): a person's activity (`/{user}.rss`, what they did
 * themself), an organisation's (`/{org}.rss`), a repository's (`/{o}/{r}.rss`), its releases and
 * tags (`/{o}/{r}/releases.rss`, `tags.rss`), a branch's latest commits and those of one file
 * (`/{o}/{r}/rss/branch/{branch}/{path}`), each also as `.atom` / `/atom/...`. Read through the
 * same pipeline, visibility rule and services as the pages and the API: a feed shows what its
 * reader may see (private repositories' events to those who may read them), as its page does.
 * `/{name}.rss` and `/{o}/{r}.rss` reach the app as `/{name}/-/feed/rss` and `/{o}/{r}/-/feed/rss`
 * (server.ts, feedPathOf).
 */

/** A branch's feed: its 10 latest commits, as Gitea. */
const COMMIT_ITEMS = 10

const FORMATS = new Set<string>(['rss', 'atom'])
const OwnerFeedParams = t.Object({ owner: t.String({ maxLength: 255 }), format: t.String({ maxLength: 8 }) })
const RepoFeedParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }), format: t.String({ maxLength: 8 }) })
const FeedQuery = t.Object({ date: FormText(10) })
const RepoParams = t.Object({ owner: t.String({ maxLength: 255 }), repo: t.String({ maxLength: 255 }) })

/** Release notes as HTML (the markdown renderer's, sanitised, relative links into the default branch as on the release pages); escaped text where it cannot render them now. */
async function notesHtml(deps: AppDeps, ctx: RepoContext, notes: string[], client: string): Promise<string[]> {
  try {
    return await renderMarkdownAll(deps.config, notes, { mode: 'gfm', context: `${ctx.owner.name}/${ctx.repo.name}`, branch: ctx.repo.defaultBranch }, client)
  } catch (e) {
    if (e instanceof ApiError && e.status < 500) return notes.map((n) => xmlText(n).replace(/\n/g, '<br>'))
    throw e
  }
}

/** A repository's releases (`tags: false`) or tags as a feed (Gitea's ShowReleaseFeed). */
async function releaseFeed(deps: AppDeps, ctx: RepoContext, tags: boolean, client: string): Promise<Feed> {
  const full = `${ctx.owner.name}/${ctx.repo.name}`
  const home = feedBase(deps) + repoUrl(ctx.owner.name, ctx.repo.name)
  if (tags) {
    const found = ctx.repo.isEmpty ? { rows: [] } : await listRepoTags(deps, ctx, { page: 1, limit: FEED_ITEMS, offset: 0 })
    return {
      title: `Tags for ${full}`,
      link: `${home}/tags`,
      description: ctx.repo.description,
      items: found.rows.map((tag) => {
        const link = `${home}/src/tag/${refPath(tag.name)}`
        return { title: tag.name, link, id: `${tag.id}: ${link}`, description: tag.message.trim(), created: tag.created }
      }),
    }
  }
  const found = await listReleases(deps, ctx, { page: 1, limit: FEED_ITEMS, offset: 0 }, { draft: false })
  const records = await releasesToApi(deps, ctx.repo, found.rows, ctx.caller.user)
  const html = await notesHtml(deps, ctx, records.map((r) => r.body), client)
  return {
    title: `Releases for ${full}`,
    link: `${home}/releases`,
    description: ctx.repo.description,
    items: records.map((r, i) => ({
      title: r.name || r.tag_name,
      link: r.html_url,
      id: `${r.id}: ${r.html_url}`,
      description: r.body,
      content: html[i],
      author: { name: r.author.full_name || r.author.login, email: r.author.email || undefined },
      created: r.published_at || r.created_at,
    })),
  }
}

const formatOf = (value: string): FeedFormat | null => (FORMATS.has(value) ? (value as FeedFormat) : null)

/** The feeds' routes. */
export const feedPages = (deps: AppDeps, webApp: AreaApp) => {
  const app = pageGroup(webApp)
    .get(
      '/:owner/-/feed/:format',
      async ({ request, params, query, owner, caller }) => {
        const format = formatOf(params.format)
        if (!format) return errorPage(404, 'no such feed', webContext(deps.config, request, caller))
        // A token needs the user scope, as for the profile whose activity this is (`/{owner}`).
        return await ownerFeed(deps, caller.user, owner, query.date, format)
      },
      { scope: 'user', owner: true, params: OwnerFeedParams, query: FeedQuery, detail: pageDetail('webOwnerFeed') },
    )
    .get(
      '/:owner/:repo/-/feed/:format',
      async ({ request, params, query, repo: ctx }) => {
        const format = formatOf(params.format)
        if (!format) return errorPage(404, 'no such feed', webContext(deps.config, request, ctx.caller))
        return await repoFeed(deps, ctx, query.date, format)
      },
      { scope: 'repository', repo: { level: 'read' }, params: RepoFeedParams, query: FeedQuery, detail: pageDetail('webRepoFeed') },
    )
  for (const list of ['releases', 'tags'] as const)
    for (const format of ['rss', 'atom'] as const)
      app.get(
        `/:owner/:repo/${list}.${format}`,
        async ({ request, repo: ctx }) => feedResponse(await releaseFeed(deps, ctx, list === 'tags', deps.auth.clientAddress(request) ?? ''), format),
        { scope: 'repository', repo: list === 'releases' ? { level: 'read', unit: 'releases' } : { level: 'read' }, params: RepoParams, detail: pageDetail(`webRepo${list === 'tags' ? 'Tags' : 'Releases'}Feed${format === 'rss' ? 'Rss' : 'Atom'}`) },
      )
  for (const format of ['rss', 'atom'] as const)
    app.get(
      `/:owner/:repo/${format}/:kind/*`,
      async ({ request, params, repo: ctx }) => {
        const web = webContext(deps.config, request, ctx.caller)
        // Gitea serves branches only here.
        const at = params.kind === 'branch' && !ctx.repo.isEmpty ? await sourceAtOf(deps, ctx, params) : null
        if (!at) return errorPage(404, 'no such branch', web)
        const path = at.path.join('/')
        let commits
        try {
          commits = await listCommits(deps, ctx, { sha: at.commit, path: path || undefined }, { page: 1, limit: COMMIT_ITEMS, offset: 0 }, { stats: false, files: false })
        } catch (e) {
          if (e instanceof ApiError && e.status === 404) return errorPage(404, e.message, web)
          throw e
        }
        const home = feedBase(deps) + repoUrl(ctx.owner.name, ctx.repo.name)
        const items: FeedItem[] = commits.rows.map((c) => ({
          title: c.message.split('\n')[0]!.trim(),
          link: `${home}/commit/${c.id}`,
          id: c.id,
          description: c.message.trimEnd(),
          author: { name: c.authorName, email: c.authorEmail || undefined },
          created: c.committerDate,
        }))
        const title = path ? `Latest commits for file ${path}` : `Latest commits for branch ${at.ref}`
        return feedResponse({ title, link: `${home}/src/branch/${refPath(at.ref)}${path ? '/' + at.path.map(encodeURIComponent).join('/') : ''}`, description: ctx.repo.description, items }, format)
      },
      { scope: 'repository', repo: { level: 'read' }, params: SourceParams, detail: pageDetail(`webBranchFeed${format === 'rss' ? 'Rss' : 'Atom'}`) },
    )
  return app
}
