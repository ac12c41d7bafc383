import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { GITEA_COMPAT_VERSION } from '../../version'

export const miscModule = (_deps: AppDeps) =>
  new Elysia({ name: 'misc', detail: { tags: ['miscellaneous'] } }).get('/version', () => ({ version: GITEA_COMPAT_VERSION }), {
    response: { 200: t.Object({ version: t.String() }) },
    detail: { operationId: 'getVersion', summary: "Returns the version of the server's API" },
  })
