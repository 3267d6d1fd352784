import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType } from 'type-graphql';

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
}
