import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { GraphQLJSONObject } from 'graphql-scalars';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';

/** Kinds of audit event; publish outcomes are written by the publisher through the same service. */
export enum ContentEventType {
  CREATED = 'created',
  UPDATED = 'updated',
  DELETED = 'deleted',
  EDITED = 'edited',
  APPROVED = 'approved',
  REJECTED = 'rejected',
  RESCHEDULED = 'rescheduled',
  RETRIED = 'retried',
  PUBLISHING = 'publishing',
  PUBLISHED = 'published',
  PUBLISH_FAILED = 'publish_failed',
}

export enum ActorType {
  USER = 'user',
  API_KEY = 'api_key',
  SYSTEM = 'system',
  REVIEW_LINK = 'review_link',
}

registerEnumType(ContentEventType, {
  name: 'ContentEventType',
  description: 'What an audit event records: a change by someone, or a step of publishing',
});
registerEnumType(ActorType, {
  name: 'ActorType',
  description:
    'Who made a change: a signed-in user, an API key, the platform itself, or a client through a review link',
});

@ObjectType({ description: 'Who made a change' })
export class Actor {
  @Field(() => ActorType, { description: 'What kind of actor: a user, an API key, or the platform itself' })
  type!: ActorType;
  @Field(() => String, { description: 'User id, API key id, review link id, or the name of the platform part' })
  id!: string;
}

/**
 * One audit record of a change to a content item, written in the same transaction as the change.
 * The table refuses UPDATE and DELETE (a trigger), so the log cannot be rewritten. `seq` orders
 * the log strictly (two events may share a timestamp) and is the pagination cursor.
 */
@Entity({ tableName: 'content_event' })
@ObjectType({ description: 'An audit event of the content operations log' })
export class ContentEvent {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the event' })
  id: string = randomUUID();

  @Property({ type: 'bigint', autoincrement: true, persist: false, nullable: true })
  seq?: string;

  /** The transaction that wrote the event (its column's default): with `seq`, where it stands in the feed (lib/data/event-feed.ts). */
  @Property({ type: 'text', columnType: 'xid8', persist: false, nullable: true })
  xact?: string;

  @Property({ type: 'text' })
  ownerId!: string;

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The brand of the content item' })
  brandId!: string;

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The content item (post) the event is about' })
  contentId!: string;

  @Property({ type: 'text' })
  @Field(() => ContentEventType, { description: 'What happened' })
  type!: ContentEventType;

  @Property({ type: 'text' })
  actorType!: ActorType;

  @Property({ type: 'text' })
  actorId!: string;

  @Property({ type: 'jsonb', nullable: true })
  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: 'The fields that changed, as they were before; null when nothing existed before',
  })
  before: Record<string, unknown> | null = null;

  @Property({ type: 'jsonb', nullable: true })
  @Field(() => GraphQLJSONObject, {
    nullable: true,
    description: 'The fields that changed, as they are after; null when the item was deleted',
  })
  after: Record<string, unknown> | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When it happened (in the same transaction as the change)' })
  occurredAt: Date = new Date();
}
