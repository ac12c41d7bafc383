import { and, inArray, eq } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { gitRepoOf, type RepoContext } from '../../auth/repo-context'
import { AccessMode } from '../../auth/access'
import { emailAddresses, users } from '../../db/schema'
import { notFound } from '../../lib/errors'
import { webUrl } from '../../lib/urls'
import type { Page, Paged } from '../../lib/pagination'
import { getBranchHead, listBranchHeads, type BranchHead } from '../../git/commits'

/** Logins of the users owning these e-mail addresses (one query). */
async function loginsByEmail(deps: AppDeps, emails: string[]): Promise<Map<string, string>> {
  const lower = [...new Set(emails.map((e) => e.toLowerCase()).filter(Boolean))]
  if (lower.length === 0) return new Map()
  const rows = await deps.db
    .select({ email: emailAddresses.lowerEmail, login: users.name })
    .from(emailAddresses)
    .innerJoin(users, eq(users.id, emailAddresses.userId))
    // As Gitea's GetUsersByEmails: only verified addresses name a user.
    .where(and(inArray(emailAddresses.lowerEmail, lower), eq(emailAddresses.isActivated, true)))
  return new Map(rows.map((r) => [r.email, r.login]))
}

const NOT_SIGNED = { verified: false, reason: 'gpg.error.not_signed_commit', signature: '', payload: '' }

/** Branch records for heads (e.g. a page of branchHeads), user names resolved in one query. */
export async function branchesToApi(deps: AppDeps, ctx: RepoContext, heads: BranchHead[]) {
  const logins = await loginsByEmail(deps, heads.flatMap((h) => [h.authorEmail, h.committerEmail]))
  // An archived repository takes no pushes (git over HTTP answers 403).
  const canWrite = ctx.mode >= AccessMode.Write && !ctx.repo.isArchived
  const commitBase = webUrl(deps.config, `${ctx.owner.name}/${ctx.repo.name}/commit/`)
  return heads.map((h) => ({
    name: h.name,
    commit: {
      id: h.id,
      message: h.message,
      url: commitBase + h.id,
      author: { name: h.authorName, email: h.authorEmail, username: logins.get(h.authorEmail.toLowerCase()) ?? '' },
      committer: { name: h.committerName, email: h.committerEmail, username: logins.get(h.committerEmail.toLowerCase()) ?? '' },
      verification: NOT_SIGNED,
      timestamp: h.authorDate,
    },
    protected: false,
    user_can_push: canWrite,
    user_can_merge: canWrite,
    enable_status_check: false,
    status_check_contexts: [] as string[],
    required_approvals: 0,
  }))
}

/** A page of the repository's branch heads, by name, with their number (one `git for-each-ref`, read as it arrives). */
export async function branchHeads(deps: AppDeps, ctx: RepoContext, page: Page): Promise<Paged<BranchHead>> {
  const { heads, total } = await listBranchHeads(gitRepoOf(deps, ctx), page)
  return { rows: heads, total }
}

export async function getBranch(deps: AppDeps, ctx: RepoContext, rawName: string) {
  let name: string
  try {
    name = decodeURIComponent(rawName).replace(/\/+$/, '')
  } catch {
    throw notFound('Branch not found')
  }
  const head = await getBranchHead(gitRepoOf(deps, ctx), name)
  if (!head) throw notFound(`branch does not exist [name: ${name}]`)
  return (await branchesToApi(deps, ctx, [head]))[0]!
}
