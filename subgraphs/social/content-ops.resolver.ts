import { Arg, Args, ArgsType, Ctx, Field, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { ConnectionArgs, ConnectionType, PageType, toConnection, toPage, windowOfConnection, windowOfPage } from '../../lib/pagination.js';
import { Actor, ContentEvent, ContentEventType } from './content-event.entity.js';
import { cursorOfEvent } from './content-event.service.js';
import { ContentEventConnection, DailyRollups } from './content-ops.types.js';
import { Post, PostStatus } from './post.entity.js';
import { ContentEditInput, QueueConnectionArgs, QueuePageArgs } from './post.input.js';
import { PostConnection } from './post.resolver.js';
import type { SocialContext } from './social.context.js';

export const QueuePage = PageType(Post, 'Queue');
export const SuggestionConnection = ConnectionType(Post, 'Suggestion');

@ArgsType()
class EventArgs {
  @Field(() => Int, { nullable: true, description: 'Events to return, 1 to 100 (default 20)' }) first?: number;
  @Field(() => String, { nullable: true, description: 'Cursor of the event after which to continue (older ones follow)' }) after?: string;
  @Field(() => ID, { nullable: true, description: 'Only events of this content item' }) contentId?: string;
  @Field(() => ContentEventType, { nullable: true, description: 'Only events of this kind' }) type?: ContentEventType;
}

@ArgsType()
class SuggestionArgs extends ConnectionArgs {
  @Field(() => ID, { nullable: true, description: 'Only suggestions of this brand' }) brandId?: string;
}

@ArgsType()
class DailyArgs {
  @Field(() => String, { nullable: true, description: 'First day, YYYY-MM-DD (default: six days before `to`)' }) from?: string;
  @Field(() => String, { nullable: true, description: 'Last day, YYYY-MM-DD, included (default: today)' }) to?: string;
  @Field(() => String, { nullable: true, description: 'IANA time zone of the days (default UTC)' }) timezone?: string;
  @Field(() => ID, { nullable: true, description: 'Only posts of this brand (default: every brand in reach)' }) brandId?: string;
}

/** The content operations surface: queue, rollups, audit log and per-item actions. */
@Resolver()
export class ContentOpsResolver {
  @Query(() => PostConnection, { description: 'Queued, publishing and failed items (or the statuses asked for), in due order' })
  async contentQueue(@Args(() => QueueConnectionArgs) args: QueueConnectionArgs, @Ctx() ctx: SocialContext) {
    const window = windowOfConnection(args);
    return toConnection(await ctx.posts.queue(window, { brandId: args.brandId, statuses: args.statuses }), window);
  }

  @Query(() => QueuePage, { description: 'The content queue as numbered pages' })
  async contentQueuePage(@Args(() => QueuePageArgs) args: QueuePageArgs, @Ctx() ctx: SocialContext) {
    const window = windowOfPage(args);
    return toPage(await ctx.posts.queue(window, { brandId: args.brandId, statuses: args.statuses }), window);
  }

  @Query(() => SuggestionConnection, { description: 'Suggestion drafts waiting for approval, newest first' })
  async suggestions(@Args(() => SuggestionArgs) args: SuggestionArgs, @Ctx() ctx: SocialContext) {
    const window = windowOfConnection(args);
    return toConnection(await ctx.posts.list(window, { brandId: args.brandId, statuses: [PostStatus.suggested] }), window);
  }

  @Query(() => Post, { nullable: true, description: 'One content item with its events and publish attempts' })
  contentItem(@Arg('id', () => ID, { description: 'The content item (post)' }) id: string, @Ctx() ctx: SocialContext) {
    return ctx.posts.find(id);
  }

  @Query(() => ContentEventConnection, { description: 'The audit log, newest first' })
  async contentEvents(@Args(() => EventArgs) args: EventArgs, @Ctx() ctx: SocialContext) {
    const slice = await ctx.events.list({ contentId: args.contentId, type: args.type }, args.first, args.after);
    const edges = slice.items.map((node) => ({ cursor: cursorOfEvent(node), node }));
    return {
      edges,
      nodes: slice.items,
      totalCount: slice.total,
      pageInfo: {
        hasNextPage: slice.nextCursor !== null,
        hasPreviousPage: Boolean(args.after),
        startCursor: edges[0]?.cursor ?? null,
        endCursor: edges.at(-1)?.cursor ?? null,
      },
    };
  }

  @Query(() => DailyRollups, { description: 'Per-day counts by status and platform; deterministic' })
  contentDaily(@Args(() => DailyArgs) args: DailyArgs, @Ctx() ctx: SocialContext) {
    return ctx.posts.daily(args);
  }

  @Mutation(() => Post, { description: 'Edits a draft or suggestion draft' })
  editContentItem(@Arg('id', () => ID, { description: 'The draft or suggestion draft to edit' }) id: string, @Arg('input', () => ContentEditInput, { description: 'Fields to change; omitted ones stay' }) input: ContentEditInput, @Ctx() ctx: SocialContext) {
    return ctx.posts.edit(id, input);
  }

  @Mutation(() => Post, { description: 'Approves a suggestion draft: queued when it has a time, else a draft' })
  approveContentItem(@Arg('id', () => ID, { description: 'The suggestion draft to approve' }) id: string, @Ctx() ctx: SocialContext) {
    return ctx.posts.approve(id);
  }

  @Mutation(() => Post, { description: 'Rejects a suggestion draft' })
  rejectContentItem(@Arg('id', () => ID, { description: 'The suggestion draft to reject' }) id: string, @Ctx() ctx: SocialContext) {
    return ctx.posts.reject(id);
  }

  @Mutation(() => Post, { description: 'Moves a queued or failed item to a new future time' })
  rescheduleContentItem(@Arg('id', () => ID, { description: 'The queued or failed item to move' }) id: string, @Arg('scheduledAt', () => String, { nullable: true, description: 'ISO 8601 with a zone, in the future' }) scheduledAt: string | null, @Ctx() ctx: SocialContext) {
    return ctx.posts.reschedule(id, scheduledAt);
  }

  @Mutation(() => Post, { description: 'Queues a failed item again, due now' })
  retryContentItem(@Arg('id', () => ID, { description: 'The failed item to queue again' }) id: string, @Ctx() ctx: SocialContext) {
    return ctx.posts.retry(id);
  }
}

@Resolver(() => ContentEvent)
export class ContentEventResolver {
  @FieldResolver(() => Actor, { description: 'Who made the change' })
  actor(@Root() event: ContentEvent): Actor {
    return { type: event.actorType, id: event.actorId };
  }
}
