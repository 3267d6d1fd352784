import type { EntityManager } from '#lib/data/database.js';
import { isUuid } from '#lib/ids.js';
import { PublishAttempt } from './publish-attempt.entity.js';

/**
 * Reads publish attempts for item detail (the publisher writes them). Asked only for posts the
 * caller already reached (`Post.publishAttempts`), so the posts' reach is theirs.
 */
export class PublishAttemptService {
  constructor(private readonly em: EntityManager) {}

  /** Attempts of each post, oldest first (one query for any number of posts). */
  async forPosts(postIds: readonly string[]): Promise<Map<string, PublishAttempt[]>> {
    const byPost = new Map<string, PublishAttempt[]>(postIds.map((id) => [id, []]));
    const valid = postIds.filter(isUuid);
    if (!valid.length) return byPost;
    const rows = await this.em.find(
      PublishAttempt,
      { postId: { $in: valid } },
      { orderBy: { attemptedAt: 'asc', id: 'asc' } },
    );
    for (const row of rows) byPost.get(row.postId)?.push(row);
    return byPost;
  }
}
