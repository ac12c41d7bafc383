import { Elysia, t } from 'elysia'
import type { AppDeps } from '../../deps'
import { AccessMode } from '../../auth/access'
import { toApiLabel } from '../../lib/convert/issue'
import { RepoParams } from '../repos/model'
import {
  CreateLabelOption,
  EditLabelOption,
  IssueIdParams,
  IssueLabelsOption,
  IssueParams,
  LabelParams,
  LabelSchema,
  ListLabelsQuery,
} from '../issues/model'
import { pathNumber } from '../../lib/path-number'
import { changeIssueLabels, findIssue, labelsOfIssue, loadIssueContext } from '../issues/service'
import { askedPage, setListHeaders } from '../../lib/pagination'
import { createLabel, deleteLabel, editLabel, getLabel, listLabels } from './service'

const LabelList = t.Array(LabelSchema)

/** Labels of a repository, and the labels of an issue (issue 5). */
export const labelsModule = (deps: AppDeps) => {
  const app = new Elysia({ name: 'labels', detail: { tags: ['issue'] } })
    .get(
      '/repos/:owner/:repo/labels',
      async ({ request, params, query, set }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo)
        const page = askedPage(query)
        const { rows, total } = listLabels(deps, ctx.repo.id, query.sort, page)
        setListHeaders(set, deps.config, request, page, total)
        return rows.map((l) => toApiLabel(deps.config, ctx.repo, l))
      },
      {
        params: RepoParams,
        query: ListLabelsQuery,
        response: { 200: LabelList },
        detail: { operationId: 'issueListLabels', summary: "List a repository's labels" },
      },
    )
    .post(
      '/repos/:owner/:repo/labels',
      async ({ request, params, body, status }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo, AccessMode.Write)
        return status(201, toApiLabel(deps.config, ctx.repo, createLabel(deps, ctx.repo.id, body)))
      },
      {
        params: RepoParams,
        body: CreateLabelOption,
        response: { 201: LabelSchema },
        detail: { operationId: 'issueCreateLabel', summary: 'Create a label' },
      },
    )
    .get(
      '/repos/:owner/:repo/labels/:id',
      async ({ request, params }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo)
        return toApiLabel(deps.config, ctx.repo, getLabel(deps, ctx.repo.id, params.id))
      },
      { params: LabelParams, response: { 200: LabelSchema }, detail: { operationId: 'issueGetLabel', summary: 'Get a label (by id or name)' } },
    )
    .patch(
      '/repos/:owner/:repo/labels/:id',
      async ({ request, params, body }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo, AccessMode.Write)
        return toApiLabel(deps.config, ctx.repo, editLabel(deps, ctx.repo.id, params.id, body))
      },
      {
        params: LabelParams,
        body: EditLabelOption,
        response: { 200: LabelSchema },
        detail: { operationId: 'issueEditLabel', summary: 'Edit a label' },
      },
    )
    .delete(
      '/repos/:owner/:repo/labels/:id',
      async ({ request, params, status }) => {
        const ctx = await loadIssueContext(deps, request, params.owner, params.repo, AccessMode.Write)
        const id = pathNumber(params.id)
        deleteLabel(deps, ctx.repo.id, id)
        return status(204, undefined)
      },
      { params: LabelParams, response: { 204: t.Void() }, detail: { operationId: 'issueDeleteLabel', summary: 'Delete a label' } },
    )

  /** PUT (replace) and POST (add): both answer the issue's resulting labels. */
  const changeLabels =
    (action: 'replace' | 'add') =>
    async ({ request, params, body }: { request: Request; params: { owner: string; repo: string; index: string }; body: { labels?: number[] } }) => {
      const ctx = await loadIssueContext(deps, request, params.owner, params.repo, AccessMode.Write)
      changeIssueLabels(deps, ctx, pathNumber(params.index), action, body.labels ?? [])
      const issue = findIssue(deps, ctx.repo.id, pathNumber(params.index))
      return labelsOfIssue(deps, issue.id).map((l) => toApiLabel(deps.config, ctx.repo, l))
    }

  // An issue's labels, under Gitea's path (`issues`) and the seed's (`issue`), from the same handlers.
  for (const base of ['/repos/:owner/:repo/issues/:index/labels', '/repos/:owner/:repo/issue/:index/labels']) {
    app
      .get(
        base,
        async ({ request, params }) => {
          const ctx = await loadIssueContext(deps, request, params.owner, params.repo)
          const issue = findIssue(deps, ctx.repo.id, pathNumber(params.index))
          return labelsOfIssue(deps, issue.id).map((l) => toApiLabel(deps.config, ctx.repo, l))
        },
        { params: IssueParams, response: { 200: LabelList }, detail: { operationId: 'issueGetLabels', summary: "Get an issue's labels" } },
      )
      .put(base, changeLabels('replace'), {
        params: IssueParams,
        body: IssueLabelsOption,
        response: { 200: LabelList },
        detail: { operationId: 'issueReplaceLabels', summary: "Replace an issue's labels" },
      })
      .post(base, changeLabels('add'), {
        params: IssueParams,
        body: IssueLabelsOption,
        response: { 200: LabelList },
        detail: { operationId: 'issueAddLabel', summary: 'Add labels to an issue' },
      })
      .delete(
        base,
        async ({ request, params, status }) => {
          const ctx = await loadIssueContext(deps, request, params.owner, params.repo, AccessMode.Write)
          changeIssueLabels(deps, ctx, pathNumber(params.index), 'clear', [])
          return status(204, undefined)
        },
        { params: IssueParams, response: { 204: t.Void() }, detail: { operationId: 'issueClearLabels', summary: 'Remove all labels from an issue' } },
      )
      .delete(
        `${base}/:id`,
        async ({ request, params, status }) => {
          const ctx = await loadIssueContext(deps, request, params.owner, params.repo, AccessMode.Write)
          changeIssueLabels(deps, ctx, pathNumber(params.index), 'remove', [pathNumber(params.id)])
          return status(204, undefined)
        },
        { params: IssueIdParams, response: { 204: t.Void() }, detail: { operationId: 'issueRemoveLabel', summary: 'Remove a label from an issue' } },
      )
  }
  return app
}
