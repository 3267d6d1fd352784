import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';
import { Platform } from '../social.platforms.js';

export enum PublishAttemptStatus {
  PENDING = 'pending',
  SUCCEEDED = 'succeeded',
  FAILED = 'failed',
}

registerEnumType(PublishAttemptStatus, {
  name: 'PublishAttemptStatus',
  description: 'How one publish attempt went: pending until the platform answers',
});

/** One try at publishing a post to one platform; written by the publisher, shown in item detail. */
@Entity({ tableName: 'publish_attempt' })
@ObjectType({ description: 'One try at publishing a post to one platform' })
export class PublishAttempt {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the attempt' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The post being published' })
  postId!: string;

  @Property({ type: 'text' })
  @Field(() => Platform, { description: 'The platform it went to' })
  platform!: Platform;

  @Property({ type: 'text' })
  @Field(() => PublishAttemptStatus, { description: 'How the attempt went' })
  status: PublishAttemptStatus = PublishAttemptStatus.PENDING;

  @Property({ type: 'boolean' })
  @Field(() => Boolean, {
    description:
      'True when the attempt was cut off mid-call (timeout, a worker stopped) on a platform without an ' +
      'idempotency key: it may have been posted, so a retry needs force',
  })
  outcomeUnknown = false;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, {
    nullable: true,
    description: 'Id of the published post on the platform; null unless it succeeded',
  })
  platformPostId: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Link to the published post; null unless it succeeded' })
  url: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Why it failed; null unless it failed' })
  error: string | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the attempt started' })
  attemptedAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When the platform answered; null while pending' })
  finishedAt: Date | null = null;
}
