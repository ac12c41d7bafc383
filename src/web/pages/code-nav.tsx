/** @jsxImportSource warren-jsx */
import type { Html } from 'warren-jsx/jsx-runtime'
import type { ApiRepo } from '../../convert/repo'
import { historyUrl, repoUrl } from '../links'

/** The code pages' tabs under the repository header: files, history, branches, tags, releases, the wiki, the projects, the packages, the activity. */
/**
 * The one menu of a repository's pages (Gitea's repository header tabs): the code and its history,
 * the issues and pull requests with their open counts, releases, wiki, projects, packages and
 * activity where their units are on and readable (pageRepo) (the settings are among the header's
 * actions, for its administrators).
 */
export function CodeNav(props: {
  repo: ApiRepo
  current: 'code' | 'commits' | 'branches' | 'tags' | 'releases' | 'wiki' | 'compare' | 'issues' | 'pulls' | 'activity' | 'packages' | 'projects' | null
}): Html {
  const base = repoUrl(props.repo.owner.login, props.repo.name)
  const tab = (id: typeof props.current, href: string, label: string) => (
    <li>
      <a href={href} aria-current={props.current === id ? 'page' : undefined}>
        {label}
      </a>
    </li>
  )
  return (
    <nav class="code-nav" aria-label="Repository pages">
      <ul>
        {tab('code', base, 'Code')}
        {props.repo.has_issues && !props.repo.external_tracker ? tab('issues', `${base}/issues`, `Issues ${props.repo.open_issues_count}`) : null}
        {props.repo.has_pull_requests ? tab('pulls', `${base}/pulls`, `Pull requests ${props.repo.open_pr_counter}`) : null}
        {tab('commits', historyUrl(props.repo.owner.login, props.repo.name, 'branch', props.repo.default_branch, []), 'Commits')}
        {tab('branches', `${base}/branches`, 'Branches')}
        {tab('tags', `${base}/tags`, 'Tags')}
        {props.repo.has_releases ? tab('releases', `${base}/releases`, 'Releases') : null}
        {props.repo.has_wiki && !props.repo.external_wiki ? tab('wiki', `${base}/wiki`, 'Wiki') : null}
        {props.repo.has_projects ? tab('projects', `${base}/projects`, 'Projects') : null}
        {props.repo.has_packages ? tab('packages', `${base}/packages`, 'Packages') : null}
        {tab('activity', `${base}/activity`, 'Activity')}
      </ul>
    </nav>
  )
}

export { Pager } from '../forms'

/** A time as readers see it (UTC, to the minute), in a <time> element carrying the exact value. */
export function When(props: { iso: string }): Html {
  return <time datetime={props.iso}>{props.iso.slice(0, 16).replace('T', ' ')}</time>
}
