import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { pipeline } from '../../auth/pipeline'
import { GITEA_COMPAT_VERSION } from '../../version'

export const miscModule = (deps: AppDeps) =>
  new Elysia({ name: 'misc', detail: { tags: ['miscellaneous'] } }).use(pipeline(deps)).get('/version', () => ({ version: GITEA_COMPAT_VERSION }), {
    scope: 'none',
    response: { 200: t.Object({ version: t.String() }) },
    detail: { operationId: 'getVersion', summary: "Returns the version of the server's API" },
  })
