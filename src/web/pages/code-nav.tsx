/** @jsxImportSource warren-jsx */
import type { Html } from 'warren-jsx/jsx-runtime'
import type { ApiRepo } from '../../convert/repo'
import { historyUrl, repoUrl } from '../links'

/** The code pages' tabs under the repository header: files, history, branches, tags, releases, the wiki, the projects, the packages, the activity. */
export function CodeNav(props: { repo: ApiRepo; current: 'code' | 'commits' | 'branches' | 'tags' | 'releases' | 'wiki' | 'compare' | 'pulls' | 'activity' | 'packages' | 'projects' }): Html {
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
