import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { ApiError, badRequest } from '../../lib/errors'
import type { RepoContext } from '../../auth/repo-context'
import { toApiWikiCommitList, toApiWikiPage, toApiWikiPageMeta } from '../../convert/wiki'
import { pageOf, pageQueryFields } from '../../lib/pagination'
import { decodeBase64 } from '../contents/commit-options'
import { RepoParams } from '../repos/model'
import { CreateWikiPageOptions, WikiCommitListSchema, WikiPageMetaDataSchema, WikiPageParams, WikiPageSchema } from './model'
import { pageNameOf } from './paths'
import { createPage, deletePage, editPage, getPage, listPages, pageRevisions, REVISIONS_PER_PAGE, type PageOptions } from './service'

/** What the wiki's writes share: a signed-in writer of a repository whose wiki is on (Gitea's reqRepoWriter(unit.TypeWiki)). */
const writeNeeds = { scope: 'repository', repo: { level: 'write', unit: 'wiki' }, signed: true } as const
const readNeeds = { scope: 'repository', repo: { level: 'read', unit: 'wiki' } } as const

/**
 * A write's options with its content read from the API's base64 as Gitea reads it (400 when it is
 * not base64), at most WARREN_MAX_BLOB_SIZE (413, checked before decoding).
 */
function pageOptions(deps: AppDeps, body: typeof CreateWikiPageOptions.static): PageOptions {
  try {
    return { title: body.title, message: body.message, content: decodeBase64(body.content_base64 ?? '', deps.config.maxBlobSize, 'content_base64') }
  } catch (e) {
    if (e instanceof ApiError && e.status === 422) throw badRequest('invalid base64 encoding of content')
    throw e
  }
}

const pageRecord = async (deps: AppDeps, repo: RepoContext, webPath: string) => toApiWikiPage(deps.config, repo.repo, await getPage(deps, repo, webPath))

/** Gitea's wiki API: a repository's wiki pages, read by its readers, written by its writers. */
export const wikiModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] })
    .get(
      '/repos/:owner/:repo/wiki/pages',
      async ({ repo, page, respond }) => respond(await listPages(deps, repo, page), (rows) => rows.map((p) => toApiWikiPageMeta(deps.config, repo.repo, p))),
      {
        ...readNeeds,
        paged: true,
        params: RepoParams,
        response: { 200: t.Array(WikiPageMetaDataSchema) },
        detail: { operationId: 'repoGetWikiPages', summary: 'Get all wiki pages' },
      },
    )
    .get('/repos/:owner/:repo/wiki/page/:pageName', async ({ request, repo }) => await pageRecord(deps, repo, pageNameOf(request)), {
      ...readNeeds,
      params: WikiPageParams,
      response: { 200: WikiPageSchema },
      detail: { operationId: 'repoGetWikiPage', summary: 'Get a wiki page' },
    })
    .get(
      '/repos/:owner/:repo/wiki/revisions/:pageName',
      async ({ request, repo, query, set }) => {
        const { commits, count } = await pageRevisions(deps, repo, pageNameOf(request), pageOf({ page: query.page }, { defaultLimit: REVISIONS_PER_PAGE, maxLimit: REVISIONS_PER_PAGE }).page)
        set.headers['X-Total-Count'] = String(count)
        return toApiWikiCommitList(commits, count)
      },
      {
        ...readNeeds,
        params: WikiPageParams,
        query: t.Object({ page: pageQueryFields.page }),
        response: { 200: WikiCommitListSchema },
        detail: { operationId: 'repoGetWikiPageRevisions', summary: `Get revisions of a wiki page (${REVISIONS_PER_PAGE} a page)` },
      },
    )
    .post(
      '/repos/:owner/:repo/wiki/new',
      async ({ body, repo, user, status }) => status(201, await pageRecord(deps, repo, await createPage(deps, repo, user, pageOptions(deps, body)))),
      {
        ...writeNeeds,
        params: RepoParams,
        body: CreateWikiPageOptions,
        response: { 201: WikiPageSchema },
        detail: { operationId: 'repoCreateWikiPage', summary: 'Create a wiki page' },
      },
    )
    .patch(
      '/repos/:owner/:repo/wiki/page/:pageName',
      async ({ request, body, repo, user }) => await pageRecord(deps, repo, await editPage(deps, repo, user, pageNameOf(request), pageOptions(deps, body))),
      {
        ...writeNeeds,
        params: WikiPageParams,
        body: CreateWikiPageOptions,
        response: { 200: WikiPageSchema },
        detail: { operationId: 'repoEditWikiPage', summary: 'Edit a wiki page (a `title` renames it)' },
      },
    )
    .delete(
      '/repos/:owner/:repo/wiki/page/:pageName',
      async ({ request, repo, user, status }) => {
        await deletePage(deps, repo, user, pageNameOf(request))
        return status(204, undefined)
      },
      {
        ...writeNeeds,
        params: WikiPageParams,
        detail: { operationId: 'repoDeleteWikiPage', summary: 'Delete a wiki page' },
      },
    )
