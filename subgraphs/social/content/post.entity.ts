import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Directive, Field, ID, ObjectType, registerEnumType } from 'type-graphql';

/**
 * Where a post (a content item, to the operations surface) stands. Values are the lower-case
 * words of the REST contract, so the same text travels in both faces and in the database.
 */
export enum PostStatus {
  draft = 'draft',
  suggested = 'suggested',
  rejected = 'rejected',
  queued = 'queued',
  publishing = 'publishing',
  published = 'published',
  failed = 'failed',
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
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'text' })
  ownerId!: string;

  @Property({ type: 'uuid' })
  @Field(() => ID)
  brandId!: string;

  @Property({ type: 'uuid', nullable: true })
  @Field(() => ID, { nullable: true })
  campaignId: string | null = null;

  @Property({ type: 'text' })
  @Field(() => String)
  content!: string;

  @Property({ type: 'text[]' })
  @Field(() => [String])
  platforms: string[] = [];

  @Property({ type: 'text[]' })
  @Field(() => [ID])
  mediaIds: string[] = [];

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true })
  scheduledAt: Date | null = null;

  @Property({ type: 'text' })
  @Field(() => PostStatus)
  status: PostStatus = PostStatus.draft;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true })
  publishedAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date)
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  @Field(() => Date)
  updatedAt: Date = new Date();
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
