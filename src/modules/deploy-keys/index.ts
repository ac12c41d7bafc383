import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { pathNumber } from '../../lib/path-number'
import { RepoParams } from '../repos/model'
import { CreateKeyOption } from '../keys/model'
import { DeployKeyListQuery, DeployKeyParams, DeployKeySchema } from './model'
import { deployKeysToApi } from '../../convert/deploy-key'
import { addDeployKey, deleteDeployKey, getDeployKey, listDeployKeys } from './service'

/**
 * A repository's deploy keys. Repository admins only (Gitea ≥ 1.7 reqAdmin); like Gitea (no
 * mustNotBeArchived on these routes), keys of an archived repository can still be changed.
 */
export const deployKeysModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] })
    .get(
      '/repos/:owner/:repo/keys',
      async ({ query, repo, page, respond }) =>
        respond(await listDeployKeys(deps, repo.repo.id, page, { keyId: query.key_id, fingerprint: query.fingerprint }), async (rows) => await deployKeysToApi(deps, repo, rows)),
      {
        scope: 'repository',
        repo: { level: 'admin' },
        paged: true,
        params: RepoParams,
        query: DeployKeyListQuery,
        response: { 200: t.Array(DeployKeySchema) },
        detail: { operationId: 'repoListKeys', summary: "List a repository's keys" },
      },
    )
    .post(
      '/repos/:owner/:repo/keys',
      async ({ body, status, repo }) => status(201, (await deployKeysToApi(deps, repo, [await addDeployKey(deps, repo.repo.id, body)]))[0]!),
      {
        scope: 'repository',
        repo: { level: 'admin', writes: false },
        params: RepoParams,
        body: CreateKeyOption,
        response: { 201: DeployKeySchema },
        detail: { operationId: 'repoCreateKey', summary: 'Add a key to a repository' },
      },
    )
    .get(
      '/repos/:owner/:repo/keys/:id',
      async ({ params, repo }) => (await deployKeysToApi(deps, repo, [await getDeployKey(deps, repo.repo.id, pathNumber(params.id))]))[0]!,
      {
        scope: 'repository',
        repo: { level: 'admin' },
        params: DeployKeyParams,
        response: { 200: DeployKeySchema },
        detail: { operationId: 'repoGetKey', summary: "Get a repository's key by id" },
      },
    )
    .delete(
      '/repos/:owner/:repo/keys/:id',
      async ({ params, status, repo }) => {
        await deleteDeployKey(deps, repo.repo.id, pathNumber(params.id))
        return status(204, undefined)
      },
      {
        scope: 'repository',
        repo: { level: 'admin', writes: false },
        params: DeployKeyParams,
        response: { 204: t.Void() },
        detail: { operationId: 'repoDeleteKey', summary: 'Delete a key from a repository' },
      },
    )
