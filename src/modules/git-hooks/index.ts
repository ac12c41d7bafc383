import { t } from 'elysia'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { gitDirOf } from '../../auth/repo-context'
import { gitHookToApi } from '../../convert/git-hook'
import { GIT_HOOK_NAMES, getGitHook, listGitHooks, MAX_GIT_HOOK_CHARS, setGitHook } from './service'

const GitHookSchema = t.Object(
  {
    name: t.String({ description: GIT_HOOK_NAMES.join(', ') }),
    is_active: t.Boolean({ description: 'the hook exists and git runs it at pushes' }),
    content: t.String({ description: "the hook's program (empty when it is not active)" }),
  },
  { $id: '#/components/schemas/GitHook' },
)
const EditGitHookOption = t.Object(
  { content: t.Optional(t.String({ maxLength: MAX_GIT_HOOK_CHARS, description: 'the new program; blank removes the hook' })) },
  { $id: '#/components/schemas/EditGitHookOption' },
)
const GitHookParams = t.Object({ owner: t.String(), repo: t.String(), id: t.String({ description: `the hook's name: ${GIT_HOOK_NAMES.join(', ')}` }) })
const RepoParams = t.Object({ owner: t.String(), repo: t.String() })

/**
 * Who may: a repository's administrator who may edit git hooks (Gitea's reqAdmin + reqGitHook).
 * A hook is the repository's setting, not its content: edited in an archived repository too.
 */
const needs = { scope: 'repository', repo: { level: 'admin', writes: false }, gitHooks: true } as const

/** `/repos/{o}/{r}/hooks/git`: Gitea's Git hooks API (src/modules/git-hooks/service.ts). */
export const gitHooksModule = (deps: AppDeps, api: AreaApp) =>
  area(api, { tags: ['repository'] })
    .get('/repos/:owner/:repo/hooks/git', async ({ repo }) => (await listGitHooks(gitDirOf(deps, repo))).map(gitHookToApi), {
      ...needs,
      params: RepoParams,
      response: { 200: t.Array(GitHookSchema) },
      detail: { operationId: 'repoListGitHooks', summary: 'List the Git hooks in a repository' },
    })
    .get('/repos/:owner/:repo/hooks/git/:id', async ({ repo, params }) => gitHookToApi(await getGitHook(gitDirOf(deps, repo), params.id)), {
      ...needs,
      params: GitHookParams,
      response: { 200: GitHookSchema },
      detail: { operationId: 'repoGetGitHook', summary: 'Get a Git hook' },
    })
    .patch('/repos/:owner/:repo/hooks/git/:id', async ({ repo, params, body }) => gitHookToApi(await setGitHook(gitDirOf(deps, repo), params.id, body.content ?? '')), {
      ...needs,
      params: GitHookParams,
      body: EditGitHookOption,
      response: { 200: GitHookSchema },
      detail: { operationId: 'repoEditGitHook', summary: 'Edit a Git hook in a repository (blank content removes it)' },
    })
    .delete(
      '/repos/:owner/:repo/hooks/git/:id',
      async ({ repo, params, status }) => {
        await setGitHook(gitDirOf(deps, repo), params.id, '')
        return status(204, undefined)
      },
      {
        ...needs,
        params: GitHookParams,
        response: { 204: t.Void({ description: 'no content' }) },
        detail: { operationId: 'repoDeleteGitHook', summary: 'Delete a Git hook in a repository' },
      },
    )
