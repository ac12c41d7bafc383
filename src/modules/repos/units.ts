import type { RepoRow } from '../../db/schema'
import { unprocessable } from '../../lib/errors'

/* The repository's units and pull request settings as EditRepoOption changes them. */

export interface ExternalTrackerEdit {
  url?: string
  format?: string
  style?: string
  regexpPattern?: string
}

/** The unit and pull request fields of an EditRepoOption (absent = unchanged). */
export interface UnitEdit {
  hasIssues?: boolean
  hasWiki?: boolean
  hasPullRequests?: boolean
  hasReleases?: boolean
  hasPackages?: boolean
  hasProjects?: boolean
  externalTracker?: ExternalTrackerEdit
  externalWikiUrl?: string
  ignoreWhitespaceConflicts?: boolean
  allowMergeCommits?: boolean
  allowRebase?: boolean
  allowRebaseExplicit?: boolean
  allowSquashMerge?: boolean
  allowFastForwardOnlyMerge?: boolean
  allowManualMerge?: boolean
  autodetectManualMerge?: boolean
  allowRebaseUpdate?: boolean
  defaultMergeStyle?: string
  defaultDeleteBranchAfterMerge?: boolean
  defaultAllowMaintainerEdit?: boolean
  template?: boolean
}

/** An http(s) URL with a host, as Gitea's IsValidExternalURL wants for trackers and wikis. */
function isExternalUrl(value: string): boolean {
  try {
    const url = new URL(value)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== ''
  } catch {
    return false
  }
}

/** Gitea's IsValidExternalTrackerURLFormat: a URL whose `{placeholders}` (`{user}`, `{repo}`, `{index}`...) are all closed. */
function isTrackerFormat(format: string): boolean {
  const filled = format.replace(/\{[^{}]*\}/g, 'x')
  return !/[{}]/.test(filled) && isExternalUrl(filled)
}

/** Boolean settings kept as they are given. */
const FLAGS = [
  'hasPullRequests',
  'hasReleases',
  'hasPackages',
  'hasProjects',
  'ignoreWhitespaceConflicts',
  'allowMergeCommits',
  'allowRebase',
  'allowRebaseExplicit',
  'allowSquashMerge',
  'allowFastForwardOnlyMerge',
  'allowManualMerge',
  'autodetectManualMerge',
  'allowRebaseUpdate',
  'defaultDeleteBranchAfterMerge',
  'defaultAllowMaintainerEdit',
] as const satisfies readonly (keyof UnitEdit & keyof RepoRow)[]

/**
 * The columns an edit of units and pull request settings changes (422 before anything changes
 * for a bad tracker or wiki address). As Gitea's updateRepoUnits: `has_issues: true` with an
 * `external_tracker` turns the built-in issues off for that tracker, `has_issues: true` alone
 * turns them back on (and the tracker off), `false` turns both off; the wiki likewise with
 * `external_wiki`. A tracker or wiki given without its `has_` switch changes nothing.
 */
export function unitChanges(edit: UnitEdit): Partial<RepoRow> {
  const set: Partial<RepoRow> = {}
  for (const flag of FLAGS) if (edit[flag] !== undefined) set[flag] = edit[flag]
  if (edit.template !== undefined) set.isTemplate = edit.template
  if (edit.defaultMergeStyle !== undefined) set.defaultMergeStyle = edit.defaultMergeStyle
  if (edit.hasIssues === true && edit.externalTracker !== undefined) {
    const tracker = edit.externalTracker
    if (!isExternalUrl(tracker.url ?? '')) throw unprocessable('External tracker URL not valid.', 'ExternalTrackerURL')
    if (tracker.format && !isTrackerFormat(tracker.format)) throw unprocessable('External tracker URL format not valid.', 'ExternalTrackerFormat')
    Object.assign(set, {
      hasIssues: false,
      externalTrackerUrl: tracker.url!,
      externalTrackerFormat: tracker.format ?? '',
      externalTrackerStyle: tracker.style || 'numeric',
      externalTrackerRegexpPattern: tracker.regexpPattern ?? '',
    })
  } else if (edit.hasIssues !== undefined) {
    Object.assign(set, { hasIssues: edit.hasIssues, externalTrackerUrl: '', externalTrackerFormat: '', externalTrackerStyle: '', externalTrackerRegexpPattern: '' })
  }
  if (edit.hasWiki === true && edit.externalWikiUrl !== undefined) {
    if (!isExternalUrl(edit.externalWikiUrl)) throw unprocessable('External wiki URL not valid.', 'ExternalWikiURL')
    Object.assign(set, { hasWiki: false, externalWikiUrl: edit.externalWikiUrl })
  } else if (edit.hasWiki !== undefined) {
    Object.assign(set, { hasWiki: edit.hasWiki, externalWikiUrl: '' })
  }
  return set
}
