import { randomUUID } from 'node:crypto';
import type { Opt } from '@mikro-orm/core';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { nextVersion, VERSION_DESCRIPTION } from '#lib/data/versions.js';

/** A free-text note on a contact. Deleting one removes it for good. */
@Entity({ tableName: 'note' })
@ObjectType({ description: 'A note on a contact' })
export class Note {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the note' })
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The contact the note is about' })
  contactId!: string;

  @Property({ type: 'text' })
  @Field(() => String, { description: 'Text of the note' })
  body!: string;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the note was written' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', onUpdate: () => new Date() })
  @Field(() => Date, { description: 'When the note last changed' })
  updatedAt: Date = new Date();

  @Property({ type: 'integer', onUpdate: nextVersion })
  @Field(() => Int, { description: VERSION_DESCRIPTION })
  // Opt: a row written past the unit of work (a bulk insert) takes the column's default, 1.
  version: Opt<number> = 1;
}
