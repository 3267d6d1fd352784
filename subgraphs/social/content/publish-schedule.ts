import type { EntityManager } from '#lib/data/database.js';
import type { Post } from './post.entity.js';

/**
 * The publisher's job of each post follows the post: a queued post has one job at its scheduled
 * time, a new time moves it, and leaving the queue or being deleted cancels it. Whatever changes
 * a post's state or time calls `follow` in the transaction of the change, so the job commits or
 * rolls back with it. The publisher's job queue (publishing/publish-queue.ts) is the schedule.
 */
export interface PublishSchedule {
  /** Plans, moves or cancels the post's job so it matches the post as it now is (`removed`: it is being deleted). */
  follow(tx: EntityManager, post: Post, change?: { removed: boolean }): Promise<void>;
  /** The platforms whose latest attempt at this post ended with an unknown outcome (it may have gone out). */
  unknownOutcomes(tx: EntityManager, postId: string): Promise<string[]>;
}
