import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType, registerEnumType } from 'type-graphql';

/** What a survey event records. */
export enum SurveyEventType {
  CREATED = 'created',
  UPDATED = 'updated',
  SUBMITTED = 'submitted',
  ASSET_COMMITTED = 'asset_committed',
}

registerEnumType(SurveyEventType, {
  name: 'SurveyEventType',
  description: 'What happened to a survey: started, changed, submitted, or a file attached',
});

export type SurveyEventKind = `${SurveyEventType}`;

/** The audit trail of a survey: who changed what, written in the same transaction as the change. */
@Entity({ tableName: 'survey_event' })
@ObjectType({ description: 'An event of a survey, as `surveyEvents` follows them' })
export class SurveyEvent {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the event' })
  id: string = randomUUID();

  /** Orders the trail; with `xact`, where the event stands in the feed (lib/data/event-feed.ts). */
  @Property({ type: 'bigint', autoincrement: true, persist: false, nullable: true })
  seq?: string;

  /** The transaction that wrote the event (its column's default). */
  @Property({ type: 'text', columnType: 'xid8', persist: false, nullable: true })
  xact?: string;

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The survey the event is about' })
  surveyId!: string;

  /** The surveyor who owns the survey: who may follow the event, besides admins. */
  @Property({ type: 'text', nullable: true })
  ownerEmail?: string | null;

  @Property({ type: 'text' })
  actorEmail!: string;

  @Property({ type: 'text' })
  @Field(() => SurveyEventType, { name: 'type', description: 'What happened' })
  kind!: SurveyEventKind;

  @Property({ type: 'json' })
  data: Record<string, unknown> = {};

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { name: 'occurredAt', description: 'When it happened (in the same transaction as the change)' })
  createdAt: Date = new Date();
}
