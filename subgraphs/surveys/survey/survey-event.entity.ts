import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';

export type SurveyEventKind = 'created' | 'updated' | 'submitted' | 'asset_committed';

/** The audit trail of a survey: who changed what, written in the same transaction as the change. */
@Entity({ tableName: 'survey_event' })
export class SurveyEvent {
  @PrimaryKey({ type: 'uuid' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  surveyId!: string;

  @Property({ type: 'text' })
  actorEmail!: string;

  @Property({ type: 'text' })
  kind!: SurveyEventKind;

  @Property({ type: 'json' })
  data: Record<string, unknown> = {};

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
