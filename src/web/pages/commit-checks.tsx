/** @jsxImportSource warren-jsx */
import type { Html } from 'warren-jsx/jsx-runtime'
import type { AppDeps } from '../../deps'
import type { RepoContext } from '../../auth/repo-context'
import { toCommitChecks, type ApiStatus, type CommitChecks } from '../../convert/status'
import { latestStatusesOf } from '../../modules/statuses/service'
import { contextMatches } from '../../modules/pulls/gates'

/**
 * Commit statuses (CI checks) on the pages, as Gitea 1.23's commit_statuses.tmpl,
 * commit_status.tmpl and pulls/status.tmpl show them: a commit's combined state as an icon with
 * its words (never colour alone), and a commit's list of checks, each context's state, description
 * and its target as a "Details" link when it is an http(s) address.
 */

/** The checks of a page's commits, read in one query and converted by the Status record's converter. */
export async function checksOf(deps: AppDeps, ctx: RepoContext, shas: string[]): Promise<Map<string, CommitChecks>> {
  return await toCommitChecks(deps, ctx, await latestStatusesOf(deps, ctx.repo.id, shas))
}

/** Each state's words and mark. */
const STATES: Record<string, { word: string; mark: string }> = {
  success: { word: 'Success', mark: '✓' },
  pending: { word: 'Pending', mark: '●' },
  warning: { word: 'Warning', mark: '!' },
  failure: { word: 'Failure', mark: '✗' },
  error: { word: 'Error', mark: '✗' },
}
const stateOf = (state: string) => STATES[state] ?? { word: state, mark: '?' }

/** Gitea's summary of a combined state (repo.pulls.status_checks_*). */
const SUMMARY: Record<string, string> = {
  success: 'All checks were successful',
  pending: 'Some checks are pending',
  warning: 'Some checks reported warnings',
  failure: 'Some checks failed',
  error: 'Some checks reported errors',
}

/** A status's target when it may be linked: an absolute http(s) address; anything else (javascript:, data:, relative) is shown as text. */
export function linkableTarget(url: string): string | null {
  if (!/^https?:\/\//i.test(url)) return null
  try {
    const parsed = new URL(url)
    return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : null
  } catch {
    return null
  }
}

/** The words of a commit's checks: the summary and each context's state (an icon's label and title). */
const checksWords = (checks: CommitChecks) =>
  `${SUMMARY[checks.state] ?? checks.state}: ${checks.statuses.map((s) => `${s.context || 'default'} ${stateOf(s.status).word.toLowerCase()}`).join(', ')}`

/** A commit's combined state as an icon, linking to `href` (the commit page listing its checks); nothing when it has none. */
export function ChecksIcon(props: { checks: CommitChecks | undefined; href: string }): Html {
  const checks = props.checks
  if (!checks || !checks.state) return <></>
  const words = checksWords(checks)
  return (
    <a class={`check-mark check-${checks.state}`} href={props.href} title={words} aria-label={`Checks: ${words}`}>
      {stateOf(checks.state).mark}
    </a>
  )
}

/** One check: its state (mark and word), context, description, "Required" when the base's rule requires it, the "Details" link. */
function CheckRow(props: { status: ApiStatus; required: boolean }): Html {
  const s = props.status
  const state = stateOf(s.status)
  const target = linkableTarget(s.target_url)
  return (
    <li class={`check check-${s.status}`}>
      <span class="check-mark" aria-hidden="true">
        {state.mark}
      </span>{' '}
      <span class="check-state">{state.word}</span> <strong>{s.context || 'default'}</strong>
      {s.description ? <span class="muted"> — {s.description}</span> : null}
      {props.required ? <span class="label">Required</span> : null}
      {target ? (
        <a class="check-details" href={target} rel="nofollow noopener noreferrer">
          Details
        </a>
      ) : s.target_url ? (
        <span class="muted check-target"> ({s.target_url})</span>
      ) : null}
    </li>
  )
}

/**
 * A commit's checks (the pull request's merge box, the commit page): the summary, every context,
 * and with `required` (the base branch's rule's patterns) those it requires marked, and those no
 * status has reported yet listed as expected.
 */
export function ChecksList(props: { checks: CommitChecks | undefined; required?: string[] }): Html {
  const statuses = props.checks?.statuses ?? []
  const required = props.required ?? []
  const missing = required.filter((p) => !statuses.some((s) => contextMatches(p, s.context)))
  if (!statuses.length && !missing.length) return <></>
  const state = props.checks?.state || 'pending'
  return (
    <section class="checks" aria-label="Checks">
      <p class={`checks-summary check-${state}`}>
        <span class="check-mark" aria-hidden="true">
          {stateOf(state).mark}
        </span>{' '}
        {statuses.length ? (SUMMARY[state] ?? state) : 'Required checks have not reported yet'}
      </p>
      <ul class="checks-list">
        {statuses.map((s) => (
          <CheckRow status={s} required={required.some((p) => contextMatches(p, s.context))} />
        ))}
        {missing.map((p) => (
          <li class="check check-pending">
            <span class="check-mark" aria-hidden="true">
              {stateOf('pending').mark}
            </span>{' '}
            <span class="check-state">Expected</span> <strong>{p}</strong>
            <span class="muted"> — Waiting for its status to be reported</span> <span class="label">Required</span>
          </li>
        ))}
      </ul>
    </section>
  )
}
