import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import { RepoParams } from '../repos/model'
import { repoLicenses } from './detect'
import { API_PREFIX } from '../../lib/api-prefix'

/** The licenses found in a repository's default branch (`detect.ts`). */
export const licensesModule = (deps: AppDeps) =>
  new Elysia({ prefix: API_PREFIX, name: 'licenses', detail: { tags: ['repository'] } }).use(pipeline(deps)).get('/repos/:owner/:repo/licenses', async ({ repo }) => await repoLicenses(deps, repo), {
    scope: 'repository',
    repo: { level: 'read' },
    params: RepoParams,
    response: { 200: t.Array(t.String()) },
    detail: { operationId: 'repoGetLicenses', summary: "Get the repo's licenses (SPDX ids of the license files at the default branch's root)" },
  })
