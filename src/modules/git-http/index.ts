import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { isGitService, type GitService } from '../../git/smart-http'
import { downloadRoutes } from '../files'
import { authorizeGit, gitErrorResponse, infoRefs, requestTypeRefusal, serviceResponse } from './service'
import { QueryText } from '../../lib/validate'
import { readsBody } from '../../lib/body'

const GitParams = t.Object({ owner: t.String(), repo: t.String() })
const GitBytes = t.Unknown({ description: 'git protocol data' })

/**
 * `POST /{owner}/{repo}(.git)/git-<service>`: stateless RPC, streamed both ways. The body is a
 * pack streamed into git, so the app's body parser leaves it unread whatever its Content-Type.
 */
const rpcRoute = (deps: AppDeps, service: GitService, operationId: string, summary: string) =>
  new Elysia({ name: `git-rpc:${service}` }).post(
    `/:owner/:repo/git-${service}`,
    async ({ request, params }) => {
      const target = await authorizeGit(deps, request, params.owner, params.repo, service)
      if (target instanceof Response) return target
      return requestTypeRefusal(deps, request, service) ?? serviceResponse(deps, target, service, request)
    },
    { params: GitParams, response: { 200: GitBytes }, detail: { operationId, summary, ...readsBody('unread') } },
  )

/**
 * Outside /api/v1: git smart HTTP (`/{owner}/{repo}.git/...`, also without `.git`) and the web
 * download URLs (`/{owner}/{repo}/raw/...`, `/{owner}/{repo}/archive/...`).
 */
export const gitHttpModule = (deps: AppDeps) =>
  new Elysia({ name: 'git-http', detail: { hide: true } })
    .get(
      '/:owner/:repo/info/refs',
      async ({ request, params, query }) => {
        const service = (query.service ?? '').replace(/^git-/, '')
        if (!query.service?.startsWith('git-') || !isGitService(service))
          return gitErrorResponse(deps, 403, 'only the smart HTTP protocol is supported (service=git-upload-pack or git-receive-pack)')
        const target = await authorizeGit(deps, request, params.owner, params.repo, service)
        if (target instanceof Response) return target
        return infoRefs(deps, target, service, request.headers.get('git-protocol'))
      },
      {
        params: GitParams,
        query: t.Object({ service: QueryText() }),
        response: { 200: GitBytes },
        detail: { operationId: 'gitInfoRefs', summary: 'Git smart HTTP ref advertisement' },
      },
    )
    .use(rpcRoute(deps, 'upload-pack', 'gitUploadPack', 'Git smart HTTP fetch'))
    .use(rpcRoute(deps, 'receive-pack', 'gitReceivePack', 'Git smart HTTP push'))
    .use(downloadRoutes(deps, '/:owner/:repo', { web: true, ids: ['webRawFile', 'webArchive'] }))
