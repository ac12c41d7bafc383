import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { AccessMode } from '../../auth/access'
import { loadRepoContext } from '../../auth/repo-context'
import { toApiUser } from '../../lib/convert/user'
import { notFound } from '../../lib/errors'
import { PageQuery, pageOf, setPageHeaders } from '../../lib/pagination'
import { UserSchema } from '../users/model'
import { RepoParams } from '../repos/model'
import { AddCollaboratorOption, CollaboratorParams } from './model'
import { addCollaborator, collaboratorUser, isCollaborator, listCollaborators, removeCollaborator } from './service'

/** Repository collaborators: read access lists and checks, repository admins change them. */
export const collaboratorsModule = (deps: AppDeps) =>
  new Elysia({ name: 'collaborators', detail: { tags: ['repository'] } })
    .get(
      '/repos/:owner/:repo/collaborators',
      async ({ request, params, query, set }) => {
        const ctx = await loadRepoContext(deps, request, params.owner, params.repo, AccessMode.Read)
        const page = pageOf(query)
        const { rows, total } = listCollaborators(deps, ctx.caller.user, ctx.repo, page)
        setPageHeaders(set, deps.config, request, page, total)
        return rows.map((u) => toApiUser(deps.config, u, ctx.caller.user))
      },
      {
        params: RepoParams,
        query: PageQuery,
        response: { 200: t.Array(UserSchema) },
        detail: { operationId: 'repoListCollaborators', summary: "List a repository's collaborators" },
      },
    )
    .get(
      '/repos/:owner/:repo/collaborators/:collaborator',
      async ({ request, params, status }) => {
        const ctx = await loadRepoContext(deps, request, params.owner, params.repo, AccessMode.Read)
        const user = collaboratorUser(deps, params.collaborator)
        if (!isCollaborator(deps, ctx.repo, user)) throw notFound()
        return status(204, undefined)
      },
      {
        params: CollaboratorParams,
        detail: { operationId: 'repoCheckCollaborator', summary: 'Check if a user is a collaborator of a repository' },
      },
    )
    .put(
      '/repos/:owner/:repo/collaborators/:collaborator',
      async ({ request, params, body, status }) => {
        const ctx = await loadRepoContext(deps, request, params.owner, params.repo, AccessMode.Admin)
        const user = collaboratorUser(deps, params.collaborator)
        addCollaborator(deps, ctx.repo, user, body?.permission)
        return status(204, undefined)
      },
      {
        params: CollaboratorParams,
        body: t.Optional(AddCollaboratorOption),
        detail: { operationId: 'repoAddCollaborator', summary: 'Add a collaborator to a repository' },
      },
    )
    .delete(
      '/repos/:owner/:repo/collaborators/:collaborator',
      async ({ request, params, status }) => {
        const ctx = await loadRepoContext(deps, request, params.owner, params.repo, AccessMode.Admin)
        const user = collaboratorUser(deps, params.collaborator)
        removeCollaborator(deps, ctx.repo, user)
        return status(204, undefined)
      },
      {
        params: CollaboratorParams,
        detail: { operationId: 'repoDeleteCollaborator', summary: 'Delete a collaborator from a repository' },
      },
    )
