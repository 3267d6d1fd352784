import { Arg, Args, ArgsType, Ctx, Field, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { ConnectionArgs, toPage, windowOfPage } from '#lib/data/pagination.js';
import { IF_VERSION_DESCRIPTION } from '#lib/data/versions.js';
import type { ContentContext } from './content.context.js';
import { Post, PostStatus } from './post.entity.js';
import { ContentEditInput, QueueConnectionArgs, QueuePageArgs } from './post.input.js';
import { PostConnection, QueuePage, SuggestionConnection } from './post.types.js';

@ArgsType()
class SuggestionArgs extends ConnectionArgs {
  @Field(() => ID, { nullable: true, description: 'Only suggestions of this brand' }) brandId?: string;
}

/** The content operations surface: the queue, suggestions and the actions on one item (a post). */
@Resolver()
export class ContentOpsResolver {
  @Query(() => PostConnection, {
    nullable: true,
    description: 'Queued, publishing and failed items (or the statuses asked for), in due order',
  })
  contentQueue(@Args(() => QueueConnectionArgs) args: QueueConnectionArgs, @Ctx() ctx: ContentContext) {
    return ctx.posts.queueConnection(args, { brandId: args.brandId, statuses: args.statuses });
  }

  @Query(() => QueuePage, { nullable: true, description: 'The content queue as numbered pages' })
  async contentQueuePage(@Args(() => QueuePageArgs) args: QueuePageArgs, @Ctx() ctx: ContentContext) {
    const window = windowOfPage(args);
    return toPage(await ctx.posts.queue(window, { brandId: args.brandId, statuses: args.statuses }), window);
  }

  @Query(() => SuggestionConnection, {
    nullable: true,
    description: 'Suggestion drafts waiting for approval, newest first',
  })
  suggestions(@Args(() => SuggestionArgs) args: SuggestionArgs, @Ctx() ctx: ContentContext) {
    return ctx.posts.connection(args, { brandId: args.brandId, statuses: [PostStatus.SUGGESTED] });
  }

  @Query(() => Post, { nullable: true, description: 'One content item with its events and publish attempts' })
  contentItem(@Arg('id', () => ID, { description: 'The content item (post)' }) id: string, @Ctx() ctx: ContentContext) {
    return ctx.posts.find(id);
  }

  @Mutation(() => Post, { nullable: true, description: 'Edits a draft or suggestion draft' })
  editContentItem(
    @Arg('id', () => ID, { description: 'The draft or suggestion draft to edit' }) id: string,
    @Arg('input', () => ContentEditInput, { description: 'Fields to change; omitted ones stay' })
    input: ContentEditInput,
    @Arg('ifVersion', () => Int, { nullable: true, description: IF_VERSION_DESCRIPTION }) ifVersion: number | null,
    @Ctx() ctx: ContentContext,
  ) {
    return ctx.posts.edit(id, input, ifVersion);
  }

  @Mutation(() => Post, {
    nullable: true,
    description: 'Approves a suggestion draft: queued when it has a time, else a draft',
  })
  approveContentItem(
    @Arg('id', () => ID, { description: 'The suggestion draft to approve' }) id: string,
    @Ctx() ctx: ContentContext,
  ) {
    return ctx.posts.approve(id);
  }

  @Mutation(() => Post, { nullable: true, description: 'Rejects a suggestion draft' })
  rejectContentItem(
    @Arg('id', () => ID, { description: 'The suggestion draft to reject' }) id: string,
    @Ctx() ctx: ContentContext,
  ) {
    return ctx.posts.reject(id);
  }

  @Mutation(() => Post, { nullable: true, description: 'Moves a queued or failed item to a new future time' })
  rescheduleContentItem(
    @Arg('id', () => ID, { description: 'The queued or failed item to move' }) id: string,
    @Arg('scheduledAt', () => Date, { nullable: true, description: 'The new time to publish, in the future' })
    scheduledAt: Date | null,
    @Ctx() ctx: ContentContext,
  ) {
    return ctx.posts.reschedule(id, scheduledAt);
  }

  @Mutation(() => Post, { nullable: true, description: 'Queues a failed item again, due now' })
  retryContentItem(
    @Arg('id', () => ID, { description: 'The failed item to queue again' }) id: string,
    @Arg('force', () => Boolean, {
      nullable: true,
      description:
        "Required (true) when a platform's last attempt ended with its outcome unknown: it may have been posted, and publishing again may post twice",
    })
    force: boolean | null,
    @Ctx() ctx: ContentContext,
  ) {
    return ctx.posts.retry(id, force ?? false);
  }
}
