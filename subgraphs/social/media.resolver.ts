import { GraphQLJSONObject } from 'graphql-scalars';
import { Arg, Args, Ctx, Field, FieldResolver, ID, Mutation, ObjectType, Query, Resolver, Root } from 'type-graphql';
import { ConnectionArgs, ConnectionType, PageArgs, PageType, toConnection, toPage, windowOfConnection, windowOfPage } from '../../lib/pagination.js';
import { MediaFile } from './media.entity.js';
import { GenerateImageInput, MediaUploadInput } from './media.input.js';
import type { SocialContext } from './social.context.js';

export const MediaFileConnection = ConnectionType(MediaFile, 'MediaFile');
export const MediaFilePage = PageType(MediaFile, 'MediaFile');

@ObjectType({ description: 'Where and how to upload the bytes of a declared media file' })
export class MediaUploadGrant {
  @Field(() => ID, { description: 'Id of the declared media file' }) id!: string;
  @Field(() => String, { description: 'Signed URL to send the bytes to' }) uploadUrl!: string;
  @Field(() => String, { description: 'HTTP method of the upload (PUT)' }) method!: string;
  @Field(() => GraphQLJSONObject, { description: 'Headers the upload must carry' }) headers!: Record<string, string>;
  @Field(() => Date, { description: 'Until when the upload URL works' }) expiresAt!: Date;
}

@Resolver(() => MediaFile)
export class MediaResolver {
  @Query(() => MediaFileConnection, { description: "The caller's media files whose bytes have arrived, newest first" })
  async media(@Args(() => ConnectionArgs) args: ConnectionArgs, @Ctx() ctx: SocialContext) {
    const window = windowOfConnection(args);
    return toConnection(await ctx.media.list(ctx.signedIn().userId, window), window);
  }

  @Query(() => MediaFilePage, { description: 'The same list as numbered pages' })
  async mediaPage(@Args(() => PageArgs) args: PageArgs, @Ctx() ctx: SocialContext) {
    const window = windowOfPage(args);
    return toPage(await ctx.media.list(ctx.signedIn().userId, window), window);
  }

  @Query(() => MediaFile, { nullable: true, description: 'One of your media files; null when unknown' })
  mediaFile(@Arg('id', () => ID, { description: 'The media file' }) id: string, @Ctx() ctx: SocialContext) {
    return ctx.media.find(ctx.signedIn().userId, id);
  }

  @Mutation(() => MediaUploadGrant, { description: 'Declares a file and answers a signed upload URL for its bytes' })
  requestMediaUpload(@Arg('input', () => MediaUploadInput, { description: 'Name, type and exact size of the file' }) input: MediaUploadInput, @Ctx() ctx: SocialContext) {
    return ctx.media.requestUpload(ctx.signedIn().userId, input);
  }

  @Mutation(() => MediaFile, { description: 'Generates an image with the configured AI provider and keeps it as a media file' })
  generateImage(@Arg('input', () => GenerateImageInput, { description: 'Prompt, size and brand of the image' }) input: GenerateImageInput, @Ctx() ctx: SocialContext) {
    return ctx.aiImages.generate(ctx.signedIn().userId, input);
  }

  @FieldResolver(() => String, { description: 'A short-lived URL to fetch the bytes' })
  url(@Root() file: MediaFile, @Ctx() ctx: SocialContext) {
    return ctx.media.urlOf(file);
  }
}
