import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { RepoParams } from '../repos/model'
import { PageQuery } from '../../lib/pagination'
import { RepoWildcardParams, refNameOf } from '../files/model'
import { toApiTag } from '../../convert/tag'
import { CreateTagOption, TagSchema } from './model'
import { createTag, deleteTag, getRepoTag, listRepoTags } from './service'

/** A repository's tags (`{tag}` may hold slashes: the path's wildcard). */
export const tagsModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] })
    .get(
      '/repos/:owner/:repo/tags',
      async ({ repo, page, respond }) => respond(await listRepoTags(deps, repo, page), (tags) => tags.map((tag) => toApiTag(deps.config, repo.repo, tag))),
      {
        scope: 'repository',
        repo: { level: 'read' },
        // Tags grow without bound: a page always.
        paged: true,
        params: RepoParams,
        query: PageQuery,
        response: { 200: t.Array(TagSchema) },
        detail: { operationId: 'repoListTags', summary: "List a repository's tags, newest first" },
      },
    )
    .post(
      '/repos/:owner/:repo/tags',
      async ({ body, repo, user, status }) => status(201, toApiTag(deps.config, repo.repo, await createTag(deps, repo, user, body))),
      {
        scope: 'repository',
        repo: { level: 'write' },
        signed: true,
        params: RepoParams,
        body: CreateTagOption,
        response: { 201: TagSchema },
        detail: { operationId: 'repoCreateTag', summary: 'Create a tag (annotated when a message is given) at a branch, tag or commit (the default branch when none)' },
      },
    )
    .get('/repos/:owner/:repo/tags/*', async ({ params, repo }) => toApiTag(deps.config, repo.repo, await getRepoTag(deps, repo, refNameOf(params))), {
      scope: 'repository',
      repo: { level: 'read' },
      params: RepoWildcardParams,
      response: { 200: TagSchema },
      detail: { operationId: 'repoGetTag', summary: 'Get the tag of a repository by tag name' },
    })
    .delete(
      '/repos/:owner/:repo/tags/*',
      async ({ params, repo, user, status }) => {
        await deleteTag(deps, repo, user, refNameOf(params))
        return status(204, undefined)
      },
      {
        scope: 'repository',
        repo: { level: 'write' },
        signed: true,
        params: RepoWildcardParams,
        response: { 204: t.Void() },
        detail: { operationId: 'repoDeleteTag', summary: "Delete a repository's tag by name (409 while a release names it)" },
      },
    )
