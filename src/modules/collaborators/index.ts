import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { toApiUser } from '../../convert/user'
import { notFound } from '../../lib/errors'
import { PageQuery } from '../../lib/pagination'
import { UserSchema } from '../users/model'
import { RepoParams } from '../repos/model'
import { AddCollaboratorOption, CollaboratorParams, RepoCollaboratorPermissionSchema } from './model'
import { addCollaborator, collaboratorPermission, collaboratorUser, isCollaborator, listAssignees, listCollaborators, removeCollaborator } from './service'

/** Repository collaborators: read access lists and checks, repository admins change them. */
export const collaboratorsModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] })
    .get(
      '/repos/:owner/:repo/collaborators',
      async ({ repo, page, respond }) =>
        respond(await listCollaborators(deps, repo.caller.user, repo.repo, page), (rows) => rows.map((u) => toApiUser(deps.config, u, repo.caller.user))),
      {
        scope: 'repository',
        repo: { level: 'read' },
        paged: true,
        params: RepoParams,
        query: PageQuery,
        response: { 200: t.Array(UserSchema) },
        detail: { operationId: 'repoListCollaborators', summary: "List a repository's collaborators" },
      },
    )
    .get(
      '/repos/:owner/:repo/collaborators/:collaborator/permission',
      async ({ params, repo, user }) => {
        const { user: who, permission } = await collaboratorPermission(deps, repo, user, params.collaborator)
        return { permission, role_name: permission, user: toApiUser(deps.config, who, user) }
      },
      {
        scope: 'repository',
        repo: { level: 'read' },
        signed: true,
        params: CollaboratorParams,
        response: { 200: RepoCollaboratorPermissionSchema },
        detail: { operationId: 'repoGetRepoPermissions', summary: "Get a person's permission in a repository (site and repository admins, or the person)" },
      },
    )
    .get(
      '/repos/:owner/:repo/assignees',
      // Gitea answers the whole list; a page when one is asked for.
      async ({ repo, page, respond }) =>
        respond(await listAssignees(deps, repo.caller.user, repo.repo, page), (rows) => rows.map((u) => toApiUser(deps.config, u, repo.caller.user))),
      {
        scope: 'repository',
        repo: { level: 'read' },
        pageIfAsked: true,
        params: RepoParams,
        query: PageQuery,
        response: { 200: t.Array(UserSchema) },
        detail: { operationId: 'repoGetAssignees', summary: 'List the people issues of a repository may be assigned to' },
      },
    )
    .get(
      '/repos/:owner/:repo/collaborators/:collaborator',
      async ({ params, status, repo }) => {
        const user = await collaboratorUser(deps, params.collaborator)
        if (!await isCollaborator(deps, repo.repo, user)) throw notFound()
        return status(204, undefined)
      },
      {
        scope: 'repository',
        repo: { level: 'read' },
        params: CollaboratorParams,
        detail: { operationId: 'repoCheckCollaborator', summary: 'Check if a user is a collaborator of a repository' },
      },
    )
    .put(
      '/repos/:owner/:repo/collaborators/:collaborator',
      async ({ params, body, status, repo }) => {
        await addCollaborator(deps, repo.repo, await collaboratorUser(deps, params.collaborator), body?.permission)
        return status(204, undefined)
      },
      {
        scope: 'repository',
        repo: { level: 'admin' },
        params: CollaboratorParams,
        body: t.Optional(AddCollaboratorOption),
        detail: { operationId: 'repoAddCollaborator', summary: 'Add a collaborator to a repository' },
      },
    )
    .delete(
      '/repos/:owner/:repo/collaborators/:collaborator',
      async ({ params, status, repo }) => {
        await removeCollaborator(deps, repo.repo, await collaboratorUser(deps, params.collaborator))
        return status(204, undefined)
      },
      {
        scope: 'repository',
        repo: { level: 'admin' },
        params: CollaboratorParams,
        detail: { operationId: 'repoDeleteCollaborator', summary: 'Delete a collaborator from a repository' },
      },
    )
