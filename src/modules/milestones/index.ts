import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { AccessMode } from '../../auth/access'
import { toApiMilestone } from '../../lib/convert/issue'
import { RepoParams } from '../repos/model'
import { CreateMilestoneOption, EditMilestoneOption, IdParams, ListMilestonesQuery, MilestoneSchema } from '../issues/model'
import { loadIssueContext } from '../issues/service'
import { askedPage, setListHeaders } from '../../lib/pagination'
import { createMilestone, deleteMilestone, editMilestone, getMilestone, listMilestones } from './service'

/** Milestones (issue 5). */
export const milestonesModule = (deps: AppDeps) =>
  new Elysia({ name: 'milestones', detail: { tags: ['issue'] } })
    .get(
      '/repos/:owner/:repo/milestones',
      async ({ request, params, query, set }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo)
        const page = askedPage(query)
        const { rows, total } = listMilestones(deps, ctx.repo.id, page, query.state, query.name)
        setListHeaders(set, deps.config, request, page, total)
        return rows.map(toApiMilestone)
      },
      {
        params: RepoParams,
        query: ListMilestonesQuery,
        response: { 200: t.Array(MilestoneSchema) },
        detail: { operationId: 'issueGetMilestones', summary: "List a repository's milestones (state: open, closed, all)" },
      },
    )
    .post(
      '/repos/:owner/:repo/milestones',
      async ({ request, params, body, status }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo, AccessMode.Write)
        return status(201, toApiMilestone(createMilestone(deps, ctx.repo.id, body)))
      },
      {
        params: RepoParams,
        body: CreateMilestoneOption,
        response: { 201: MilestoneSchema },
        detail: { operationId: 'issueCreateMilestone', summary: 'Create a milestone' },
      },
    )
    .get(
      '/repos/:owner/:repo/milestones/:id',
      async ({ request, params }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo)
        return toApiMilestone(getMilestone(deps, ctx.repo.id, params.id))
      },
      { params: IdParams, response: { 200: MilestoneSchema }, detail: { operationId: 'issueGetMilestone', summary: 'Get a milestone' } },
    )
    .patch(
      '/repos/:owner/:repo/milestones/:id',
      async ({ request, params, body }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo, AccessMode.Write)
        return toApiMilestone(editMilestone(deps, ctx.repo.id, params.id, body))
      },
      {
        params: IdParams,
        body: EditMilestoneOption,
        response: { 200: MilestoneSchema },
        detail: { operationId: 'issueEditMilestone', summary: 'Edit a milestone' },
      },
    )
    .delete(
      '/repos/:owner/:repo/milestones/:id',
      async ({ request, params, status }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo, AccessMode.Write)
        deleteMilestone(deps, ctx.repo.id, params.id)
        return status(204, undefined)
      },
      { params: IdParams, response: { 204: t.Void() }, detail: { operationId: 'issueDeleteMilestone', summary: 'Delete a milestone' } },
    )
