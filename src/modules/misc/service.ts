import { and, count, eq, gt } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { comments, issues, users } from '../../db/schema'
import { notFound } from '../../lib/errors'
import { nowUnix } from '../../lib/time'
import { WARREN_VERSION } from '../../version'
import { findTemplate, repoTemplates } from '../repos/template-names'

/**
 * What `/gitignore/templates`, `/licenses` and `/label/templates` serve: the templates `auto_init`
 * writes (`modules/repos/templates`, imported on the first ask), by Gitea's names, any case.
 */

const sortedKeys = (templates: Record<string, unknown>) => Object.keys(templates).sort((a, b) => a.localeCompare(b, 'en'))

export async function gitignoreNames(): Promise<string[]> {
  return sortedKeys((await repoTemplates()).GITIGNORE_TEMPLATES)
}

export async function gitignoreTemplate(name: string): Promise<{ name: string; source: string }> {
  const found = findTemplate((await repoTemplates()).GITIGNORE_TEMPLATES, name)
  if (!found) throw notFound()
  return { name: found[0], source: found[1] }
}

const licenseUrl = (deps: AppDeps, key: string) => `${deps.config.baseUrl}api/v1/licenses/${encodeURIComponent(key)}`

export async function licenseList(deps: AppDeps): Promise<{ key: string; name: string; url: string }[]> {
  return sortedKeys((await repoTemplates()).LICENSE_TEMPLATES).map((key) => ({ key, name: key, url: licenseUrl(deps, key) }))
}

export async function licenseTemplate(deps: AppDeps, name: string) {
  const found = findTemplate((await repoTemplates()).LICENSE_TEMPLATES, name)
  if (!found) throw notFound()
  return { key: found[0], name: found[0], url: licenseUrl(deps, found[0]), body: found[1], implementation: '' }
}

export async function labelTemplateNames(): Promise<string[]> {
  return sortedKeys((await repoTemplates()).LABEL_TEMPLATES)
}

export async function labelTemplate(name: string) {
  const found = findTemplate((await repoTemplates()).LABEL_TEMPLATES, name)
  if (!found) throw notFound()
  return found[1].map((l) => ({ name: l.name, color: l.color, description: l.description, exclusive: l.exclusive }))
}

/** How long a NodeInfo answer is kept (Gitea keeps its own 180 s): its counts read the whole tables. */
export const NODE_INFO_TTL_S = 180
const DAY = 24 * 3600

/**
 * NodeInfo 2.1 (Gitea's `/nodeinfo`): the software, whether anyone may sign up, and usage:
 * individual users (all; signed in within 180 and 30 days), issues and pull requests as posts,
 * comments. `cached` is the caller's slot for the last answer.
 */
export async function nodeInfo(deps: AppDeps, cached: { at: number; value?: NodeInfo }): Promise<NodeInfo> {
  const now = nowUnix()
  if (cached.value && now - cached.at < NODE_INFO_TTL_S) return cached.value
  const people = (since: number) =>
    deps.db.select({ n: count() }).from(users).where(since ? and(eq(users.type, 0), gt(users.lastLoginUnix, since)) : eq(users.type, 0))
  const [total, halfYear, month, posts, replies] = await Promise.all([
    people(0),
    people(now - 180 * DAY),
    people(now - 30 * DAY),
    deps.db.select({ n: count() }).from(issues),
    deps.db.select({ n: count() }).from(comments).where(eq(comments.type, 0)),
  ])
  const value: NodeInfo = {
    version: '2.1',
    software: { name: 'warren', version: WARREN_VERSION, repository: '', homepage: '' },
    protocols: [],
    services: { inbound: [], outbound: [] },
    openRegistrations: deps.config.webRegistration,
    usage: {
      users: { total: total[0]!.n, activeHalfyear: halfYear[0]!.n, activeMonth: month[0]!.n },
      localPosts: posts[0]!.n,
      localComments: replies[0]!.n,
    },
    metadata: {},
  }
  cached.at = now
  cached.value = value
  return value
}

export interface NodeInfo {
  version: string
  software: { name: string; version: string; repository: string; homepage: string }
  protocols: string[]
  services: { inbound: string[]; outbound: string[] }
  openRegistrations: boolean
  usage: { users: { total: number; activeHalfyear: number; activeMonth: number }; localPosts: number; localComments: number }
  metadata: Record<string, never>
}
