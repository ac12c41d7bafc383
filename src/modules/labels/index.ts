import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import type { RepoContext } from '../../auth/repo-context'
import { toApiLabel, toApiOrgLabel } from '../../convert/issue'
import { OrgParams } from '../orgs/model'
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
import { changeIssueLabels } from '../issues/service'
import { findIssue, labelsOfIssue } from '../issues/queries'
import { createLabel, deleteLabel, editLabel, getLabel, listLabels } from './service'

const LabelList = t.Array(LabelSchema)
const OrgLabelParams = t.Object({ org: t.String(), id: t.String() })

/** Labels of a repository, and the labels of an issue. */
export const labelsModule = (deps: AppDeps, api: AreaApp) => {
  const app = area(api, { tags: ['issue'] })
    .get(
      '/repos/:owner/:repo/labels',
      async ({ query, repo, page, respond }) =>
        respond(await listLabels(deps, { repoId: repo.repo.id }, query.sort, page), (rows) => rows.map((l) => toApiLabel(deps.config, repo.repo, l))),
      {
        scope: 'issue',
        repo: { unit: 'issuesOrPulls' },
        pageIfAsked: true,
        params: RepoParams,
        query: ListLabelsQuery,
        response: { 200: LabelList },
        detail: { operationId: 'issueListLabels', summary: "List a repository's labels" },
      },
    )
    .post(
      '/repos/:owner/:repo/labels',
      async ({ body, status, repo }) => status(201, toApiLabel(deps.config, repo.repo, await createLabel(deps, { repoId: repo.repo.id }, body))),
      {
        scope: 'issue',
        repo: { level: 'write', unit: 'issuesOrPulls' },
        params: RepoParams,
        body: CreateLabelOption,
        response: { 201: LabelSchema },
        detail: { operationId: 'issueCreateLabel', summary: 'Create a label' },
      },
    )
    .get(
      '/repos/:owner/:repo/labels/:id',
      async ({ params, repo }) => toApiLabel(deps.config, repo.repo, await getLabel(deps, { repoId: repo.repo.id }, params.id)),
      { scope: 'issue', repo: { unit: 'issuesOrPulls' }, params: LabelParams, response: { 200: LabelSchema }, detail: { operationId: 'issueGetLabel', summary: 'Get a label (by id or name)' } },
    )
    .patch(
      '/repos/:owner/:repo/labels/:id',
      async ({ params, body, repo }) => toApiLabel(deps.config, repo.repo, await editLabel(deps, { repoId: repo.repo.id }, params.id, body)),
      {
        scope: 'issue',
        repo: { level: 'write', unit: 'issuesOrPulls' },
        params: LabelParams,
        body: EditLabelOption,
        response: { 200: LabelSchema },
        detail: { operationId: 'issueEditLabel', summary: 'Edit a label' },
      },
    )
    .delete(
      '/repos/:owner/:repo/labels/:id',
      async ({ params, status, repo }) => {
        const id = pathNumber(params.id)
        await deleteLabel(deps, { repoId: repo.repo.id }, id)
        return status(204, undefined)
      },
      { scope: 'issue', repo: { level: 'write', unit: 'issuesOrPulls' }, params: LabelParams, response: { 204: t.Void() }, detail: { operationId: 'issueDeleteLabel', summary: 'Delete a label' } },
    )

  // An organisation's labels (Gitea 1.15+): seen by whoever sees the organisation (one label: signed in,
  // as Gitea's reqToken), changed by its owners and site administrators.
  app
    .get(
      '/orgs/:org/labels',
      async ({ query, org, page, respond }) =>
        respond(await listLabels(deps, { orgId: org.org.id }, query.sort, page), (rows) => rows.map((l) => toApiOrgLabel(deps.config, org.org.name, l))),
      {
        scope: 'organization',
        org: 'visible',
        paged: true,
        params: OrgParams,
        query: ListLabelsQuery,
        response: { 200: LabelList },
        detail: { operationId: 'orgListLabels', summary: "List an organization's labels" },
      },
    )
    .post(
      '/orgs/:org/labels',
      async ({ body, status, org }) => status(201, toApiOrgLabel(deps.config, org.org.name, await createLabel(deps, { orgId: org.org.id }, body))),
      {
        scope: 'organization',
        org: 'owner',
        params: OrgParams,
        body: CreateLabelOption,
        response: { 201: LabelSchema },
        detail: { operationId: 'orgCreateLabel', summary: 'Create a label for an organization' },
      },
    )
    .get(
      '/orgs/:org/labels/:id',
      async ({ params, org }) => toApiOrgLabel(deps.config, org.org.name, await getLabel(deps, { orgId: org.org.id }, params.id)),
      {
        scope: 'organization',
        org: 'visible',
        signed: true,
        params: OrgLabelParams,
        response: { 200: LabelSchema },
        detail: { operationId: 'orgGetLabel', summary: "Get an organization's label (by id or name)" },
      },
    )
    .patch(
      '/orgs/:org/labels/:id',
      async ({ params, body, org }) => toApiOrgLabel(deps.config, org.org.name, await editLabel(deps, { orgId: org.org.id }, params.id, body)),
      {
        scope: 'organization',
        org: 'owner',
        params: OrgLabelParams,
        body: EditLabelOption,
        response: { 200: LabelSchema },
        detail: { operationId: 'orgEditLabel', summary: "Edit an organization's label" },
      },
    )
    .delete(
      '/orgs/:org/labels/:id',
      async ({ params, status, org }) => {
        await deleteLabel(deps, { orgId: org.org.id }, pathNumber(params.id))
        return status(204, undefined)
      },
      {
        scope: 'organization',
        org: 'owner',
        params: OrgLabelParams,
        response: { 204: t.Void() },
        detail: { operationId: 'orgDeleteLabel', summary: "Delete an organization's label (204 whether or not it existed, as Gitea)" },
      },
    )

  /** PUT (replace) and POST (add): both answer the issue's resulting labels. */
  const changeLabels =
    (action: 'replace' | 'add') =>
    async ({ params, body, repo }: { params: { index: string }; body: { labels?: number[] }; repo: RepoContext }) => {
      await changeIssueLabels(deps, repo, pathNumber(params.index), action, body.labels ?? [])
      const issue = await findIssue(deps, repo.repo.id, pathNumber(params.index))
      return (await labelsOfIssue(deps, issue.id)).map((l) => toApiLabel(deps.config, repo.repo, l))
    }
  const writeIssues = { level: 'write', unit: 'issues' } as const

  // An issue's labels, under Gitea's path (`issues`) and the seed's (`issue`), from the same
  // handlers, with their own operation ids: the seed's on the paths the seed lists (its GET is
  // under `issues`, its changes under `issue`), the other spelling's named apart.
  const spellings = [
    { base: '/repos/:owner/:repo/issues/:index/labels', ids: { get: 'issueGetLabels', replace: 'issueReplaceIssueLabels', add: 'issueAddIssueLabels', clear: 'issueClearIssueLabels', remove: 'issueRemoveIssueLabel' } },
    { base: '/repos/:owner/:repo/issue/:index/labels', ids: { get: 'issueGetLabelsSingularPath', replace: 'issueReplaceLabels', add: 'issueAddLabel', clear: 'issueClearLabels', remove: 'issueRemoveLabel' } },
  ] as const
  for (const { base, ids } of spellings) {
    app
      .get(
        base,
        async ({ params, repo }) => {
          const issue = await findIssue(deps, repo.repo.id, pathNumber(params.index))
          return (await labelsOfIssue(deps, issue.id)).map((l) => toApiLabel(deps.config, repo.repo, l))
        },
        { scope: 'issue', repo: { unit: 'issues' }, params: IssueParams, response: { 200: LabelList }, detail: { operationId: ids.get, summary: "Get an issue's labels" } },
      )
      .put(base, changeLabels('replace'), {
        scope: 'issue',
        repo: writeIssues,
        params: IssueParams,
        body: IssueLabelsOption,
        response: { 200: LabelList },
        detail: { operationId: ids.replace, summary: "Replace an issue's labels" },
      })
      .post(base, changeLabels('add'), {
        scope: 'issue',
        repo: writeIssues,
        params: IssueParams,
        body: IssueLabelsOption,
        response: { 200: LabelList },
        detail: { operationId: ids.add, summary: 'Add labels to an issue' },
      })
      .delete(
        base,
        async ({ params, status, repo }) => {
          await changeIssueLabels(deps, repo, pathNumber(params.index), 'clear', [])
          return status(204, undefined)
        },
        { scope: 'issue', repo: writeIssues, params: IssueParams, response: { 204: t.Void() }, detail: { operationId: ids.clear, summary: 'Remove all labels from an issue' } },
      )
      .delete(
        `${base}/:id`,
        async ({ params, status, repo }) => {
          await changeIssueLabels(deps, repo, pathNumber(params.index), 'remove', [pathNumber(params.id)])
          return status(204, undefined)
        },
        { scope: 'issue', repo: writeIssues, params: IssueIdParams, response: { 204: t.Void() }, detail: { operationId: ids.remove, summary: 'Remove a label from an issue' } },
      )
  }
  return app
}
