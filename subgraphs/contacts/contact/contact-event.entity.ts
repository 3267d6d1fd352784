import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';

/** What a contact event records. */
export enum ContactEventType {
  CREATED = 'created',
  UPDATED = 'updated',
  DELETED = 'deleted',
  MOVED = 'moved',
  MERGED = 'merged',
}

registerEnumType(ContactEventType, {
  name: 'ContactEventType',
  description: 'What happened to a contact: created, changed, deleted, moved to another stage, or merged into another',
});

/**
 * A change of a contact, written in the same transaction (or the same statement) as the change;
 * the feed that `contactEvents` follows (migration ContactEvents). Rows an import writes are not
 * announced one by one: the import job is followed instead (`contactImport`).
 */
@Entity({ tableName: 'contact_event' })
@ObjectType({ description: 'An event of a contact, as `contactEvents` follows them' })
export class ContactEvent {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the event' })
  id: string = randomUUID();

  /** Orders the log; with `xact`, where the event stands in the feed (lib/data/event-feed.ts). */
  @Property({ type: 'bigint', autoincrement: true, persist: false, nullable: true })
  seq?: string;

  /** The transaction that wrote the event (its column's default). */
  @Property({ type: 'text', columnType: 'xid8', persist: false, nullable: true })
  xact?: string;

  @Property({ type: 'text' })
  @Field(() => ContactEventType, { description: 'What happened' })
  type!: ContactEventType;

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The contact the event is about' })
  contactId!: string;

  @Property({ type: 'uuid', nullable: true })
  @Field(() => ID, { nullable: true, description: 'On MOVED: the stage the contact left' })
  fromStageId: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  @Field(() => ID, { nullable: true, description: 'On MOVED: the stage the contact entered' })
  toStageId: string | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When it happened (in the same transaction as the change)' })
  occurredAt: Date = new Date();
}
