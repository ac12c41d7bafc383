import { and, asc, count, desc, eq, inArray, lte, sql } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { perConnection, writeTransaction } from '../../db/client'
import { containsPattern } from '../../db/sql'
import { repoTopics, repositories, topics, type RepoRow, type TopicRow } from '../../db/schema'
import { topicsOf } from '../../convert/repo'
import { ApiError, notFound } from '../../lib/errors'
import { preparedPage, type Page, type Paged } from '../../lib/pagination'
import { nowUnix } from '../../lib/time'

/** Topics one repository may carry (Gitea's limit). */
export const MAX_TOPICS_PER_REPO = 25
/** Longest topic name (Gitea's limit). */
export const MAX_TOPIC_LENGTH = 35
const TOPIC_PATTERN = /^[a-z0-9][-.a-z0-9]*$/

/** Gitea's ValidateTopic: lower-case letters, digits, dashes and dots, starting with a letter or digit, at most 35 characters. */
export const isValidTopic = (name: string): boolean => name.length <= MAX_TOPIC_LENGTH && TOPIC_PATTERN.test(name)

/** Gitea's sanitising of a topic name: trimmed, lower-case. */
export const sanitizeTopic = (name: string): string => name.trim().toLowerCase()

/**
 * Gitea's SanitizeAndValidateTopics: each name trimmed and lower-cased, empty ones and repeats
 * dropped, then split into the valid and the invalid ones (in the order given).
 */
export function sanitizeTopics(names: readonly string[]): { valid: string[]; invalid: string[] } {
  const valid: string[] = []
  const invalid: string[] = []
  const seen = new Set<string>()
  for (const raw of names) {
    const name = sanitizeTopic(raw)
    if (name === '' || seen.has(name)) continue
    seen.add(name)
    ;(isValidTopic(name) ? valid : invalid).push(name)
  }
  return { valid, invalid }
}

/** Gitea's answer to invalid topic names: 422 listing them. */
export const invalidTopics = (names: string[], message = 'Topic names are invalid') => new ApiError(422, message, { invalidTopics: names })

/** listRepoTopics' statements, prepared once per connection (Renovate and CI tools read a repository's topics). */
const topicReadsOf = perConnection((db: AppDeps['db']) => {
  const where = eq(repoTopics.repoId, sql.placeholder('repo'))
  const all = () => db.select({ name: topics.name }).from(repoTopics).innerJoin(topics, eq(topics.id, repoTopics.topicId)).where(where).orderBy(asc(topics.name))
  return {
    all: all().prepare(),
    page: all().limit(sql.placeholder('limit')).offset(sql.placeholder('offset')).prepare(),
    count: db.select({ n: count() }).from(repoTopics).where(where).prepare(),
  }
})

/** A repository's topics, by name, one page of them (or all with `page` null). */
export async function listRepoTopics(deps: AppDeps, repo: RepoRow, page: Page | null): Promise<Paged<string>> {
  const reads = topicReadsOf(deps.db)
  const { rows, total } = await preparedPage<{ name: string }>({ rows: page ? reads.page : reads.all, count: reads.count }, { repo: repo.id }, page)
  return { rows: rows.map((r) => r.name), total }
}

/**
 * Changes a repository's topics to what `next` makes of the current ones (names already valid),
 * in one transaction: the topic rows and their repository counts, the pairs, and the record's
 * list (most used first, as Gitea keeps it). Topics no repository carries any more are removed.
 */
