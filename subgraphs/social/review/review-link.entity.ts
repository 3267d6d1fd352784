import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType } from 'type-graphql';

/**
 * A link that lets someone without an account approve or reject one suggested post. Only the
 * SHA-256 of its token is stored (32 random bytes: nothing to brute-force), like API keys.
 */
@Entity({ tableName: 'review_link' })
@ObjectType({ description: 'A review link of one suggested post (the token is shown only when it is made)' })
export class ReviewLink {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the link (not its token)' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  ownerId!: string;

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The brand of the post' })
  brandId!: string;

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The post it lets a client review' })
  postId!: string;

  @Property({ type: 'text' })
  tokenHash!: string;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the link stops working' })
  expiresAt!: Date;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When the link was revoked; null while it works' })
  revokedAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the link was made' })
  createdAt: Date = new Date();
}
