import { Arg, Args, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { toPage, windowOfPage } from '#lib/data/pagination.js';
import { IF_VERSION_DESCRIPTION } from '#lib/data/versions.js';
import { Brand } from '../access/brand.entity.js';
import { ContentEvent } from './content-event.entity.js';
import type { ContentContext } from './content.context.js';
import { Post } from './post.entity.js';
import { CreatePostInput, PostConnectionArgs, PostPageArgs, UpdatePostInput } from './post.input.js';
import { PostConnection, PostPage, DeletePostPayload } from './post.types.js';

@Resolver(() => Post)
export class PostResolver {
  @Query(() => Post, { nullable: true, description: 'One of your posts; null when unknown or out of reach' })
  post(@Arg('id', () => ID, { description: 'The post' }) id: string, @Ctx() ctx: ContentContext) {
    return ctx.posts.find(id);
  }

  @Query(() => PostConnection, { nullable: true, description: 'Your posts, newest first' })
  posts(@Args(() => PostConnectionArgs) args: PostConnectionArgs, @Ctx() ctx: ContentContext) {
    return ctx.posts.connection(args, { brandId: args.brandId, statuses: args.status ? [args.status] : null });
  }

  @Query(() => PostPage, { nullable: true, description: 'The same list as numbered pages' })
  async postPage(@Args(() => PostPageArgs) args: PostPageArgs, @Ctx() ctx: ContentContext) {
    const window = windowOfPage(args);
    return toPage(
      await ctx.posts.list(window, { brandId: args.brandId, statuses: args.status ? [args.status] : null }),
      window,
    );
  }

  @Mutation(() => Post, {
    nullable: true,
    description: 'Creates a post: a draft, a suggestion, or queued when it has scheduledAt',
  })
  createPost(
    @Arg('input', () => CreatePostInput, { description: 'Fields of the new post' }) input: CreatePostInput,
    @Ctx() ctx: ContentContext,
  ) {
    return ctx.posts.create(input);
  }

  @Mutation(() => Post, { nullable: true, description: 'Changes a post that has not gone out yet' })
  updatePost(
    @Arg('id', () => ID, { description: 'The post to change' }) id: string,
    @Arg('input', () => UpdatePostInput, { description: 'Fields to change; omitted ones stay' }) input: UpdatePostInput,
    @Arg('ifVersion', () => Int, { nullable: true, description: IF_VERSION_DESCRIPTION }) ifVersion: number | null,
    @Ctx() ctx: ContentContext,
  ) {
    return ctx.posts.update(id, input, ifVersion);
  }

  @Mutation(() => DeletePostPayload.type, { nullable: true, description: 'Deletes the post; its audit events stay' })
  async deletePost(
    @Arg('id', () => ID, { description: 'The post to delete' }) id: string,
    @Arg('ifVersion', () => Int, { nullable: true, description: IF_VERSION_DESCRIPTION }) ifVersion: number | null,
    @Ctx() ctx: ContentContext,
  ) {
    return DeletePostPayload.of(await ctx.posts.delete(id, ifVersion));
  }

  @FieldResolver(() => ID, { description: 'The id of the post as a content item (the same id)' })
  contentId(@Root() post: Post) {
    return post.id;
  }

  @FieldResolver(() => Brand, {
    nullable: true,
    description: "The brand of the post; null when out of the caller's reach",
  })
  brand(@Root() post: Post, @Ctx() ctx: ContentContext) {
    return ctx.brandById.load(post.brandId);
  }

  @FieldResolver(() => [ContentEvent], { description: 'Audit events of this item, newest first' })
  events(@Root() post: Post, @Ctx() ctx: ContentContext) {
    return ctx.eventsByContent.load(post.id);
  }
}
