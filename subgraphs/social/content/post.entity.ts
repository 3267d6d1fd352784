import { randomUUID } from 'node:crypto';
import type { Opt } from '@mikro-orm/core';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Directive, Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { nextVersion, VERSION_DESCRIPTION } from '#lib/data/versions.js';
import { Platform } from '../social.platforms.js';

/**
 * Where a post (a content item, to the operations surface) stands. The graph names the values in
 * UPPER_CASE; their values are the lower-case words of the REST contract and of the stored rows, so
 * no migration was needed when the graph's names changed.
 */
export enum PostStatus {
  DRAFT = 'draft',
  SUGGESTED = 'suggested',
  REJECTED = 'rejected',
  QUEUED = 'queued',
  PUBLISHING = 'publishing',
  PUBLISHED = 'published',
  FAILED = 'failed',
}

export const POST_STATUSES = Object.values(PostStatus);

registerEnumType(PostStatus, { name: 'PostStatus', description: 'State of a post in its publishing life' });

/**
 * A social media post of one user, for one of their brands. The owner is kept on the row so
 * every lookup is scoped by owner in SQL: another user's id simply finds nothing.
 */
@Entity({ tableName: 'post' })
@ObjectType({ description: 'A social media post; the content operations surface calls it a content item' })
@Directive('@key(fields: "id")')
export class Post {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the post' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  ownerId!: string;

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The brand the post belongs to' })
  brandId!: string;

  @Property({ type: 'uuid', nullable: true })
  @Field(() => ID, { nullable: true, description: 'The campaign the post is in; null when in none' })
  campaignId: string | null = null;

  @Property({ type: 'text' })
  @Field(() => String, { description: 'Text of the post' })
  content!: string;

  @Property({ type: 'text[]' })
  @Field(() => [Platform], { description: 'Platforms the post goes to' })
  platforms: Platform[] = [];

  @Property({ type: 'text[]' })
  @Field(() => [ID], { description: 'Media files attached to the post' })
  mediaIds: string[] = [];

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When the post is to be published; null when not scheduled' })
  scheduledAt: Date | null = null;

  @Property({ type: 'text' })
  @Field(() => PostStatus, { description: 'Where the post stands in its publishing life' })
  status: PostStatus = PostStatus.DRAFT;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When the post went out; null until published' })
  publishedAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the post was created' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the post last changed' })
  updatedAt: Date = new Date();

  @Property({ type: 'integer', onUpdate: nextVersion })
  @Field(() => Int, { description: VERSION_DESCRIPTION })
  // Opt: a row written past the unit of work (a bulk insert) takes the column's default, 1.
  version: Opt<number> = 1;
}

/** What an audit event keeps of a post before and after a change. */
export function snapshotOf(post: Post): Record<string, unknown> {
  return {
    brandId: post.brandId,
    campaignId: post.campaignId,
    content: post.content,
    platforms: [...post.platforms],
    mediaIds: [...post.mediaIds],
    scheduledAt: post.scheduledAt?.toISOString() ?? null,
    status: post.status,
  };
}
