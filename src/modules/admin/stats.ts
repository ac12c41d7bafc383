import { count, eq, type SQL } from 'drizzle-orm'
import type { SQLiteTable } from 'drizzle-orm/sqlite-core'
import type { AppDeps } from '../../deps'
import {
  accessTokens,
  attachments,
  comments,
  follows,
  hooks,
  issues,
  labels,
  milestones,
  mirrors,
  oauth2Applications,
  publicKeys,
  releases,
  repositories,
  stars,
  teams,
  users,
  watches,
} from '../../db/schema'

/** What the site holds, counted (Gitea's admin dashboard statistics: models/activities GetStatistic). */
export interface SiteCounts {
  users: number
  organisations: number
  publicKeys: number
  repositories: number
  mirrors: number
  stars: number
  watches: number
  follows: number
  issues: number
  pulls: number
  comments: number
  milestones: number
  labels: number
  releases: number
  webhooks: number
  teams: number
  attachments: number
  accessTokens: number
  oauth2Applications: number
}

/** The tables counted, each with the rows it counts (all when no condition). */
const COUNTED: [keyof SiteCounts, SQLiteTable, SQL?][] = [
  ['users', users, eq(users.type, 0)],
  ['organisations', users, eq(users.type, 1)],
  ['publicKeys', publicKeys],
  ['repositories', repositories],
  ['mirrors', mirrors],
  ['stars', stars],
  ['watches', watches],
  ['follows', follows],
  ['issues', issues, eq(issues.isPull, false)],
  ['pulls', issues, eq(issues.isPull, true)],
  ['comments', comments],
  ['milestones', milestones],
  ['labels', labels],
  ['releases', releases],
  ['webhooks', hooks],
  ['teams', teams],
  ['attachments', attachments],
  ['accessTokens', accessTokens],
  ['oauth2Applications', oauth2Applications],
]

/**
 * The site's counts for the administrator's dashboard, read now (one count a table, a bounded
 * number of queries whatever the site holds; Gitea's dashboard reads them uncached too).
 */
export async function siteCounts(deps: AppDeps): Promise<SiteCounts> {
  const values = await Promise.all(COUNTED.map(async ([, table, where]) => (await deps.db.select({ n: count() }).from(table).where(where))[0]!.n))
  return Object.fromEntries(COUNTED.map(([key], i) => [key, Number(values[i])])) as unknown as SiteCounts
}

/** What the process itself is doing (Gitea's dashboard "system status"): how long it has run and its memory. */
export interface ProcessStatus {
  uptimeSeconds: number
  rssBytes: number
  heapUsedBytes: number
  heapTotalBytes: number
  externalBytes: number
  runtime: string
  platform: string
  pid: number
}

export function processStatus(): ProcessStatus {
  const memory = process.memoryUsage()
  return {
    uptimeSeconds: Math.floor(process.uptime()),
    rssBytes: memory.rss,
    heapUsedBytes: memory.heapUsed,
    heapTotalBytes: memory.heapTotal,
    externalBytes: memory.external,
    runtime: `Bun ${Bun.version}`,
    platform: `${process.platform}/${process.arch}`,
    pid: process.pid,
  }
}
