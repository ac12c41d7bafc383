import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, pipeline, type AreaApp } from '../../auth/pipeline'
import { repoToApi } from '../../convert/repo'
import { RepoParams, RepositorySchema } from '../repos/model'
import { PageQuery } from '../../lib/pagination'
import { pushMirrorToApi } from '../../convert/push-mirror'
import { CreatePushMirrorOption, MigrateRepoForm, PushMirrorParams, PushMirrorSchema } from './model'
import { migrateRepository, requireMirrorsEnabled } from './service'
import { requestMirrorSync } from './mirrors'
import { createPushMirror, deletePushMirror, getPushMirror, listPushMirrors, syncPushMirrors } from './push-mirrors'

const PushMirrors = t.Array(PushMirrorSchema)

/** Migrations (clone a remote repository, optionally as a pull mirror), and the mirror routes. */
export const migrationsModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] })
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
          wiki: body.wiki,
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
    .use(mirrorRoutes(deps))

/**
 * The mirror routes: a pull mirror's sync and the push mirrors (repository administrators; their
 * writes refused on an archived repository, as Gitea's mustNotBeArchived). When the site has
 * mirrors turned off (Gitea's `[mirror] ENABLED`, WARREN_MIRROR_ENABLED=false) each answers 400,
 * once the caller, the repository and the input have passed their checks, as Gitea's handlers do.
 */
const mirrorRoutes = (deps: AppDeps) =>
  new Elysia({ name: 'mirrors', detail: { tags: ['repository'] } })
    .use(pipeline(deps))
    .onBeforeHandle(() => requireMirrorsEnabled(deps))
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
    .get(
      '/repos/:owner/:repo/push_mirrors',
      async ({ repo, page, respond }) => respond(await listPushMirrors(deps, repo.repo, page), (rows) => rows.map((row) => pushMirrorToApi(repo.repo, row))),
      {
        scope: 'repository',
        repo: { level: 'admin' },
        pageIfAsked: true,
        params: RepoParams,
        query: PageQuery,
        response: { 200: PushMirrors },
        detail: { operationId: 'repoListPushMirrors', summary: 'Get all push mirrors of the repository' },
      },
    )
    .post(
      '/repos/:owner/:repo/push_mirrors',
      async ({ repo, body }) =>
        pushMirrorToApi(
          repo.repo,
          await createPushMirror(deps, repo.repo, {
            remoteAddress: body.remote_address,
            remoteUsername: body.remote_username,
            remotePassword: body.remote_password,
            interval: body.interval,
            syncOnCommit: body.sync_on_commit,
            useSsh: body.use_ssh,
          }),
        ),
      {
        scope: 'repository',
        repo: { level: 'admin' },
        params: RepoParams,
        body: CreatePushMirrorOption,
        response: { 200: PushMirrorSchema },
        detail: { operationId: 'repoAddPushMirror', summary: 'Add a push mirror to the repository' },
      },
    )
    .post(
      '/repos/:owner/:repo/push_mirrors-sync',
      async ({ repo, set }) => {
        await syncPushMirrors(deps, repo.repo)
        set.status = 200
        return ''
      },
      {
        scope: 'repository',
        repo: { level: 'admin' },
        params: RepoParams,
        response: { 200: t.String() },
        detail: { operationId: 'repoPushMirrorSync', summary: 'Push every push mirror of the repository now' },
      },
    )
    .get('/repos/:owner/:repo/push_mirrors/:name', async ({ repo, params }) => pushMirrorToApi(repo.repo, await getPushMirror(deps, repo.repo, params.name)), {
      scope: 'repository',
      repo: { level: 'admin' },
      params: PushMirrorParams,
      response: { 200: PushMirrorSchema },
      detail: { operationId: 'repoGetPushMirrorByRemoteName', summary: 'Get a push mirror of the repository by its remote name' },
    })
    .delete(
      '/repos/:owner/:repo/push_mirrors/:name',
      async ({ repo, params, status }) => {
        await deletePushMirror(deps, repo.repo, params.name)
        return status(204, undefined)
      },
      {
        scope: 'repository',
        repo: { level: 'admin' },
        params: PushMirrorParams,
        response: { 204: t.Void({ description: 'no content' }) },
        detail: { operationId: 'repoDeletePushMirror', summary: 'Delete a push mirror of the repository by its remote name' },
      },
    )
