import pkg from '../package.json'

/** Warren's own version. */
export const WARREN_VERSION: string = pkg.version

/**
 * The Gitea version whose API Warren answers, as clients gate features on it.
 *
 * Clients compare this number, not Warren's:
 * - Gitea's go-sdk (tea, Woodpecker, the Terraform provider) refuses calls gated on a version
 *   above the server's (`checkServerVersionGreaterThanOrEqual`), and switches paths by version:
 *   at 1.12 the contents API takes the default branch for an empty one, at 1.13 milestones by
 *   name and releases by tag (`/releases/tags/{tag}`), at 1.14 raw files by `?ref=` and head
 *   shas read from the record; Warren serves all of these. At 1.15 and 1.16 its gates only
 *   refuse calls on older servers (tags, repository teams, commit diffs, transfers, the
 *   notification answers Warren does not serve either way).
 * - Renovate requests pull request reviewers from 1.14 (a failure there is only logged), and
 *   from 1.17 asks for Gitea's auto-merge (`merge_when_checks_succeed`): a server without it
 *   would merge at once, before the checks Renovate waits for. So 1.17 is the first version
 *   Warren must not claim until scheduled merges exist, and 1.16 is the highest it can.
 *   A version holding `gitea-` makes Renovate treat the server as Forgejo, so none does.
 *
 * Warren's own version rides along as semver build metadata (`+warren-x.y.z`): hashicorp's
 * go-version (go-sdk) and node-semver (Renovate) both parse it and ignore it when comparing,
 * where a pre-release part (`-warren`) would sort below 1.16.9 itself.
 */
export const GITEA_API_VERSION = '1.16.9'

/** What `GET /version` reports. */
export const GITEA_COMPAT_VERSION = `${GITEA_API_VERSION}+warren-${WARREN_VERSION}`
