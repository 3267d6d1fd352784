import type { EntityManager } from '#lib/data/database.js';
import { isUuid } from '#lib/ids.js';
import { Post } from './post.entity.js';

/** Posts by id (malformed ids find none), narrowed by `where`: a caller's reach, or none for a feed's read. */
export async function postsById(
  em: EntityManager,
  ids: readonly string[],
  where: Record<string, unknown> = {},
): Promise<Map<string, Post>> {
  const valid = ids.filter(isUuid);
  const found = valid.length ? await em.find(Post, { id: { $in: valid }, ...where }) : [];
  return new Map(found.map((post) => [post.id, post]));
}
