import pkg from '../package.json'

/** Warren's own version. */
export const WARREN_VERSION: string = pkg.version

/**
 * The Gitea version whose API Warren answers, as clients gate features on it: 1.23.0, the
 * version of gitea-js (1.23.0) the tests drive Warren with. Every gate the clients Warren serves
 * put between 1.17 and 1.23, what it enables, and where Warren serves it (each driven through the
 * call the client then makes by `test/client-version-gates.test.ts`, on SQLite and PostgreSQL):
 *
 * Gitea's Go SDK (tea, Woodpecker, drone's go-scm, the Terraform provider):
 * - 1.17 `UseSSHPubkey`: requests signed with the user's SSH key (HTTP signatures, `keyId` the key's
 *   fingerprint): `auth/http-signature.ts`, read by `auth/caller.ts`; a body's `Digest` checked by
 *   `edge/body-parser.ts`. `UseSSHCert` (SSH certificates) needs a trusted certificate authority,
 *   which Warren has no setting for: such a request is a 401 that says so.
 * - 1.17 `GetFileReader(..., resolveLFS)`: `GET /repos/{o}/{r}/media/{path}?ref=` (`modules/contents`;
 *   no LFS store, so a pointer file is served as it is, as Gitea serves one whose object it lacks).
 * - 1.21, 1.22 Actions secrets, variables, runners and their registration tokens: gates that only
 *   refuse older servers. Warren serves the secrets, variables and registration tokens
 *   (`modules/actions`); it runs no workflow: runners, tasks and runs answer 404 in the API's error shape.
 * - 1.22 `CompareCommits`: `GET /repos/{o}/{r}/compare/{base}...{head}`, `{total_commits, commits}`
 *   (`modules/commits`).
 * - 1.23 tag protections: `/repos/{o}/{r}/tag_protections` list, create, get, edit, delete
 *   (`modules/protections`).
 * - 1.23 the HTTP signature of an RSA key made with rsa-sha2-256 (SHA-1 below 1.23); Warren verifies
 *   either, and SHA-512, as Gitea 1.23 does.
 * Below 1.17, as before: 1.11 the SDK's floor, 1.12 the contents API's default branch, 1.13
 * milestones by name and releases by tag, 1.14 raw files by `?ref=` and head shas read from the
 * record, 1.15 and 1.16 refusals (tags, repository teams, commit diffs, transfers), and from 1.16
 * the threads in the answers to marking notifications read (`modules/notifications`,
 * `test/notifications.test.ts`).
 * The Terraform provider creates tokens without scopes from 1.20 on: Warren answers Gitea 1.23's 400
 * (a token needs a scope).
 *
 * Renovate (44, as `bench/renovate.ts` runs it): 1.14 asks for reviewers
 * (`POST .../pulls/{i}/requested_reviewers`, `modules/reviews`); native auto-merge
 * (`POST .../pulls/{i}/merge` with `merge_when_checks_succeed` and `delete_branch_after_merge`,
 * `modules/pulls/auto-merge.ts`) from 1.24 in Renovate 44 and from 1.17 in the Renovate versions
 * before it, which Warren serves either way. A version holding `gitea-` makes Renovate treat the
 * server as Forgejo, so none does.
 *
 * Warren's own version rides along as semver build metadata (`+warren-x.y.z`): hashicorp's
 * go-version (go-sdk) and node-semver (Renovate) both parse it and ignore it when comparing,
 * where a pre-release part (`-warren`) would sort below 1.23.0 itself.
 */
export const GITEA_API_VERSION = '1.23.0'

/** What `GET /version` reports. */
export const GITEA_COMPAT_VERSION = `${GITEA_API_VERSION}+warren-${WARREN_VERSION}`
