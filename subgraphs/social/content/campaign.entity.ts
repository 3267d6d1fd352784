import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType } from 'type-graphql';

/** A named group of posts of one brand (a launch, a season). */
@Entity({ tableName: 'campaign' })
@ObjectType({ description: 'A named group of posts of one brand' })
export class Campaign {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID, { description: 'Id of the campaign' })
  id: string = randomUUID();

  @Property({ type: 'text' })
  ownerId!: string;

  @Property({ type: 'uuid' })
  @Field(() => ID, { description: 'The brand whose posts the campaign groups' })
  brandId!: string;

  @Property({ type: 'text' })
  @Field(() => String, { description: 'Name of the campaign' })
  name!: string;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true, description: 'What the campaign is about; null when not given' })
  description: string | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the campaign was created' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  @Field(() => Date, { description: 'When the campaign last changed' })
  updatedAt: Date = new Date();
}
