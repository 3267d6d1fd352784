import { randomUUID } from 'node:crypto';
import { Entity, PrimaryKey, Property } from '@mikro-orm/decorators/legacy';
import { Field, ID, ObjectType } from 'type-graphql';

/** A named group of posts of one brand (a launch, a season). */
@Entity({ tableName: 'campaign' })
@ObjectType({ description: 'A named group of posts of one brand' })
export class Campaign {
  @PrimaryKey({ type: 'uuid' })
  @Field(() => ID)
  id: string = randomUUID();

  @Property({ type: 'text' })
  ownerId!: string;

  @Property({ type: 'uuid' })
  @Field(() => ID)
  brandId!: string;

  @Property({ type: 'text' })
  @Field(() => String)
  name!: string;

  @Property({ type: 'text', nullable: true })
  @Field(() => String, { nullable: true })
  description: string | null = null;

  @Property({ type: 'timestamptz' })
  @Field(() => Date)
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  @Field(() => Date)
  updatedAt: Date = new Date();
}
