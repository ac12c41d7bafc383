import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { RepoParams } from '../repos/model'
import { IssueConfigSchema, IssueConfigValidationSchema, IssueTemplateSchema } from './model'
import { issueConfig, issueTemplates } from './service'

/** Issue templates and the template chooser's config, read from the default branch. */
export const issueTemplatesModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] })
    .get(
      '/repos/:owner/:repo/issue_templates',
      async ({ repo, set }) => {
        const { templates, invalid } = await issueTemplates(deps, repo)
        // Gitea's way of telling that some files were left out.
        if (invalid) set.headers['X-Gitea-Warning'] = `error occurs when parsing issue template: count=${invalid}`
        return templates
      },
      {
        scope: 'repository',
        repo: { level: 'read' },
        params: RepoParams,
        response: { 200: t.Array(IssueTemplateSchema) },
        detail: { operationId: 'repoGetIssueTemplates', summary: "Get the default branch's issue templates" },
      },
    )
    .get('/repos/:owner/:repo/issue_config', async ({ repo }) => (await issueConfig(deps, repo)).config, {
      scope: 'repository',
      repo: { level: 'read' },
      params: RepoParams,
      response: { 200: IssueConfigSchema },
      detail: { operationId: 'repoGetIssueConfig', summary: "Get the default branch's issue config (the default when there is none or it is invalid)" },
    })
    .get(
      '/repos/:owner/:repo/issue_config/validate',
      async ({ repo }) => {
        const { error } = await issueConfig(deps, repo)
        return { valid: error === null, message: error ?? '' }
      },
      {
        scope: 'repository',
        repo: { level: 'read' },
        params: RepoParams,
        response: { 200: IssueConfigValidationSchema },
        detail: { operationId: 'repoValidateIssueConfig', summary: "Validate the default branch's issue config" },
      },
    )
