import { ArrayMaxSize, IsOptional, IsString, MaxLength } from 'class-validator';
import { ArgsType, Field, ID, InputType } from 'type-graphql';
import { ConnectionArgs, PageArgs } from '#lib/data/pagination.js';
import { Platform } from '../social.platforms.js';
import { PostStatus } from './post.entity.js';

export const CONTENT_MAX = 10_000;

/** Fields of a post to change; omitted fields stay as they are. */
@InputType({ description: 'Fields of a post to change; omitted fields stay as they are' })
export class UpdatePostInput {
  @Field(() => ID, { nullable: true, description: 'Required when the caller has several brands' })
  @IsOptional()
  brandId?: string | null;

  @Field(() => String, { nullable: true, description: 'Text of the post (required on create)' })
  @IsOptional()
  @IsString()
  @MaxLength(CONTENT_MAX)
  content?: string | null;

  @Field(() => [Platform], { nullable: true, description: 'Target platforms; a platform named twice counts once' })
  @IsOptional()
  @ArrayMaxSize(20)
  platforms?: Platform[] | null;

  @Field(() => [ID], { nullable: true, description: 'Media files to attach (ids of ready media of the same owner)' })
  @IsOptional()
  @ArrayMaxSize(20)
  mediaIds?: string[] | null;

  @Field(() => Date, {
    nullable: true,
    description: 'When to publish, e.g. 2030-01-31T09:00:00+01:00; null unschedules',
  })
  @IsOptional()
  scheduledAt?: Date | null;

  @Field(() => PostStatus, {
    nullable: true,
    description: 'On create: draft (the default) or suggested; a post with scheduledAt and no status is queued',
  })
  @IsOptional()
  status?: PostStatus | null;

  @Field(() => ID, { nullable: true, description: 'A campaign of the same brand to put the post in' })
  @IsOptional()
  campaignId?: string | null;
}

/**
 * Fields of a new post: those of an update with `content` required. `status` may be draft (the
 * default) or suggested; a post created with `scheduledAt` and no status is queued.
 */
@InputType({ description: 'Fields of a new post' })
export class CreatePostInput extends UpdatePostInput {
  declare content: string;
}
// Non-null on create; its checks (text, length) are the update's. A decorator cannot sit on a
// `declare`d field, and a redeclared one would replace the value GraphQL set.
Field(() => String, { description: 'Text of the post' })(CreatePostInput.prototype, 'content');

/** What PATCH of a content item may change: the words, targets, media and time of a draft. */
@InputType({ description: 'Edit of a draft or suggestion draft; omitted fields stay as they are' })
export class ContentEditInput {
  @Field(() => String, { nullable: true, description: 'New text of the post' })
  @IsOptional()
  @IsString()
  @MaxLength(CONTENT_MAX)
  content?: string | null;

  @Field(() => [Platform], { nullable: true, description: 'New target platforms; a platform named twice counts once' })
  @IsOptional()
  @ArrayMaxSize(20)
  platforms?: Platform[] | null;

  @Field(() => [ID], { nullable: true, description: 'New list of media files (ids of ready media of the same owner)' })
  @IsOptional()
  @ArrayMaxSize(20)
  mediaIds?: string[] | null;

  @Field(() => Date, { nullable: true, description: 'New time to publish; null unschedules' })
  @IsOptional()
  scheduledAt?: Date | null;
}

@ArgsType()
export class PostPageArgs extends PageArgs {
  @Field(() => ID, { nullable: true, description: 'Only posts of this brand' })
  brandId?: string;

  @Field(() => PostStatus, { nullable: true, description: 'Only posts in this state' })
  status?: PostStatus;
}

@ArgsType()
export class PostConnectionArgs extends ConnectionArgs {
  @Field(() => ID, { nullable: true, description: 'Only posts of this brand' })
  brandId?: string;

  @Field(() => PostStatus, { nullable: true, description: 'Only posts in this state' })
  status?: PostStatus;
}

@ArgsType()
export class QueuePageArgs extends PageArgs {
  @Field(() => ID, { nullable: true, description: 'Only items of this brand' })
  brandId?: string;

  @Field(() => [PostStatus], { nullable: true, description: 'Default: queued, publishing and failed' })
  statuses?: PostStatus[];
}

@ArgsType()
export class QueueConnectionArgs extends ConnectionArgs {
  @Field(() => ID, { nullable: true, description: 'Only items of this brand' })
  brandId?: string;

  @Field(() => [PostStatus], { nullable: true, description: 'Default: queued, publishing and failed' })
  statuses?: PostStatus[];
}
