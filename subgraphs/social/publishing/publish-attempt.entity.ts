import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';

export enum PublishAttemptStatus {
  pending = 'pending',
  succeeded = 'succeeded',
  failed = 'failed',
}

registerEnumType(PublishAttemptStatus, { name: 'PublishAttemptStatus' });

/** One try at publishing a post to one platform; written by the publisher, shown in item detail. */
@Entity({ tableName: 'publish_attempt' })
@ObjectType({ description: 'One try at publishing a post to one platform' })
export class PublishAttempt {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID)
  postId!: string;

  @Property({ type: 'text' })
  @Field(() => String)
  platform!: string;

  @Property({ type: 'text' })
  @Field(() => PublishAttemptStatus)
  status: PublishAttemptStatus = PublishAttemptStatus.pending;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true })
  platformPostId: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true })
  url: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true })
  error: string | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date)
  attemptedAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true })
  finishedAt: Date | null = null;
}
