import type { Config } from '../config'
import type { LogEntry } from '../git/commit-log'
import { isoTime } from '../lib/time'
import { webUrl } from '../lib/urls'
import { repoPath as repoPathOf, type RepoRef } from './issue'

/**
 * The wiki's records (Gitea's WikiCommit, WikiPageMetaData, WikiPage, WikiCommitList). Dates are
 * RFC 3339 in UTC, as Gitea formats a wiki commit's; the committer's key is Gitea's `commiter`.
 */

/** A date as git printed it (ISO 8601 with its offset) in UTC, seconds only. */
const utc = (iso: string): string => {
  const ms = Date.parse(iso)
  return Number.isNaN(ms) ? iso : isoTime(Math.floor(ms / 1000))
}

export function toApiWikiCommit(c: LogEntry) {
  return {
    sha: c.id,
    author: { name: c.authorName, email: c.authorEmail, date: utc(c.authorDate) },
    commiter: { name: c.committerName, email: c.committerEmail, date: utc(c.committerDate) },
    message: c.message,
  }
}
export type ApiWikiCommit = ReturnType<typeof toApiWikiCommit>

/** A page as the list shows it: its title, web path (`sub_url`) and last commit. */
export function toApiWikiPageMeta(config: Config, repo: RepoRef, page: { title: string; webPath: string; lastCommit: LogEntry | null }) {
  return {
    title: page.title,
    html_url: webUrl(config, `${repoPathOf(repo)}/wiki/${page.webPath}`),
    sub_url: page.webPath,
    last_commit: page.lastCommit ? toApiWikiCommit(page.lastCommit) : null,
  }
}

const base64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')

/** A page with its content, the sidebar's and footer's (base64; empty when missing or past the blob limit) and its number of revisions. */
export function toApiWikiPage(
  config: Config,
  repo: RepoRef,
  page: { title: string; webPath: string; lastCommit: LogEntry | null; content: Uint8Array; sidebar: Uint8Array; footer: Uint8Array; commitCount: number },
) {
  return {
    ...toApiWikiPageMeta(config, repo, page),
    content_base64: base64(page.content),
    commit_count: page.commitCount,
    sidebar: base64(page.sidebar),
    footer: base64(page.footer),
  }
}

export const toApiWikiCommitList = (commits: LogEntry[], count: number) => ({ commits: commits.map(toApiWikiCommit), count })
