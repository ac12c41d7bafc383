import type { AppDeps } from '../deps'
import type { Config } from '../config'
import type { RepoRow } from '../db/schema'
import type { BranchHead } from '../git/commits'
import type { LoggedCommit } from '../git/log'
import { webUrl } from '../lib/urls'
import { usersByEmails } from './people'

/** What a PayloadCommit shows of a commit; the files it changed when git listed them (push payloads). */
export type CommitSummary = Omit<BranchHead, 'name'> & Partial<Pick<LoggedCommit, 'added' | 'removed' | 'modified'>>

/** Gitea's PayloadCommitVerification (null in push payloads, whose commits Gitea does not verify). */
export interface CommitVerification {
  verified: boolean
  reason: string
  signature: string
  payload: string
}

/** A lower-case e-mail address → the user name of the account that verified it (usersByEmails). */
export type UsernamesByEmail = Map<string, string>

/** The user names behind the authors' and committers' addresses of `commits`, in one query. */
export async function commitUsernames(deps: AppDeps, commits: readonly CommitSummary[]): Promise<UsernamesByEmail> {
  const accounts = await usersByEmails(deps, commits.flatMap((c) => [c.authorEmail, c.committerEmail]))
  return new Map([...accounts].map(([email, user]) => [email, user.name]))
}

/**
 * Gitea's PayloadCommit: a branch's head in the Branch record, and each commit of a push payload
 * (there with the files it added, removed and modified). `username` is the account owning the
 * address, as usersByEmails finds it: empty when no account verified it.
 */
export function toApiPayloadCommit(
  config: Config,
  repo: Pick<RepoRow, 'ownerName' | 'name'>,
  c: CommitSummary,
  usernames: UsernamesByEmail,
  verification: CommitVerification | null,
) {
  const person = (name: string, email: string) => ({ name, email, username: usernames.get(email.toLowerCase()) ?? '' })
  return {
    id: c.id,
    message: c.message,
    url: webUrl(config, `${repo.ownerName}/${repo.name}/commit/${c.id}`),
    author: person(c.authorName, c.authorEmail),
    committer: person(c.committerName, c.committerEmail),
    verification,
    timestamp: c.authorDate,
    ...(c.added ? { added: c.added, removed: c.removed ?? [], modified: c.modified ?? [] } : {}),
  }
}
export type ApiPayloadCommit = ReturnType<typeof toApiPayloadCommit>
