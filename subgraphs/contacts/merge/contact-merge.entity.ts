import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType } from 'type-graphql';

/** A field of the survivor the merge changed, and to what: undo gives `before` back while the field still holds `after`. */
export interface FieldChange {
  before: unknown;
  after: unknown;
}

/** What moved from each merged contact to the survivor, by row id: undo moves back what is still there. */
export interface MovedRows {
  notes: Record<string, string>;
  attachments: Record<string, string>;
  stageMoves: Record<string, string>;
  /** The stage placement the survivor took from a merged contact (it had none), as it was. */
  stage: { contactId: string; pipelineId: string; stageId: string; movedAt: string } | null;
}

/**
 * One merge of contacts into a survivor (migration ContactDuplicates): who merged into whom, and
 * what it changed, so that it can be undone within UNDO_WINDOW_DAYS without a trace of guesswork.
 */
@Entity({ tableName: 'contact_merge' })
@ObjectType({ description: 'A merge of contacts into one that survives' })
export class ContactMerge {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the merge; undoContactMerge takes it' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The contact that survived' })
  survivorId!: string;

  @Property({ type: 'text[]', columnType: 'uuid[]' })
  @Field(() => [ID], { description: 'The contacts merged into it (soft deleted, with mergedInto)' })
  mergedIds!: string[];

  @Property({ type: 'json' })
  changes!: Record<string, FieldChange>;

  @Property({ type: 'json' })
  moved!: MovedRows;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the merge happened' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When the merge was undone; null while it stands' })
  undoneAt: Date | null = null;
}
