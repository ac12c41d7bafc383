import type { Config } from '../config'
import type { TagInfo } from '../git/tags'
import { apiUrl, webUrl } from '../lib/urls'
import { repoPath, type RepoRef } from './issue'
import { tagPath } from './release'

/**
 * The Tag record (Gitea's ToTag): `id` is what the ref points to (the tag object of an annotated
 * tag, else the commit), `commit` the commit it names with the tagger's date (the committer's for
 * a lightweight tag), the archive URLs those of the releases.
 */
export function toApiTag(config: Config, repo: RepoRef, tag: TagInfo) {
  const path = repoPath(repo)
  return {
    name: tag.name,
    message: tag.message,
    id: tag.id,
    commit: {
      sha: tag.commit,
      url: apiUrl(config, `repos/${path}/git/commits/${tag.commit}`),
      created: tag.created,
    },
    zipball_url: webUrl(config, `${path}/archive/${tagPath(tag.name)}.zip`),
    tarball_url: webUrl(config, `${path}/archive/${tagPath(tag.name)}.tar.gz`),
  }
}
export type ApiTag = ReturnType<typeof toApiTag>
