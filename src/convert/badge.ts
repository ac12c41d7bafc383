import type { BadgeRow } from '../db/schema'

/** The Badge record (Gitea's api.Badge). */
export const toApiBadge = (badge: Pick<BadgeRow, 'id' | 'slug' | 'description' | 'imageUrl'>) => ({
  id: badge.id,
  slug: badge.slug,
  description: badge.description,
  image_url: badge.imageUrl,
})
