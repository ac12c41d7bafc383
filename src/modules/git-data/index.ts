import { jsonText } from '../../lib/checked-json'
import type { AppDeps } from '../../deps'
import { area, type AreaApp } from '../../auth/pipeline'
import { RepoParams } from '../repos/model'
import { RepoWildcardParams, wildcardOf } from '../files/model'
import { formSwitch } from '../pulls/model'
import { commitsToApi } from '../../convert/commit'
import { toApiBlob, toApiReference, toApiTag } from '../../convert/git-data'
import { treePageJson } from './tree-json'
import { AnnotatedTagSchema, GitBlobSchema, GitTreeResponseSchema, LanguagesSchema, NoteQuery, NoteSchema, ReferencesAnswer, ShaParams, TreeQuery } from './model'
import { annotatedTag, commitNote, gitBlob, gitRefs, gitTree } from './service'
import { repoLanguages } from './languages'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { commitVerifications } from '../../auth/commit-verification'

/** Read access to the code, as every git-data route of Gitea's needs. */
const read = { scope: 'repository', repo: { level: 'read' } } as const

/** Git's objects (refs, trees, blobs, annotated tags, notes) and the repository's languages. */
export const gitDataModule = (deps: AppDeps, api: AreaApp) => {
  const refs = async (ctx: RepoContext, filter: string) => {
    const found = await gitRefs(deps, ctx, filter)
    const records = found.refs.map((r) => toApiReference(deps.config, ctx.repo, r))
    return found.exact ? records[0]! : records
  }
  return area(api, { tags: ['repository'] })
    .get('/repos/:owner/:repo/git/refs', ({ repo }) => refs(repo, ''), {
      ...read,
      params: RepoParams,
      response: { 200: ReferencesAnswer },
      detail: { operationId: 'repoListAllGitRefs', summary: "Get the repository's refs (at most WARREN_MAX_LISTED_REFS); 404 when it has none" },
    })
    .get('/repos/:owner/:repo/git/refs/*', ({ params, repo }) => refs(repo, wildcardOf(params)), {
      ...read,
      params: RepoWildcardParams,
      response: { 200: ReferencesAnswer },
      detail: {
        operationId: 'repoListGitRefs',
        summary: 'Get the refs whose names begin with refs/{ref}; the one ref named exactly is answered alone (as Gitea); 404 when none',
      },
    })
    .get(
      '/repos/:owner/:repo/git/trees/:sha',
      // The page's JSON text as made once (and checked against the schema below): see tree-json.ts.
      async ({ params, query, repo }) => {
        const opts = { recursive: formSwitch(query.recursive, false), page: query.page, perPage: query.per_page }
        const page = await gitTree(deps, repo, params.sha, opts)
        const json = treePageJson(deps.config, repo.repo, page, { recursive: opts.recursive, perPage: page.perPage })
        return jsonText(json)
      },
      {
        ...read,
        params: ShaParams,
        query: TreeQuery,
        response: { 200: GitTreeResponseSchema },
        detail: { operationId: 'GetTree', summary: 'Get a page of a tree (by tree id, or a commit, branch or tag: its tree)' },
      },
    )
    .get('/repos/:owner/:repo/git/blobs/:sha', async ({ params, repo }) => toApiBlob(deps.config, repo.repo, await gitBlob(deps, repo, params.sha)), {
      ...read,
      params: ShaParams,
      response: { 200: GitBlobSchema },
      detail: { operationId: 'GetBlob', summary: 'Get a blob, base64 (no content past WARREN_MAX_BLOB_SIZE)' },
    })
    .get(
      '/repos/:owner/:repo/git/tags/:sha',
      async ({ params, repo }) => {
        const found = await annotatedTag(deps, repo, params.sha)
        const verification = (await commitVerifications(deps, gitRepoOf(deps, repo), [found.commit])).get(found.commit)!
        return toApiTag(deps.config, repo.repo, found.oid, found.tag, found.commit, verification)
      },
      {
        ...read,
        params: ShaParams,
        response: { 200: AnnotatedTagSchema },
        detail: { operationId: 'GetAnnotatedTag', summary: 'Get the tag object of an annotated tag (not lightweight tags)' },
      },
    )
    .get(
      '/repos/:owner/:repo/git/notes/:sha',
      async ({ params, query, repo }) => {
        const note = await commitNote(deps, repo, params.sha, { files: formSwitch(query.files, true) })
        return { message: note.message, commit: (await commitsToApi(deps, repo, [note.commit], repo.caller.user, { verification: formSwitch(query.verification, true) }))[0]! }
      },
      {
        ...read,
        params: ShaParams,
        query: NoteQuery,
        response: { 200: NoteSchema },
        detail: { operationId: 'repoGetNote', summary: "Get a commit's note (refs/notes/commits) and the commit that last changed it" },
      },
    )
    .get('/repos/:owner/:repo/languages', ({ repo }) => repoLanguages(deps, repo), {
      ...read,
      params: RepoParams,
      response: { 200: LanguagesSchema },
      detail: { operationId: 'repoGetLanguages', summary: "Get the bytes of each language in the default branch's files (by file name, as linguist)" },
    })
}
