import { and, asc, count, eq, inArray } from 'drizzle-orm'
import type { AppDeps } from '../../deps'
import { writeTransaction } from '../../db/client'
import { badges, userBadges, type BadgeRow } from '../../db/schema'
import { conflict, notFound, unprocessable } from '../../lib/errors'
import type { Page, Paged } from '../../lib/pagination'
import { ALPHA_DASH_DOT, charCount } from '../../lib/validate'

/**
 * User badges (Gitea's models/user/badge.go): the badges themselves are the operator's (`warren
 * admin badge create|list|delete`: Gitea 1.23 has no API that makes one), a site administrator
 * gives and takes them through `/admin/users/{username}/badges` by slug.
 */

/** A new badge's values, checked: a slug of letters, digits, `-`, `_`, `.` (at most 100), an http(s) image URL or none. */
function checkBadge(input: { slug: string; description: string; imageUrl: string }): void {
  if (!ALPHA_DASH_DOT.test(input.slug) || charCount(input.slug) > 100) throw unprocessable('must be 1 to 100 letters, digits, dashes, underscores or dots', 'Slug')
  if (charCount(input.description) > 255) throw unprocessable('must be less than 255 characters', 'Description')
  if (input.imageUrl && (charCount(input.imageUrl) > 2048 || !/^https?:\/\/[^\s]+$/i.test(input.imageUrl)))
    throw unprocessable('must be an http or https URL of at most 2048 characters', 'ImageURL')
}

/** Makes a badge; 409 when its slug is taken (the unique index on `slug` says so). */
export async function createBadge(deps: AppDeps, input: { slug: string; description: string; imageUrl: string }): Promise<BadgeRow> {
  checkBadge(input)
  const [made] = await writeTransaction(deps.db, () => deps.db.insert(badges).values(input).onConflictDoNothing({ target: badges.slug }).returning())
  if (!made) throw conflict(`a badge with slug ${input.slug} already exists`)
  return made
}

/** Every badge, by slug. */
export async function listBadges(deps: AppDeps): Promise<BadgeRow[]> {
  return await deps.db.select().from(badges).orderBy(asc(badges.slug))
}

/**
 * Removes a badge, and so takes it from everyone who held it (`user_badges.badge_id` is deleted
 * with it: ON DELETE CASCADE); 404 when there is none of that slug.
 */
export async function deleteBadge(deps: AppDeps, slug: string): Promise<void> {
  const gone = await writeTransaction(deps.db, () => deps.db.delete(badges).where(eq(badges.slug, slug)).returning({ id: badges.id }))
  if (gone.length === 0) throw notFound(`badge with slug ${slug} doesn't exist`)
}

/** A user's badges (Gitea's GetUserBadges), by the order they were given; the whole list unless a page is asked for. */
export async function listUserBadges(deps: AppDeps, userId: number, page: Page | null): Promise<Paged<BadgeRow>> {
  const query = deps.db
    .select({ id: badges.id, slug: badges.slug, description: badges.description, imageUrl: badges.imageUrl })
    .from(userBadges)
    .innerJoin(badges, eq(badges.id, userBadges.badgeId))
    .where(eq(userBadges.userId, userId))
    .orderBy(asc(userBadges.id))
  const rows = page ? await query.limit(page.limit).offset(page.offset) : await query
  const total = page ? (await deps.db.select({ n: count() }).from(userBadges).where(eq(userBadges.userId, userId)))[0]!.n : rows.length
  return { rows, total }
}

/**
 * The badges the slugs name (each once), or 422 naming the first slug no badge has (Gitea's
 * AddUserBadges / RemoveUserBadges fail on it, with a 500; a bad name in the body is the caller's).
 */
async function badgesNamed(deps: AppDeps, slugs: string[]): Promise<number[]> {
  const wanted = [...new Set(slugs)]
  if (wanted.length === 0) return []
  const found = await deps.db.select({ id: badges.id, slug: badges.slug }).from(badges).where(inArray(badges.slug, wanted))
  const bySlug = new Map(found.map((b) => [b.slug, b.id]))
  const missing = wanted.find((slug) => !bySlug.has(slug))
  if (missing !== undefined) throw unprocessable(`badge with slug ${missing} doesn't exist`, 'BadgeSlugs')
  return wanted.map((slug) => bySlug.get(slug)!)
}

/** Gives the user the badges (those already held stay as they are); nothing is given when a slug names no badge. */
export async function addUserBadges(deps: AppDeps, userId: number, slugs: string[]): Promise<void> {
  await writeTransaction(deps.db, async () => {
    const ids = await badgesNamed(deps, slugs)
    if (ids.length) await deps.db.insert(userBadges).values(ids.map((badgeId) => ({ badgeId, userId }))).onConflictDoNothing({ target: [userBadges.userId, userBadges.badgeId] })
  })
}

/** Takes the badges from the user (those not held are no error); nothing is taken when a slug names no badge. */
export async function removeUserBadges(deps: AppDeps, userId: number, slugs: string[]): Promise<void> {
  await writeTransaction(deps.db, async () => {
    const ids = await badgesNamed(deps, slugs)
    if (ids.length) await deps.db.delete(userBadges).where(and(eq(userBadges.userId, userId), inArray(userBadges.badgeId, ids)))
  })
}
