import { Elysia } from 'elysia'
import type { AppDeps } from '../../deps'
import { requireUser } from '../../auth/caller'
import { AccessMode } from '../../auth/access'
import { loadRepoContext } from '../../auth/repo-context'
import { toApiRepo } from '../../lib/convert/repo'
import { CreateRepoOption, RepoParams, RepositorySchema } from './model'
import { createRepository } from './service'

/** Repositories: create, get (more routes: see issue 3). */
export const reposModule = (deps: AppDeps) =>
  new Elysia({ name: 'repos', detail: { tags: ['repository'] } })
    .post(
      '/user/repos',
      async ({ request, body, status }) => {
        const caller = await deps.auth.caller(request)
        const user = requireUser(caller)
        const repo = await createRepository(deps, user, {
          name: body.name,
          description: body.description,
          private: body.private,
          autoInit: body.auto_init,
          gitignores: body.gitignores,
          license: body.license,
          readme: body.readme,
          defaultBranch: body.default_branch,
        })
        return status(201, toApiRepo(deps.config, repo, user, user, AccessMode.Owner))
      },
      {
        body: CreateRepoOption,
        response: { 201: RepositorySchema },
        detail: { operationId: 'createCurrentUserRepo', summary: 'Create a repository' },
      },
    )
    .get(
      '/repos/:owner/:repo',
      async ({ request, params }) => {
        const ctx = await loadRepoContext(deps, request, params.owner, params.repo)
        return toApiRepo(deps.config, ctx.repo, ctx.owner, ctx.caller.user, ctx.mode)
      },
      { params: RepoParams, response: { 200: RepositorySchema }, detail: { operationId: 'repoGet', summary: 'Get a repository' } },
    )
