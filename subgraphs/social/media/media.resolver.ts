import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { ConnectionArgs, PageArgs, toPage, windowOfPage } from '#lib/data/pagination.js';
import { MediaFile } from './media.entity.js';
import type { MediaContext } from './media.context.js';
import { GenerateImageInput, MediaUploadInput } from './media.input.js';
import { MediaUploadGrant, MediaFileConnection, MediaFilePage } from './media.types.js';

@Resolver(() => MediaFile)
export class MediaResolver {
  @Query(() => MediaFileConnection, {
    nullable: true,
    description: "The caller's media files whose bytes have arrived, newest first",
  })
  media(@Args(() => ConnectionArgs) args: ConnectionArgs, @Ctx() ctx: MediaContext) {
    return ctx.media.connection(args);
  }

  @Query(() => MediaFilePage, {
    nullable: true,
    description: 'The same list as numbered pages, kept for the REST list (`page`/`limit`)',
  })
  async mediaPage(@Args(() => PageArgs) args: PageArgs, @Ctx() ctx: MediaContext) {
    const window = windowOfPage(args);
    return toPage(await ctx.media.list(window), window);
  }

  @Query(() => MediaFile, { nullable: true, description: 'One of your media files; null when unknown' })
  mediaFile(@Arg('id', () => ID, { description: 'The media file' }) id: string, @Ctx() ctx: MediaContext) {
    return ctx.media.find(id);
  }

  @Mutation(() => MediaUploadGrant, {
    nullable: true,
    description: 'Declares a file and answers a signed upload URL for its bytes',
  })
  requestMediaUpload(
    @Arg('input', () => MediaUploadInput, { description: 'Name, type and exact size of the file' })
    input: MediaUploadInput,
    @Ctx() ctx: MediaContext,
  ) {
    return ctx.media.requestUpload(input);
  }

  @Mutation(() => MediaFile, {
    nullable: true,
    description: 'Generates an image with the configured AI provider and keeps it as a media file',
  })
  generateImage(
    @Arg('input', () => GenerateImageInput, { description: 'Prompt, size and brand of the image' })
    input: GenerateImageInput,
    @Ctx() ctx: MediaContext,
  ) {
    return ctx.aiImages.generate(input);
  }

  @FieldResolver(() => String, { description: 'A short-lived URL to fetch the bytes' })
  url(@Root() file: MediaFile, @Ctx() ctx: MediaContext) {
    return ctx.media.urlOf(file);
  }
}
