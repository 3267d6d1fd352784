import { randomUUID } from 'node:crypto';
import type { Opt } from '@mikro-orm/core';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { nextVersion, VERSION_DESCRIPTION } from '#lib/data/versions.js';

/** A sales pipeline: ordered stages a contact moves through. The seeded "Sales" one is the default. */
@Entity({ tableName: 'pipeline' })
@ObjectType({ description: 'A sales pipeline with ordered stages' })
export class Pipeline {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the pipeline' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  @Field(() => String, { description: 'Name of the pipeline' })
  name!: string;

  @Property({ type: 'boolean' })
  @Field(() => Boolean, { description: 'Contacts never moved sit in the first stage of the default pipeline' })
  isDefault: boolean = false;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the pipeline was created' })
  createdAt: Date = new Date();

  @Property({ type: 'integer', onUpdate: nextVersion })
  @Field(() => Int, { description: VERSION_DESCRIPTION })
  // Opt: a row written past the unit of work (a bulk insert) takes the column's default, 1.
  version: Opt<number> = 1;
}

@Entity({ tableName: 'stage' })
@ObjectType({ description: 'A stage of a pipeline' })
export class Stage {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the stage' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The pipeline the stage belongs to' })
  pipelineId!: string;

  @Property({ type: 'text' })
  @Field(() => String, { description: 'Name of the stage' })
  name!: string;

  @Property({ type: 'integer' })
  @Field(() => Int, { description: 'Order within the pipeline, from 1' })
  position!: number;
}

/** Where a contact is now; at most one stage per contact. */
@Entity({ tableName: 'contact_stage' })
export class ContactStage {
  @PrimaryKey({ type: 'uuid' })
  contactId!: string;

  @Property({ type: 'uuid' })
  pipelineId!: string;

  @Property({ type: 'uuid' })
  stageId!: string;

  @Property({ type: 'timestamptz' })
  movedAt!: Date;
}

/** One move of a contact between stages: the history is append-only. */
@Entity({ tableName: 'stage_move' })
@ObjectType({ description: 'A move of a contact from one stage to another' })
export class StageMove {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the history entry' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The contact that moved' })
  contactId!: string;

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The pipeline of the stages' })
  pipelineId!: string;

  @Property({ type: 'uuid', nullable: true })
  @Field(() => ID, { nullable: true, description: 'Null when the contact had no stage before' })
  fromStageId: string | null = null;

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The stage the contact moved to' })
  toStageId!: string;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the move happened' })
  movedAt!: Date;
}

@ObjectType({ description: 'Where a contact stands after a move' })
export class StagePlacement {
  @Field(() => ID, { description: 'The contact' })
  contactId!: string;

  @Field(() => ID, { description: 'The pipeline the contact is placed in' })
  pipelineId!: string;

  @Field(() => ID, { description: 'The stage the contact is in now' })
  stageId!: string;

  @Field(() => ID, { nullable: true, description: 'The stage the contact was in before; null when it had none' })
  fromStageId!: string | null;

  @Field(() => Date, { description: 'When the contact entered its current stage' })
  movedAt!: Date;

  @Field(() => StageMove, {
    nullable: true,
    description: 'The history entry written; null when the contact already was in that stage',
  })
  move!: StageMove | null;
}