async function changeTopics(deps: AppDeps, repo: RepoRow, next: (current: string[]) => string[]): Promise<void> {
  await writeTransaction(deps.db, async () => {
    const held = await deps.db.select({ id: topics.id, name: topics.name }).from(repoTopics).innerJoin(topics, eq(topics.id, repoTopics.topicId)).where(eq(repoTopics.repoId, repo.id))
    const wanted = new Set(next(held.map((t) => t.name)))
    const removed = held.filter((t) => !wanted.has(t.name)).map((t) => t.id)
    const added = [...wanted].filter((name) => !held.some((t) => t.name === name))
    if (removed.length === 0 && added.length === 0) return
    const now = nowUnix()
    if (removed.length) {
      await deps.db.delete(repoTopics).where(and(eq(repoTopics.repoId, repo.id), inArray(repoTopics.topicId, removed)))
      await deps.db.update(topics).set({ repoCount: sql`${topics.repoCount} - 1`, updatedUnix: now }).where(inArray(topics.id, removed))
      await deps.db.delete(topics).where(and(inArray(topics.id, removed), lte(topics.repoCount, 0)))
    }
    if (added.length) {
      await deps.db
        .insert(topics)
        .values(added.map((name) => ({ name, repoCount: 0, createdUnix: now, updatedUnix: now })))
        .onConflictDoNothing()
      const ids = (await deps.db.select({ id: topics.id }).from(topics).where(inArray(topics.name, added))).map((t) => t.id)
      await deps.db.insert(repoTopics).values(ids.map((topicId) => ({ repoId: repo.id, topicId })))
      await deps.db.update(topics).set({ repoCount: sql`${topics.repoCount} + 1`, updatedUnix: now }).where(inArray(topics.id, ids))
    }
    const names = await deps.db
      .select({ name: topics.name })
      .from(repoTopics)
      .innerJoin(topics, eq(topics.id, repoTopics.topicId))
      .where(eq(repoTopics.repoId, repo.id))
      .orderBy(desc(topics.repoCount), asc(topics.name))
    await deps.db.update(repositories).set({ topics: JSON.stringify(names.map((t) => t.name)), updatedUnix: now }).where(eq(repositories.id, repo.id))
  })
}

/** PUT /repos/{o}/{r}/topics: replaces the topics (422 for more than 25, or for invalid names, listed). */
export async function replaceTopics(deps: AppDeps, repo: RepoRow, names: readonly string[]): Promise<void> {
  const { valid, invalid } = sanitizeTopics(names)
  if (valid.length > MAX_TOPICS_PER_REPO) throw new ApiError(422, 'Exceeding maximum number of topics per repo', { invalidTopics: null })
  if (invalid.length) throw invalidTopics(invalid)
  await changeTopics(deps, repo, () => valid)
}

/** PUT /repos/{o}/{r}/topics/{topic}: adds one (already there: nothing changes; 422 when 25 are held, as Gitea counts first). */
export async function addTopic(deps: AppDeps, repo: RepoRow, raw: string): Promise<void> {
  const name = sanitizeTopic(raw)
  if (!isValidTopic(name)) throw invalidTopics([name], 'Topic name is invalid')
  await changeTopics(deps, repo, (current) => {
    if (current.length >= MAX_TOPICS_PER_REPO) throw new ApiError(422, 'Exceeding maximum allowed topics per repo.')
    return [...current, name]
  })
}

/** DELETE /repos/{o}/{r}/topics/{topic}: removes one (404 when the repository does not carry it). */
export async function deleteTopic(deps: AppDeps, repo: RepoRow, raw: string): Promise<void> {
  const name = sanitizeTopic(raw)
  if (!isValidTopic(name)) throw invalidTopics([name], 'Topic name is invalid')
  await changeTopics(deps, repo, (current) => {
    if (!current.includes(name)) throw notFound()
    return current.filter((t) => t !== name)
  })
}

/**
 * Before a repository row goes (its pairs go with it): its topics count one repository fewer, and
 * those left with none are removed. Inside the deleting transaction.
 */
export async function releaseRepoTopics(deps: AppDeps, repo: RepoRow): Promise<void> {
  const held = topicsOf(repo)
  if (held.length === 0) return
  const ids = deps.db.select({ id: repoTopics.topicId }).from(repoTopics).where(eq(repoTopics.repoId, repo.id))
  await deps.db.update(topics).set({ repoCount: sql`${topics.repoCount} - 1` }).where(inArray(topics.id, ids))
  await deps.db.delete(topics).where(and(inArray(topics.id, ids), lte(topics.repoCount, 0)))
}

/** GET /topics/search: topics whose name holds `q` (all when empty), most used first. */
export async function searchTopics(deps: AppDeps, q: string, page: Page): Promise<Paged<TopicRow>> {
  const keyword = sanitizeTopic(q)
  const where = keyword ? sql`${topics.name} LIKE ${containsPattern(keyword)} ESCAPE '\\'` : undefined
  const total = (await deps.db.select({ n: count() }).from(topics).where(where))[0]!.n
  const rows = total > page.offset ? await deps.db.select().from(topics).where(where).orderBy(desc(topics.repoCount), asc(topics.name)).limit(page.limit).offset(page.offset) : []
  return { rows, total }
}
