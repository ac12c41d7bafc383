import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { toApiMilestone } from '../../convert/issue'
import { RepoParams } from '../repos/model'
import { CreateMilestoneOption, EditMilestoneOption, IdParams, ListMilestonesQuery, MilestoneSchema } from '../issues/model'
import { createMilestone, deleteMilestone, editMilestone, getMilestone, listMilestones } from './service'

/** Milestones. */
export const milestonesModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['issue'] })
    .get(
      '/repos/:owner/:repo/milestones',
      async ({ query, repo, page, respond }) =>
        respond(await listMilestones(deps, repo.repo.id, page, query.state, query.name), (rows) => rows.map(toApiMilestone)),
      {
        scope: 'issue',
        repo: { unit: 'issuesOrPulls' },
        pageIfAsked: true,
        params: RepoParams,
        query: ListMilestonesQuery,
        response: { 200: t.Array(MilestoneSchema) },
        detail: { operationId: 'issueGetMilestones', summary: "List a repository's milestones (state: open, closed, all)" },
      },
    )
    .post(
      '/repos/:owner/:repo/milestones',
      async ({ body, status, repo }) => status(201, toApiMilestone(await createMilestone(deps, repo.repo.id, body))),
      {
        scope: 'issue',
        repo: { level: 'write', unit: 'issuesOrPulls' },
        params: RepoParams,
        body: CreateMilestoneOption,
        response: { 201: MilestoneSchema },
        detail: { operationId: 'issueCreateMilestone', summary: 'Create a milestone' },
      },
    )
    .get(
      '/repos/:owner/:repo/milestones/:id',
      async ({ params, repo }) => toApiMilestone(await getMilestone(deps, repo.repo.id, params.id)),
      { scope: 'issue', repo: { unit: 'issuesOrPulls' }, params: IdParams, response: { 200: MilestoneSchema }, detail: { operationId: 'issueGetMilestone', summary: 'Get a milestone' } },
    )
    .patch(
      '/repos/:owner/:repo/milestones/:id',
      async ({ params, body, repo }) => toApiMilestone(await editMilestone(deps, repo.repo.id, params.id, body)),
      {
        scope: 'issue',
        repo: { level: 'write', unit: 'issuesOrPulls' },
        params: IdParams,
        body: EditMilestoneOption,
        response: { 200: MilestoneSchema },
        detail: { operationId: 'issueEditMilestone', summary: 'Edit a milestone' },
      },
    )
    .delete(
      '/repos/:owner/:repo/milestones/:id',
      async ({ params, status, repo }) => {
        await deleteMilestone(deps, repo.repo.id, params.id)
        return status(204, undefined)
      },
      { scope: 'issue', repo: { level: 'write', unit: 'issuesOrPulls' }, params: IdParams, response: { 204: t.Void() }, detail: { operationId: 'issueDeleteMilestone', summary: 'Delete a milestone' } },
    )
