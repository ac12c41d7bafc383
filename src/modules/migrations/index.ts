import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import { repoToApi } from '../../convert/repo'
import { RepoParams, RepositorySchema } from '../repos/model'
import { MigrateRepoForm } from './model'
import { migrateRepository } from './service'
import { requestMirrorSync } from './mirrors'

/** Migrations (clone a remote repository, optionally as a pull mirror) and mirror syncs. */
export const migrationsModule = (deps: AppDeps) =>
  new Elysia({ name: 'migrations', detail: { tags: ['repository'] } })
    .use(pipeline(deps))
    .post(
      '/repos/migrate',
      async ({ body, status, user }) => {
        const { repo, owner, mode } = await migrateRepository(deps, user, {
          cloneAddr: body.clone_addr,
          authUsername: body.auth_username,
          authPassword: body.auth_password || body.auth_token,
          uid: body.uid,
          ownerName: body.repo_owner,
          repoName: body.repo_name,
          mirror: body.mirror,
          private: body.private,
          description: body.description,
          mirrorInterval: body.mirror_interval,
        })
        return status(201, await repoToApi(deps, repo, owner, user, mode))
      },
      {
        scope: 'repository',
        signed: true,
        body: MigrateRepoForm,
        response: { 201: RepositorySchema },
        detail: { operationId: 'repoMigrate', summary: 'Migrate a remote git repository' },
      },
    )
    .post(
      '/repos/:owner/:repo/mirror-sync',
      async ({ repo, set }) => {
        await requestMirrorSync(deps, repo.repo.id)
        set.status = 200
        return ''
      },
      {
        scope: 'repository',
        repo: { level: 'write' },
        params: RepoParams,
        response: { 200: t.String() },
        detail: { operationId: 'repoMirrorSync', summary: "Sync a mirrored repository" },
      },
    )
