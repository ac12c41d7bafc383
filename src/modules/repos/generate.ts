import { eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { branchProtections, labels, type RepoRow } from '../../db/schema'
import type { UserRow } from '../../auth/caller'
import { AccessMode } from '../../auth/access'
import { loadOrg } from '../../auth/org-context'
import { gitOfRow } from '../../auth/repo-context'
import { fetchCommitOf, readRef, commitTree } from '../../git/merge'
import { git } from '../../git/run'
import { ApiError, conflict, notFound, unprocessable } from '../../lib/errors'
import { findOwnerByName } from '../users/service'
import { nowUnix } from '../../lib/time'
import { identOf } from '../pulls/merge'
import { replaceTopics } from '../topics/service'
import { grantOrgRepoCreator, requireOrgRepoCreator } from '../orgs/service'
import { createRepository } from './create'
import { changeAvatar } from '../avatars/service'
import { avatarHash, avatarPath } from '../avatars/storage'

/** GenerateRepoOption, as the service reads it (the items Warren copies; the others are refused when alone). */
export interface GenerateRequest {
  owner: string
  name: string
  description?: string
  private?: boolean
  defaultBranch?: string
  gitContent?: boolean
  topics?: boolean
  labels?: boolean
  /** The template's branch protection rules (Gitea's GenerateProtectedBranch). */
  protectedBranch?: boolean
  /** The template's uploaded avatar (Gitea's GenerateAvatar), as the new repository's own file. */
  avatar?: boolean
  /**
   * Items Gitea also knows that Warren does not copy: webhooks (on purpose: their secrets and
   * addresses would reach the new repository's administrators) and git hooks (Warren keeps none
   * per repository). They count as a selected item, as in Gitea.
   */
  others?: boolean
}

/**
 * POST /repos/{template_owner}/{template_repo}/generate (Gitea's Generate): a new repository
 * from a template repository the caller may read, for the caller or an organisation they may
 * create repositories in (a site administrator: for anyone), through the one creation service.
 * Git content: one "Initial commit" holding the template's default branch's tree, made with
 * plumbing (the template's objects fetched in, its history then dropped by a repack: the new
 * repository holds none of the template's commits). Topics, labels and branch protection rules
 * (every setting, its allow lists included, as Gitea copies them) and the avatar are copied;
 * webhooks never are.
 */
export async function generateRepository(
  deps: AppDeps,
  template: RepoRow,
  doer: UserRow,
  req: GenerateRequest,
): Promise<{ repo: RepoRow; owner: UserRow; mode: AccessMode }> {
  if (!template.isTemplate) throw unprocessable('this is not a template repo', 'TemplateRepo')
  if (!req.gitContent && !req.topics && !req.labels && !req.protectedBranch && !req.avatar && !req.others) throw unprocessable('must select at least one template item', 'GitContent')
  let owner: UserRow = doer
  let org: Awaited<ReturnType<typeof loadOrg>> | undefined
  if (req.owner.toLowerCase() !== doer.lowerName) {
    try {
      org = await loadOrg(deps, req.owner, doer)
    } catch (e) {
      if (!(e instanceof ApiError && e.status === 404)) throw e
    }
    if (org) {
      await requireOrgRepoCreator(deps, org)
      owner = org.org
    } else {
      // Another user: a site administrator only (Gitea: "Only admin can generate repository for other user.").
      const other = doer.isAdmin ? await findOwnerByName(deps, req.owner) : undefined
      if (!other) throw notFound(`request owner \`${req.owner}\` does not exist`)
      owner = other
    }
  }
  const templateGit = gitOfRow(deps, template)
  const branch = req.defaultBranch || template.defaultBranch || deps.config.defaultBranch
  const source = req.gitContent && !template.isEmpty ? await readRef(templateGit, `refs/heads/${template.defaultBranch}`) : null
  const repo = await createRepository(deps, owner, {
    name: req.name,
    description: req.description,
    private: req.private,
    defaultBranch: branch,
    creator: doer,
    populate: source
      ? async (into) => {
          if (!(await fetchCommitOf(into, templateGit.gitDir, template.defaultBranch, source)))
            throw conflict('the template repository changed while it was being copied; try again')
          const tree = (await git(['rev-parse', '--verify'], { ...into, values: [`${source}^{tree}`] })).trim()
          const commit = await commitTree(into, tree, [], 'Initial commit', identOf(deps, doer, nowUnix()))
          await git(['update-ref'], { ...into, values: [`refs/heads/${branch}`, commit, ''] })
          // Only what the new commit reaches stays: the template's history is not the new repository's.
          // (Nobody else writes to it before its row is ready.)
          await git(['repack', '-a', '-d', '-q'], into)
          await git(['prune', '--expire=now'], into)
          return { isEmpty: false }
        }
      : undefined,
    onReady: async (row) => {
      const now = nowUnix()
      if (req.labels) {
        const copied = await deps.db.select().from(labels).where(eq(labels.repoId, template.id))
        if (copied.length)
          await deps.db.insert(labels).values(copied.map((l) => ({ repoId: row.id, name: l.name, color: l.color, description: l.description, createdUnix: now, updatedUnix: now })))
      }
      if (req.protectedBranch) {
        const rules = await deps.db.select().from(branchProtections).where(eq(branchProtections.repoId, template.id))
        if (rules.length) await deps.db.insert(branchProtections).values(rules.map(({ id: _id, ...rule }) => ({ ...rule, repoId: row.id, createdUnix: now, updatedUnix: now })))
      }
    },
  })
  const topics = JSON.parse(template.topics) as string[]
  if (req.topics && topics.length) await replaceTopics(deps, repo, topics)
  const avatar = req.avatar ? await copyAvatar(deps, template, repo.id) : ''
  const mode = org ? await grantOrgRepoCreator(deps, org.org, doer, repo) : AccessMode.Owner
  return { repo: { ...repo, topics: req.topics ? JSON.stringify(topics) : repo.topics, avatar: avatar || repo.avatar }, owner, mode }
}

/** The template's avatar given to the new repository `repoId` (its file under the new row's own hash); '' when the template has none (or its file is gone). */
async function copyAvatar(deps: AppDeps, template: RepoRow, repoId: number): Promise<string> {
  if (!template.avatar) return ''
  const file = Bun.file(avatarPath(deps, 'repo', template.avatar))
  if (!(await file.exists())) return ''
  const bytes = await file.bytes()
  await changeAvatar(deps, 'repo', repoId, bytes)
  return avatarHash(repoId, bytes)
}
