import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { GITEA_COMPAT_VERSION } from '../../version'
import { gitignoreNames, gitignoreTemplate, labelTemplate, labelTemplateNames, licenseList, licenseTemplate, nodeInfo, type NodeInfo } from './service'

const NameParams = t.Object({ name: t.String({ maxLength: 100 }) })

const GitignoreTemplateInfo = t.Object({ name: t.String(), source: t.String() }, { $id: '#/components/schemas/GitignoreTemplateInfo' })
const LicensesTemplateListEntry = t.Object({ key: t.String(), name: t.String(), url: t.String() }, { $id: '#/components/schemas/LicensesTemplateListEntry' })
const LicenseTemplateInfo = t.Object(
  { key: t.String(), name: t.String(), url: t.String(), body: t.String(), implementation: t.String() },
  { $id: '#/components/schemas/LicenseTemplateInfo' },
)
const LabelTemplate = t.Object(
  { name: t.String(), color: t.String(), description: t.String(), exclusive: t.Boolean() },
  { $id: '#/components/schemas/LabelTemplate' },
)
const NodeInfoSchema = t.Object(
  {
    version: t.String(),
    software: t.Object({ name: t.String(), version: t.String(), repository: t.String(), homepage: t.String() }),
    protocols: t.Array(t.String()),
    services: t.Object({ inbound: t.Array(t.String()), outbound: t.Array(t.String()) }),
    openRegistrations: t.Boolean(),
    usage: t.Object({
      users: t.Object({ total: t.Number(), activeHalfyear: t.Number(), activeMonth: t.Number() }),
      localPosts: t.Number(),
      localComments: t.Number(),
    }),
    metadata: t.Object({}),
  },
  { $id: '#/components/schemas/NodeInfo' },
)

/**
 * What any caller may ask of the server itself: its version, NodeInfo, and the templates a new
 * repository may start from (.gitignore files, licenses, label sets; `service.ts`).
 */
export const miscModule = (deps: AppDeps, api: AreaApp) => {
  const nodeInfoSlot: { at: number; value?: NodeInfo } = { at: 0 }
  return area(api, { tags: ['miscellaneous'] })
    .get('/version', () => ({ version: GITEA_COMPAT_VERSION }), {
      scope: 'none',
      response: { 200: t.Object({ version: t.String() }) },
      detail: { operationId: 'getVersion', summary: "Returns the version of the server's API" },
    })
    .get('/nodeinfo', async () => await nodeInfo(deps, nodeInfoSlot), {
      scope: 'none',
      response: { 200: NodeInfoSchema },
      detail: { operationId: 'getNodeInfo', summary: 'Returns the nodeinfo of the Gitea application' },
    })
    .get('/gitignore/templates', async () => await gitignoreNames(), {
      scope: 'none',
      response: { 200: t.Array(t.String()) },
      detail: { operationId: 'listGitignoresTemplates', summary: 'Returns a list of all gitignore templates' },
    })
    .get('/gitignore/templates/:name', async ({ params }) => await gitignoreTemplate(params.name), {
      scope: 'none',
      params: NameParams,
      response: { 200: GitignoreTemplateInfo },
      detail: { operationId: 'getGitignoreTemplateInfo', summary: 'Returns information about a gitignore template' },
    })
    .get('/licenses', async () => await licenseList(deps), {
      scope: 'none',
      response: { 200: t.Array(LicensesTemplateListEntry) },
      detail: { operationId: 'listLicenseTemplates', summary: 'Returns a list of all license templates' },
    })
    .get('/licenses/:name', async ({ params }) => await licenseTemplate(deps, params.name), {
      scope: 'none',
      params: NameParams,
      response: { 200: LicenseTemplateInfo },
      detail: { operationId: 'getLicenseTemplateInfo', summary: 'Returns information about a license template' },
    })
    .get('/label/templates', async () => await labelTemplateNames(), {
      scope: 'none',
      response: { 200: t.Array(t.String()) },
      detail: { operationId: 'listLabelTemplates', summary: 'Returns a list of all label templates' },
    })
    .get('/label/templates/:name', async ({ params }) => await labelTemplate(params.name), {
      scope: 'none',
      params: NameParams,
      response: { 200: t.Array(LabelTemplate) },
      detail: { operationId: 'getLabelTemplateInfo', summary: 'Returns all labels in a template' },
    })
}
