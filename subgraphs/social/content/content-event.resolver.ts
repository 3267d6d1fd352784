import { Args, Ctx, FieldResolver, Query, Resolver, Root, Subscription } from 'type-graphql';
import { cursorOfRow } from '#lib/data/event-cursor.js';
import type { Positioned } from '#lib/data/event-feed.js';
import { Actor, ContentEvent } from './content-event.entity.js';
import { ContentEventConnection } from './content-event.types.js';
import { ContentEventStreamArgs, EventArgs } from './content-event.input.js';
import type { ContentContext } from './content.context.js';
import { Post } from './post.entity.js';

/** The audit log of content operations, read as a list or followed as it grows. */
@Resolver(() => ContentEvent)
export class ContentEventResolver {
  @Query(() => ContentEventConnection, {
    nullable: true,
    description:
      'The audit log, newest first; with `order: OLDEST_FIRST`, the events the `contentEvents` subscription delivers, whose last cursor it resumes after',
  })
  contentEvents(@Args(() => EventArgs) args: EventArgs, @Ctx() ctx: ContentContext) {
    const { contentId, type, brandIds, order } = args;
    return ctx.events.connection({ contentId, type, brandIds }, args, order);
  }

  @Subscription(() => ContentEvent, {
    name: 'contentEvents',
    description:
      'The audit events of the posts you reach, as they happen; with `after`, those after that cursor first, oldest first',
    subscribe: ({ args, context }) => {
      const { brandIds, contentId, type, after } = args as ContentEventStreamArgs;
      return (context as ContentContext).events.follow({ brandIds, contentId, type }, after);
    },
  })
  followContentEvents(
    @Root() positioned: Positioned<ContentEvent>,
    @Args(() => ContentEventStreamArgs) _args: ContentEventStreamArgs,
  ): ContentEvent {
    return positioned.event;
  }

  @FieldResolver(() => Actor, { description: 'Who made the change' })
  actor(@Root() event: ContentEvent): Actor {
    return { type: event.actorType, id: event.actorId };
  }

  @FieldResolver(() => String, {
    description:
      'Where the event stands in the log: `after` of the `contentEvents` subscription (and of the query in OLDEST_FIRST order) resumes from it (opaque)',
  })
  cursor(@Root() event: ContentEvent): string {
    return cursorOfRow(event);
  }

  @FieldResolver(() => Post, {
    nullable: true,
    description: 'The post, as it is now (in a subscription: as the event was read); null once it is deleted',
  })
  async post(@Root() event: ContentEvent, @Ctx() ctx: ContentContext): Promise<Post | null> {
    // A delivered event comes with its post, read once for every subscriber, each of whom must reach it.
    const readWith = ctx.events.postReadWith(event);
    if (readWith === undefined) return ctx.postById.load(event.contentId);
    return readWith && ctx.posts.sees(readWith) ? readWith : null;
  }
}
