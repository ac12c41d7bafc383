import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { RepoParams } from '../repos/model'
import { repoLicenses } from './detect'

/** The licenses found in a repository's default branch (`detect.ts`). */
export const licensesModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] }).get('/repos/:owner/:repo/licenses', async ({ repo }) => await repoLicenses(deps, repo), {
    scope: 'repository',
    repo: { level: 'read' },
    params: RepoParams,
    response: { 200: t.Array(t.String()) },
    detail: { operationId: 'repoGetLicenses', summary: "Get the repo's licenses (SPDX ids of the license files at the default branch's root)" },
  })
