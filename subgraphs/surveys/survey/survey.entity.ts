import { randomUUID } from 'node:crypto';
import type { Opt } from '@mikro-orm/core';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Directive, Field, ID, Int, ObjectType, registerEnumType } from 'type-graphql';
import { nextVersion, VERSION_DESCRIPTION } from '#lib/data/versions.js';

export enum SurveyStatus {
  DRAFT = 'draft',
  SUBMITTED = 'submitted',
}

registerEnumType(SurveyStatus, {
  name: 'SurveyStatus',
  description: 'A survey is edited as a draft; once submitted it is frozen',
});

/**
 * What field staff record about one venue. The owner is the signed-in e-mail address, since
 * magic-link sign-in has no other identity; `contactId` points into the contacts service and is
 * never checked against its tables (the gateway resolves it).
 */
@Entity({ tableName: 'survey' })
@ObjectType({ description: 'A venue survey' })
@Directive('@key(fields: "id")')
export class Survey {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the survey' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  @Field(() => String, { description: 'E-mail address of the surveyor who owns the survey' })
  ownerEmail!: string;

  @Property({ type: 'text' })
  @Field(() => String, { description: 'Name of the venue surveyed' })
  venueName!: string;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Address of the venue' })
  address: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Name of the person to contact at the venue' })
  contactName: string | null = null;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Phone number of that person' })
  contactPhone: string | null = null;

  @Property({ type: 'integer', nullable: true })
  @Field(() => Int, { nullable: true, description: 'How many guests the venue holds' })
  capacity: number | null = null;

  @Property({ type: 'text[]' })
  @Field(() => [String], { description: 'Checklist of amenities the venue offers' })
  amenities: string[] = [];

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'Free notes of the surveyor' })
  notes: string | null = null;

  @Property({ type: 'uuid', nullable: true })
  @Field(() => ID, { nullable: true, description: 'The contact (contacts service) this survey is about' })
  contactId: string | null = null;

  @Property({ type: 'text' })
  @Field(() => SurveyStatus, { description: 'Draft (editable) or submitted (frozen)' })
  status: SurveyStatus = SurveyStatus.DRAFT;

  @Property({ type: 'timestamptz', nullable: true })
  @Field(() => Date, { nullable: true, description: 'When the survey was submitted; null while a draft' })
  submittedAt: Date | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the survey was started' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', onUpdate: () => new Date() })
  @Field(() => Date, { description: 'When the survey last changed' })
  updatedAt: Date = new Date();

  @Property({ type: 'integer', onUpdate: nextVersion })
  @Field(() => Int, { description: VERSION_DESCRIPTION })
  // Opt: a row written past the unit of work (a bulk insert) takes the column's default, 1.
  version: Opt<number> = 1;
}
