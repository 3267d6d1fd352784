import { Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import { Post } from '../content/post.entity.js';
import { PublishAttempt } from './publish-attempt.entity.js';
import type { PublishingContext } from './publishing.context.js';

/** `Post.publishAttempts`: what publishing adds to a post (content knows nothing of attempts). */
@Resolver(() => Post)
export class PublishAttemptResolver {
  @FieldResolver(() => [PublishAttempt], { description: 'Publish attempts, oldest first' })
  publishAttempts(@Root() post: Post, @Ctx() ctx: PublishingContext) {
    return ctx.attemptsByPost.load(post.id);
  }
}
