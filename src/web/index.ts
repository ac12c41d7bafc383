import type { Area } from '../auth/pipeline'
import { webAssets } from './assets'
import { signInRoutes } from './sign-in'
import { peoplePages } from './pages/people'
import { dashboardPages } from './pages/dashboard'
import { repoPages } from './pages/repo'
import { findFilePages } from './pages/find-file'
import { blamePages } from './pages/blame'
import { codeSearchPages } from './pages/code-search'
import { repoActivityPages } from './pages/repo-activity'
import { repoInsightsPages } from './pages/repo-insights'
import { userSettingsPages } from './pages/settings-user'
import { blockedUsersPages } from './pages/blocked-users'
import { accountSettingsPages } from './pages/settings-account'
import { repoActionPages } from './pages/repo-actions'
import { explorePages } from './pages/explore'
import { signUpPages } from './pages/sign-up'
import { adminUserPages } from './pages/admin-users'
import { accountMailPages } from './pages/account-mail'
import { adminSystemPages } from './pages/admin-system'
import { adminListPages } from './pages/admin-lists'
import { repoSettingsPages } from './pages/settings-repo'
import { repoOptionsPages } from './pages/settings-options'
import { protectionSettingsPages } from './pages/settings-protect'
import { issuePages } from './pages/issues'
import { pullPages } from './pages/pulls'
import { issueEditPages } from './pages/issue-edit'
import { issueSidePages } from './pages/issue-side'
import { reactionPages } from './pages/reactions'
import { notificationPages } from './pages/notifications'
import { oauthPages } from './pages/oauth'
import { oauthGrantPages } from './pages/oauth-grants'
import { orgPages } from './pages/org'
import { teamSettingsPages } from './pages/team-settings'
import { commitPages } from './pages/commits'
import { graphPages } from './pages/graph'
import { refPages } from './pages/refs'
import { comparePages } from './pages/compare'
import { wikiPages } from './pages/wiki'
import { labelPages, orgLabelPages } from './pages/labels'
import { contentHistoryPages } from './pages/content-history'
import { projectPages } from './pages/projects'
import { migratePages } from './pages/migrate'
import { orgSettingsPages } from './pages/org-settings'
import { hookSettingsPages } from './pages/hook-settings'
import { editorPages } from './pages/editor'
import { releaseFormPages } from './pages/release-forms'
import { forkPages } from './pages/forks'
import { feedPages } from './pages/feeds'
import { twoFactorPages } from './pages/two-factor'
import { packagePages } from './pages/packages'

export { errorPage, webRefusal } from './errors'

/**
 * The web interface: server-rendered pages at Gitea's URLs, outside /api/v1, from the same
 * services, converters and pipeline as the API (`pipeline(deps, { session: true })`: the session
 * cookie counts here and nowhere else). A new page is a route in `pages/`, its group listed below:
 * each group adds its pages to the web pages' app itself (`pageGroup`), in this order
 * (src/app.ts `webAppOf`, through `addAreas` as the API's areas).
 */
export const webAreas: Area[] = [
  // The stylesheet and scripts, which need nothing of the pipeline: a small instance of their own.
  (_deps, app) => app.use(webAssets()),
  signInRoutes,
  twoFactorPages,
  oauthPages,
  oauthGrantPages,
  notificationPages,
  feedPages,
  dashboardPages,
  peoplePages,
  packagePages,
  repoPages,
  findFilePages,
  blamePages,
  codeSearchPages,
  repoActivityPages,
  repoInsightsPages,
  userSettingsPages,
  blockedUsersPages,
  accountSettingsPages,
  repoActionPages,
  migratePages,
  orgSettingsPages,
  hookSettingsPages,
  explorePages,
  signUpPages,
  adminUserPages,
  accountMailPages,
  adminSystemPages,
  adminListPages,
  repoSettingsPages,
  repoOptionsPages,
  protectionSettingsPages,
  issuePages,
  pullPages,
  issueEditPages,
  issueSidePages,
  reactionPages,
  teamSettingsPages,
  orgPages,
  commitPages,
  graphPages,
  refPages,
  comparePages,
  wikiPages,
  labelPages,
  orgLabelPages,
  contentHistoryPages,
  projectPages,
  editorPages,
  releaseFormPages,
  forkPages,
]
