import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType } from 'type-graphql';

/** A free-text note on a contact. Deleting one removes it for good. */
@Entity({ tableName: 'note' })
@ObjectType({ description: 'A note on a contact' })
export class Note {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'uuid' })
  @Field(() => ID)
  contactId!: string;

  @Property({ type: 'text' })
  @Field(() => String)
  body!: string;

  @Property({ type: 'timestamptz' })
  @Field(() => Date)
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz', onUpdate: () => new Date() })
  @Field(() => Date)
  updatedAt: Date = new Date();
}
